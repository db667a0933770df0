package io.hourglass.core.command;

import io.hourglass.core.proto.Command;
import io.hourglass.core.proto.DeleteBatchCmd;
import io.hourglass.core.proto.DeleteMessageCmd;
import io.hourglass.core.proto.Deletion;
import io.hourglass.core.proto.NewMessage;
import io.hourglass.core.proto.PutCmd;
import io.hourglass.core.proto.StoredMessage;
import io.hourglass.core.storage.EventKey;
import io.hourglass.core.storage.EventStore;
import io.hourglass.core.storage.ProducerIds;
import io.hourglass.core.storage.StoreBatch;
import io.hourglass.core.storage.TermIndex;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The deterministic apply of replicated commands to the store. It reads only the command, its
 * log position and the store — never a clock — so every replica writes identical bytes.
 * Called from one thread (the Raft apply thread). A command it does not understand throws:
 * skipping it would let replicas diverge silently.
 */
public final class StateApplier {
    /** The group name of a deletion that removes the message outright. */
    public static final String ALL_GROUPS = "*";

    private final EventStore store;
    private final ProducerIds producerIds;
    private final io.hourglass.core.rooms.RoomApplier rooms;
    private final List<ApplyListener> listeners = new CopyOnWriteArrayList<>();

    public StateApplier(EventStore store) {
        this.store = store;
        this.producerIds = new ProducerIds(store);
        this.rooms = new io.hourglass.core.rooms.RoomApplier(store);
    }

    public void addListener(ApplyListener listener) {
        listeners.add(listener);
    }

    public EventStore store() {
        return store;
    }

    public ApplyResult apply(Command command, TermIndex position) {
        if (position.index() <= store.appliedIndex().index()) {
            throw new IllegalStateException("entry " + position + " is not after the applied " + store.appliedIndex());
        }
        long stamp = command.getStampedAtMs();
        if (stamp <= 0) {
            throw new IllegalStateException("entry " + position + " carries no leader time stamp");
        }
        StoreBatch batch = store.newBatch();
        ApplyResult result;
        switch (command.getBodyCase()) {
            case PUT -> result = applyPut(batch, command.getPut(), stamp, position);
            case DELETE_BATCH -> result = applyDeletes(batch, command.getDeleteBatch(), stamp, position);
            case REGISTER_GROUP -> {
                String topic = command.getRegisterGroup().getTopic();
                Set<String> groups = new HashSet<>(batch.durableGroups(topic));
                if (groups.add(command.getRegisterGroup().getGroup())) {
                    batch.putTopicGroups(topic, groups);
                }
                result = empty(position, stamp);
            }
            case DELETE_GROUP -> result = applyDeleteGroup(batch, command.getDeleteGroup().getTopic(),
                    command.getDeleteGroup().getGroup(), stamp, position);
            case REGISTER_PEER -> {
                batch.putPeerAddress(command.getRegisterPeer().getId(), command.getRegisterPeer().getGrpcAddress());
                result = empty(position, stamp);
            }
            case PURGE_TOPIC -> {
                List<EventKey> purged = new ArrayList<>();
                store.scanTopic(command.getPurgeTopic().getTopic(), (key, m) -> {
                    batch.deleteMessage(key, m);
                    return purged.add(key);
                });
                result = new ApplyResult(position, stamp, List.of(), false, purged, List.of());
            }
            case DELETE_MESSAGE -> result = applyDeleteMessage(batch, command.getDeleteMessage(), stamp, position);
            case ROOM -> result = rooms.apply(batch, command.getRoom(), stamp, position);
            default -> {
                batch.close();
                throw new IllegalStateException("entry " + position + " holds an unknown command: " + command.getBodyCase());
            }
        }
        store.commit(batch, position);
        for (ApplyListener l : listeners) {
            l.onApplied(result);
        }
        return result;
    }

    /** Advances the applied position over an entry that carries no command (Raft's own entries). */
    public void skip(TermIndex position) {
        if (position.index() > store.appliedIndex().index()) {
            store.commit(store.newBatch(), position);
        }
    }

    private static ApplyResult empty(TermIndex position, long stamp) {
        return new ApplyResult(position, stamp, List.of(), false, List.of(), List.of());
    }

    /**
     * Forgets a durable group: its receipts go, and messages that every remaining group has
     * acknowledged are removed (they waited only for the deleted group).
     */
    private ApplyResult applyDeleteGroup(StoreBatch batch, String topic, String group, long stamp, TermIndex position) {
        Set<String> groups = new HashSet<>(batch.durableGroups(topic));
        if (!groups.remove(group)) {
            return empty(position, stamp);
        }
        batch.putTopicGroups(topic, groups);
        List<EventKey> deleted = new ArrayList<>();
        store.scanTopic(topic, (key, m) -> {
            batch.deleteReceipt(key, group);
            if (!groups.isEmpty() && groups.stream().allMatch(g -> store.hasReceipt(key, g))) {
                batch.deleteMessage(key, m);
                deleted.add(key);
            }
            return true;
        });
        return new ApplyResult(position, stamp, List.of(), false, deleted, List.of());
    }

