package io.hourglass.cli;

import com.google.protobuf.Message;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.stub.StreamObserver;
import io.hourglass.api.v1.AddNodeRequest;
import io.hourglass.api.v1.AdminGrpc;
import io.hourglass.api.v1.ClusterStatusRequest;
import io.hourglass.api.v1.ClusterStatusResponse;
import io.hourglass.api.v1.ConsumerInfo;
import io.hourglass.api.v1.DeleteGroupRequest;
import io.hourglass.api.v1.DeleteGroupResponse;
import io.hourglass.api.v1.GroupInfo;
import io.hourglass.api.v1.ListConsumersRequest;
import io.hourglass.api.v1.ListConsumersResponse;
import io.hourglass.api.v1.ListGroupsRequest;
import io.hourglass.api.v1.ListGroupsResponse;
import io.hourglass.api.v1.ListTopicsRequest;
import io.hourglass.api.v1.ListTopicsResponse;
import io.hourglass.api.v1.MembershipResponse;
import io.hourglass.api.v1.PeekTopicRequest;
import io.hourglass.api.v1.PeekTopicResponse;
import io.hourglass.api.v1.PeekedMessage;
import io.hourglass.api.v1.PurgeTopicRequest;
import io.hourglass.api.v1.PurgeTopicResponse;
import io.hourglass.api.v1.RemoveNodeRequest;
import io.hourglass.api.v1.SnapshotRequest;
import io.hourglass.api.v1.SnapshotResponse;
import io.hourglass.api.v1.TopicInfo;
import io.hourglass.api.v1.TopicStatsRequest;
import io.hourglass.api.v1.TransferLeaderRequest;
import java.io.IOException;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * An in-process Admin service for CLI tests, scripted: answers what the test set, records the
 * requests; topic "missing", group "missing" and node "nX" are NOT_FOUND, removing "n1" (the
 * leader) is FAILED_PRECONDITION, adding "n1".."n3" is ALREADY_EXISTS, topic "bad" is
 * INVALID_ARGUMENT; {@link #unavailable} makes every call UNAVAILABLE.
 */
final class FakeAdmin implements AutoCloseable {
    final String name = InProcessServerBuilder.generateName();
    final List<Message> requests = new CopyOnWriteArrayList<>();
    volatile ClusterStatusResponse cluster = ClusterStatusResponse.getDefaultInstance();
    volatile List<TopicInfo> topics = List.of();
    volatile List<PeekedMessage> peeked = List.of();
    volatile List<GroupInfo> groups = List.of();
    volatile List<ConsumerInfo> consumers = List.of();
    volatile boolean unavailable;
    private final Server server;

    FakeAdmin() throws IOException {
        server = InProcessServerBuilder.forName(name).addService(new Service()).build().start();
    }

    String address() {
        return name + ":1";
    }

    @Override
    public void close() {
        server.shutdownNow();
    }

    private final class Service extends AdminGrpc.AdminImplBase {
        @Override
        public void clusterStatus(ClusterStatusRequest q, StreamObserver<ClusterStatusResponse> o) {
            answer(q, o, null, () -> cluster);
        }

        @Override
        public void addNode(AddNodeRequest q, StreamObserver<MembershipResponse> o) {
            answer(q, o, q.getId().matches("n[123]") ? Status.ALREADY_EXISTS.withDescription(q.getId()
                    + " is already a member") : null, () -> MembershipResponse.newBuilder().setLeaderId("n1")
                    .addAllVoters(List.of("n1", "n2", "n3", q.getId())).build());
        }

        @Override
        public void removeNode(RemoveNodeRequest q, StreamObserver<MembershipResponse> o) {
            answer(q, o, q.getId().equals("n1") ? Status.FAILED_PRECONDITION.withDescription("n1 is the leader")
                    : node(q.getId()), () -> MembershipResponse.newBuilder().addAllVoters(List.of("n1", "n2")).build());
        }

        @Override
        public void transferLeader(TransferLeaderRequest q, StreamObserver<MembershipResponse> o) {
            answer(q, o, node(q.getId()), () -> MembershipResponse.newBuilder().setLeaderId(q.getId())
                    .addAllVoters(List.of("n1", "n2", "n3")).build());
        }

        @Override
        public void rebalance(io.hourglass.api.v1.RebalanceRequest q,
                              StreamObserver<io.hourglass.api.v1.RebalanceResponse> o) {
            answer(q, o, null, () -> io.hourglass.api.v1.RebalanceResponse.newBuilder()
                    .addMoves(io.hourglass.api.v1.ShardMove.newBuilder().setShard(2).setFrom("n1").setTo("n3"))
                    .putErrors("n2", "connection refused").build());
        }

        @Override
        public void snapshot(SnapshotRequest q, StreamObserver<SnapshotResponse> o) {
            answer(q, o, node(q.getNodeId()), () -> SnapshotResponse.newBuilder()
                    .setNodeId(q.getNodeId().isEmpty() ? "n1" : q.getNodeId()).setIndex(42).build());
        }

        @Override
        public void listTopics(ListTopicsRequest q, StreamObserver<ListTopicsResponse> o) {
            answer(q, o, null, () -> ListTopicsResponse.newBuilder().addAllTopics(topics).build());
        }

        @Override
        public void topicStats(TopicStatsRequest q, StreamObserver<TopicInfo> o) {
            answer(q, o, topic(q.getTopic()), () -> topics.stream().filter(t -> t.getTopic().equals(q.getTopic()))
                    .findFirst().orElse(TopicInfo.newBuilder().setTopic(q.getTopic()).build()));
        }

        @Override
        public void purgeTopic(PurgeTopicRequest q, StreamObserver<PurgeTopicResponse> o) {
            answer(q, o, topic(q.getTopic()), () -> PurgeTopicResponse.newBuilder().setPurged(7).build());
        }

        @Override
        public void peekTopic(PeekTopicRequest q, StreamObserver<PeekTopicResponse> o) {
            answer(q, o, topic(q.getTopic()), () -> PeekTopicResponse.newBuilder().addAllMessages(peeked).build());
        }

        @Override
        public void listGroups(ListGroupsRequest q, StreamObserver<ListGroupsResponse> o) {
            answer(q, o, topic(q.getTopic()), () -> ListGroupsResponse.newBuilder().addAllGroups(groups).build());
        }

        @Override
        public void deleteGroup(DeleteGroupRequest q, StreamObserver<DeleteGroupResponse> o) {
            Status refusal = topic(q.getTopic());
            if (refusal == null && q.getGroup().equals("missing")) {
                refusal = Status.NOT_FOUND.withDescription("no group 'missing'");
            }
            answer(q, o, refusal, DeleteGroupResponse::getDefaultInstance);
        }

        @Override
        public void listConsumers(ListConsumersRequest q, StreamObserver<ListConsumersResponse> o) {
            answer(q, o, null, () -> ListConsumersResponse.newBuilder().addAllConsumers(consumers.stream()
                    .filter(c -> q.getTopic().isEmpty() || c.getTopic().equals(q.getTopic())).toList()).build());
        }

        private Status node(String id) {
            return id.equals("nX") ? Status.NOT_FOUND.withDescription("no member nX") : null;
        }

        private Status topic(String topic) {
            return switch (topic) {
                case "missing" -> Status.NOT_FOUND.withDescription("no topic 'missing'");
                case "bad" -> Status.INVALID_ARGUMENT.withDescription("topic 'bad' is not allowed");
                default -> null;
            };
        }

        private <T> void answer(Message q, StreamObserver<T> o, Status refusal, java.util.function.Supplier<T> ok) {
            requests.add(q);
            if (unavailable) {
                o.onError(Status.UNAVAILABLE.withDescription("no leader right now").asRuntimeException());
            } else if (refusal != null) {
                o.onError(refusal.asRuntimeException());
            } else {
                o.onNext(ok.get());
                o.onCompleted();
            }
        }
    }
}
