package io.hourglass.server.admin;

import static io.hourglass.core.HourglassException.excerpt;

import io.grpc.stub.StreamObserver;
import io.hourglass.api.v1.AddNodeRequest;
import io.hourglass.api.v1.AdminGrpc;
import io.hourglass.api.v1.ClusterStatusRequest;
import io.hourglass.api.v1.ClusterStatusResponse;
import io.hourglass.api.v1.ConsumerInfo;
import io.hourglass.api.v1.DeleteGroupRequest;
import io.hourglass.api.v1.DeleteGroupResponse;
import io.hourglass.api.v1.DeleteMessageRequest;
import io.hourglass.api.v1.DeleteMessageResponse;
import io.hourglass.api.v1.GetMessageRequest;
import io.hourglass.api.v1.MessageInfo;
import io.hourglass.api.v1.PeekedMessage;
import io.hourglass.api.v1.ListConsumersRequest;
import io.hourglass.api.v1.ListConsumersResponse;
import io.hourglass.api.v1.ListGroupsRequest;
import io.hourglass.api.v1.ListGroupsResponse;
import io.hourglass.api.v1.ListTopicsRequest;
import io.hourglass.api.v1.ListTopicsResponse;
import io.hourglass.api.v1.MembershipResponse;
import io.hourglass.api.v1.NodeInfo;
import io.hourglass.api.v1.NodeStatusRequest;
import io.hourglass.api.v1.PeekTopicRequest;
import io.hourglass.api.v1.PeekTopicResponse;
import io.hourglass.api.v1.PurgeTopicRequest;
import io.hourglass.api.v1.PurgeTopicResponse;
import io.hourglass.api.v1.RemoveNodeRequest;
import io.hourglass.api.v1.SnapshotRequest;
import io.hourglass.api.v1.SnapshotResponse;
import io.hourglass.api.v1.TopicInfo;
import io.hourglass.api.v1.TopicStatsRequest;
import io.hourglass.api.v1.TransferLeaderRequest;
import io.hourglass.core.AlreadyExistsException;
import io.hourglass.core.FailedPreconditionException;
import io.hourglass.core.InvalidRequestException;
import io.hourglass.core.NotFoundException;
import io.hourglass.core.UnavailableException;
import io.hourglass.core.command.PublishValidator;
import io.hourglass.core.command.QueueCommands;
import io.hourglass.server.shard.Shards;
import io.hourglass.core.delivery.Consumer;
import io.hourglass.core.delivery.DeliveryEngine;
import io.hourglass.core.proto.Command;
import io.hourglass.core.proto.CommandReply;
import io.hourglass.core.proto.StoredMessage;
import io.hourglass.core.storage.EventKey;
import io.hourglass.core.proto.DeleteGroupCmd;
import io.hourglass.core.proto.PurgeTopicCmd;
import io.hourglass.core.storage.EventStore;
import io.hourglass.raft.RaftNode;
import io.hourglass.server.admin.LeaderCalls.RaftCall;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * The operator's API. Every call works on any node: replicated reads answer locally; leader-local
 * figures (in flight, consumers) and membership changes are forwarded to the leader, so an
 * operator never has to find it first. Errors are thrown as domain exceptions and become the call's
 * status in one place ({@link io.hourglass.server.grpc.ErrorStatusInterceptor}): NOT_FOUND for unknown
 * topics/groups/messages/nodes, ALREADY_EXISTS for a member added twice, FAILED_PRECONDITION for
 * removing the leader, UNAVAILABLE without a leader or quorum; a forwarded call answers the leader's
 * status unchanged.
 */
public final class AdminService extends AdminGrpc.AdminImplBase implements AutoCloseable {
    private static final Duration FORWARD_DEADLINE = Duration.ofSeconds(30);
    /** How long a call that finds no leader waits for one: an election after a silent leader, and its first apply. */
    static final Duration ELECTION_WAIT = Duration.ofSeconds(3);
    /**
     * Most bytes of messages in one PeekTopic page: under the 4 MiB a gRPC client accepts by
     * default, with room for a 1 MiB message and its headers on top.
     */
    static final int PEEK_PAGE_MAX_BYTES = 2 << 20;

