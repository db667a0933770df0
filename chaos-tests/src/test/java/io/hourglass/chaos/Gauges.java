package io.hourglass.chaos;

/** One figure of a node's {@code /metrics}, read as the Prometheus text it serves. */
final class Gauges {
    private Gauges() {
    }

    /**
     * The first sample of {@code name} (with or without labels; shard 0's when the series has a shard
     * label), or -1 if the node does not answer or lacks it.
     */
    static long read(ServerProcess node, String name) {
        return node.httpGet("/metrics").flatMap(body -> body.lines()
                        .filter(line -> line.startsWith(name + " ") || line.startsWith(name + "{"))
                        .filter(line -> !line.contains("shard=\"") || line.contains("shard=\"0\""))
                        .findFirst()
                        .map(line -> (long) Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1).strip())))
                .orElse(-1L);
    }

    static long applied(ServerProcess node) {
        return read(node, "hourglass_raft_applied_index");
    }

    static long commit(ServerProcess node) {
        return read(node, "hourglass_raft_commit_index");
    }
}
