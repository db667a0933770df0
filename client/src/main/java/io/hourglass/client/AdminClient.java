package io.hourglass.client;

import io.grpc.Channel;
import io.grpc.stub.AbstractStub;
import io.hourglass.api.v1.CreateTokenRequest;
import io.hourglass.api.v1.GrantInfo;
import io.hourglass.api.v1.GrantRequest;
import io.hourglass.api.v1.ListGrantsRequest;
import io.hourglass.api.v1.ListTokensRequest;
import io.hourglass.api.v1.RevokeTokenRequest;
import io.hourglass.api.v1.SecurityGrpc;
import io.hourglass.api.v1.TokenInfo;
import io.hourglass.api.v1.WhoAmIRequest;
import io.hourglass.api.v1.WhoAmIResponse;
import java.util.function.Function;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.hourglass.api.v1.AddNodeRequest;
import io.hourglass.api.v1.AdminGrpc;
import io.hourglass.api.v1.ClusterStatusRequest;
import io.hourglass.api.v1.ClusterStatusResponse;
import io.hourglass.api.v1.ConsumerInfo;
import io.hourglass.api.v1.DeleteGroupRequest;
import io.hourglass.api.v1.DeleteMessageRequest;
import io.hourglass.api.v1.GetMessageRequest;
import io.hourglass.api.v1.MessageInfo;
import io.hourglass.api.v1.PeekTopicResponse;
import io.hourglass.api.v1.GroupInfo;
import io.hourglass.api.v1.ListConsumersRequest;
import io.hourglass.api.v1.ListGroupsRequest;
import io.hourglass.api.v1.ListTopicsRequest;
import io.hourglass.api.v1.MembershipResponse;
import io.hourglass.api.v1.NodeInfo;
import io.hourglass.api.v1.NodeStatusRequest;
import io.hourglass.api.v1.PeekTopicRequest;
import io.hourglass.api.v1.PeekedMessage;
import io.hourglass.api.v1.PurgeTopicRequest;
import io.hourglass.api.v1.RemoveNodeRequest;
import io.hourglass.api.v1.SnapshotRequest;
import io.hourglass.api.v1.SnapshotResponse;
import io.hourglass.api.v1.StateDigestRequest;
import io.hourglass.api.v1.StateDigestResponse;
import io.hourglass.api.v1.TopicInfo;
import io.hourglass.api.v1.TopicStatsRequest;
import io.hourglass.api.v1.TransferLeaderRequest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.function.BiFunction;

/**
 * Operating a cluster over the {@code Admin} gRPC service: status, membership, snapshots,
 * topics, groups and consumers. Obtained from {@link HourglassClient#admin()}; shares that
 * client's servers and retry policy and is closed with it.
 *
 * <p>Calls are blocking. Each sticks to the client's current server and is retried on
 * {@code UNAVAILABLE} with backoff until the {@link RetryPolicy} deadline, moving to the next
 * server (or the one a {@code hourglass-leader} hint names); any other status fails at once.
 * The server forwards leader-only calls itself, so any node will do. A retried
 * {@link #addNode}/{@link #removeNode} may find its earlier attempt already applied (then
 * {@code ALREADY_EXISTS}/{@code NOT_FOUND}).
 *
 * <p>Results are the {@code hourglass.v1} protobuf messages. Failures are
 * {@link HourglassClientException} subtypes: {@link InvalidRequestException} for
 * {@code INVALID_ARGUMENT}, {@code NOT_FOUND}, {@code FAILED_PRECONDITION}, {@code ALREADY_EXISTS}
 * (the gRPC status is the exception's cause, see {@link #statusCode}), {@link UnavailableException}
 * when no server answered in time. Thread-safe.
 */
public final class AdminClient {
    /** Per attempt: long enough for a leadership transfer (20 s) or a snapshot (30 s). */
    static final Duration DEFAULT_CALL_TIMEOUT = Duration.ofSeconds(60);

    private final ServerPool pool;
    private final RetryPolicy retry;
    private final Duration callTimeout;
    private volatile boolean closed;

    AdminClient(ServerPool pool, RetryPolicy retry, Duration callTimeout) {
        this.pool = pool;
        this.retry = retry;
        this.callTimeout = callTimeout;
    }

    /** The answering node's own view. */
    public NodeInfo nodeStatus() {
        return call("node status", NodeStatusRequest.getDefaultInstance(), AdminGrpc.AdminBlockingStub::nodeStatus);
    }

