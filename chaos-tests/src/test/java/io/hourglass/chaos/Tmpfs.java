package io.hourglass.chaos;

import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A small tmpfs mounted as a node's data directory, so that a test can fill the node's disk: a real
 * file system that answers ENOSPC. Needs root ({@link #unavailable()} says why not); {@link #close()}
 * unmounts it, and must run after the node that uses it is gone (a busy mount is detached lazily).
 */
public final class Tmpfs implements AutoCloseable {
    private static final String FILLER = "filler";

    private final Path mountPoint;
    private boolean mounted;

    private Tmpfs(Path mountPoint) {
        this.mountPoint = mountPoint;
    }

    /** Null when this test run can mount a tmpfs; otherwise why not (for a skipped test's message). */
    public static String unavailable() {
        String user = System.getProperty("user.name");
        if (!"root".equals(user)) {
            return "mounting a tmpfs needs root; this test runs as " + user;
        }
        return Files.isExecutable(Path.of("/bin/mount")) || Files.isExecutable(Path.of("/usr/bin/mount"))
                ? null : "no mount command";
    }

    /** Mounts a tmpfs of {@code megabytes} at {@code mountPoint} (created if missing; must be empty). */
    public static Tmpfs mount(Path mountPoint, int megabytes) {
        Tmpfs t = new Tmpfs(mountPoint);
        try {
            Files.createDirectories(mountPoint);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        run("mount", "-t", "tmpfs", "-o", "size=" + megabytes + "m", "tmpfs", mountPoint.toString());
        t.mounted = true;
        return t;
    }

    /** Writes a filler file until the file system is full; returns the bytes it took. */
    public long fill() {
        long written = 0;
        byte[] chunk = new byte[1 << 20];
        try (OutputStream out = Files.newOutputStream(mountPoint.resolve(FILLER))) {
            for (int size = chunk.length; size > 0; size /= 4) {
                try {
                    while (true) {
                        out.write(chunk, 0, size);
                        out.flush();
                        written += size;
                    }
                } catch (IOException full) {
                    // ENOSPC: go on with smaller writes until not even 1 byte fits
                }
            }
        } catch (IOException closing) {
            // The close may fail on a full file system; the filler's pages are taken either way.
        }
        return written;
    }

    /** Deletes the filler: the space comes back. */
    public void free() {
        try {
            Files.deleteIfExists(mountPoint.resolve(FILLER));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Free bytes as the file system reports them. */
    long usable() {
        try {
            return Files.getFileStore(mountPoint).getUsableSpace();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void close() {
        if (mounted) {
            mounted = false;
            try {
                run("umount", mountPoint.toString());
            } catch (IllegalStateException busy) {
                run("umount", "-l", mountPoint.toString());
            }
        }
    }

    private static void run(String... command) {
        try {
            Process p = new ProcessBuilder(List.of(command)).redirectErrorStream(true).start();
            if (!p.waitFor(30, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IllegalStateException(String.join(" ", command) + " did not finish");
            }
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (p.exitValue() != 0) {
                throw new IllegalStateException(String.join(" ", command) + " failed (" + p.exitValue() + "): " + out);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted: " + String.join(" ", command), e);
        }
    }
}
