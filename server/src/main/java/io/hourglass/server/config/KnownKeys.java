package io.hourglass.server.config;

import java.util.List;

/** Every configuration key a node reads; the environment-variable mapping resolves against it. */
final class KnownKeys {
    static final List<String> ALL = List.of(
            "node.id", "node.dataDir", "node.host", "node.bindHost", "grpc.port", "http.port",
            "raft.port", "cluster.peers", "cluster.join", "raft.electionTimeoutMin", "raft.electionTimeoutMax",
            "raft.requestTimeout", "raft.snapshotEveryEntries", "raft.purgeGap", "raft.logSegmentBytes",
            "raft.followerStallTimeout", "raft.maxCheckpointDownloads",
            "delivery.dispatchPollInterval", "delivery.consumerQueueSize", "delivery.inFlightTimeout",
            "delivery.deleteBatchInterval", "delivery.deleteBatchMaxKeys", "delivery.ttlSweepInterval",
            "limits.maxPayloadBytes", "limits.maxTopicLength", "limits.maxDelay", "limits.maxTtl",
            "limits.maxBatchMessages", "limits.maxBatchBytes",
            "limits.maxHeaders", "limits.maxHeaderBytes", "limits.maxProducerIdBytes", "limits.maxMessageBytes",
            "rooms.clientTimeout", "rooms.housekeepingInterval", "rooms.resubscribeGrace", "rooms.maxAckTimeout",
            "grpc.executorThreads", "grpc.maxConcurrentStreams", "grpc.keepAliveTime", "grpc.keepAliveTimeout",
            "grpc.permitKeepAliveTime", "grpc.maxConnectionIdle", "grpc.initTimeout", "grpc.maxConsumers",
            "http.threads", "http.idleTimeout", "http.maxConnections");

    private KnownKeys() {
    }
}
