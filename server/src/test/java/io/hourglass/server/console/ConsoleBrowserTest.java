package io.hourglass.server.console;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hourglass.client.HourglassClient;
import io.hourglass.client.Message;
import io.hourglass.client.RoomMode;
import io.hourglass.client.RoomSession;
import io.hourglass.client.RoomSessionOptions;
import io.hourglass.client.Subscription;
import io.hourglass.server.testing.TestCluster;
import io.hourglass.server.testing.TestNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.openqa.selenium.By;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.TakesScreenshot;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.logging.LogEntry;

/**
 * The web console in a real browser: headless Chromium (Debian's {@code chromium} and
 * {@code chromium-driver}) against a real three-node cluster with 10 002 topics. The pages load
 * without console errors; the topic list pages through the topics and filters them; a topic's
 * timeline shows the messages this test scheduled, by due-time bucket; cancelling a message from
 * the console deletes it; a room shows its members and its barrier latencies. Screenshots of each
 * page go to {@code target/console-screenshots} (the README's come from there).
 *
 * <p>Runs in {@link HeadlessChromium}.
 */
@Timeout(300)
class ConsoleBrowserTest {
    private static final int BULK_TOPICS = 10_000;
    private static final int SCHEDULED = 30;
    private static final int DUE_NOW = 5;

    @TempDir
    static Path dir;
    private static TestCluster cluster;
    private static HourglassClient client;
    private static WebDriver browser;
    private static final List<AutoCloseable> open = new ArrayList<>();
    private static String base;

    @BeforeAll
    static void start() throws Exception {
        browser = HeadlessChromium.start();
        cluster = TestCluster.start(dir.resolve("cluster"), 3, Map.of());
        cluster.awaitLeader();
        client = HourglassClient.builder().servers(cluster.targetList()).build();
        seed();
        base = "http://127.0.0.1:" + cluster.node(2).httpPort() + "/"; // any node serves the console
    }

    /** 10 000 topics of one scheduled message, a topic with a timeline and a consumer group, a room with two members. */
    private static void seed() throws Exception {
        List<Message> batch = new ArrayList<>();
        for (int i = 0; i < BULK_TOPICS; i++) {
            batch.add(Message.builder(String.format("bulk-%05d", i)).payload("x").delay(Duration.ofHours(2)).build());
            if (batch.size() == 1_000) {
                client.publishBatch(batch);
                batch.clear();
            }
        }
        for (int i = 0; i < SCHEDULED; i++) {
            batch.add(Message.builder("timeline").payload("later-" + i).delay(Duration.ofSeconds(150)).build());
        }
        client.publishBatch(batch);
        Subscription workers = client.subscribe("timeline", "workers", (m, ctx) -> { }); // holds what it gets
        open.add(workers);
        await().atMost(Duration.ofSeconds(30)).until(workers::isSubscribed);
        for (int i = 0; i < DUE_NOW; i++) {
            client.publish(Message.builder("due-soon").payload("now-" + i).build());
        }
        client.publish(Message.builder("timeline").payload("cancel-me").delay(Duration.ofSeconds(60)).build());
        RoomSession[] a = new RoomSession[1];
        a[0] = client.rooms().openSession(RoomSessionOptions.of(m -> { // acks the first message only
            if (m.payloadUtf8().equals("first")) {
                a[0].ack(m);
            }
        }));
        RoomSession[] b = new RoomSession[1];
        b[0] = client.rooms().openSession(RoomSessionOptions.of(m -> b[0].ack(m)));
        open.add(a[0]);
        open.add(b[0]);
        a[0].subscribe("lobby", RoomMode.SYNC).join();
        b[0].subscribe("lobby", RoomMode.SYNC).join();
        client.rooms().send("lobby", "first", 0);
        client.rooms().send("lobby", "second", 0);
        // The first message's barrier completed; the second waits for the member that never acks it.
        await().atMost(Duration.ofSeconds(30)).until(() -> client.rooms().state("lobby").backlog() == 0
                && client.rooms().state("lobby").members().stream().filter(io.hourglass.client.RoomStatus.Member::ready)
                        .count() == 1);
    }

    @AfterAll
    static void stop() throws Exception {
        if (browser != null) {
            browser.quit();
        }
        for (AutoCloseable c : open) {
            c.close();
        }
        if (client != null) {
            client.close();
        }
        if (cluster != null) {
            cluster.close();
        }
    }

    private static void go(String hash) {
        browser.get(base + hash);
    }

    /** The text of the first element {@code css} finds, or empty (also when a refresh just replaced it). */
    private static String text(String css) {
        try {
            List<WebElement> found = browser.findElements(By.cssSelector(css));
            return found.isEmpty() ? "" : found.get(0).getText();
        } catch (org.openqa.selenium.StaleElementReferenceException e) {
            return "";
        }
    }

    /** Clicks {@code e} after scrolling it to the middle of the window (the footer stays at the bottom). */
    private static void click(WebElement e) {
        ((org.openqa.selenium.JavascriptExecutor) browser).executeScript("arguments[0].scrollIntoView({block: 'center'})", e);
        e.click();
    }

    private static void shoot(String name) throws Exception {
        Path out = Path.of("target", "console-screenshots");
        Files.createDirectories(out);
        Files.write(out.resolve(name + ".png"), ((TakesScreenshot) browser).getScreenshotAs(OutputType.BYTES));
    }