    private final RaftNode raft;
    private final Shards shards;
    private final PublishValidator validator;
    /** Each shard's inspector, by shard index. */
    private final List<TopicInspector> inspectors;
    private final ClusterInspector cluster;
    private final java.time.Clock clock;
    private final LeaderCalls leaderCalls;

    /**
     * @param raft the metadata replica ({@link io.hourglass.raft.RaftHost#metadata()}): membership and the peer
     *             registry go through it; leadership transfers, snapshots and the cluster's leader are shard 0's
     * @param published messages this node took in through Publish (reported in its status)
     * @param timer      where a call that finds no leader waits for one
     * @param calls      the client port's call pool, where such a call runs again
     */
    public AdminService(RaftNode raft, Shards shards, PublishValidator validator, java.time.Clock clock,
                        String selfAddress, io.hourglass.client.ChannelFactory peers,
                        java.util.function.LongSupplier published, java.util.concurrent.ScheduledExecutorService timer,
                        java.util.concurrent.Executor calls) {
        this.raft = raft;
        this.leaderCalls = new LeaderCalls(timer, calls, ELECTION_WAIT);
        this.shards = shards;
        this.validator = validator;
        this.clock = clock;
        this.inspectors = shards.all().stream().map(s -> new TopicInspector(s.store(), s.engine(), clock)).toList();
        this.cluster = new ClusterInspector(raft, shards.all().stream().map(Shards.Shard::raft).toList(),
                shards.all().stream().map(Shards.Shard::engine).toList(), published, selfAddress, peers);
    }

    @Override
    public void nodeStatus(NodeStatusRequest request, StreamObserver<NodeInfo> out) {
        answer(out, () -> cluster.self(request));
    }

    @Override
    public void clusterStatus(ClusterStatusRequest request, StreamObserver<ClusterStatusResponse> out) {
        answer(out, cluster::cluster);
    }

    @Override
    public void addNode(AddNodeRequest r, StreamObserver<MembershipResponse> out) {
        if (r.getId().isBlank() || r.getHost().isBlank() || r.getRaftPort() <= 0 || r.getGrpcPort() <= 0) {
            throw new InvalidRequestException("add-node needs ID=HOST:RAFTPORT:GRPCPORT, got " + excerpt(r.getId())
                    + "=" + excerpt(r.getHost()) + ":" + r.getRaftPort() + ":" + r.getGrpcPort());
        }
        leader(out, raft, s -> s.addNode(r), () -> {
            // A member of the metadata group may still miss some shards' groups: an add that failed
            // half-way (a shard's leader changed, the new node was slow to answer). Asking again
            // finishes it (each shard's group that has the node is skipped; none missing it: "already
            // a member"), without rewriting the registered address, and only at the same Raft address.
            var known = raft.admin().members().stream().filter(m -> m.id().equals(r.getId())).findFirst();
            if (known.isPresent() && !known.get().raftAddress().equals(r.getHost() + ":" + r.getRaftPort())) {
                throw new AlreadyExistsException(excerpt(r.getId()) + " is already a member of the cluster");
            }
            if (known.isEmpty()) {
                raft.propose(io.hourglass.core.command.ClusterCommands.registerPeer(r.getId(),
                        r.getHost() + ":" + r.getGrpcPort())).join();
            }
            return membership(raft.admin().addVoter(r.getId(), r.getHost(), r.getRaftPort()));
        });
    }

    @Override
    public void removeNode(RemoveNodeRequest r, StreamObserver<MembershipResponse> out) {
        leader(out, raft, s -> s.removeNode(r), () -> {
            RaftNode first = shards.first().raft();
            String leaderId = first.isLeader() ? first.nodeId() : java.util.Objects.toString(first.status().leaderId(), "");
            if (r.getId().equals(leaderId) || (raft == first && r.getId().equals(raft.nodeId()))) {
                throw new FailedPreconditionException(r.getId() + " is the leader; move leadership first "
                        + "(hourglass cluster transfer-leader OTHER_ID), then remove it");
            }
            if (r.getId().equals(raft.nodeId())) {
                // The node to remove leads the metadata group, whose leadership no operator moves: it
                // hands it to the shards' leader (or another voter) and asks that node.
                String to = raft.admin().members().stream().map(RaftNode.Member::id).filter(id -> !id.equals(r.getId()))
                        .sorted(java.util.Comparator.comparing(id -> !id.equals(leaderId))).findFirst()
                        .orElseThrow(() -> new FailedPreconditionException("cannot remove the only member"));
                raft.admin().handLeadershipTo(to, Duration.ofSeconds(20));
                return stub(raft.grpcAddressOf(to)).removeNode(r);
            }
            return membership(raft.admin().removeVoter(r.getId()));
        });
    }

