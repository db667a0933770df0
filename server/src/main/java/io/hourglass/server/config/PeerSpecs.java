package io.hourglass.server.config;

import io.hourglass.core.config.ConfigException;
import io.hourglass.core.config.Settings;
import java.util.HashMap;
import java.util.Map;
import java.util.StringJoiner;

/**
 * The server's reading of {@code cluster.peers}: each entry is {@code id=host:raftPort:grpcPort} with an
 * optional fourth field, the peer's replica (checkpoint) port. The Raft layer reads the first three
 * fields; the fourth is taken off here, and a peer without one serves checkpoints at its Raft port
 * + {@link ReplicaConfig#DEFAULT_OFFSET_FROM_RAFT_PORT}.
 *
 * @param forRaft the settings with every peer entry in its three-field form
 * @param replicaPorts the replica ports given explicitly, by peer id
 */
public record PeerSpecs(Settings forRaft, Map<String, Integer> replicaPorts) {
    public PeerSpecs {
        replicaPorts = Map.copyOf(replicaPorts);
    }

    public static PeerSpecs read(Settings s) {
        String peers = s.string("cluster.peers", "");
        if (peers.isBlank()) {
            return new PeerSpecs(s, Map.of());
        }
        Map<String, Integer> replica = new HashMap<>();
        StringJoiner threeFields = new StringJoiner(",");
        for (String part : peers.split(",")) {
            String p = part.trim();
            String[] fields = p.split(":");
            if (fields.length == 4) {
                String id = p.substring(0, p.indexOf('=') < 0 ? 0 : p.indexOf('=')).trim();
                try {
                    replica.put(id, Integer.parseInt(fields[3].trim()));
                } catch (NumberFormatException e) {
                    throw new ConfigException("peer '" + p + "' has a replica port that is not a number");
                }
                threeFields.add(p.substring(0, p.lastIndexOf(':')));
            } else {
                threeFields.add(p); // the Raft layer says what is wrong with it, if anything
            }
        }
        Map<String, String> values = new HashMap<>(s.asMap());
        values.put("cluster.peers", threeFields.toString());
        return new PeerSpecs(new Settings(values), replica);
    }

    /** Where peer {@code id} serves checkpoints, given its Raft address {@code host:raftPort}. */
    public String replicaAddress(String id, String raftAddress) {
        int colon = raftAddress.lastIndexOf(':');
        String host = raftAddress.substring(0, colon);
        Integer explicit = replicaPorts.get(id);
        int port = explicit != null ? explicit
                : Integer.parseInt(raftAddress.substring(colon + 1)) + ReplicaConfig.DEFAULT_OFFSET_FROM_RAFT_PORT;
        return host + ":" + port;
    }
}