    /**
     * The answering node's replicated state as a digest with the applied index it covers (equal
     * indexes must give equal digests on every node). Ask a client of one server to pick the node.
     */
    public StateDigestResponse stateDigest() {
        return stateDigest(0);
    }

    /** The answering node's digest of event shard {@code shard}'s store. */
    public StateDigestResponse stateDigest(int shard) {
        return call("state digest", StateDigestRequest.newBuilder().setShard(shard).build(),
                AdminGrpc.AdminBlockingStub::stateDigest);
    }

    /** Every member's view, gathered by the answering node; members that do not answer are down. */
    public ClusterStatusResponse clusterStatus() {
        return call("cluster status", ClusterStatusRequest.getDefaultInstance(),
                AdminGrpc.AdminBlockingStub::clusterStatus);
    }

    /** Adds a voter that already runs (started empty with {@code --join}). */
    public MembershipResponse addNode(String id, String host, int raftPort, int grpcPort) {
        return call("add node " + id, AddNodeRequest.newBuilder().setId(id).setHost(host).setRaftPort(raftPort)
                .setGrpcPort(grpcPort).build(), AdminGrpc.AdminBlockingStub::addNode);
    }

    /** Removes a voter; {@code FAILED_PRECONDITION} if it is the leader. */
    public MembershipResponse removeNode(String id) {
        return call("remove node " + id, RemoveNodeRequest.newBuilder().setId(id).build(),
                AdminGrpc.AdminBlockingStub::removeNode);
    }

    /** Moves leadership to {@code id} and waits for it. */
    public MembershipResponse transferLeader(String id) {
        return call("transfer leadership to " + id, TransferLeaderRequest.newBuilder().setId(id).build(),
                AdminGrpc.AdminBlockingStub::transferLeader);
    }

    /** Spreads the shard leaderships over the nodes now (see {@code Admin/Rebalance}). */
    public io.hourglass.api.v1.RebalanceResponse rebalance() {
        return call("rebalance", io.hourglass.api.v1.RebalanceRequest.getDefaultInstance(),
                AdminGrpc.AdminBlockingStub::rebalance);
    }

    /** Takes a snapshot on {@code nodeId}, or on the answering node when empty. */
    public SnapshotResponse snapshot(String nodeId) {
        return call("snapshot", SnapshotRequest.newBuilder().setNodeId(nodeId == null ? "" : nodeId).build(),
                AdminGrpc.AdminBlockingStub::snapshot);
    }

    public List<TopicInfo> listTopics() {
        return listTopics("", 0, 0).getTopicsList();
    }

    /**
     * A page of the topics whose name starts with {@code prefix}, by name: {@code limit} of them (0: all)
     * after skipping {@code offset}; {@code total} in the answer counts every match.
     */
    public io.hourglass.api.v1.ListTopicsResponse listTopics(String prefix, int offset, int limit) {
        return call("list topics", ListTopicsRequest.newBuilder().setPrefix(prefix == null ? "" : prefix)
                .setOffset(offset).setLimit(limit).build(), AdminGrpc.AdminBlockingStub::listTopics);
    }

    public TopicInfo topicStats(String topic) {
        return call("stats of topic " + topic, TopicStatsRequest.newBuilder().setTopic(topic).build(),
                AdminGrpc.AdminBlockingStub::topicStats);
    }

    /**
     * Stored messages of {@code topic} counted per due-time bucket (see {@code Admin/TopicSchedule});
     * a zero argument takes the server's default (1 min buckets, from now, 60 buckets).
     */
    public io.hourglass.api.v1.TopicScheduleResponse topicSchedule(String topic, long bucketMs, long fromMs, long untilMs) {
        return call("schedule of topic " + topic, io.hourglass.api.v1.TopicScheduleRequest.newBuilder().setTopic(topic)
                .setBucketMs(bucketMs).setFromMs(fromMs).setUntilMs(untilMs).build(),
                AdminGrpc.AdminBlockingStub::topicSchedule);
    }

    /** Deletes every stored message of {@code topic}; returns how many there were. */
    public long purgeTopic(String topic) {
        return call("purge topic " + topic, PurgeTopicRequest.newBuilder().setTopic(topic).build(),
                AdminGrpc.AdminBlockingStub::purgeTopic).getPurged();
    }

