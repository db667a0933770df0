package io.hourglass.server.console;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hourglass.server.security.TestCertificates;
import io.hourglass.server.testing.TestNode;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.openqa.selenium.By;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.logging.LogEntry;

/**
 * The console of a node with security on (TLS on every port, tokens): the page loads without a
 * token but its API answers 401; the console asks for a token, says a wrong one was refused, and
 * with a good one shows the cluster as that principal, without the open-cluster banner.
 */
@Timeout(180)
class ConsoleSecurityBrowserTest {

    @TempDir
    static Path dir;
    private static TestCertificates certs;
    private static TestNode node;
    private static WebDriver browser;

    @BeforeAll
    static void start() throws Exception {
        // The test CA is not in the browser's store; the HTTP client below checks the chain instead.
        browser = HeadlessChromium.start("--ignore-certificate-errors");
        certs = TestCertificates.make(dir.resolve("certs"), "admin");
        node = TestNode.start(dir.resolve("n1"), certs.nodeSettings());
        await().atMost(Duration.ofSeconds(60)).until(node::leads);
    }

    @AfterAll
    static void stop() {
        if (browser != null) {
            browser.quit();
        }
        if (node != null) {
            node.close();
        }
    }

    private static String base() {
        return "https://127.0.0.1:" + node.httpPort() + "/";
    }

    private static HttpResponse<String> get(String path) throws Exception {
        HttpClient http = HttpClient.newBuilder().sslContext(TestCertificates.trusting(certs.ca())).build();
        return http.send(HttpRequest.newBuilder(URI.create(base() + path.substring(1))).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private static boolean visible(String id) {
        List<WebElement> found = browser.findElements(By.id(id));
        return !found.isEmpty() && found.get(0).isDisplayed();
    }

    private static void signIn(String token) {
        WebElement field = browser.findElement(By.id("token"));
        field.clear();
        field.sendKeys(token);
        browser.findElement(By.cssSelector("#signin button[type=submit]")).click();
    }

    @Test
    void theConsoleAsksForATokenAndWorksWithAGoodOne() throws Exception {
        HttpResponse<String> anonymous = get("/api/v1/topics");
        assertEquals(401, anonymous.statusCode(), anonymous.body());
        assertTrue(anonymous.body().contains("UNAUTHENTICATED"), anonymous.body());
        assertEquals(200, get("/").statusCode(), "the page itself carries no data and loads without a token");

        browser.get(base());
        await().atMost(Duration.ofSeconds(30)).until(() -> visible("signin"));
        signIn("hg_not-a-token-anyone-made");
        await().atMost(Duration.ofSeconds(30)).until(() ->
                browser.findElement(By.id("signin-error")).getText().contains("refused"));
        assertTrue(browser.findElements(By.cssSelector("#content tbody tr")).isEmpty(), "nothing shown without a token");

        signIn(certs.bootstrapToken());
        await().atMost(Duration.ofSeconds(30)).until(() -> !visible("signin")
                && browser.findElements(By.cssSelector("#content tbody tr")).size() == 1);
        assertTrue(browser.findElement(By.id("whoami")).getText().contains("signed in as"),
                browser.findElement(By.id("whoami")).getText());
        assertTrue(browser.findElement(By.cssSelector("#content table")).getText().contains(node.id()));
        assertFalse(visible("banner"), "no open-cluster banner when security is on");

        List<LogEntry> errors = HeadlessChromium.errors(browser).stream()
                .filter(e -> !e.getMessage().contains("401")) // the refused calls before signing in
                .toList();
        assertTrue(errors.isEmpty(), "console errors " + errors);
    }
}