    @Override
    public void transferLeader(TransferLeaderRequest r, StreamObserver<MembershipResponse> out) {
        // Shard 0's leadership: "the leader" of cluster status; other shards follow the balancer, the
        // metadata group stays where it is (a closing node hands it over).
        RaftNode first = shards.first().raft();
        leader(out, first, s -> s.transferLeader(r), () -> {
            if (first.admin().members().stream().noneMatch(m -> m.id().equals(r.getId()))) {
                throw new NotFoundException("no member " + excerpt(r.getId()));
            }
            if (!r.getId().equals(first.nodeId())) {
                try {
                    first.admin().transferLeadership(r.getId(), Duration.ofSeconds(20));
                } catch (java.io.IOException e) {
                    throw TransferFailures.of(r.getId(), e);
                }
            }
            return MembershipResponse.newBuilder().setLeaderId(r.getId())
                    .addAllVoters(first.admin().members().stream().map(RaftNode.Member::id).toList()).build();
        });
    }

    @Override
    public void snapshot(SnapshotRequest r, StreamObserver<SnapshotResponse> out) {
        if (!r.getNodeId().isEmpty() && !r.getNodeId().equals(raft.nodeId())) {
            String address = raft.grpcAddressOf(r.getNodeId());
            if (address == null) {
                throw new NotFoundException("no member " + excerpt(r.getNodeId()));
            }
            answer(out, () -> stub(address).snapshot(r));
            return;
        }
        answer(out, () -> SnapshotResponse.newBuilder().setNodeId(raft.nodeId())
                .setIndex(shards.first().raft().admin().snapshotNow(Duration.ofSeconds(30))).build());
    }

    @Override
    public void listTopics(ListTopicsRequest r, StreamObserver<ListTopicsResponse> out) {
        // Shards led elsewhere are read from this node's replicas: stored figures are replicated,
        // in-flight counts are the local engine's (each shard's leader knows its own).
        if (r.getOffset() < 0 || r.getLimit() < 0) {
            throw new InvalidRequestException("offset and limit must not be negative, got " + r.getOffset() + ", "
                    + r.getLimit());
        }
        leader(out, shards.first().raft(), s -> s.listTopics(r), () -> {
            // Names first (one scan per shard), figures only for the page asked for.
            java.util.TreeMap<String, TopicInspector> names = new java.util.TreeMap<>();
            inspectors.forEach(i -> i.names(r.getPrefix()).forEach(n -> names.put(n, i)));
            ListTopicsResponse.Builder page = ListTopicsResponse.newBuilder().setTotal(names.size());
            names.entrySet().stream().skip(r.getOffset()).limit(r.getLimit() == 0 ? Long.MAX_VALUE : r.getLimit())
                    .forEach(e -> page.addTopics(e.getValue().stats(e.getKey())));
            return page.build();
        });
    }

    @Override
    public void topicStats(TopicStatsRequest r, StreamObserver<TopicInfo> out) {
        leader(out, raftOf(r.getTopic()), s -> s.topicStats(r), () -> topics(r.getTopic()).stats(existingTopic(r.getTopic())));
    }

    @Override
    public void purgeTopic(PurgeTopicRequest r, StreamObserver<PurgeTopicResponse> out) {
        answer(out, () -> {
            String topic = existingTopic(r.getTopic());
            long[] n = {0};
            shards.of(topic).store().queue().scanTopic(topic, (k, m) -> ++n[0] > 0);
            shards.of(topic).raft().propose(Command.newBuilder().setPurgeTopic(PurgeTopicCmd.newBuilder().setTopic(topic)).build())
                    .join();
            return PurgeTopicResponse.newBuilder().setPurged(n[0]).build();
        });
    }

