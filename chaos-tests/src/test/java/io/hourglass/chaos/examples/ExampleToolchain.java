package io.hourglass.chaos.examples;

import static org.junit.jupiter.api.Assertions.fail;

import io.hourglass.chaos.Distribution;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;

/**
 * What the client examples need on this machine, checked before a test starts a cluster: a missing
 * package fails the test with a message naming it (CI installs them, see {@code .ci/run}), never
 * skips it. Also the inputs the examples get: the {@code .proto} files the distribution ships, and the
 * Node packages of {@code examples/node/package-lock.json}, installed with {@code npm ci} into a
 * build directory so that nothing is written into the source tree.
 */
final class ExampleToolchain {
    /** The Python that sees Debian's packages; a pyenv or venv {@code python3} on PATH may not. */
    static final String PYTHON = System.getProperty("hourglass.examples.python", "/usr/bin/python3");
    private static final Duration CHECK_TIMEOUT = Duration.ofSeconds(30);
    private static final Duration NPM_TIMEOUT = Duration.ofMinutes(5);
    private static final int MIN_NODE_MAJOR = 18;

    private ExampleToolchain() {
    }

    /** The command that runs a Python example; fails naming the Debian package that is missing. */
    static List<String> python(Path scratch) {
        Outcome version = run(List.of(PYTHON, "--version"), scratch, CHECK_TIMEOUT);
        if (version == null) {
            fail(PYTHON + " not found: install Debian's python3 (apt-get install python3; .ci/run does)");
        }
        Outcome grpc = run(List.of(PYTHON, "-c", "import grpc, google.protobuf"), scratch, CHECK_TIMEOUT);
        if (grpc.exit() != 0) {
            fail(PYTHON + " cannot import grpc and google.protobuf: install Debian's python3-grpcio and "
                    + "python3-protobuf (apt-get install python3-grpcio python3-protobuf; .ci/run does): " + grpc.output());
        }
        Outcome protoc = run(List.of("protoc", "--version"), scratch, CHECK_TIMEOUT);
        if (protoc == null || protoc.exit() != 0) {
            fail("protoc not found: install Debian's protobuf-compiler (apt-get install protobuf-compiler; .ci/run does)");
        }
        return List.of(PYTHON, "-B"); // -B: no __pycache__ in the source tree
    }

    /**
     * Checks node and npm, then installs {@code examples/node}'s locked packages into
     * {@code buildDir/node_modules} ({@code npm ci}, skipped when that lockfile is installed there
     * already) and returns that directory, for {@code NODE_PATH}.
     */
    static Path nodeModules(Path nodeSources, Path buildDir) {
        Outcome node = run(List.of("node", "--version"), buildDir, CHECK_TIMEOUT);
        if (node == null || node.exit() != 0) {
            fail("node not found: install Node.js " + MIN_NODE_MAJOR + "+ (Debian: apt-get install nodejs npm; .ci/run does)");
        }
        int major = Integer.parseInt(node.output().strip().replaceFirst("^v", "").split("\\.")[0]);
        if (major < MIN_NODE_MAJOR) {
            fail("node " + node.output().strip() + " is too old: the Node example needs " + MIN_NODE_MAJOR + "+");
        }
        Outcome npm = run(List.of("npm", "--version"), buildDir, CHECK_TIMEOUT);
        if (npm == null || npm.exit() != 0) {
            fail("npm not found: install Debian's npm (apt-get install npm; .ci/run does)");
        }
        try {
            Path lock = nodeSources.resolve("package-lock.json");
            Path installedLock = buildDir.resolve("package-lock.json");
            Path modules = buildDir.resolve("node_modules");
            if (Files.isDirectory(modules) && Files.exists(installedLock) && Files.mismatch(lock, installedLock) == -1) {
                return modules;
            }
            Files.createDirectories(buildDir);
            Files.copy(nodeSources.resolve("package.json"), buildDir.resolve("package.json"),
                    StandardCopyOption.REPLACE_EXISTING);
            Files.copy(lock, installedLock, StandardCopyOption.REPLACE_EXISTING);
            // --ignore-scripts: protobufjs' postinstall only prints version advice; nothing needs building.
            Outcome ci = run(List.of("npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund"), buildDir, NPM_TIMEOUT);
            if (ci == null || ci.exit() != 0) {
                Files.deleteIfExists(installedLock);
                fail("npm ci of examples/node/package-lock.json failed in " + buildDir
                        + " (is the npm registry reachable?): " + (ci == null ? "npm did not start" : ci.output()));
            }
            return modules;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * The {@code hourglass/v1/*.proto} files the distribution ships (inside its client jar,
     * {@code lib/io.hourglass.hourglass-client-*.jar}), extracted into {@code dest}.
     */
    static Path shippedProtos(Distribution distribution, Path dest) {
        Path jar = clientJar(distribution);
        int extracted = 0;
        try (ZipFile zip = new ZipFile(jar.toFile())) {
            for (ZipEntry entry : java.util.Collections.list(zip.entries())) {
                if (entry.isDirectory() || !entry.getName().matches("hourglass/v1/[^/]+\\.proto")) {
                    continue;
                }
                Path target = dest.resolve(entry.getName());
                Files.createDirectories(target.getParent());
                try (InputStream in = zip.getInputStream(entry)) {
                    Files.copy(in, target, StandardCopyOption.REPLACE_EXISTING);
                }
                extracted++;
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + jar, e);
        }
        if (extracted == 0) {
            fail(jar + " holds no hourglass/v1/*.proto: the distribution no longer ships the API's .proto files");
        }
        return dest;
    }

    private static Path clientJar(Distribution distribution) {
        Path lib = distribution.home().resolve("lib");
        List<Path> jars = new ArrayList<>();
        try (DirectoryStream<Path> found = Files.newDirectoryStream(lib, "io.hourglass.hourglass-client-*.jar")) {
            found.forEach(jars::add);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot list " + lib, e);
        }
        if (jars.size() != 1) {
            fail("expected one client jar in " + lib + ", found " + jars);
        }
        return jars.get(0);
    }

    /** What a finished command printed (stdout and stderr) and its exit code. */
    record Outcome(int exit, String output) {
    }

    /** Runs {@code command} in {@code dir}; null when it cannot be started (not installed). */
    private static Outcome run(List<String> command, Path dir, Duration timeout) {
        Path out;
        try {
            Files.createDirectories(dir);
            out = Files.createTempFile(dir, "command-", ".out");
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write to " + dir, e);
        }
        try {
            Process p;
            try {
                p = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true)
                        .redirectOutput(out.toFile()).start();
            } catch (IOException notInstalled) {
                return null;
            }
            if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                p.destroyForcibly();
                fail(String.join(" ", command) + " did not finish within " + timeout);
            }
            return new Outcome(p.exitValue(), tail(Files.readString(out, StandardCharsets.UTF_8), 40));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the output of " + command, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted running " + command, e);
        } finally {
            try {
                Files.deleteIfExists(out);
            } catch (IOException e) {
                System.out.println("could not delete " + out + ": " + e);
            }
        }
    }

    private static String tail(String text, int lines) {
        List<String> all = Arrays.asList(text.split("\n"));
        return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
    }
}
