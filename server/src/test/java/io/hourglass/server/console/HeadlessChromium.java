package io.hourglass.server.console;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.logging.Level;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.logging.LogEntry;
import org.openqa.selenium.logging.LogType;
import org.openqa.selenium.logging.LoggingPreferences;

/**
 * Debian's chromium, headless, driven through its chromedriver (no driver download): what the
 * console's browser tests run. {@code -Dconsole.browser=false} skips them on a machine without
 * {@code chromium} and {@code chromium-driver}; otherwise their absence fails the test, naming them.
 */
final class HeadlessChromium {
    private static final Path CHROMIUM = Path.of(System.getProperty("console.chromium", "/usr/bin/chromium"));
    private static final Path DRIVER = Path.of(System.getProperty("console.chromedriver", "/usr/bin/chromedriver"));

    private HeadlessChromium() {
    }

    /** A new browser with its console log kept; {@code extraArguments} are chromium's flags. */
    static WebDriver start(String... extraArguments) {
        assumeFalse("false".equals(System.getProperty("console.browser")), "off with -Dconsole.browser=false");
        assertTrue(Files.isExecutable(CHROMIUM) && Files.isExecutable(DRIVER), "the console tests need " + CHROMIUM
                + " and " + DRIVER + " (apt-get install chromium chromium-driver), or -Dconsole.browser=false");
        ChromeOptions options = new ChromeOptions();
        options.setBinary(CHROMIUM.toFile());
        options.addArguments("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                "--no-first-run", "--window-size=1400,1000");
        options.addArguments(extraArguments);
        LoggingPreferences logs = new LoggingPreferences();
        logs.enable(LogType.BROWSER, Level.ALL);
        options.setCapability("goog:loggingPrefs", logs);
        return new ChromeDriver(new ChromeDriverService.Builder().usingDriverExecutable(DRIVER.toFile())
                .usingAnyFreePort().build(), options);
    }

    /** The console log's errors since the last call. */
    static List<LogEntry> errors(WebDriver browser) {
        return browser.manage().logs().get(LogType.BROWSER).getAll().stream()
                .filter(e -> e.getLevel().intValue() >= Level.SEVERE.intValue()).toList();
    }
}
