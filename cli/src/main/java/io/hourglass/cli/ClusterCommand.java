package io.hourglass.cli;

import io.hourglass.api.v1.ClusterStatusResponse;
import io.hourglass.api.v1.MemberStatus;
import io.hourglass.api.v1.MembershipResponse;
import io.hourglass.api.v1.NodeInfo;
import io.hourglass.api.v1.SnapshotResponse;
import io.hourglass.api.v1.StateDigestResponse;
import io.hourglass.client.HourglassClient;
import io.hourglass.client.HourglassClientException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/** {@code hourglass cluster}: status, membership, leadership and snapshots. */
@Command(name = "cluster", mixinStandardHelpOptions = true,
        description = "Inspect and change the cluster: status, digest, add-node, remove-node, transfer-leader, snapshot, "
                + "rebalance.",
        subcommands = {ClusterCommand.Status.class, ClusterCommand.Digest.class, ClusterCommand.AddNode.class,
            ClusterCommand.RemoveNode.class, ClusterCommand.TransferLeader.class, ClusterCommand.Snapshot.class,
            ClusterCommand.Rebalance.class})
final class ClusterCommand implements Callable<Integer> {
    static final List<Column> MEMBERSHIP_COLUMNS = List.of(
            Column.text("leaderId", "LEADER"),
            Column.custom("voters", "VOTERS", AdminSupport::list));

    @ParentCommand
    private HourglassCommand root;

    @Spec
    private CommandSpec spec;

    @Override
    public Integer call() {
        throw new CommandLine.ParameterException(spec.commandLine(),
                "missing subcommand: status, digest, add-node, remove-node, transfer-leader, snapshot or rebalance");
    }

    static Map<String, Object> membership(MembershipResponse r) {
        Map<String, Object> record = new LinkedHashMap<>();
        record.put("leaderId", r.getLeaderId().isEmpty() ? null : r.getLeaderId());
        record.put("voters", List.copyOf(r.getVotersList()));
        return record;
    }

    @Command(name = "status", mixinStandardHelpOptions = true,
            description = {"Print one record per member and event shard: id, shard, address, role, term, commitIndex, "
                    + "appliedIndex, "
                    + "lag (leader's commit index minus the member's applied index), up, raftAddress, "
                    + "lastContactMs (as the leader sees it, -1 unknown), leader (true for the leader). "
                    + "role, term and the indexes are null for a member that is down.",
                "With --metadata, one record per member of the metadata group instead (peer registry, security state, "
                        + "membership; shard \"meta\").",
                "Shard 0's leader, the metadata group's, and whether every group has a leader and a majority answered "
                        + "go to stderr."})
    static final class Status implements Callable<Integer> {
        static final List<Column> COLUMNS = List.of(
                Column.text("id", "ID"),
                Column.text("shard", "SHARD"),
                Column.text("address", "ADDRESS"),
                Column.text("role", "ROLE"),
                Column.text("term", "TERM"),
                Column.text("commitIndex", "COMMIT"),
                Column.text("appliedIndex", "APPLIED"),
                Column.text("lag", "LAG"),
                Column.text("up", "UP"),
                Column.text("stalled", "STALLED"),
                Column.text("raftAddress", "RAFT_ADDRESS"),
                Column.text("lastContactMs", "LAST_CONTACT_MS"),
                Column.text("leader", "LEADER"));

        @ParentCommand
        private ClusterCommand group;

        @Spec
        private CommandSpec spec;

        @picocli.CommandLine.Option(names = "--metadata",
                description = "Print the metadata group's members instead of the event shards' (a cluster created "
                        + "before the metadata group has none: its shard 0 holds the metadata).")
        private boolean metadata;

        @Override
        public Integer call() {
            ClusterStatusResponse[] status = new ClusterStatusResponse[1];
            int code = AdminSupport.print(group.root, spec, COLUMNS, admin -> {
                status[0] = admin.clusterStatus();
                List<Map<String, Object>> records = new ArrayList<>();
                for (MemberStatus m : metadata ? status[0].getMetadataMembersList() : status[0].getMembersList()) {
                    Map<String, Object> record = record(m, status[0].getLeaderId());
                    if (metadata) {
                        record.put("shard", "meta");
                    }
                    records.add(record);
                }
                return records;
            });
            ClusterStatusResponse s = status[0];
            if (s == null) {
                return code;
            }
            String meta = s.getMetadataMembersCount() == 0 ? ""
                    : ", metadata leader: " + (s.getMetadataLeaderId().isEmpty() ? "none" : s.getMetadataLeaderId());
            spec.commandLine().getErr().println("leader: " + (s.getLeaderId().isEmpty() ? "none" : s.getLeaderId())
                    + meta + ", quorum: " + (s.getHasQuorum() ? "yes" : "NO"));
            spec.commandLine().getErr().flush();
            return code;
        }

