package io.hourglass.chaos.check;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The checker fed hand-made histories: one per violation class, and a clean one. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
final class HistoryCheckerTest {
    private final HistoryChecker checker = new HistoryChecker();

    private static List<String> lines(String history) {
        return Arrays.asList(history.split("\n"));
    }

    private CheckReport check(String history) {
        return checker.checkLines(lines(history));
    }

    /** The report holds exactly {@code count} violations, all of class {@code c}. */
    private static void assertOnly(CheckReport report, ViolationClass c, int count) {
        assertEquals(count, report.count(c), report.render());
        assertEquals(count, report.violations(), report.render());
        assertEquals(Math.min(count, CheckReport.MAX_EXAMPLES), report.examples(c).size());
        assertTrue(report.render().contains("FAIL: " + count + " violation(s)"), report.render());
    }

    static final String CLEAN = """
            # A run with redeliveries after NACK, in-flight timeout, disconnect and failover: all allowed.
            {"type":"config","t":0,"inFlightTimeoutMs":5000}
            {"type":"subscribe","process":"c1","t":0,"topic":"a","group":"g1","consumer":"c1"}
            {"type":"subscribe","process":"c2","t":0,"topic":"a","group":"g1","consumer":"c2"}
            {"type":"subscribe","process":"c3","t":0,"topic":"a","group":"g2","consumer":"c3"}
            {"type":"subscribe","process":"c4","t":0,"topic":"a","group":"g2","consumer":"c4"}
            {"type":"subscribe","process":"u1","t":0,"topic":"a","group":"","consumer":"u1"}
            {"type":"publish","process":"p1","t":200,"id":"m1","topic":"a","dueAt":1000,"expiresAt":0,"ok":true}
            {"type":"publish","process":"p1","t":210,"id":"m2","topic":"a","dueAt":2000,"expiresAt":0,"ok":true}
            {"type":"publish","process":"p2","t":300,"id":"m3","topic":"a","dueAt":1000,"expiresAt":1500,"ok":true}
            {"type":"publish","process":"p2","t":310,"id":"m4","topic":"a","dueAt":1000,"expiresAt":0,"ok":false}
            {"type":"publish","process":"p2","t":320,"id":"m5","topic":"a","dueAt":1500,"expiresAt":0,"ok":true}
            {"type":"publish","process":"p2","t":330,"id":"m6","topic":"a","dueAt":100000,"expiresAt":0,"ok":true}
            {"type":"deliver","process":"u1","t":1010,"id":"m1","topic":"a","group":"","consumer":"u1","attempt":1}
            {"type":"deliver","process":"c1","t":1000,"id":"m1","topic":"a","group":"g1","consumer":"c1","attempt":1}
            {"type":"nack","process":"c1","t":1100,"id":"m1","group":"g1","consumer":"c1"}
            {"type":"deliver","process":"c2","t":1200,"id":"m1","topic":"a","group":"g1","consumer":"c2","attempt":2}
            {"type":"confirm","process":"c2","t":1300,"id":"m1","group":"g1"}
            {"type":"deliver","process":"c3","t":1050,"id":"m1","topic":"a","group":"g2","consumer":"c3","attempt":1}
            {"type":"ack","process":"c3","t":1060,"id":"m1","group":"g2","consumer":"c3"}
            {"type":"deliver","process":"u1","t":1400,"id":"m5","topic":"a","group":"","consumer":"u1","attempt":1}
            {"type":"deliver","process":"c1","t":1500,"id":"m5","topic":"a","group":"g1","consumer":"c1","attempt":1}
            {"type":"deliver","process":"c4","t":1500,"id":"m5","topic":"a","group":"g2","consumer":"c4","attempt":1}
            {"type":"disconnect","process":"c1","t":1600,"consumer":"c1"}
            {"type":"deliver","process":"c2","t":1700,"id":"m5","topic":"a","group":"g1","consumer":"c2","attempt":2}
            {"type":"deliver","process":"u1","t":2001,"id":"m2","topic":"a","group":"","consumer":"u1","attempt":1}
            {"type":"deliver","process":"c1","t":3300,"id":"m2","topic":"a","group":"g1","consumer":"c1","attempt":1}
            {"type":"deliver","process":"c2","t":8400,"id":"m2","topic":"a","group":"g1","consumer":"c2","attempt":2}
            {"type":"ack","process":"c2","t":8500,"id":"m2","group":"g1","consumer":"c2"}
            {"type":"deliver","process":"c3","t":2010,"id":"m2","topic":"a","group":"g2","consumer":"c3","attempt":1}
            {"type":"fault","process":"nemesis","t":2500,"kind":"kill-leader","node":"n1","start":2500,"end":3000}
            {"type":"deliver","process":"c4","t":2600,"id":"m2","topic":"a","group":"g2","consumer":"c4","attempt":2}
            {"type":"fault","process":"nemesis","t":20000,"kind":"partition","node":"n2","start":20000,"end":20500}
            {"type":"room_send","process":"p1","t":50,"room":"r","messageId":"x1"}
            {"type":"room_send","process":"p1","t":51,"room":"r","messageId":"x2"}
            {"type":"room_send","process":"p1","t":52,"room":"r","messageId":"x3"}
            {"type":"room_deliver","process":"A","t":100,"room":"r","messageId":"x1","member":"A","sync":true}
            {"type":"room_deliver","process":"B","t":100,"room":"r","messageId":"x1","member":"B","sync":true}
            {"type":"room_deliver","process":"N","t":100,"room":"r","messageId":"x1","member":"N","sync":false}
            {"type":"room_ack","process":"A","t":150,"room":"r","messageId":"x1","member":"A"}
            {"type":"room_ack","process":"B","t":330,"room":"r","messageId":"x1","member":"B"}
            {"type":"room_deliver","process":"A","t":200,"room":"r","messageId":"x2","member":"A","sync":true}
            {"type":"room_deliver","process":"B","t":340,"room":"r","messageId":"x2","member":"B","sync":true}
            {"type":"room_deliver","process":"N","t":340,"room":"r","messageId":"x2","member":"N","sync":false}
            {"type":"room_ack","process":"A","t":400,"room":"r","messageId":"x2","member":"A"}
            {"type":"room_deliver","process":"A","t":450,"room":"r","messageId":"o1","member":"A","sync":true,"oob":true}
            {"type":"room_evict","process":"B","t":500,"room":"r","member":"B"}
            {"type":"room_deliver","process":"A","t":510,"room":"r","messageId":"x3","member":"A","sync":true}
            {"type":"room_deliver","process":"N","t":510,"room":"r","messageId":"x3","member":"N","sync":false}
            {"type":"digest","process":"nemesis","t":9000,"node":"n1","appliedIndex":40,"digest":"zzz"}
            {"type":"digest","process":"nemesis","t":9100,"node":"n1","appliedIndex":42,"digest":"abc"}
            {"type":"digest","process":"nemesis","t":9100,"node":"n2","appliedIndex":42,"digest":"abc"}
            {"type":"digest","process":"nemesis","t":9100,"node":"n3","appliedIndex":42,"digest":"abc"}
            """;