    private ApplyResult applyPut(StoreBatch batch, PutCmd put, long stamp, TermIndex position) {
        if (put.getMessagesCount() > EventKey.MAX_MESSAGES_PER_ENTRY) {
            throw new IllegalStateException("entry " + position + " carries " + put.getMessagesCount() + " messages");
        }
        List<EventKey> keys = new ArrayList<>(put.getMessagesCount());
        Map<String, EventKey> inThisEntry = new HashMap<>();
        boolean due = false;
        producerIds.forgetExpired(batch, stamp);
        for (int i = 0; i < put.getMessagesCount(); i++) {
            NewMessage m = put.getMessages(i);
            String pid = m.getProducerId();
            if (!pid.isEmpty()) {
                EventKey earlier = inThisEntry.get(pid);
                if (earlier == null) {
                    earlier = producerIds.keyOf(pid).orElse(null);
                }
                if (earlier != null) {
                    keys.add(earlier); // a retry: answer with the message stored the first time
                    continue;
                }
            }
            long dueAt = stamp + m.getDelayMs();
            EventKey key = EventKey.of(m.getTopic(), dueAt, position.index(), i);
            if (!pid.isEmpty()) {
                producerIds.remember(batch, pid, key, stamp);
                inThisEntry.put(pid, key);
            }
            StoredMessage stored = StoredMessage.newBuilder()
                    .setTopic(m.getTopic())
                    .setPayload(m.getPayload())
                    .putAllHeaders(m.getHeadersMap())
                    .setEnqueuedAtMs(stamp)
                    .setDueAtMs(dueAt)
                    .setExpiresAtMs(m.getTtlMs() > 0 ? dueAt + m.getTtlMs() : 0)
                    .setProducerId(m.getProducerId())
                    .build();
            batch.putMessage(key, stored);
            keys.add(key);
            due |= m.getDelayMs() == 0;
        }
        return new ApplyResult(position, stamp, keys, due, List.of(), List.of());
    }

    /**
     * Deletes one message with its expiry entry and receipts, whatever its groups acknowledged; the
     * result lists it as deleted, so every replica drops it from its in-flight map and it is not
     * redelivered. A key of another topic (or of nothing) changes nothing: the topic in the value
     * guards against a caller naming the wrong topic as much as against hash collisions.
     */
    private ApplyResult applyDeleteMessage(StoreBatch batch, DeleteMessageCmd cmd, long stamp, TermIndex position) {
        if (cmd.getEventKey().size() != EventKey.LENGTH) {
            return empty(position, stamp);
        }
        EventKey key = EventKey.fromBytes(cmd.getEventKey().toByteArray());
        Optional<StoredMessage> message = store.message(key);
        if (message.isEmpty() || !message.get().getTopic().equals(cmd.getTopic())) {
            return empty(position, stamp);
        }
        batch.deleteMessage(key, message.get());
        return new ApplyResult(position, stamp, List.of(), false, List.of(key), List.of());
    }

    private ApplyResult applyDeletes(StoreBatch batch, DeleteBatchCmd cmd, long stamp, TermIndex position) {
        List<EventKey> deleted = new ArrayList<>();
        List<ApplyResult.Receipt> receipts = new ArrayList<>();
        Set<EventKey> gone = new HashSet<>();
        Map<EventKey, Set<String>> receiptsInBatch = new HashMap<>();
        for (Deletion d : cmd.getDeletionsList()) {
            EventKey key = EventKey.fromBytes(d.getEventKey().toByteArray());
            if (gone.contains(key)) {
                continue;
            }
            Optional<StoredMessage> message = store.message(key);
            if (message.isEmpty()) {
                continue;
            }
            StoredMessage m = message.get();
            boolean remove;
            if (ALL_GROUPS.equals(d.getGroup())) {
                remove = true;
            } else {
                Set<String> durable = batch.durableGroups(m.getTopic());
                if (!durable.contains(d.getGroup())) {
                    continue;
                }
                batch.putReceipt(key, d.getGroup());
                receipts.add(new ApplyResult.Receipt(key, d.getGroup()));
                Set<String> acked = receiptsInBatch.computeIfAbsent(key, k -> new HashSet<>());
                acked.add(d.getGroup());
                remove = durable.stream().allMatch(g -> acked.contains(g) || store.hasReceipt(key, g));
            }
            if (remove) {
                batch.deleteMessage(key, m);
                gone.add(key);
                deleted.add(key);
            }
        }
        return new ApplyResult(position, stamp, List.of(), false, deleted, receipts);
    }
}
