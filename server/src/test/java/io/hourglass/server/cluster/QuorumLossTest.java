package io.hourglass.server.cluster;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Status;
import io.hourglass.api.v1.BrokerGrpc;
import io.hourglass.api.v1.PublishMessage;
import io.hourglass.api.v1.PublishRequest;
import io.hourglass.api.v1.PublishResponse;
import io.hourglass.client.HourglassClient;
import io.hourglass.client.Message;
import io.hourglass.client.PublishResult;
import io.hourglass.client.Subscription;
import io.hourglass.client.UnavailableException;
import io.hourglass.server.testing.StreamRecorder;
import io.hourglass.server.testing.TestCluster;
import io.hourglass.server.testing.TestNode;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Five nodes tolerate two failures: with the leader and a follower down the cluster elects a new
 * leader and keeps publishing and delivering. With three down there is no majority: a publish
 * must then fail — not hang — with UNAVAILABLE, both as the client library reports it and as each
 * surviving node answers it on the wire. When the nodes return, publishing works again.
 */
@Timeout(240)
class QuorumLossTest {
    private static final Logger LOG = LoggerFactory.getLogger(QuorumLossTest.class);
    private static final String TOPIC = "quorum";
    private static final int PER_PHASE = 100;
    /**
     * How long a publish may take to fail without a majority. A proposal that is not committed
     * fails after {@code raft.requestTimeout} (5 s by default); four times that leaves room for a
     * busy machine but not for a hang (the raw probes allow the server a full minute).
     */
    private static final Duration REFUSAL_BOUND = Duration.ofSeconds(20);
    /**
     * The probing client's retry budget. Each attempt's deadline is capped by what is left of it,
     * so the client gives up within it plus one backoff; 10 s more is slack for a busy machine.
     */
    private static final Duration PROBE_RETRY_DEADLINE = Duration.ofSeconds(8);
    private static final Duration PROBE_GIVE_UP_BOUND = PROBE_RETRY_DEADLINE.plusSeconds(10);

    @TempDir
    Path dir;
    @RegisterExtension
    final ClusterResources resources = new ClusterResources();

    @Test
    void servesWithTwoOfFiveDownAndRefusesClearlyWithoutAMajority() {
        TestCluster cluster = resources.start(dir, 5, Map.of());
        HourglassClient client = resources.own(HourglassClient.builder().servers(cluster.targetList()).build());
        DeliveryLog log = new DeliveryLog();
        Subscription consumer = client.subscribe(TOPIC, "g", (m, ctx) -> {
            log.received("consumer", m);
            ctx.ack();
        });
        await("the consumer is subscribed").atMost(Duration.ofSeconds(30)).until(consumer::isSubscribed);
        Set<String> expected = new HashSet<>(publish(client, "all-up"));
        awaitReceived(log, expected, "all five up");

        TestNode leader = cluster.leader().orElseThrow();
        TestNode follower = cluster.followers().get(0);
        leader.stop();
        follower.stop();
        TestNode newLeader = cluster.awaitLeaderOtherThan(leader, Duration.ofSeconds(30));
        LOG.info("{} and {} stopped; {} leads", leader.id(), follower.id(), newLeader.id());
        expected.addAll(publish(client, "two-down"));
        awaitReceived(log, expected, "two of five down (the consumer reconnected on its own)");

        TestNode third = cluster.followers().get(0);
        third.stop();
        List<TestNode> minority = cluster.running();
        assertEquals(2, minority.size());
        LOG.info("{} stopped too; {} of 5 run", third.id(), minority.size());

        long probed = System.nanoTime();
        Map<TestNode, StreamRecorder<PublishResponse>> answers = probeEachNode(minority);
        UnavailableException refused;
        try (HourglassClient probe = HourglassClient.builder().servers(cluster.targetList())
                .retryDeadline(PROBE_RETRY_DEADLINE).build()) {
            long start = System.nanoTime();
            refused = assertThrows(UnavailableException.class,
                    () -> probe.publish(Message.of(TOPIC, "probe-client")), "publish without a majority");
            Duration took = Duration.ofNanos(System.nanoTime() - start);
            LOG.info("the client's publish failed after {} ms: {}", took.toMillis(), refused.getMessage());
            assertTrue(took.compareTo(PROBE_GIVE_UP_BOUND) < 0,
                    "the client gave up after " + took + ", beyond its deadline");
            assertFalse(refused.getMessage() == null || refused.getMessage().isBlank(), "the error says why");
        }
        assertEveryNodeRefusedWithUnavailable(answers, probed);

        third.startAgain();
        follower.startAgain();
        leader.startAgain();
        cluster.awaitLeader();
        expected.addAll(publish(client, "returned"));
        awaitReceived(log, expected, "all five back");
        LOG.info("done: {}", log.summary());

        // Last, so that a failure here does not hide the scenario above: the client's error
        // carries what the servers answered (UNAVAILABLE, with their reason), not a deadline of
        // the client's own making with gRPC internals.
        Status reported = refused.getCause() == null ? Status.UNKNOWN : Status.fromThrowable(refused.getCause());
        assertEquals(Status.Code.UNAVAILABLE, reported.getCode(),
                "the client reports the servers' UNAVAILABLE, but it said: " + refused.getMessage());
    }

