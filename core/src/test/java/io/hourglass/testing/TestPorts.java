package io.hourglass.testing;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Ports for test servers, taken from below the kernel's ephemeral range.
 *
 * <p>A port from {@code new ServerSocket(0)} is ephemeral: once that socket closes, any outgoing
 * connection (a Ratis peer dialling another, a gRPC channel) may be given the same number as its
 * source port, and the server that later binds it fails with "Failed to bind". Ports below
 * {@link #FIRST_EPHEMERAL} are never handed out that way, so a port this class returned stays
 * free until a server binds it. Each JVM walks the range from a random start and never hands out
 * the same port twice, so restarts that keep a node's address and parallel test JVMs are safe.
 */
public final class TestPorts {
    /** Linux' default {@code net.ipv4.ip_local_port_range} starts here. */
    public static final int FIRST_EPHEMERAL = 32768;
    private static final int LOWEST = 12000;
    private static final int SPAN = FIRST_EPHEMERAL - LOWEST;
    private static final AtomicInteger NEXT = new AtomicInteger(ThreadLocalRandom.current().nextInt(SPAN));

    private TestPorts() {
    }

    /** A port no server listens on now and that no outgoing connection will take. */
    public static int next() {
        for (int attempt = 0; attempt < SPAN; attempt++) {
            int port = LOWEST + Math.floorMod(NEXT.getAndIncrement(), SPAN);
            if (bindable(port)) {
                return port;
            }
        }
        throw new IllegalStateException("no free port in " + LOWEST + ".." + (FIRST_EPHEMERAL - 1));
    }

    /**
     * The first of {@code count} consecutive free ports, for scripts that number ports from a
     * base. The whole block is reserved, so later calls of {@link #next()} skip it.
     */
    public static synchronized int block(int count) {
        for (int attempt = 0; attempt < SPAN; attempt++) {
            int base = LOWEST + Math.floorMod(NEXT.getAndAdd(count), SPAN);
            if (base + count <= FIRST_EPHEMERAL && allBindable(base, count)) {
                return base;
            }
        }
        throw new IllegalStateException("no " + count + " consecutive free ports below " + FIRST_EPHEMERAL);
    }

    private static boolean allBindable(int base, int count) {
        for (int p = base; p < base + count; p++) {
            if (!bindable(p)) {
                return false;
            }
        }
        return true;
    }

    private static boolean bindable(int port) {
        try (ServerSocket s = new ServerSocket()) {
            s.setReuseAddress(true);
            s.bind(new InetSocketAddress(port), 1);
            return true;
        } catch (IOException taken) {
            return false;
        }
    }
}