    @Override
    public void peekTopic(PeekTopicRequest r, StreamObserver<PeekTopicResponse> out) {
        answer(out, () -> {
            String topic = existingTopic(r.getTopic());
            Optional<EventKey> after = r.getPageToken().isEmpty() ? Optional.empty()
                    : Optional.of(PublishValidator.messageId(r.getPageToken(), "page token"));
            if (r.getFromMs() < 0 || r.getUntilMs() < 0 || r.getUntilMs() != 0 && r.getUntilMs() <= r.getFromMs()) {
                throw new InvalidRequestException("the peek window [" + r.getFromMs() + ", " + r.getUntilMs()
                        + ") is empty or negative");
            }
            TopicInspector.PeekPage page = topics(topic).peek(topic, r.getLimit() <= 0 ? 20 : Math.min(r.getLimit(), 10_000),
                    after, PEEK_PAGE_MAX_BYTES, r.getFromMs(), r.getUntilMs() == 0 ? Long.MAX_VALUE : r.getUntilMs());
            return PeekTopicResponse.newBuilder().addAllMessages(page.messages())
                    .setNextPageToken(page.continueAfter().map(EventKey::toHex).orElse("")).build();
        });
    }

    /** At most this many buckets in one {@code TopicSchedule} answer. */
    static final int MAX_SCHEDULE_BUCKETS = 10_000;

    @Override
    public void topicSchedule(io.hourglass.api.v1.TopicScheduleRequest r,
                              StreamObserver<io.hourglass.api.v1.TopicScheduleResponse> out) {
        answer(out, () -> {
            validator.validateTopic(r.getTopic());
            if (r.getBucketMs() < 0 || r.getFromMs() < 0 || r.getUntilMs() < 0) {
                throw new InvalidRequestException("bucket, from and until must not be negative");
            }
            long bucket = r.getBucketMs() == 0 ? 60_000 : r.getBucketMs();
            long from = r.getFromMs() != 0 ? r.getFromMs() : clock.millis() / bucket * bucket;
            long until = r.getUntilMs() != 0 ? r.getUntilMs() : from + 60 * bucket;
            if (until <= from) {
                throw new InvalidRequestException("until (" + until + ") must be after from (" + from + ")");
            }
            if ((until - from + bucket - 1) / bucket > MAX_SCHEDULE_BUCKETS) {
                throw new InvalidRequestException("the window holds more than " + MAX_SCHEDULE_BUCKETS
                        + " buckets of " + bucket + " ms: widen the bucket or narrow the window");
            }
            return topics(r.getTopic()).schedule(r.getTopic(), from, until, bucket);
        });
    }

    @Override
    public void getMessage(GetMessageRequest r, StreamObserver<MessageInfo> out) {
        answer(out, () -> {
            validator.validateTopic(r.getTopic());
            EventKey key = PublishValidator.messageId(r.getId(), "message id");
            EventStore store = shards.of(r.getTopic()).store();
            StoredMessage m = store.queue().message(key).filter(s -> s.getTopic().equals(r.getTopic()))
                    .orElseThrow(() -> new NotFoundException("topic " + r.getTopic() + " holds no message " + r.getId()));
            MessageInfo.Builder info = MessageInfo.newBuilder().setTopic(m.getTopic()).setProducerId(m.getProducerId())
                    .setMessage(PeekedMessage.newBuilder().setId(key.toHex()).setPayload(m.getPayload())
                            .putAllHeaders(m.getHeadersMap()).setEnqueuedAtMs(m.getEnqueuedAtMs())
                            .setDueAtMs(m.getDueAtMs()).setExpiresAtMs(m.getExpiresAtMs()));
            for (String g : new TreeSet<>(store.durableGroups(m.getTopic()))) {
                if (store.queue().hasReceipt(key, g)) {
                    info.addAckedGroups(g);
                } else {
                    info.addPendingGroups(g);
                }
            }
            return info.build();
        });
    }

