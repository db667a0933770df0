package io.hourglass.server.admin;

import io.grpc.ManagedChannel;
import io.hourglass.client.ChannelFactory;
import io.hourglass.client.ServerAddress;
import io.hourglass.api.v1.AdminGrpc;
import io.hourglass.api.v1.ClusterStatusResponse;
import io.hourglass.api.v1.MemberStatus;
import io.hourglass.api.v1.NodeInfo;
import io.hourglass.api.v1.NodeStatusRequest;
import io.hourglass.raft.RaftNode;
import java.io.IOException;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * Gathers every member's own status: this node's directly, the others' over their Admin API with
 * a short deadline (a member that does not answer in time is reported down). Channels to peers
 * are kept and closed with the node.
 */
final class ClusterInspector implements AutoCloseable {
    private static final long PEER_DEADLINE_MS = 1_500;

    private final RaftNode raft;
    private final String selfAddress;
    private final BooleanSupplier ready;
    private final Map<String, ManagedChannel> channels = new ConcurrentHashMap<>();

    private final ChannelFactory peers;

    /** @param peers opens channels to other nodes' client ports (their TLS, this node's credentials) */
    ClusterInspector(RaftNode raft, String selfAddress, BooleanSupplier ready, ChannelFactory peers) {
        this.peers = peers;
        this.raft = raft;
        this.selfAddress = selfAddress;
        this.ready = ready;
    }

    NodeInfo self() {
        RaftNode.Status s = raft.status();
        return NodeInfo.newBuilder().setId(s.nodeId()).setAddress(selfAddress).setRaftAddress(raftAddress(s.nodeId()))
                .setRole(s.role()).setTerm(s.term()).setCommitIndex(s.commitIndex()).setAppliedIndex(s.appliedIndex())
                .setLeaderId(s.leaderId() == null ? "" : s.leaderId()).setReady(ready.getAsBoolean())
                .addAllStalledFollowers(raft.counters().stalledFollowers()).build();
    }

    private String raftAddress(String id) {
        try {
            return raft.members().stream().filter(p -> p.id().equals(id))
                    .map(RaftNode.Member::raftAddress).findFirst().orElse("");
        } catch (IOException e) {
            return "";
        }
    }

    ManagedChannel channel(String address) {
        return channels.computeIfAbsent(address, a -> peers.open(ServerAddress.parse(a)));
    }

    ClusterStatusResponse cluster() throws IOException {
        NodeInfo me = self();
        RaftNode.Status local = raft.status();
        ClusterStatusResponse.Builder out = ClusterStatusResponse.newBuilder();
        long leaderCommit = -1;
        Map<String, NodeInfo> infos = new java.util.TreeMap<>();
        Map<String, String> errors = new java.util.TreeMap<>();
        for (RaftNode.Member peer : raft.members()) {
            String id = peer.id();
            String address = raft.grpcAddressOf(id);
            if (id.equals(me.getId())) {
                infos.put(id, me);
                continue;
            }
            if (address == null) {
                errors.put(id, "client address unknown");
                continue;
            }
            try {
                infos.put(id, AdminGrpc.newBlockingStub(channel(address))
                        .withDeadlineAfter(PEER_DEADLINE_MS, TimeUnit.MILLISECONDS)
                        .nodeStatus(NodeStatusRequest.getDefaultInstance()));
            } catch (RuntimeException e) {
                errors.put(id, e.getMessage());
            }
        }
        String leader = "";
        java.util.Set<String> stalled = java.util.Set.of();
        for (NodeInfo n : infos.values()) {
            if (n.getRole().equals("LEADER")) {
                leader = n.getId();
                leaderCommit = n.getCommitIndex();
                stalled = java.util.Set.copyOf(n.getStalledFollowersList());
            }
        }
        int up = 0;
        for (RaftNode.Member peer : raft.members()) {
            String id = peer.id();
            NodeInfo n = infos.get(id);
            MemberStatus.Builder m = MemberStatus.newBuilder();
            Long contact = local.followerLastContactMs().get(id);
            m.setLastContactMs(contact == null ? -1 : contact).setStalled(stalled.contains(id));
            if (n == null) {
                String addr = raft.grpcAddressOf(id);
                m.setNode(NodeInfo.newBuilder().setId(id).setAddress(addr == null ? "" : addr)
                        .setRaftAddress(peer.raftAddress())).setUp(false).setError(errors.getOrDefault(id, "no answer"));
            } else {
                up++;
                m.setNode(n).setUp(true).setLag(leaderCommit < 0 ? 0 : Math.max(0, leaderCommit - n.getAppliedIndex()));
            }
            out.addMembers(m);
        }
        int voters = raft.members().size();
        return out.setLeaderId(leader).setHasQuorum(!leader.isEmpty() && up * 2 > voters).build();
    }

    @Override
    public void close() {
        channels.values().forEach(ManagedChannel::shutdownNow);
    }
}