    @Test
    void aCleanHistoryWithAllowedRedeliveriesHasNoViolations() {
        CheckReport report = check(CLEAN);
        assertEquals(0, report.violations(), report.render());
        assertEquals(Map.of("kill-leader", 1, "partition", 1), report.faults());
        assertEquals(6, report.operations().get("publish"));
        assertEquals(13, report.operations().get("deliver"));
        assertTrue(report.render().contains("PASS: 0 violation(s)"), report.render());
        for (ViolationClass c : ViolationClass.values()) {
            assertTrue(report.render().contains(c.name()), c.name());
        }
    }

    /** Each allowance in the clean history is load-bearing: take its reason away and it is a violation. */
    @Test
    void theCleanHistorysRedeliveriesAreAllowedOnlyForTheirReasons() {
        assertOnly(check(without(CLEAN, "\"nack\"")), ViolationClass.DOUBLE_HOLD, 1);
        assertOnly(check(without(CLEAN, "\"disconnect\"")), ViolationClass.DOUBLE_HOLD, 1);
        assertOnly(check(without(CLEAN, "kill-leader")), ViolationClass.DOUBLE_HOLD, 1);
        assertOnly(check(without(CLEAN, "inFlightTimeoutMs")), ViolationClass.DOUBLE_HOLD, 1);
        assertOnly(check(without(CLEAN, "room_evict")), ViolationClass.ROOM_LOCKSTEP, 1);
        assertOnly(check(without(CLEAN, "\"id\":\"m5\",\"topic\":\"a\",\"group\":\"g2\"")), ViolationClass.LOST, 1);
        // A universal consumer is not durable: a message it missed is not lost (the README's semantics).
        assertEquals(0, check(without(CLEAN, "\"t\":1400")).violations());
    }