    @Override
    public void deleteMessage(DeleteMessageRequest r, StreamObserver<DeleteMessageResponse> out) {
        answer(out, () -> {
            validator.validateTopic(r.getTopic());
            EventKey key = PublishValidator.messageId(r.getId(), "message id");
            CommandReply reply = shards.of(r.getTopic()).raft().propose(QueueCommands.deleteMessage(r.getTopic(), key)).join();
            if (reply.getDeletedCount() == 0) {
                throw new NotFoundException("topic " + r.getTopic() + " holds no message " + r.getId());
            }
            return DeleteMessageResponse.getDefaultInstance();
        });
    }

    @Override
    public void listGroups(ListGroupsRequest r, StreamObserver<ListGroupsResponse> out) {
        leader(out, raftOf(r.getTopic()), s -> s.listGroups(r), () ->
                ListGroupsResponse.newBuilder().addAllGroups(topics(r.getTopic()).groups(existingTopic(r.getTopic()))).build());
    }

    @Override
    public void deleteGroup(DeleteGroupRequest r, StreamObserver<DeleteGroupResponse> out) {
        answer(out, () -> {
            String topic = existingTopic(r.getTopic());
            if (!shards.of(topic).store().durableGroups(topic).contains(r.getGroup())) {
                throw new NotFoundException("topic " + topic + " has no group '" + excerpt(r.getGroup()) + "'");
            }
            shards.of(topic).raft().propose(Command.newBuilder().setDeleteGroup(DeleteGroupCmd.newBuilder().setTopic(topic)
                    .setGroup(r.getGroup())).build()).join();
            return DeleteGroupResponse.getDefaultInstance();
        });
    }

    @Override
    public void configureGroup(io.hourglass.api.v1.ConfigureGroupRequest r,
                               StreamObserver<io.hourglass.api.v1.GroupInfo> out) {
        answer(out, () -> {
            validator.validateTopic(r.getTopic());
            if (r.getGroup().isEmpty()) {
                throw new io.hourglass.core.InvalidRequestException("group must not be empty: a policy belongs to a durable group");
            }
            validator.validateGroup(r.getGroup());
            io.hourglass.core.proto.GroupPolicy.Builder merged = shards.of(r.getTopic()).store().queue()
                    .groupPolicy(r.getTopic(), r.getGroup())
                    .map(io.hourglass.core.proto.GroupPolicy::toBuilder)
                    .orElseGet(io.hourglass.core.proto.GroupPolicy::newBuilder);
            if (r.getSetBackoff()) {
                merged.clearBackoffMs().addAllBackoffMs(r.getBackoffMsList());
            }
            if (r.hasMaxDeliveries()) {
                merged.setMaxDeliveries(r.getMaxDeliveries());
            }
            if (r.hasDeadLetterTopic()) {
                merged.setDeadLetterTopic(r.getDeadLetterTopic());
            }
            io.hourglass.core.proto.GroupPolicy policy = merged.build();
            validator.validateGroupPolicy(r.getTopic(), policy);
            shards.of(r.getTopic()).raft().propose(QueueCommands.configureGroup(r.getTopic(), r.getGroup(),
                    r.getSetBackoff() ? r.getBackoffMsList() : null,
                    r.hasMaxDeliveries() ? r.getMaxDeliveries() : null,
                    r.hasDeadLetterTopic() ? r.getDeadLetterTopic() : null)).join();
            return io.hourglass.api.v1.GroupInfo.newBuilder().setGroup(r.getGroup()).addAllBackoffMs(policy.getBackoffMsList())
                    .setMaxDeliveries(policy.getMaxDeliveries()).setDeadLetterTopic(policy.getDeadLetterTopic()).build();
        });
    }

    @Override
    public void listConsumers(ListConsumersRequest r, StreamObserver<ListConsumersResponse> out) {
        leader(out, r.getTopic().isEmpty() ? shards.first().raft() : raftOf(r.getTopic()), s -> s.listConsumers(r), () -> {
            ListConsumersResponse.Builder b = ListConsumersResponse.newBuilder();
            List<Consumer> all = new java.util.ArrayList<>();
            shards.all().forEach(s -> all.addAll(s.engine().hub().consumers()));
            for (Consumer c : all) {
                if (r.getTopic().isEmpty() || c.topic().equals(r.getTopic())) {
                    b.addConsumers(ConsumerInfo.newBuilder().setId(c.id()).setTopic(c.topic()).setGroup(c.group())
                            .setBuffered(c.buffered()));
                }
            }
            return b.build();
        });
    }

