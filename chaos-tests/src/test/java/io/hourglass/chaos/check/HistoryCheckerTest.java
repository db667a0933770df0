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

    @Test
    void aRoomThatKeptItsBacklogAfterHealingStalled() {
        String history = CLEAN + """
                {"type":"room_state","process":"runner","t":9000,"room":"r","backlog":0,"inFlight":"","members":2,"ready":2}
                {"type":"room_state","process":"runner","t":9001,"room":"s","backlog":3,"inFlight":"x7","members":2,"ready":2}
                """;
        CheckReport report = check(history);
        assertOnly(report, ViolationClass.ROOM_STALLED, 1);
        assertTrue(report.examples(ViolationClass.ROOM_STALLED).get(0).contains("room s: 3 messages pending"),
                report.render());
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
    void expiryIsJudgedByWhenTheServerSentTheDeliveryWhereRecorded() {
        // Tolerance 200 ms. c1's copy was sent before expiry and slowed by the network; c2's was sent
        // after it; c3's records a send stamp later than its receipt (clocks), so the receipt counts.
        CheckReport report = check("""
                {"type":"publish","process":"p","t":0,"id":"m1","topic":"a","dueAt":1000,"expiresAt":2000,"ok":true}
                {"type":"deliver","process":"c1","t":2400,"id":"m1","topic":"a","group":"g1","consumer":"c1","attempt":1,"sentAt":1990}
                {"type":"deliver","process":"c2","t":2400,"id":"m1","topic":"a","group":"g2","consumer":"c2","attempt":1,"sentAt":2300}
                {"type":"deliver","process":"c3","t":2100,"id":"m1","topic":"a","group":"g3","consumer":"c3","attempt":1,"sentAt":2900}
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
    void aDeliveryAfterACommittedCancelIsReportedAndACancelThatLostOrProvesNothingIsNot() {
        CheckReport report = check("""
                {"type":"subscribe","process":"c1","t":-1000,"topic":"k","group":"g1","consumer":"c1"}
                {"type":"publish","process":"p","t":100,"start":90,"id":"m1","topic":"k","dueAt":300,"expiresAt":0,"ok":true}
                {"type":"cancel","process":"p","t":500,"start":400,"topic":"k","id":"m1","ok":true,"outcome":"CANCELLED"}
                {"type":"deliver","process":"c1","t":450,"sentAt":420,"id":"m1","topic":"k","group":"g1","consumer":"c1","attempt":1}
                {"type":"deliver","process":"c1","t":3010,"sentAt":3000,"id":"m1","topic":"k","group":"g1","consumer":"c1","attempt":2}
                {"type":"publish","process":"p","t":110,"start":100,"id":"m2","topic":"k","dueAt":100,"expiresAt":0,"ok":true}
                {"type":"deliver","process":"c1","t":200,"sentAt":190,"id":"m2","topic":"k","group":"g1","consumer":"c1","attempt":1}
                {"type":"cancel","process":"p","t":400,"start":300,"topic":"k","id":"m2","ok":true,"outcome":"ALREADY_DELIVERED"}
                {"type":"deliver","process":"c1","t":1000,"sentAt":350,"id":"m2","topic":"k","group":"g1","consumer":"c1","attempt":2}
                {"type":"deliver","process":"c1","t":1100,"id":"m2","topic":"k","group":"g1","consumer":"c1","attempt":3}
                {"type":"publish","process":"p","t":120,"start":110,"id":"m3","topic":"k","dueAt":2000,"expiresAt":0,"ok":true}
                {"type":"cancel","process":"p","t":1500,"start":300,"topic":"k","id":"m3","ok":false,"error":"UNAVAILABLE"}
                {"type":"deliver","process":"c1","t":2000,"sentAt":2000,"id":"m3","topic":"k","group":"g1","consumer":"c1","attempt":1}
                {"type":"publish","process":"p","t":130,"start":120,"id":"m4","topic":"k","dueAt":2000,"expiresAt":0,"ok":true}
                {"type":"cancel","process":"p","t":800,"start":700,"topic":"k","id":"m4","ok":true,"outcome":"NOT_FOUND"}
                {"type":"publish","process":"p","t":140,"start":130,"id":"m5","topic":"k","dueAt":2500,"expiresAt":0,"ok":true}
                {"type":"cancel","process":"p","t":900,"start":800,"topic":"k","id":"m5","ok":true,"outcome":"CANCELLED"}
                """);
        // m1 came at 3000 after its cancel won at 500; the copy at 450 went out before (a deposed leader's).
        // m2's cancel lost: a copy sent before it is fine, one without a send time proves nothing. m3's
        // cancel failed and m4's found nothing: no proof either. Cancelled and never delivered, m4 and m5
        // are not lost.
        assertOnly(report, ViolationClass.AFTER_CANCEL, 1);
        assertTrue(report.examples(ViolationClass.AFTER_CANCEL).get(0).startsWith("m1 to g1 (consumer c1) sent 3000"),
                report.render());
    }

    @Test
    void aCopySentAfterACancelThatLostIsARedeliveryAndACancelByKeyNamesTheKeysLastMessage() {
        CheckReport report = check("""
                {"type":"publish","process":"p","t":110,"start":100,"id":"m2","topic":"k","dueAt":100,"expiresAt":0,"ok":true}
                {"type":"deliver","process":"c1","t":200,"sentAt":190,"id":"m2","topic":"k","group":"g1","consumer":"c1","attempt":1}
                {"type":"cancel","process":"p","t":400,"start":300,"topic":"k","id":"m2","ok":true,"outcome":"ALREADY_DELIVERED"}
                {"type":"deliver","process":"c1","t":5300,"sentAt":5200,"id":"m2","topic":"k","group":"g1","consumer":"c1","attempt":2}
                {"type":"publish","process":"p","t":1000,"start":990,"id":"k1","key":"K","topic":"k","dueAt":4000,"expiresAt":0,"ok":true}
                {"type":"publish","process":"p","t":1100,"start":1090,"id":"k2","key":"K","replacedId":"k1","topic":"k","dueAt":4000,"expiresAt":0,"ok":true}
                {"type":"cancel","process":"p","t":1300,"start":1200,"topic":"k","key":"K","ok":true,"outcome":"CANCELLED"}
                {"type":"publish","process":"p","t":1400,"start":1390,"id":"k3","key":"K","topic":"k","dueAt":4000,"expiresAt":0,"ok":true}
                {"type":"deliver","process":"c2","t":4010,"sentAt":4000,"id":"k2","topic":"k","group":"g1","consumer":"c2","attempt":1}
                {"type":"deliver","process":"c2","t":4020,"sentAt":4005,"id":"k3","topic":"k","group":"g1","consumer":"c2","attempt":1}
                """);
        // m2 was sent again at 5200, after the cancel deleted it; the cancel by key at 1200 removed k2
        // (the key's message then), not k3, published after it.
        assertOnly(report, ViolationClass.AFTER_CANCEL, 2);
        assertTrue(report.examples(ViolationClass.AFTER_CANCEL).get(0).contains("m2 to g1 (consumer c1) sent 5200"),
                report.render());
        assertTrue(report.examples(ViolationClass.AFTER_CANCEL).get(1).contains("k2 to g1 (consumer c2) sent 4000, "
                + "received 4010; its cancel by key 'K' answered CANCELLED at 1300"), report.render());
    }

    @Test
    void aReplacedMessageDeliveredAfterItsReplacementCommittedIsReported() {
        String history = """
                {"type":"subscribe","process":"c1","t":-1000,"topic":"k","group":"g1","consumer":"c1"}
                {"type":"publish","process":"p","t":100,"start":90,"id":"m1","key":"K","topic":"k","dueAt":1000,"expiresAt":0,"ok":true}
                {"type":"deliver","process":"c1","t":1000,"sentAt":1000,"id":"m1","topic":"k","group":"g1","consumer":"c1","attempt":1}
                {"type":"publish","process":"p","t":1200,"start":1100,"id":"m2","key":"K","replacedId":"m1","topic":"k","dueAt":3000,"expiresAt":0,"ok":true}
                {"type":"deliver","process":"c1","t":1700,"sentAt":1150,"id":"m1","topic":"k","group":"g1","consumer":"c1","attempt":2}
                {"type":"deliver","process":"c1","t":1390,"sentAt":1380,"id":"m1","topic":"k","group":"g1","consumer":"c1","attempt":3}
                {"type":"deliver","process":"c1","t":3000,"sentAt":3000,"id":"m2","topic":"k","group":"g1","consumer":"c1","attempt":1}
                {"type":"deliver","process":"c1","t":6010,"sentAt":6000,"id":"m1","topic":"k","group":"g1","consumer":"c1","attempt":4}
                {"type":"publish","process":"p","t":200,"start":190,"id":"m3","key":"J","topic":"k","dueAt":5000,"expiresAt":0,"ok":true}
                {"type":"publish","process":"p","t":300,"start":290,"id":"m4","key":"J","replacedId":"m3","topic":"k","dueAt":5000,"expiresAt":0,"ok":true}
                {"type":"deliver","process":"c1","t":5000,"sentAt":5000,"id":"m4","topic":"k","group":"g1","consumer":"c1","attempt":1}
                {"type":"publish","process":"p","t":400,"start":390,"id":"m5","key":"L","topic":"k","dueAt":2000,"expiresAt":0,"ok":true}
                {"type":"publish","process":"p","t":2500,"start":450,"id":"p-77","key":"L","topic":"k","dueAt":0,"expiresAt":0,"ok":false}
                """;
        CheckReport report = check(history);
        // m1 sent at 1150 (before the replacement committed, received after) and at 1380 (within the
        // tolerance) are allowed; the in-flight timeout's copy at 6000 is not. The replaced m3 is not
        // lost, nor is m5, which the unknown publish of its key may have replaced.
        assertOnly(report, ViolationClass.AFTER_REPLACE, 1);
        assertTrue(report.examples(ViolationClass.AFTER_REPLACE).get(0).equals(
                "m1 to g1 (consumer c1) sent 6000, received 6010; replaced by m2 (key 'K') at 1200"), report.render());
        // Without the unknown publish of key L, nothing could have removed m5: it is lost.
        CheckReport withoutUnknown = check(without(history, "p-77"));
        assertEquals(1, withoutUnknown.count(ViolationClass.LOST), withoutUnknown.render());
        assertTrue(withoutUnknown.examples(ViolationClass.LOST).get(0).startsWith("m5 "), withoutUnknown.render());
    }

    static final String DEAD_LETTERS = """
            {"type":"group_config","process":"runner","t":-1000,"topic":"k","group":"dl","maxDeliveries":2,"deadLetter":"k.dlq"}
            {"type":"subscribe","process":"c","t":-1000,"topic":"k","group":"dl","consumer":"c"}
            {"type":"subscribe","process":"q","t":-1000,"topic":"k.dlq","group":"dlq","consumer":"q"}
            {"type":"publish","process":"p","t":100,"start":90,"id":"m1","topic":"k","dueAt":100,"expiresAt":0,"ok":true}
            {"type":"deliver","process":"c","t":110,"id":"m1","topic":"k","group":"dl","consumer":"c","attempt":1}
            {"type":"nack","process":"c","t":111,"id":"m1","group":"dl","consumer":"c"}
            {"type":"deliver","process":"c","t":130,"id":"m1","topic":"k","group":"dl","consumer":"c","attempt":2}
            {"type":"nack","process":"c","t":131,"id":"m1","group":"dl","consumer":"c"}
            {"type":"deliver","process":"q","t":200,"id":"x1","topic":"k.dlq","group":"dlq","consumer":"q","attempt":1,"deadLetterTopic":"k","deadLetterGroup":"dl","deadLetterId":"m1"}
            {"type":"deliver","process":"q","t":300,"id":"x1","topic":"k.dlq","group":"dlq","consumer":"q","attempt":2,"deadLetterTopic":"k","deadLetterGroup":"dl","deadLetterId":"m1"}
            {"type":"publish","process":"p","t":150,"start":140,"id":"m2","topic":"k","dueAt":150,"expiresAt":0,"ok":true}
            {"type":"deliver","process":"c","t":160,"id":"m2","topic":"k","group":"dl","consumer":"c","attempt":1}
            {"type":"nack","process":"c","t":161,"id":"m2","group":"dl","consumer":"c"}
            {"type":"deliver","process":"c","t":170,"id":"m2","topic":"k","group":"dl","consumer":"c","attempt":2}
            {"type":"nack","process":"c","t":171,"id":"m2","group":"dl","consumer":"c"}
            {"type":"publish","process":"p","t":400,"start":390,"id":"m3","topic":"k","dueAt":400,"expiresAt":0,"ok":true}
            {"type":"deliver","process":"c","t":410,"id":"m3","topic":"k","group":"dl","consumer":"c","attempt":1}
            {"type":"ack","process":"c","t":411,"id":"m3","group":"dl","consumer":"c"}
            {"type":"publish","process":"p","t":500,"start":490,"id":"m4","topic":"k","dueAt":600,"expiresAt":0,"ok":true}
            {"type":"cancel","process":"p","t":700,"start":520,"topic":"k","id":"m4","ok":false,"error":"timeout"}
            {"type":"publish","process":"p","t":510,"start":500,"id":"m5","topic":"k","dueAt":600,"expiresAt":1600,"ok":true}
            {"type":"publish","process":"p","t":520,"start":510,"id":"m6","topic":"k","dueAt":9950,"expiresAt":0,"ok":true}
            {"type":"publish","process":"p","t":530,"start":520,"id":"m7","topic":"elsewhere","dueAt":600,"expiresAt":0,"ok":true}
            {"type":"fault","process":"nemesis","t":10000,"kind":"kill-leader","node":"n1","start":9000,"end":10000}
            """;

    @Test
    void aMessagePastItsGroupsMaxDeliveriesThatNeverReachedTheDeadLetterTopicIsLost() {
        CheckReport report = check(DEAD_LETTERS);
        // m2 was NACKed twice and its copy never came. m1's copy came (twice: at least once is fine);
        // m3 was acked; m4 may have been cancelled; m5 has a TTL; m6 is due after the end; m7 is
        // another topic's.
        assertOnly(report, ViolationClass.DEAD_LETTER_LOST, 1);
        assertEquals("m2 (topic k, published 150, due 150): 2 deliveries to dl, never acked, no copy received from "
                + "dead-letter topic k.dlq", report.examples(ViolationClass.DEAD_LETTER_LOST).get(0));
        assertOnly(check(without(DEAD_LETTERS, "\"x1\"")), ViolationClass.DEAD_LETTER_LOST, 2);
        // A copy of m1 in some other topic is not in the dead-letter topic.
        assertOnly(check(DEAD_LETTERS.replace("\"id\":\"x1\",\"topic\":\"k.dlq\"", "\"id\":\"x1\",\"topic\":\"k.other\"")),
                ViolationClass.DEAD_LETTER_LOST, 2);
        // Without a consumer of the dead-letter topic nothing is provable.
        assertEquals(0, check(without(without(DEAD_LETTERS, "\"x1\""), "\"k.dlq\",\"group\":\"dlq\""))
                .violations());
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
    void aDivergenceNamesTheColumnFamiliesThatDiffer() {
        CheckReport report = check("""
                {"type":"digest","process":"runner","t":100,"node":"n1","appliedIndex":42,"digest":"abc","families":"{events=aa:3, meta=mm:1, receipts=rr:2}"}
                {"type":"digest","process":"runner","t":100,"node":"n2","appliedIndex":42,"digest":"abc","families":"{events=aa:3, meta=mm:1, receipts=rr:2}"}
                {"type":"digest","process":"runner","t":100,"node":"n3","appliedIndex":42,"digest":"def","families":"{events=aa:3, meta=mm:1, receipts=qq:1}"}
                """);
        assertOnly(report, ViolationClass.DIVERGENCE, 1);
        assertEquals("applied index 42: abc on n1,n2; def on n3; column families that differ: receipts (qq:1 vs rr:2)",
                report.examples(ViolationClass.DIVERGENCE).get(0));
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
    void publishesStallingThreeSecondsAfterAKillLeaderRecoverWhenTheFirstNewCallSucceeds() {
        CheckReport report = check("""
                {"type":"subscribe","process":"c1","t":0,"topic":"a","group":"g1","consumer":"c1"}
                {"type":"publish","process":"p","t":9010,"start":9000,"delayMs":0,"id":"m0","topic":"a","dueAt":9000,"expiresAt":0,"ok":true}
                {"type":"deliver","process":"c1","t":9020,"id":"m0","topic":"a","group":"g1","consumer":"c1","attempt":1}
                {"type":"fault","process":"nemesis","t":10500,"kind":"kill-leader","node":"n1","start":10000,"end":10500}
                {"type":"publish","process":"p","t":12010,"start":10010,"delayMs":0,"id":"m1","topic":"a","dueAt":10010,"expiresAt":0,"ok":false}
                {"type":"publish","process":"p","t":12900,"start":9990,"delayMs":0,"id":"m2","topic":"a","dueAt":9990,"expiresAt":0,"ok":true}
                {"type":"publish","process":"p","t":13050,"start":10050,"delayMs":0,"id":"m3","topic":"a","dueAt":10050,"expiresAt":0,"ok":true}
                {"type":"publish","process":"p","t":13200,"start":10100,"delayMs":100,"id":"m4","topic":"a","dueAt":10200,"expiresAt":0,"ok":true}
                {"type":"deliver","process":"c1","t":12950,"id":"m2","topic":"a","group":"g1","consumer":"c1","attempt":1}
                {"type":"deliver","process":"c1","t":13100,"id":"m4","topic":"a","group":"g1","consumer":"c1","attempt":1}
                {"type":"deliver","process":"c1","t":13120,"id":"m3","topic":"a","group":"g1","consumer":"c1","attempt":1}
                """);
        // The failed m1 and m2 (called before the fault) do not count: m3 is the first success.
        // Deliveries: m2 was called before the fault and m4 was delayed, so m3's delivery counts.
        assertEquals(List.of(new FaultAvailability("kill-leader", "n1", 10000, 500, 3050, 3120)),
                report.availability(), report.render());
        assertEquals(new KindAvailability("kill-leader", 1, 3050, 3050, 3120, 3120),
                report.availabilityByKind().get("kill-leader"));
        assertEquals(0, report.violations(), report.render());
    }

    @Test
    void aFaultWithNoLaterSuccessHasNoRecoveryAndIsNoViolation() {
        CheckReport report = check("""
                {"type":"publish","process":"p","t":19000,"start":18990,"delayMs":0,"id":"m0","topic":"a","dueAt":18990,"expiresAt":0,"ok":true}
                {"type":"fault","process":"nemesis","t":20000,"kind":"kill-majority","node":"n1,n2","start":20000,"end":0}
                {"type":"publish","process":"p","t":25100,"start":20100,"delayMs":0,"id":"m1","topic":"a","dueAt":20100,"expiresAt":0,"ok":false}
                {"type":"fault","process":"nemesis","t":30000,"kind":"pause","node":"n3","start":30000,"end":31000}
                {"type":"publish","process":"p","t":30200,"start":30100,"delayMs":60000,"id":"m2","topic":"a","dueAt":90100,"expiresAt":0,"ok":true}
                """);
        assertEquals(List.of(
                new FaultAvailability("kill-majority", "n1,n2", 20000, FaultAvailability.NONE, 10200,
                        FaultAvailability.NONE),
                new FaultAvailability("pause", "n3", 30000, 1000, 200, FaultAvailability.NONE)),
                report.availability(), report.render());
        // The only success after the kill-majority is m2, made during the later pause.
        assertTrue(report.availability().get(1).publishRecovered());
        assertTrue(!report.availability().get(1).deliveryRecovered());
        String table = report.render();
        assertTrue(table.matches("(?s).*\\R  kill-majority\\s+n1,n2\\s+20000\\s+unhealed\\s+10200\\s+none\\R.*"), table);
        assertTrue(table.matches("(?s).*\\Rpause\\s+1\\s+200/200\\s+none\\R.*"), table);
        assertTrue(table.contains("PASS: 0 violation(s)"), table);

        CheckReport never = check("""
                {"type":"fault","process":"nemesis","t":20000,"kind":"kill-majority","node":"n1,n2","start":20000,"end":0}
                {"type":"publish","process":"p","t":25100,"start":20100,"delayMs":0,"id":"m1","topic":"a","dueAt":20100,"expiresAt":0,"ok":false}
                """);
        assertEquals(FaultAvailability.NONE, never.availability().get(0).publishRecoveryMs());
        assertTrue(never.render().matches("(?s).*\\Rkill-majority\\s+1\\s+none\\s+none\\R.*"), never.render());
    }

    @Test
    void aHistoryWithoutStartFieldsTakesEachEventsTimeAsItsStart() {
        CheckReport report = check("""
                {"type":"fault","process":"nemesis","t":1000,"kind":"partition-leader","node":"n1","end":1800}
                {"type":"publish","process":"p","t":900,"id":"x0","topic":"a","dueAt":900,"expiresAt":0,"ok":true}
                {"type":"publish","process":"p","t":2500,"id":"x1","topic":"a","dueAt":2500,"expiresAt":0,"ok":false}
                {"type":"publish","process":"p","t":4000,"id":"x2","topic":"a","dueAt":4000,"expiresAt":0,"ok":true}
                {"type":"publish","process":"p","t":4050,"id":"x3","topic":"a","dueAt":9050,"expiresAt":0,"ok":true}
                {"type":"publish","process":"p","t":4100,"id":"x4","topic":"a","dueAt":4250,"expiresAt":0,"ok":true}
                {"type":"deliver","process":"c1","t":1100,"id":"x0","topic":"a","group":"g1","consumer":"c1","attempt":1}
                {"type":"deliver","process":"c1","t":4150,"id":"x4","topic":"a","group":"g1","consumer":"c1","attempt":1}
                {"type":"deliver","process":"c1","t":4180,"id":"x2","topic":"a","group":"g1","consumer":"c1","attempt":1}
                {"type":"deliver","process":"c1","t":9100,"id":"x3","topic":"a","group":"g1","consumer":"c1","attempt":1}
                """);
        // x4 is due 150 ms after it was made: within the clock tolerance, so it counts as 0-delay.
        assertEquals(List.of(new FaultAvailability("partition-leader", "n1", 1000, 800, 3000, 3150)),
                report.availability(), report.render());
        assertEquals(0, report.violations(), report.render());
    }

    @Test
    void theSummaryShowsAvailabilityPerKindAndPerFaultAfterTheFaultTable() {
        CheckReport report = check("""
                {"type":"fault","process":"nemesis","t":1000,"kind":"kill-leader","node":"n1","start":1000,"end":1500}
                {"type":"publish","process":"p","t":4010,"start":1000,"delayMs":0,"id":"m1","topic":"a","dueAt":1000,"expiresAt":0,"ok":true}
                {"type":"deliver","process":"c1","t":4120,"id":"m1","topic":"a","group":"g1","consumer":"c1","attempt":1}
                {"type":"fault","process":"nemesis","t":10000,"kind":"kill-leader","node":"n2","start":10000,"end":10700}
                {"type":"publish","process":"p","t":13260,"start":10000,"delayMs":0,"id":"m2","topic":"a","dueAt":10000,"expiresAt":0,"ok":true}
                {"type":"deliver","process":"c1","t":13400,"id":"m2","topic":"a","group":"g1","consumer":"c1","attempt":1}
                """);
        assertEquals(new KindAvailability("kill-leader", 2, 3010, 3260, 3120, 3400),
                report.availabilityByKind().get("kill-leader"));
        String table = report.render();
        int faults = table.indexOf("FAULT ");
        int availability = table.indexOf("AVAILABILITY (ms from fault start)   N  PUBLISH p50/max   DELIVER p50/max");
        int violations = table.indexOf("VIOLATION ");
        assertTrue(faults >= 0 && faults < availability && availability < violations, table);
        assertTrue(table.lines().anyMatch("kill-leader                          2  3010/3260         3120/3400"::equals), table);
        assertTrue(table.matches("(?s).*\\R  kill-leader\\s+n1\\s+1000\\s+500\\s+3010\\s+3120\\R.*"), table);
        assertTrue(table.matches("(?s).*\\R  kill-leader\\s+n2\\s+10000\\s+700\\s+3260\\s+3400\\R.*"), table);
        assertTrue(check(without(CLEAN, "fault")).render().contains("(no faults)"));
    }

    @Test
    void aKindsMedianIsTheLowerMiddleAndANeverRecoveredFaultCountsAsLongest() {
        FaultAvailability a = new FaultAvailability("pause", "n1", 0, 10, 100, 150);
        FaultAvailability b = new FaultAvailability("pause", "n1", 0, 10, FaultAvailability.NONE, 50);
        FaultAvailability c = new FaultAvailability("pause", "n1", 0, 10, 300, 250);
        FaultAvailability d = new FaultAvailability("pause", "n1", 0, 10, 200, FaultAvailability.NONE);
        assertEquals(new KindAvailability("pause", 3, 300, FaultAvailability.NONE, 150, 250),
                KindAvailability.of("pause", List.of(a, b, c)));
        assertEquals(new KindAvailability("pause", 4, 200, FaultAvailability.NONE, 150, FaultAvailability.NONE),
                KindAvailability.of("pause", List.of(a, b, c, d)));
    }

    @Test
    void malformedLinesAreRejectedWithTheirLineNumber() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> check("{\"type\":\"publish\"}\n{\"id\":\"m1\"}"));
        assertTrue(e.getMessage().contains("line 2"), e.getMessage());
        assertThrows(RuntimeException.class, () -> check("not json"));
    }
}