    private static String without(String history, String marker) {
        return history.lines().filter(line -> !line.contains(marker))
                .reduce("", (a, b) -> a + b + "\n");
    }

    @Test
    void anAcknowledgedPublishAGroupNeverReceivedIsLost() {
        CheckReport report = check("""
                {"type":"subscribe","process":"c1","t":0,"topic":"a","group":"g1","consumer":"c1"}
                {"type":"subscribe","process":"c2","t":0,"topic":"a","group":"g2","consumer":"c2"}
                {"type":"publish","process":"p","t":1000,"id":"m1","topic":"a","dueAt":1000,"expiresAt":0,"ok":true}
                {"type":"publish","process":"p","t":1010,"id":"m2","topic":"a","dueAt":1000,"expiresAt":0,"ok":true}
                {"type":"publish","process":"p","t":1020,"id":"m3","topic":"a","dueAt":1000,"expiresAt":0,"ok":false}
                {"type":"deliver","process":"c1","t":1200,"id":"m1","topic":"a","group":"g1","consumer":"c1","attempt":1}
                {"type":"subscribe","process":"u","t":5000,"topic":"a","group":"","consumer":"late"}
                {"type":"publish","process":"p","t":6000,"id":"m9","topic":"a","dueAt":6000,"expiresAt":0,"ok":true}
                {"type":"deliver","process":"c1","t":6000,"id":"m9","topic":"a","group":"g1","consumer":"c1","attempt":1}
                {"type":"deliver","process":"c2","t":6000,"id":"m9","topic":"a","group":"g2","consumer":"c2","attempt":1}
                {"type":"deliver","process":"u","t":6000,"id":"m9","topic":"a","group":"","consumer":"late","attempt":1}
                """);
        // m1 missed g2; m2 missed g1 and g2; the failed m3 and universal consumers are exempt.
        assertOnly(report, ViolationClass.LOST, 3);
        assertTrue(report.examples(ViolationClass.LOST).get(0).contains("never reached"));
    }

    @Test
    void aDeliveryBeforeDueBeyondTheToleranceIsEarly() {
        CheckReport report = check("""
                {"type":"publish","process":"p","t":0,"id":"m1","topic":"a","dueAt":3000,"expiresAt":0,"ok":true}
                {"type":"deliver","process":"c1","t":2500,"id":"m1","topic":"a","group":"g1","consumer":"c1","attempt":1}
                {"type":"ack","process":"c1","t":2510,"id":"m1","group":"g1","consumer":"c1"}
                {"type":"deliver","process":"c2","t":2850,"id":"m1","topic":"a","group":"g2","consumer":"c2","attempt":1}
                """);
        assertOnly(report, ViolationClass.EARLY, 1);
        assertTrue(report.examples(ViolationClass.EARLY).get(0).contains("500 ms early"));
        // With a tolerance of 600 ms neither is early.
        assertEquals(0, checker.withClockTolerance(600).checkLines(lines("""
                {"type":"publish","process":"p","t":0,"id":"m1","topic":"a","dueAt":3000,"expiresAt":0,"ok":true}
                {"type":"deliver","process":"c1","t":2500,"id":"m1","topic":"a","group":"g1","consumer":"c1","attempt":1}
                """)).violations());
    }