    @Override
    public void stateDigest(io.hourglass.api.v1.StateDigestRequest r,
                            StreamObserver<io.hourglass.api.v1.StateDigestResponse> out) {
        answer(out, () -> {
            if (r.getShard() < 0 || r.getShard() >= shards.count()) {
                throw new InvalidRequestException("no shard " + r.getShard() + ": this cluster has " + shards.count());
            }
            EventStore.Digest d = shards.get(r.getShard()).store().digest();
            return io.hourglass.api.v1.StateDigestResponse.newBuilder().setNodeId(raft.nodeId())
                    .setAppliedIndex(d.applied().index()).setSha256(d.sha256()).putAllFamilies(d.families()).build();
        });
    }

    @Override
    public void rebalance(io.hourglass.api.v1.RebalanceRequest r, StreamObserver<io.hourglass.api.v1.RebalanceResponse> out) {
        answer(out, () -> {
            io.hourglass.api.v1.RebalanceResponse.Builder b = io.hourglass.api.v1.RebalanceResponse.newBuilder();
            for (io.hourglass.raft.RaftHost.Move m : raft.host().rebalanceNow()) {
                b.addMoves(io.hourglass.api.v1.ShardMove.newBuilder().setShard(m.shard()).setFrom(m.from()).setTo(m.to()));
            }
            if (!r.getLocalOnly()) {
                io.hourglass.api.v1.RebalanceRequest local = io.hourglass.api.v1.RebalanceRequest.newBuilder()
                        .setLocalOnly(true).build();
                for (RaftNode.Member m : raft.admin().members()) {
                    String address = raft.grpcAddressOf(m.id());
                    if (m.id().equals(raft.nodeId())) {
                        continue;
                    }
                    try {
                        b.addAllMoves(stub(address).rebalance(local).getMovesList());
                    } catch (RuntimeException e) {
                        b.putErrors(m.id(), String.valueOf(e.getMessage()));
                    }
                }
            }
            return b.build();
        });
    }

    private String existingTopic(String topic) {
        validator.validateTopic(topic);
        if (!topics(topic).exists(topic)) {
            throw new NotFoundException("no topic '" + topic + "' (no stored messages, groups or consumers)");
        }
        return topic;
    }

    /** The configuration after a change made here, with shard 0's leader: the leader cluster status names. */
    private MembershipResponse membership(List<RaftNode.Member> voters) {
        RaftNode first = shards.first().raft();
        String leader = first.isLeader() ? first.nodeId() : java.util.Objects.toString(first.status().leaderId(), "");
        return MembershipResponse.newBuilder().setLeaderId(leader)
                .addAllVoters(voters.stream().map(RaftNode.Member::id).toList()).build();
    }

    /** The inspector of {@code topic}'s shard. */
    private TopicInspector topics(String topic) {
        return inspectors.get(shards.of(topic).index());
    }

    /** The replica of {@code topic}'s shard. */
    private RaftNode raftOf(String topic) {
        return shards.of(topic).raft();
    }

    /** Runs here when this node leads shard {@code raft}, else forwards the same call to its leader. */
    private <T> void leader(StreamObserver<T> out, RaftNode raft, Function<AdminGrpc.AdminBlockingStub, T> forward,
                            RaftCall<T> local) {
        leaderCalls.run(out, raft, to -> () -> forward.apply(stub(to)), local);
    }

    /** A channel to another node's client port (with this node's peer credentials), kept for reuse. */
    public io.grpc.Channel peerChannel(String address) {
        return cluster.channel(address);
    }

    private AdminGrpc.AdminBlockingStub stub(String address) {
        return AdminGrpc.newBlockingStub(cluster.channel(address))
                .withDeadlineAfter(FORWARD_DEADLINE.toMillis(), TimeUnit.MILLISECONDS);
    }

    private static <T> void answer(StreamObserver<T> out, RaftCall<T> call) {
        LeaderCalls.answer(out, call);
    }

    @Override
    public void close() {
        cluster.close();
    }
}