        static Map<String, Object> record(MemberStatus m, String leaderId) {
            NodeInfo n = m.getNode();
            boolean up = m.getUp();
            Map<String, Object> record = new LinkedHashMap<>();
            record.put("id", n.getId());
            record.put("shard", n.getShard());
            record.put("address", n.getAddress());
            record.put("role", up ? n.getRole() : null);
            record.put("term", up ? n.getTerm() : null);
            record.put("commitIndex", up ? n.getCommitIndex() : null);
            record.put("appliedIndex", up ? n.getAppliedIndex() : null);
            record.put("lag", up ? m.getLag() : null);
            record.put("up", up);
            record.put("stalled", m.getStalled());
            record.put("raftAddress", n.getRaftAddress());
            record.put("lastContactMs", m.getLastContactMs());
            record.put("leader", up && "LEADER".equals(n.getRole()));
            return record;
        }
    }

    @Command(name = "digest", mixinStandardHelpOptions = true,
            description = {"Ask every member for a digest of its replicated state; print one record per member: id, "
                    + "appliedIndex, digest (SHA-256 over every replicated column family), error (why a member "
                    + "did not answer, else null). Members at the same appliedIndex must have the same digest.",
                "A line on stderr says whether they do."})
    static final class Digest implements Callable<Integer> {
        static final List<Column> COLUMNS = List.of(
                Column.text("id", "ID"),
                Column.text("appliedIndex", "APPLIED"),
                Column.text("digest", "DIGEST"),
                Column.text("error", "ERROR"));
        /** Retry budget per member: a member that is down should not hold the others up for --deadline. */
        private static final Duration PER_MEMBER = Duration.ofSeconds(3);

        @ParentCommand
        private ClusterCommand group;

        @Spec
        private CommandSpec spec;

        @Override
        public Integer call() {
            List<Map<String, Object>> records = new ArrayList<>();
            int code = AdminSupport.print(group.root, spec, COLUMNS, admin -> {
                for (MemberStatus m : admin.clusterStatus().getMembersList()) {
                    records.add(digestOf(m.getNode()));
                }
                return records;
            });
            Map<Object, Object> byIndex = new java.util.HashMap<>();
            List<String> diverged = new ArrayList<>();
            for (Map<String, Object> r : records) {
                if (r.get("digest") != null) {
                    Object first = byIndex.putIfAbsent(r.get("appliedIndex"), r.get("digest"));
                    if (first != null && !first.equals(r.get("digest"))) {
                        diverged.add(r.get("id") + "@" + r.get("appliedIndex"));
                    }
                }
            }
            spec.commandLine().getErr().println(diverged.isEmpty()
                    ? "digests agree at every shared applied index"
                    : "DIVERGED: " + String.join(", ", diverged) + " differ from another member at the same index");
            spec.commandLine().getErr().flush();
            return code;
        }

        private Map<String, Object> digestOf(NodeInfo node) {
            Map<String, Object> record = new LinkedHashMap<>();
            record.put("id", node.getId());
            Duration budget = group.root.deadline().compareTo(PER_MEMBER) < 0 ? group.root.deadline() : PER_MEMBER;
            try (HourglassClient one = group.root.openClient(b -> b.servers(List.of(node.getAddress()))
                    .retryDeadline(budget))) {
                StateDigestResponse d = one.admin().stateDigest();
                record.put("appliedIndex", d.getAppliedIndex());
                record.put("digest", d.getSha256());
                record.put("error", null);
            } catch (HourglassClientException e) {
                record.put("appliedIndex", null);
                record.put("digest", null);
                record.put("error", AdminSupport.shorten(e.getMessage()));
            }
            return record;
        }
    }

    @Command(name = "add-node", mixinStandardHelpOptions = true,
            description = "Add a voter that already runs (started empty with --join); prints leaderId and voters.")
    static final class AddNode implements Callable<Integer> {
        private static final Pattern SPEC = Pattern.compile("([^=\\s]+)=([^:\\s]+):(\\d{1,5}):(\\d{1,5})");

        @ParentCommand
        private ClusterCommand group;

        @Spec
        private CommandSpec spec;

        @Parameters(index = "0", paramLabel = "ID=HOST:RAFTPORT:GRPCPORT", description = "The new member.")
        private String member;

