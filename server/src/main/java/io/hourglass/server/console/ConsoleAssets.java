package io.hourglass.server.console;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Map;

/**
 * The console's static files (HTML, one script, one style sheet), read once from the classpath:
 * no build step, nothing fetched from elsewhere at run time, so the console works offline.
 */
public final class ConsoleAssets {
    /** A file: its media type and bytes. */
    public record Asset(String type, byte[] body) {
    }

    private static final Map<String, String> FILES = Map.of(
            "/", "index.html",
            "/console/console.js", "console.js",
            "/console/console.css", "console.css");
    private final Map<String, Asset> assets;

    public ConsoleAssets() {
        java.util.HashMap<String, Asset> loaded = new java.util.HashMap<>();
        FILES.forEach((path, file) -> loaded.put(path, new Asset(type(file), read(file))));
        assets = Map.copyOf(loaded);
    }

    /** The file served at {@code path}, or null. */
    public Asset get(String path) {
        return assets.get(path.equals("/index.html") || path.equals("/console/") || path.equals("/console")
                ? "/" : path);
    }

    private static String type(String file) {
        if (file.endsWith(".html")) {
            return "text/html; charset=utf-8";
        }
        return file.endsWith(".js") ? "text/javascript; charset=utf-8" : "text/css; charset=utf-8";
    }

    private static byte[] read(String file) {
        try (InputStream in = ConsoleAssets.class.getResourceAsStream(file)) {
            if (in == null) {
                throw new IllegalStateException("console file " + file + " is missing from the build");
            }
            return in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
