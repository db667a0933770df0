package io.hourglass.chaos;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.hourglass.client.HourglassClient;
import io.hourglass.client.Message;
import io.hourglass.api.v1.BrokerGrpc;
import io.hourglass.api.v1.ShardsRequest;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A follower never sends clients to a leader it stopped hearing from. With the leader paused
 * ({@code SIGSTOP}: its connections stay open, so nothing tells the followers it is gone), a
 * follower that has not heard from it for 3/4 of {@code raft.electionTimeoutMin} names no leader
 * (clients then try another server) until a new one is elected, which it names from then on. It
 * used to name the paused node until the election, which sent subscribers back to it. The nodes run
 * with a 2 s minimum election timeout, and a publish load keeps the followers hearing from the
 * leader until the pause: the election then comes about 2 s after it, and from 1.5 s on the two
 * behaviours differ.
 */
@Timeout(value = 4, unit = TimeUnit.MINUTES)
final class PausedLeaderHintTest {
    private static final Duration READY_TIMEOUT = Duration.ofSeconds(120);
    private static final Map<String, String> TIMEOUTS = Map.of("HOURGLASS_RAFT_ELECTIONTIMEOUTMIN", "2s",
            "HOURGLASS_RAFT_ELECTIONTIMEOUTMAX", "8s");
    /** 3/4 of the minimum election timeout: past it, the paused leader must not be named. */
    private static final long STALE_AFTER_MS = 1_500;
    /** Scheduling slack on a busy 2-core machine before the rule must hold. */
    private static final long SLACK_MS = 250;

    @RegisterExtension
    final ServerLogsOnFailure serverLogs = new ServerLogsOnFailure();

    private ProcessCluster cluster;
    private ServerProcess paused;
    private final List<ManagedChannel> channels = new ArrayList<>();

    @AfterEach
    void stop() throws Exception {
        try {
            if (paused != null) {
                signal("CONT", paused.pid());
            }
            channels.forEach(ManagedChannel::shutdownNow);
        } finally {
            if (cluster != null) {
                cluster.close();
            }
        }
    }

    @Test
    void followersNameNoLeaderTheyStoppedHearingFromAndThenTheNewOne() throws Exception {
        Distribution distribution = Distribution.locate();
        Path runDir = distribution.newRunDir(getClass().getSimpleName());
        cluster = ProcessCluster.create(distribution, runDir, 3, TIMEOUTS);
        serverLogs.watch(cluster.nodes());
        cluster.startAll(READY_TIMEOUT);
        ServerProcess leader = cluster.awaitLeader(Duration.ofSeconds(60));
        String pausedAddress = leader.ports().grpcAddress();
        List<BrokerGrpc.BrokerBlockingStub> followers = new ArrayList<>();
        for (ServerProcess n : cluster.nodes()) {
            if (n != leader) {
                ManagedChannel c = ManagedChannelBuilder.forTarget(n.ports().grpcAddress()).usePlaintext().build();
                channels.add(c);
                followers.add(BrokerGrpc.newBlockingStub(c));
            }
        }
        await("every follower names the leader").atMost(Duration.ofSeconds(30))
                .until(() -> followers.stream().allMatch(f -> named(f).equals(pausedAddress)));

        // Appends until the pause, so that the followers last heard from the leader right before it.
        java.util.concurrent.atomic.AtomicBoolean publishing = new java.util.concurrent.atomic.AtomicBoolean(true);
        HourglassClient client = HourglassClient.builder().servers(pausedAddress)
                .retryDeadline(Duration.ofSeconds(1)).build();
        java.util.concurrent.atomic.AtomicLong published = new java.util.concurrent.atomic.AtomicLong();
        Thread load = new Thread(() -> {
            for (int i = 0; publishing.get(); i++) {
                try {
                    client.publish(Message.builder("hint-load").payload("m-" + i).build());
                    published.incrementAndGet();
                } catch (RuntimeException e) {
                    // the paused leader answers nothing: only load
                }
            }
        }, "hint-load");
        load.setDaemon(true);
        load.start();
        await("the load commits").atMost(Duration.ofSeconds(30)).until(() -> published.get() > 50);

        signal("STOP", leader.pid());
        paused = leader;
        long pausedAt = System.nanoTime();
        java.util.Deque<String> seen = new java.util.ArrayDeque<>();
        await("a follower names a new leader").atMost(Duration.ofSeconds(40)).pollInterval(Duration.ofMillis(20))
                .until(() -> {
                    long sinceMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - pausedAt);
                    boolean newLeader = false;
                    for (BrokerGrpc.BrokerBlockingStub f : followers) {
                        String named = named(f);
                        seen.addLast(sinceMs + " ms: '" + named + "'");
                        if (seen.size() > 40) {
                            seen.removeFirst();
                        }
                        if (sinceMs > STALE_AFTER_MS + SLACK_MS && named.equals(pausedAddress)) {
                            throw new AssertionError("a follower still named the paused leader " + sinceMs
                                    + " ms after the pause; last answers: " + seen);
                        }
                        newLeader |= !named.isEmpty() && !named.equals(pausedAddress);
                    }
                    return newLeader;
                });
        System.out.println("PausedLeaderHintTest: the followers' last answers after the pause: " + seen);
        publishing.set(false);
        closeQuietly(client);
    }

    private static void closeQuietly(HourglassClient client) {
        Thread closer = new Thread(client::close, "hint-load-close"); // the paused leader holds its calls
        closer.setDaemon(true);
        closer.start();
    }

    /** The client address a follower names as shard 0's leader; empty when none. */
    private static String named(BrokerGrpc.BrokerBlockingStub follower) {
        return follower.withDeadlineAfter(5, TimeUnit.SECONDS).shards(ShardsRequest.getDefaultInstance())
                .getLeaders(0).getAddress();
    }

    private static void signal(String signal, long pid) throws IOException, InterruptedException {
        Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(pid)).inheritIO().start();
        assertTrue(kill.waitFor(10, TimeUnit.SECONDS) && kill.exitValue() == 0, "kill -" + signal + " " + pid + " failed");
    }
}