    /**
     * Up to {@code limit} stored messages of {@code topic} in due order, following the server's
     * pages (each under the gRPC reply size limit) until {@code limit} or the end.
     */
    public List<PeekedMessage> peekTopic(String topic, int limit) {
        return peekTopic(topic, limit, 0, 0);
    }

    /** {@link #peekTopic(String, int)} of the messages due in [{@code fromMs}, {@code untilMs}) (0: unbounded). */
    public List<PeekedMessage> peekTopic(String topic, int limit, long fromMs, long untilMs) {
        List<PeekedMessage> all = new ArrayList<>();
        String token = "";
        do {
            PeekTopicResponse page = call("peek topic " + topic, PeekTopicRequest.newBuilder().setTopic(topic)
                    .setLimit(limit - all.size()).setPageToken(token).setFromMs(fromMs).setUntilMs(untilMs).build(),
                    AdminGrpc.AdminBlockingStub::peekTopic);
            all.addAll(page.getMessagesList());
            token = page.getNextPageToken();
        } while (!token.isEmpty() && all.size() < limit);
        return all;
    }

    /** One page of stored messages: at most {@code limit}, after {@code pageToken} (empty = the first). */
    public PeekTopicResponse peekPage(String topic, int limit, String pageToken) {
        return call("peek topic " + topic, PeekTopicRequest.newBuilder().setTopic(topic).setLimit(limit)
                .setPageToken(pageToken == null ? "" : pageToken).build(), AdminGrpc.AdminBlockingStub::peekTopic);
    }

    /** One stored message by id; {@link InvalidRequestException} with {@code NOT_FOUND} when there is none. */
    public MessageInfo getMessage(String topic, String id) {
        return call("get message", GetMessageRequest.newBuilder().setTopic(topic).setId(id).build(),
                AdminGrpc.AdminBlockingStub::getMessage);
    }

    /**
     * Deletes one stored message through Raft, whatever its groups acknowledged; {@code NOT_FOUND}
     * when there is none (a retry after a lost answer may see that too).
     */
    public void deleteMessage(String topic, String id) {
        call("delete message", DeleteMessageRequest.newBuilder().setTopic(topic).setId(id).build(),
                AdminGrpc.AdminBlockingStub::deleteMessage);
    }

    public List<GroupInfo> listGroups(String topic) {
        return call("list groups of " + topic, ListGroupsRequest.newBuilder().setTopic(topic).build(),
                AdminGrpc.AdminBlockingStub::listGroups).getGroupsList();
    }

    public void deleteGroup(String topic, String group) {
        call("delete group " + group + " of " + topic,
                DeleteGroupRequest.newBuilder().setTopic(topic).setGroup(group).build(),
                AdminGrpc.AdminBlockingStub::deleteGroup);
    }

    /**
     * Sets durable group {@code group}'s redelivery policy, creating the group; a null argument keeps
     * that setting as stored. Returns the policy now in force.
     *
     * @param backoff the waits before successive redeliveries after a NACK or in-flight timeout (the
     *        last repeats; empty: none)
     * @param maxDeliveries after this many deliveries without an ACK the message moves to
     *        {@code deadLetterTopic} (0: unlimited)
     * @param deadLetterTopic where such messages go (empty: none)
     */
    public GroupInfo configureGroup(String topic, String group, List<java.time.Duration> backoff, Integer maxDeliveries,
                                    String deadLetterTopic) {
        io.hourglass.api.v1.ConfigureGroupRequest.Builder b = io.hourglass.api.v1.ConfigureGroupRequest.newBuilder()
                .setTopic(topic).setGroup(group);
        if (backoff != null) {
            b.setSetBackoff(true);
            backoff.forEach(d -> b.addBackoffMs(d.toMillis()));
        }
        if (maxDeliveries != null) {
            b.setMaxDeliveries(maxDeliveries);
        }
        if (deadLetterTopic != null) {
            b.setDeadLetterTopic(deadLetterTopic);
        }
        return call("configure group " + group + " of " + topic, b.build(), AdminGrpc.AdminBlockingStub::configureGroup);
    }

    /** Connected consumers of {@code topic}, or of every topic when it is empty or null. */
    public List<ConsumerInfo> listConsumers(String topic) {
        return call("list consumers", ListConsumersRequest.newBuilder().setTopic(topic == null ? "" : topic).build(),
                AdminGrpc.AdminBlockingStub::listConsumers).getConsumersList();
    }

