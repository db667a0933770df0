package io.hourglass.core.storage;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * The byte layout of the store's secondary keys (the primary one is {@link EventKey}): receipts,
 * the expiry index, and the topic and peer registries in {@code meta} (the dedup index is
 * {@link ProducerIds}' own).
 */
final class StoreKeys {
    private StoreKeys() {
    }

    static byte[] receiptKey(EventKey key, String group) {
        byte[] g = group.getBytes(StandardCharsets.UTF_8);
        return ByteBuffer.allocate(EventKey.LENGTH + g.length).put(key.toBytes()).put(g).array();
    }

    static byte[] expiryKey(long expiresAtMs, EventKey key) {
        return ByteBuffer.allocate(8 + EventKey.LENGTH).putLong(expiresAtMs).put(key.toBytes()).array();
    }

    /** A schedule key's entry in {@code keys}: the topic's hash, then the key's UTF-8 bytes. */
    static byte[] scheduleKey(String topic, String key) {
        byte[] k = key.getBytes(StandardCharsets.UTF_8);
        return ByteBuffer.allocate(8 + k.length).putLong(EventKey.topicHash(topic)).put(k).array();
    }

    static byte[] topicKey(String topic) {
        return (TopicRegistry.TOPIC_PREFIX + topic).getBytes(StandardCharsets.UTF_8);
    }

    /** A durable group's policy in {@code meta}: {@code group/<topic>\0<group>}. */
    static byte[] groupPolicyKey(String topic, String group) {
        return (GROUP_POLICY_PREFIX + topic + '\0' + group).getBytes(StandardCharsets.UTF_8);
    }

    /** The prefix of every policy of {@code topic}'s groups. */
    static byte[] groupPolicyPrefix(String topic) {
        return (GROUP_POLICY_PREFIX + topic + '\0').getBytes(StandardCharsets.UTF_8);
    }

    static final String GROUP_POLICY_PREFIX = "group/";

    static byte[] peerKey(String id) {
        return ("peer/" + id).getBytes(StandardCharsets.UTF_8);
    }

    /** The cluster's shard count in {@code meta}, as its metadata group recorded it. */
    static final byte[] CLUSTER_SHARDS_KEY = "cluster/shards".getBytes(StandardCharsets.UTF_8);
}
