package io.hourglass.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hourglass.api.v1.TopicInfo;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Table mode for people: columns fit their widest value, empty results say so, purge asks first. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class TableOutputTest {
    private FakeAdmin admin;

    @BeforeEach
    void start() throws Exception {
        admin = new FakeAdmin();
    }

    @AfterEach
    void stop() {
        admin.close();
    }

    private Cli.Result run(String... args) {
        List<String> all = new ArrayList<>(List.of("--servers", admin.address(), "--deadline", "500ms"));
        all.addAll(List.of(args));
        return Cli.runWith(Cli.IN_PROCESS, "", all.toArray(new String[0]));
    }

    @Test
    void columnsFitTheirWidestValueNotTheFirst() {
        StringWriter out = new StringWriter();
        TableRecordPrinter table = new TableRecordPrinter(
                List.of(Column.text("a", "A"), Column.text("b", "B"), Column.text("c", "C")), new PrintWriter(out));
        table.print(Map.of("a", "x", "b", "1", "c", "end"));
        table.print(Map.of("a", "a-much-longer-value", "b", "22222", "c", "end"));
        table.finish();
        String[] lines = out.toString().split("\n");
        assertEquals(3, lines.length, out.toString());
        int c = lines[0].indexOf('C');
        for (String line : lines) {
            assertEquals(c, line.lastIndexOf(line.contains("end") ? "end" : "C"), out.toString());
        }
        assertTrue(lines[0].indexOf('B') > "a-much-longer-value".length(), out.toString());
    }

    @Test
    void anEmptyListingSaysNone() {
        admin.topics = List.of();
        Cli.Result table = run("topic", "list");
        assertEquals(0, table.exitCode(), table.err());
        assertEquals(List.of(TableRecordPrinter.NONE), table.outLines());

        Cli.Result json = run("--output", "json", "topic", "list");
        assertEquals(0, json.exitCode(), json.err());
        assertEquals("", json.out());
    }

    @Test
    void aListingIsAlignedOnItsWidestTopic() {
        admin.topics = List.of(TopicInfo.newBuilder().setTopic("a").build(),
                TopicInfo.newBuilder().setTopic("a-topic-with-a-long-name").setPending(123456).build());
        Cli.Result r = run("topic", "list");
        assertEquals(0, r.exitCode(), r.err());
        List<String> lines = r.outLines();
        int pending = lines.get(0).indexOf("PENDING");
        assertEquals(pending, lines.get(1).indexOf('0'));
        assertEquals(pending, lines.get(2).indexOf("123456"));
    }

    @Test
    void purgeAsksForYesInTableModeOnly() {
        Cli.Result refused = run("topic", "purge", "orders");
        assertEquals(ExitCodes.USAGE, refused.exitCode());
        assertEquals(1, refused.errLines().size(), refused.err());
        assertTrue(refused.err().contains("--yes"), refused.err());
        assertEquals("", refused.out());

        Cli.Result yes = run("topic", "purge", "orders", "--yes");
        assertEquals(0, yes.exitCode(), yes.err());
        Cli.Result json = run("--output", "json", "topic", "purge", "orders");
        assertEquals(0, json.exitCode(), json.err());
        assertEquals(2, admin.requests.stream().filter(m -> m.toString().contains("orders")
                && m.getClass().getSimpleName().startsWith("Purge")).count());
    }
}