    /** Makes a token for principal {@code name}; returns it (the only time it is shown). */
    public String createToken(String name) {
        return security("create token " + name, CreateTokenRequest.newBuilder().setName(name).build(),
                SecurityGrpc.SecurityBlockingStub::createToken).getToken();
    }

    public List<TokenInfo> listTokens() {
        return security("list tokens", ListTokensRequest.getDefaultInstance(),
                SecurityGrpc.SecurityBlockingStub::listTokens).getTokensList();
    }

    /** Revokes the token of {@code name} on every node; {@code NOT_FOUND} when it has none. */
    public void revokeToken(String name) {
        security("revoke token " + name, RevokeTokenRequest.newBuilder().setName(name).build(),
                SecurityGrpc.SecurityBlockingStub::revokeToken);
    }

    /** Grants {@code permission} (publish, consume, rooms, admin) on {@code resource} (a name or prefix*). */
    public void addGrant(String principal, String permission, String resource) {
        security("grant", GrantRequest.newBuilder().setPrincipal(principal).setPermission(permission)
                .setResource(resource).build(), SecurityGrpc.SecurityBlockingStub::addGrant);
    }

    public void revokeGrant(String principal, String permission, String resource) {
        security("revoke grant", GrantRequest.newBuilder().setPrincipal(principal).setPermission(permission)
                .setResource(resource).build(), SecurityGrpc.SecurityBlockingStub::revokeGrant);
    }

    /** Grants of {@code principal}, or of everyone when it is empty or null. */
    public List<GrantInfo> listGrants(String principal) {
        return security("list grants", ListGrantsRequest.newBuilder().setPrincipal(principal == null ? "" : principal)
                .build(), SecurityGrpc.SecurityBlockingStub::listGrants).getGrantsList();
    }

    /** The principal these credentials authenticate as. */
    public WhoAmIResponse whoAmI() {
        return security("who am I", WhoAmIRequest.getDefaultInstance(), SecurityGrpc.SecurityBlockingStub::whoAmI);
    }

    /** The gRPC status code behind a client exception, or {@code UNKNOWN} when there is none. */
    public static Status.Code statusCode(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t instanceof StatusRuntimeException s) {
                return s.getStatus().getCode();
            }
        }
        return Status.Code.UNKNOWN;
    }

    void close() {
        closed = true;
    }

    private <Q, R> R call(String what, Q request, BiFunction<AdminGrpc.AdminBlockingStub, Q, R> rpc) {
        return call(what, request, AdminGrpc::newBlockingStub, rpc);
    }

    private <Q, R> R security(String what, Q request, BiFunction<SecurityGrpc.SecurityBlockingStub, Q, R> rpc) {
        return call(what, request, SecurityGrpc::newBlockingStub, rpc);
    }

    private <S extends AbstractStub<S>, Q, R> R call(String what, Q request, Function<Channel, S> stubOf,
                                                     BiFunction<S, Q, R> rpc) {
        Objects.requireNonNull(request, "request");
        long deadline = System.nanoTime() + retry.deadline().toNanos();
        for (int attempt = 1; ; attempt++) {
            if (closed) {
                throw new HourglassClientException("client is closed");
            }
            ServerPool.Endpoint endpoint = pool.current();
            S stub = stubOf.apply(endpoint.channel()).withDeadlineAfter(callTimeout.toNanos(), TimeUnit.NANOSECONDS);
            Status status;
            String hint;
            try {
                return rpc.apply(stub, request);
            } catch (StatusRuntimeException e) {
                status = e.getStatus();
                Metadata trailers = e.getTrailers();
                hint = trailers == null ? null : trailers.get(ConsumerStream.LEADER_KEY);
            }
            if (!StatusMapping.isRetryable(status)) {
                throw StatusMapping.toException(status, endpoint.address());
            }
            boolean redirected = pool.failover(endpoint, hint);
            Duration wait = redirected && attempt == 1 ? Duration.ZERO : retry.backoff(attempt);
            if (System.nanoTime() + wait.toNanos() - deadline > 0) {
                String description = StatusMapping.describe(status);
                throw new UnavailableException(what + ": no server available within " + retry.deadline().toMillis()
                        + " ms (last error from " + endpoint.address() + ": " + description + ")",
                        description, status.asRuntimeException());
            }
            try {
                Thread.sleep(wait.toMillis());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new HourglassClientException("interrupted while waiting for the server", e);
            }
        }
    }
}