        @Override
        public Integer call() {
            Matcher m = SPEC.matcher(member.strip());
            if (!m.matches()) {
                throw new CommandLine.ParameterException(spec.commandLine(),
                        "expected ID=HOST:RAFTPORT:GRPCPORT, got '" + member + "'");
            }
            int raftPort = port(m.group(3));
            int grpcPort = port(m.group(4));
            return AdminSupport.print(group.root, spec, MEMBERSHIP_COLUMNS, admin -> List.of(
                    membership(admin.addNode(m.group(1), m.group(2), raftPort, grpcPort))));
        }

        private int port(String s) {
            int port = Integer.parseInt(s);
            if (port < 1 || port > 65535) {
                throw new CommandLine.ParameterException(spec.commandLine(), "port out of range: " + s);
            }
            return port;
        }
    }

    @Command(name = "remove-node", mixinStandardHelpOptions = true,
            description = "Remove a voter (not the leader: transfer leadership first); prints leaderId and voters.")
    static final class RemoveNode implements Callable<Integer> {
        @ParentCommand
        private ClusterCommand group;

        @Spec
        private CommandSpec spec;

        @Parameters(index = "0", paramLabel = "ID", description = "The member to remove.")
        private String id;

        @Override
        public Integer call() {
            AdminSupport.require(spec, "ID", id);
            return AdminSupport.print(group.root, spec, MEMBERSHIP_COLUMNS,
                    admin -> List.of(membership(admin.removeNode(id))));
        }
    }

    @Command(name = "transfer-leader", mixinStandardHelpOptions = true,
            description = "Move leadership to member ID and wait for it; prints leaderId and voters.")
    static final class TransferLeader implements Callable<Integer> {
        @ParentCommand
        private ClusterCommand group;

        @Spec
        private CommandSpec spec;

        @Parameters(index = "0", paramLabel = "ID", description = "The member to lead.")
        private String id;

        @Override
        public Integer call() {
            AdminSupport.require(spec, "ID", id);
            return AdminSupport.print(group.root, spec, MEMBERSHIP_COLUMNS,
                    admin -> List.of(membership(admin.transferLeader(id))));
        }
    }

    @Command(name = "snapshot", mixinStandardHelpOptions = true,
            description = "Take a Raft snapshot now on the answering node, or on --node; prints nodeId and index.")
    static final class Snapshot implements Callable<Integer> {
        static final List<Column> COLUMNS = List.of(Column.text("nodeId", "NODE"), Column.text("index", "INDEX"));

        @ParentCommand
        private ClusterCommand group;

        @Spec
        private CommandSpec spec;

        @Option(names = "--node", paramLabel = "ID", description = "The member to snapshot (default: the answering node).")
        private String node = "";

        @Override
        public Integer call() {
            return AdminSupport.print(group.root, spec, COLUMNS, admin -> {
                SnapshotResponse r = admin.snapshot(node.strip());
                Map<String, Object> record = new LinkedHashMap<>();
                record.put("nodeId", r.getNodeId());
                record.put("index", r.getIndex());
                return List.of(record);
            });
        }
    }

    @Command(name = "rebalance", mixinStandardHelpOptions = true,
            description = {"Spread the event shards' leaderships over the nodes now (the nodes also do it on their own "
                    + "every few seconds): each shard goes to the (shard mod voters)-th voter by id when that node is "
                    + "caught up. Prints one record per shard handed over: shard, from, to.",
                "Nodes that did not answer go to stderr; a cluster of one shard moves nothing."})
    static final class Rebalance implements Callable<Integer> {
        static final List<Column> COLUMNS = List.of(Column.text("shard", "SHARD"), Column.text("from", "FROM"),
                Column.text("to", "TO"));

        @ParentCommand
        private ClusterCommand group;

        @Spec
        private CommandSpec spec;

        @Override
        public Integer call() {
            io.hourglass.api.v1.RebalanceResponse[] answer = new io.hourglass.api.v1.RebalanceResponse[1];
            int code = AdminSupport.print(group.root, spec, COLUMNS, admin -> {
                answer[0] = admin.rebalance();
                List<Map<String, Object>> records = new ArrayList<>();
                for (io.hourglass.api.v1.ShardMove m : answer[0].getMovesList()) {
                    Map<String, Object> record = new LinkedHashMap<>();
                    record.put("shard", m.getShard());
                    record.put("from", m.getFrom());
                    record.put("to", m.getTo());
                    records.add(record);
                }
                return records;
            });
            if (answer[0] != null) {
                answer[0].getErrorsMap().forEach((node, error) ->
                        spec.commandLine().getErr().println("node " + node + " did not answer: " + error));
                spec.commandLine().getErr().flush();
            }
            return code;
        }
    }
}