    private static void assertNoConsoleErrors(String page) {
        List<LogEntry> severe = HeadlessChromium.errors(browser);
        assertTrue(severe.isEmpty(), page + ": console errors " + severe);
    }

    @Test
    void theClusterPageShowsEveryMemberAndTheOpenBanner() throws Exception {
        go("#/cluster");
        await().atMost(Duration.ofSeconds(30)).until(() -> browser.findElements(By.cssSelector("#content tbody tr")).size() == 3);
        String members = text("#content table");
        for (TestNode n : cluster.nodes()) {
            assertTrue(members.contains(n.id()), members);
        }
        assertTrue(members.contains("LEADER"), members);
        String metadataLeader = cluster.nodes().stream().filter(n -> n.node().metadata().isLeader()).findFirst()
                .map(TestNode::id).orElse("none");
        await().atMost(Duration.ofSeconds(30)).until(() -> text("#content .cards").contains("metadata leader"));
        assertTrue(text("#content .cards").contains(metadataLeader), "the metadata group's leader: " + text("#content .cards"));
        assertTrue(text("#banner").contains("Security is off"), "the open banner: " + text("#banner"));
        await().atMost(Duration.ofSeconds(30)).until(() -> !text("svg.chart").contains("after two refreshes"));
        shoot("cluster");
        assertNoConsoleErrors("cluster");
    }

    @Test
    void theTopicListPagesThroughTenThousandTopicsAndFilters() throws Exception {
        go("#/topics");
        await().atMost(Duration.ofSeconds(60)).until(() -> text("#range").startsWith("1–50 of "));
        assertEquals("1–50 of 10,002", text("#range"), "every topic, a page at a time");
        assertEquals(50, browser.findElements(By.cssSelector("#content tbody tr")).size());
        click(browser.findElement(By.id("next")));
        await().atMost(Duration.ofSeconds(30)).until(() -> text("#range").startsWith("51–100"));
        assertTrue(text("#content table").contains("bulk-00050"), "the second page starts where the first ended");
        shoot("topics");
        WebElement prefix = browser.findElement(By.id("prefix"));
        prefix.clear();
        prefix.sendKeys("timeline");
        await().atMost(Duration.ofSeconds(30)).until(() -> text("#range").equals("1–1 of 1"));
        assertTrue(text("#content table").contains("timeline"));
        assertNoConsoleErrors("topics");
    }

    @Test
    void aTopicShowsItsTimelineAndCancellingAMessageDeletesIt() throws Exception {
        go("#/topic/timeline");
        await().atMost(Duration.ofSeconds(30)).until(() -> !browser.findElements(By.id("timeline")).isEmpty());
        WebElement timeline = browser.findElement(By.id("timeline"));
        assertEquals(String.valueOf(SCHEDULED + 1), timeline.getAttribute("data-total"),
                "the timeline counts every message scheduled in the topic");
        List<Long> bars = browser.findElements(By.cssSelector("#timeline rect.bar")).stream()
                .map(b -> Long.parseLong(b.getAttribute("data-count"))).toList();
        assertEquals(61, bars.size(), "the due bar and 60 one-minute buckets");
        assertTrue(bars.contains((long) SCHEDULED), "one bucket holds the 30 messages due in 150 s: " + bars);
        assertTrue(text("#content").contains("workers"), "the group and its consumer are listed");
        shoot("topic");

        long before = client.admin().topicStats("timeline").getPending();
        WebElement cancel = browser.findElements(By.cssSelector("button.cancel")).stream()
                .filter(b -> b.findElement(By.xpath("./ancestor::tr")).getText().contains("cancel-me"))
                .findFirst().orElseThrow(() -> new AssertionError("the message to cancel is listed: "
                        + text("#content")));
        String id = cancel.getAttribute("data-id");
        click(cancel);
        await().atMost(Duration.ofSeconds(10)).until(() -> browser.findElement(By.id("confirm")).isDisplayed());
        assertTrue(text("#confirm-text").contains(id), "the dialog names the message");
        browser.findElement(By.id("confirm-ok")).click();
        await().atMost(Duration.ofSeconds(30)).until(() -> text("#result").contains("cancelled"));
        await().atMost(Duration.ofSeconds(30)).until(() -> client.admin().topicStats("timeline").getPending() == before - 1);
        assertTrue(assertThrowsNotFound(() -> client.admin().getMessage("timeline", id)), "the cancelled message is gone");
        assertNoConsoleErrors("topic");
    }

    private static boolean assertThrowsNotFound(Runnable call) {
        try {
            call.run();
            return false;
        } catch (io.hourglass.client.HourglassClientException e) {
            return io.hourglass.client.AdminClient.statusCode(e) == io.grpc.Status.Code.NOT_FOUND;
        }
    }

    @Test
    void aRoomShowsItsMembersAndBarrierLatencies() throws Exception {
        go("#/rooms");
        await().atMost(Duration.ofSeconds(30)).until(() -> text("#content table").contains("lobby"));
        shoot("rooms");
        go("#/room/lobby");
        await().atMost(Duration.ofSeconds(30)).until(() -> !browser.findElements(By.id("barrier")).isEmpty());
        assertEquals(2, browser.findElements(By.cssSelector("#content table")).get(0)
                .findElements(By.cssSelector("tbody tr")).size(), "two members");
        assertTrue(text("#content").contains("not acked"), "the member that holds the message is not ready");
        shoot("room");
        assertNoConsoleErrors("room");
    }
}
