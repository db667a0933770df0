package io.hourglass.chaos;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The installed tree built by the {@code deploy} module, {@code ../deploy/target/hourglass}
 * relative to this module, and the place test runs write to, {@code target/chaos-runs}.
 */
public record Distribution(Path home, Path runsDir) {

    /** Finds the distribution next to this module; fails with the command to build it if it is missing. */
    public static Distribution locate() {
        Path module = Path.of(System.getProperty("basedir", System.getProperty("user.dir"))).toAbsolutePath();
        Path home = module.resolveSibling("deploy").resolve("target").resolve("hourglass").normalize();
        Distribution d = new Distribution(home, module.resolve("target").resolve("chaos-runs"));
        for (Path script : new Path[] {d.serverScript(), d.cliScript()}) {
            if (!Files.isExecutable(script)) {
                throw new IllegalStateException("no executable " + script
                        + "; build the distribution first: mvn -pl deploy,chaos-tests install");
            }
        }
        return d;
    }

    public Path serverScript() {
        return home.resolve("bin").resolve("hourglass-server");
    }

    public Path cliScript() {
        return home.resolve("bin").resolve("hourglass");
    }

    /** A script of the deploy module's source tree, e.g. {@code deploy/netns-cluster.sh}. */
    public Path deployScript(String name) {
        return home.getParent().getParent().resolve(name);
    }

    public Path shippedConfig() {
        return home.resolve("conf").resolve("hourglass.properties");
    }

    /** A new directory for one test run, e.g. {@code target/chaos-runs/ProcessRestartTest-1234/}. */
    public Path newRunDir(String label) {
        try {
            Files.createDirectories(runsDir);
            return Files.createTempDirectory(runsDir, label + "-");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