    @Test
    void aDeliveryAfterExpiryIsReported() {
        CheckReport report = check("""
                {"type":"publish","process":"p","t":0,"id":"m1","topic":"a","dueAt":1000,"expiresAt":2000,"ok":true}
                {"type":"deliver","process":"c1","t":2100,"id":"m1","topic":"a","group":"g1","consumer":"c1","attempt":1}
                {"type":"deliver","process":"c2","t":2500,"id":"m1","topic":"a","group":"g2","consumer":"c2","attempt":1}
                """);
        assertOnly(report, ViolationClass.EXPIRED, 1);
        assertTrue(report.examples(ViolationClass.EXPIRED).get(0).contains("g2"));
    }

    @Test
    void aDeliveryToAGroupAfterItsConfirmedAckIsReported() {
        CheckReport report = check("""
                {"type":"publish","process":"p","t":0,"id":"m1","topic":"a","dueAt":0,"expiresAt":0,"ok":true}
                {"type":"deliver","process":"c1","t":500,"id":"m1","topic":"a","group":"g1","consumer":"c1","attempt":1}
                {"type":"confirm","process":"c1","t":1000,"id":"m1","group":"g1"}
                {"type":"deliver","process":"c1","t":1100,"id":"m1","topic":"a","group":"g1","consumer":"c1","attempt":2}
                {"type":"deliver","process":"c2","t":1500,"id":"m1","topic":"a","group":"g2","consumer":"c2","attempt":1}
                {"type":"deliver","process":"c1","t":2000,"id":"m1","topic":"a","group":"g1","consumer":"c1","attempt":3}
                """);
        // The one at 1100 is within the clock tolerance; g2 never confirmed.
        assertOnly(report, ViolationClass.AFTER_CONFIRM, 1);
        assertTrue(report.examples(ViolationClass.AFTER_CONFIRM).get(0).contains("at 2000"));
    }

    @Test
    void aMessageHeldByTwoMembersOfAGroupAtOnceIsReported() {
        CheckReport report = check("""
                {"type":"publish","process":"p","t":0,"id":"m1","topic":"a","dueAt":0,"expiresAt":0,"ok":true}
                {"type":"deliver","process":"c1","t":1000,"id":"m1","topic":"a","group":"g1","consumer":"c1","attempt":1}
                {"type":"deliver","process":"c2","t":1500,"id":"m1","topic":"a","group":"g1","consumer":"c2","attempt":2}
                {"type":"nack","process":"c2","t":1600,"id":"m1","group":"g1","consumer":"c2"}
                {"type":"deliver","process":"c1","t":1700,"id":"m1","topic":"a","group":"g1","consumer":"c1","attempt":3}
                {"type":"fault","process":"nemesis","t":50000,"kind":"pause-leader","node":"n1","start":50000,"end":51000}
                {"type":"deliver","process":"c2","t":1800,"id":"m1","topic":"a","group":"g1","consumer":"c2","attempt":4}
                """);
        // c2 at 1500 while c1 held it; c2 at 1800 while c1 held it again (the fault came later).
        assertOnly(report, ViolationClass.DOUBLE_HOLD, 2);
        assertTrue(report.examples(ViolationClass.DOUBLE_HOLD).get(0).contains("c1 held it since 1000"));
    }