    /** Publishes {@link #PER_PHASE} messages with the client's default retries; returns their ids. */
    private static List<String> publish(HourglassClient client, String phase) {
        List<Message> batch = IntStream.range(0, PER_PHASE)
                .mapToObj(i -> Message.of(TOPIC, phase + "-" + i)).toList();
        return client.publishBatch(batch).stream().map(PublishResult::id).toList();
    }

    private static void awaitReceived(DeliveryLog log, Set<String> ids, String phase) {
        await("every message delivered with " + phase).atMost(Duration.ofSeconds(60))
                .until(() -> log.receivedAll(ids));
    }

    /**
     * Sends one raw Publish to each node, with a deadline far beyond {@link #REFUSAL_BOUND}, so
     * that a node that hangs shows as one that has not answered.
     */
    private Map<TestNode, StreamRecorder<PublishResponse>> probeEachNode(List<TestNode> nodes) {
        Map<TestNode, StreamRecorder<PublishResponse>> answers = new LinkedHashMap<>();
        for (TestNode node : nodes) {
            ManagedChannel channel = ManagedChannelBuilder.forTarget(node.target()).usePlaintext().build();
            resources.own(channel::shutdownNow);
            StreamRecorder<PublishResponse> answer = new StreamRecorder<>();
            BrokerGrpc.newStub(channel).withDeadlineAfter(60, TimeUnit.SECONDS).publish(PublishRequest.newBuilder()
                    .addMessages(PublishMessage.newBuilder().setTopic(TOPIC)
                            .setPayload(ByteString.copyFromUtf8("probe-" + node.id())))
                    .build(), answer);
            answers.put(node, answer);
        }
        return answers;
    }

    /** Each probe ended with UNAVAILABLE (and a reason) within {@link #REFUSAL_BOUND} of {@code sent}. */
    private static void assertEveryNodeRefusedWithUnavailable(Map<TestNode, StreamRecorder<PublishResponse>> answers,
                                                            long sent) {
        Duration left = REFUSAL_BOUND.minusNanos(System.nanoTime() - sent);
        await("every node without a majority answers the publish within " + REFUSAL_BOUND)
                .pollDelay(Duration.ZERO).atMost(left.isNegative() ? Duration.ofMillis(1) : left)
                .until(() -> answers.values().stream().allMatch(StreamRecorder::ended));
        answers.forEach((node, answer) -> {
            Duration took = Duration.ofNanos(answer.endedAtNanos() - sent);
            LOG.info("without a majority, {} answered after {} ms: {}", node.id(), took.toMillis(),
                    answer.error() == null ? "committed " + answer.values() : Status.fromThrowable(answer.error()));
            assertEquals(List.of(), answer.values(), node.id() + " committed a publish without a majority");
            assertTrue(took.compareTo(REFUSAL_BOUND) <= 0, node.id() + " answered after " + took);
            Status status = Status.fromThrowable(answer.error());
            assertEquals(Status.Code.UNAVAILABLE, status.getCode(), node.id() + " answered " + status);
            assertFalse(status.getDescription() == null || status.getDescription().isBlank(),
                    node.id() + " says why it is unavailable");
        });
    }
}
