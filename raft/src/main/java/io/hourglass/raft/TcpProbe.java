package io.hourglass.raft;

import java.io.IOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.List;

/** One TCP connection attempt to a peer's Raft port, closed at once: what answers there. */
enum TcpProbe {
    /** Something listens: the process is up (perhaps paused: the kernel accepts for it). */
    ACCEPTED,
    /** The host answered that nothing listens: the process is gone. */
    REFUSED,
    /** No answer in time, or no route: cut off, or the host is down. */
    NO_ANSWER;

    /**
     * How many of {@code addresses} accept a TCP connection within {@code timeoutMs}, all tried at
     * once (non-blocking connects under one selector), stopping as soon as {@code enough} did.
     */
    static int accepting(List<String> addresses, int enough, int timeoutMs) {
        int accepted = 0;
        try (Selector selector = Selector.open()) {
            List<SocketChannel> channels = new ArrayList<>();
            try {
                for (String address : addresses) {
                    int colon = address.lastIndexOf(':');
                    if (colon < 0) {
                        continue;
                    }
                    SocketChannel ch = SocketChannel.open();
                    channels.add(ch);
                    ch.configureBlocking(false);
                    try {
                        if (ch.connect(new InetSocketAddress(address.substring(0, colon),
                                Integer.parseInt(address.substring(colon + 1))))) {
                            accepted++;
                        } else {
                            ch.register(selector, SelectionKey.OP_CONNECT);
                        }
                    } catch (IOException | IllegalArgumentException e) {
                        // refused or unroutable at once: not accepting
                    }
                }
                long deadline = System.nanoTime() + timeoutMs * 1_000_000L;
                while (accepted < enough && !selector.keys().isEmpty()) {
                    long leftMs = (deadline - System.nanoTime()) / 1_000_000;
                    if (leftMs <= 0 || selector.select(leftMs) == 0 && System.nanoTime() >= deadline) {
                        break;
                    }
                    for (SelectionKey key : selector.selectedKeys()) {
                        key.cancel();
                        try {
                            if (((SocketChannel) key.channel()).finishConnect()) {
                                accepted++;
                            }
                        } catch (IOException e) {
                            // refused, reset: not accepting
                        }
                    }
                    selector.selectedKeys().clear();
                    selector.selectNow(); // flush the cancelled keys
                }
            } finally {
                for (SocketChannel ch : channels) {
                    ch.close();
                }
            }
        } catch (IOException e) {
            return accepted;
        }
        return accepted;
    }

    /** Probes {@code host:port}, waiting at most {@code timeoutMs}. */
    static TcpProbe connect(String address, int timeoutMs) {
        int colon = address.lastIndexOf(':');
        if (colon < 0) {
            return NO_ANSWER;
        }
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(address.substring(0, colon),
                    Integer.parseInt(address.substring(colon + 1))), timeoutMs);
            return ACCEPTED;
        } catch (ConnectException e) {
            // ECONNREFUSED; a ConnectException also reports a kernel connect timeout, which is no refusal
            return e.getMessage() != null && e.getMessage().contains("refused") ? REFUSED : NO_ANSWER;
        } catch (IOException | IllegalArgumentException e) {
            return NO_ANSWER;
        }
    }
}
