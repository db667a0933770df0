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

/**
 * Gathers every member's own status: this node's directly, the others' over their Admin API with
 * a short deadline (a member that does not answer in time is reported down). Channels to peers
 * are kept and closed with the node.
 */
final class ClusterInspector implements AutoCloseable {
    private static final long PEER_DEADLINE_MS = 1_500;

    /** Every shard's replica on this node, by shard. */
    private final java.util.List<RaftNode> shards;
    /** The replica that names the members: the metadata group's, or shard 0's without one. */
    private final RaftNode raft;
    /** Whether {@link #raft} is a metadata group's rather than shard 0's. */
    private final boolean metadataGroup;
    private final String selfAddress;
    private final Map<String, ManagedChannel> channels = new ConcurrentHashMap<>();

    private final ChannelFactory peers;
    private final java.util.List<io.hourglass.core.delivery.DeliveryEngine> engines;
    private final java.util.function.LongSupplier published;

    /**
     * @param engines every shard's delivery engine on this node, by shard (their counters)
     * @param published messages this node took in through Publish
     * @param peers opens channels to other nodes' client ports (their TLS, this node's credentials)
     */
    ClusterInspector(RaftNode metadata, java.util.List<RaftNode> shards,
                     java.util.List<io.hourglass.core.delivery.DeliveryEngine> engines,
                     java.util.function.LongSupplier published, String selfAddress, ChannelFactory peers) {
        this.peers = peers;
        this.engines = java.util.List.copyOf(engines);
        this.published = published;
        this.shards = java.util.List.copyOf(shards);
        this.raft = metadata;
        this.metadataGroup = metadata != shards.get(0);
        this.selfAddress = selfAddress;
    }

    /** This node's status in the metadata group ({@code metadata}) or in shard {@code shard}. */
    NodeInfo self(NodeStatusRequest request) {
        if (request.getMetadata()) {
            if (!metadataGroup) {
                throw new io.hourglass.core.InvalidRequestException("this cluster has no metadata group: shard 0 holds "
                        + "its metadata");
            }
            return info(raft, METADATA).build();
        }
        return self(request.getShard());
    }

    /** This node's status in shard {@code shard}. */
    NodeInfo self(int shard) {
        if (shard < 0 || shard >= shards.size()) {
            throw new io.hourglass.core.InvalidRequestException("no shard " + shard + ": this cluster has " + shards.size());
        }
        return info(shards.get(shard), shard)
                .setPublishedTotal(shard == 0 ? published.getAsLong() : 0)
                .setDeliveredTotal(engines.get(shard).metrics().dispatched.sum())
                .setAckedTotal(engines.get(shard).metrics().acks.sum()).build();
    }

    /** The shard number the metadata group's records carry. */
    private static final int METADATA = -1;

    private NodeInfo.Builder info(RaftNode replica, int shard) {
        RaftNode.Status s = replica.status();
        return NodeInfo.newBuilder().setId(s.nodeId()).setAddress(selfAddress).setRaftAddress(raftAddress(s.nodeId()))
                .setRole(s.role()).setTerm(s.term()).setCommitIndex(s.commitIndex()).setAppliedIndex(s.appliedIndex())
                .setLeaderId(s.leaderId() == null ? "" : s.leaderId()).setReady(replica.readiness().ready())
                .addAllStalledFollowers(replica.counters().stalledFollowers()).setShard(shard);
    }

    private String raftAddress(String id) {
        try {
            return raft.admin().members().stream().filter(p -> p.id().equals(id))
                    .map(RaftNode.Member::raftAddress).findFirst().orElse("");
        } catch (IOException e) {
            return "";
        }
    }

    ManagedChannel channel(String address) {
        return channels.computeIfAbsent(address, a -> peers.open(ServerAddress.parse(a)));
    }

    /**
     * Every member's status in every shard (shard 0's records first) and in the metadata group; the
     * leader of shard 0 and of the metadata group; quorum when every group has a leader and more than
     * half of the voters answered.
     */
    ClusterStatusResponse cluster() throws IOException {
        ClusterStatusResponse.Builder out = ClusterStatusResponse.newBuilder();
        boolean quorum = true;
        String firstLeader = "";
        if (metadataGroup) {
            String leader = groupStatus(METADATA, out::addMetadataMembers);
            quorum &= !leader.isEmpty();
            out.setMetadataLeaderId(leader).setShards(raft.store().clusterShards().orElse(0));
        } else {
            out.setShards(shards.size());
        }
        for (int shard = 0; shard < shards.size(); shard++) {
            String leader = groupStatus(shard, out::addMembers);
            quorum &= !leader.isEmpty();
            if (shard == 0) {
                firstLeader = leader;
            }
        }
        long upInShard0 = out.getMembersList().stream().filter(m -> m.getNode().getShard() == 0 && m.getUp()).count();
        int voters = raft.admin().members().size();
        return out.setLeaderId(firstLeader).setHasQuorum(quorum && upInShard0 * 2 > voters).build();
    }

    /**
     * Adds every member's record of {@code shard} (or of the metadata group, {@link #METADATA}) to
     * {@code out}; returns the group's leader, or "".
     */
    private String groupStatus(int shard, java.util.function.Consumer<MemberStatus.Builder> out) throws IOException {
        boolean meta = shard == METADATA;
        NodeInfo me = meta ? info(raft, METADATA).build() : self(shard);
        RaftNode.Status local = (meta ? raft : shards.get(shard)).status();
        long leaderCommit = -1;
        Map<String, NodeInfo> infos = new java.util.TreeMap<>();
        Map<String, String> errors = new java.util.TreeMap<>();
        NodeStatusRequest ask = meta ? NodeStatusRequest.newBuilder().setMetadata(true).build()
                : NodeStatusRequest.newBuilder().setShard(shard).build();
        for (RaftNode.Member peer : raft.admin().members()) {
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
                        .nodeStatus(ask));
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
        for (RaftNode.Member peer : raft.admin().members()) {
            String id = peer.id();
            NodeInfo n = infos.get(id);
            MemberStatus.Builder m = MemberStatus.newBuilder();
            Long contact = local.followerLastContactMs().get(id);
            m.setLastContactMs(contact == null ? -1 : contact).setStalled(stalled.contains(id));
            if (n == null) {
                String addr = raft.grpcAddressOf(id);
                m.setNode(NodeInfo.newBuilder().setId(id).setAddress(addr == null ? "" : addr)
                        .setRaftAddress(peer.raftAddress()).setShard(shard)).setUp(false)
                        .setError(errors.getOrDefault(id, "no answer"));
            } else {
                m.setNode(n).setUp(true).setLag(leaderCommit < 0 ? 0 : Math.max(0, leaderCommit - n.getAppliedIndex()));
            }
            out.accept(m);
        }
        return leader;
    }

    @Override
    public void close() {
        channels.values().forEach(ManagedChannel::shutdownNow);
    }
}