    @Test
    void aRoomMessageReleasedBeforeEverySyncMemberAckedIsALockStepViolation() {
        CheckReport report = check("""
                {"type":"room_deliver","process":"A","t":100,"room":"r","messageId":"x1","member":"A","sync":true}
                {"type":"room_deliver","process":"B","t":100,"room":"r","messageId":"x1","member":"B","sync":true}
                {"type":"room_ack","process":"A","t":150,"room":"r","messageId":"x1","member":"A"}
                {"type":"room_deliver","process":"A","t":1000,"room":"r","messageId":"x2","member":"A","sync":true}
                {"type":"room_ack","process":"B","t":1500,"room":"r","messageId":"x1","member":"B"}
                {"type":"room_deliver","process":"N","t":2000,"room":"r","messageId":"x3","member":"N","sync":false}
                {"type":"room_deliver","process":"A","t":3000,"room":"q","messageId":"y1","member":"A","sync":true}
                {"type":"room_ack","process":"A","t":3100,"room":"q","messageId":"y1","member":"A"}
                {"type":"room_deliver","process":"A","t":3200,"room":"q","messageId":"y2","member":"A","sync":true}
                """);
        // x2 before B acked x1; x3 (to the async listener) before A acked x2. Room q is fine.
        assertOnly(report, ViolationClass.ROOM_LOCKSTEP, 2);
        assertTrue(report.examples(ViolationClass.ROOM_LOCKSTEP).get(0).contains("before B acked x1"),
                report.render());
    }

    @Test
    void nodesWithDifferentDigestsAtTheSameAppliedIndexDiverge() {
        CheckReport report = check("""
                {"type":"digest","process":"nemesis","t":100,"node":"n1","appliedIndex":42,"digest":"abc"}
                {"type":"digest","process":"nemesis","t":100,"node":"n2","appliedIndex":42,"digest":"abc"}
                {"type":"digest","process":"nemesis","t":100,"node":"n3","appliedIndex":42,"digest":"def"}
                {"type":"digest","process":"nemesis","t":200,"node":"n1","appliedIndex":50,"digest":"xyz"}
                {"type":"digest","process":"nemesis","t":200,"node":"n2","appliedIndex":50,"digest":"xyz"}
                """);
        assertOnly(report, ViolationClass.DIVERGENCE, 1);
        assertEquals("applied index 42: abc on n1,n2; def on n3", report.examples(ViolationClass.DIVERGENCE).get(0));
    }

    @Test
    void examplesAreCappedButCountsAreNot() {
        StringBuilder history = new StringBuilder();
        for (int i = 0; i < 8; i++) {
            history.append(String.format(
                    "{\"type\":\"publish\",\"process\":\"p\",\"t\":0,\"id\":\"m%d\",\"topic\":\"a\",\"dueAt\":5000,\"ok\":true}%n"
                            + "{\"type\":\"deliver\",\"process\":\"c\",\"t\":100,\"id\":\"m%d\",\"topic\":\"a\",\"group\":\"g\",\"consumer\":\"c\"}%n",
                    i, i));
        }
        CheckReport report = check(history.toString());
        assertOnly(report, ViolationClass.EARLY, 8);
        assertEquals(CheckReport.MAX_EXAMPLES, report.examples(ViolationClass.EARLY).size());
    }

    @Test
    void aHistoryFileIsCheckedAndEveryClassShowsInTheTable(@TempDir Path dir) throws IOException {
        Path file = dir.resolve("history.jsonl");
        Files.writeString(file, CLEAN + """
                {"type":"digest","process":"nemesis","t":9200,"node":"n3","appliedIndex":40,"digest":"yyy"}
                """);
        CheckReport report = checker.checkFile(file);
        assertOnly(report, ViolationClass.DIVERGENCE, 1);
        String table = report.render();
        assertTrue(table.contains("kill-leader"), table);
        assertTrue(table.matches("(?s).*DIVERGENCE\\s+1\\s+applied index 40.*"), table);
        assertTrue(table.matches("(?s).*LOST\\s+0\\s+-.*"), table);
    }

    @Test
    void malformedLinesAreRejectedWithTheirLineNumber() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> check("{\"type\":\"publish\"}\n{\"id\":\"m1\"}"));
        assertTrue(e.getMessage().contains("line 2"), e.getMessage());
        assertThrows(RuntimeException.class, () -> check("not json"));
    }
}
