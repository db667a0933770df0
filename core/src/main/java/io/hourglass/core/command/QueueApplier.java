package io.hourglass.core.command;

import com.google.protobuf.ByteString;
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
import java.util.EnumSet;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The deterministic apply of the scheduled queue's commands (DESIGN §3): publishes, delete batches,
 * durable groups, purges and single deletes. Commands are built by {@link QueueCommands} (publish)
 * and by the delivery pipeline (group registration, delete batches). Apply thread only; see
 * {@link CommandApplier} for the determinism contract.
 */
public final class QueueApplier implements CommandApplier {
    /** The group name of a deletion that removes the message outright. */
    public static final String ALL_GROUPS = "*";

    private final EventStore store;
    private final ProducerIds producerIds;

    public QueueApplier(EventStore store) {
        this.store = store;
        this.producerIds = new ProducerIds(store);
    }

    @Override
    public Set<Command.BodyCase> kinds() {
        return EnumSet.of(Command.BodyCase.PUT, Command.BodyCase.DELETE_BATCH, Command.BodyCase.REGISTER_GROUP,
                Command.BodyCase.DELETE_GROUP, Command.BodyCase.PURGE_TOPIC, Command.BodyCase.DELETE_MESSAGE,
                Command.BodyCase.DEFER, Command.BodyCase.CONFIGURE_GROUP, Command.BodyCase.DEAD_LETTER,
                Command.BodyCase.FIRE);
    }

    @Override
    public ApplyResult apply(StoreBatch batch, Command command, long stamp, TermIndex position) {
        return switch (command.getBodyCase()) {
            case PUT -> applyPut(batch, command.getPut(), stamp, position);
            case DELETE_BATCH -> applyDeletes(batch, command.getDeleteBatch(), stamp, position);
            case REGISTER_GROUP -> {
                String topic = command.getRegisterGroup().getTopic();
                Set<String> groups = new HashSet<>(batch.durableGroups(topic));
                if (groups.add(command.getRegisterGroup().getGroup())) {
                    batch.putTopicGroups(topic, groups);
                }
                yield ApplyResult.unchanged(position, stamp);
            }
            case DELETE_GROUP -> applyDeleteGroup(batch, command.getDeleteGroup().getTopic(),
                    command.getDeleteGroup().getGroup(), stamp, position);
            case PURGE_TOPIC -> {
                List<EventKey> purged = new ArrayList<>();
                store.queue().scanTopic(command.getPurgeTopic().getTopic(), (key, m) -> {
                    batch.deleteMessage(key, m);
                    return purged.add(key);
                });
                yield new ApplyResult(position, stamp, List.of(), false, purged, List.of());
            }
            case DELETE_MESSAGE -> applyDeleteMessage(batch, command.getDeleteMessage(), stamp, position);
            case CONFIGURE_GROUP -> applyConfigureGroup(batch, command.getConfigureGroup(), stamp, position);
            case DEAD_LETTER -> applyDeadLetter(batch, command.getDeadLetter(), stamp, position);
            case FIRE -> applyFire(batch, command.getFire(), stamp, position);
            case DEFER -> {
                for (io.hourglass.core.proto.Deferral d : command.getDefer().getDeferralsList()) {
                    if (d.getEventKey().size() != EventKey.LENGTH) {
                        continue;
                    }
                    EventKey key = EventKey.fromBytes(d.getEventKey().toByteArray());
                    Optional<StoredMessage> m = store.queue().message(key);
                    // Only for a stored message, a durable group of its topic, not acknowledged by it.
                    if (m.isPresent() && batch.durableGroups(m.get().getTopic()).contains(d.getGroup())
                            && !store.queue().hasReceipt(key, d.getGroup())) {
                        batch.putDeferral(key, d.getGroup(), d.getUntilMs());
                    }
                }
                yield ApplyResult.unchanged(position, stamp);
            }
            default -> throw new IllegalStateException("entry " + position + " holds a command the queue does not own: "
                    + command.getBodyCase());
        };
    }

    /**
     * Stores each new message under {@code EventKey.of(topic, stamp + delay, logIndex, position)}. A
     * producer id seen within the dedup window — earlier, or earlier in this entry — answers the
     * first message's key and stores nothing.
     */
    private ApplyResult applyPut(StoreBatch batch, PutCmd put, long stamp, TermIndex position) {
        if (put.getMessagesCount() > EventKey.MAX_MESSAGES_PER_ENTRY) {
            throw new IllegalStateException("entry " + position + " carries " + put.getMessagesCount() + " messages");
        }
        List<EventKey> keys = new ArrayList<>(put.getMessagesCount());
        Map<ByteString, EventKey> inThisEntry = new HashMap<>();
        Replacements replacements = new Replacements(batch, store);
        boolean due = false;
        producerIds.forgetExpired(batch, stamp);
        // Names and ids stay the UTF-8 bytes the entry carries: decoding them into strings and
        // encoding them again for the stored message was ~30 % of a follower's apply thread.
        ByteString topic = null;
        long topicHash = 0;
        for (int i = 0; i < put.getMessagesCount(); i++) {
            NewMessage m = put.getMessages(i);
            ByteString pid = m.getProducerIdBytes();
            if (!pid.isEmpty()) {
                EventKey earlier = inThisEntry.get(pid);
                if (earlier == null) {
                    earlier = producerIds.keyOf(pid).orElse(null);
                }
                if (earlier != null) {
                    keys.add(earlier); // a retry: answer with the message stored the first time
                    replacements.none();
                    continue;
                }
            }
            long dueAt = stamp + (m.getEveryMs() > 0 && m.getDelayMs() == 0 ? m.getEveryMs() : m.getDelayMs());
            ByteString messageTopic = m.getTopicBytes();
            if (!messageTopic.equals(topic)) { // an entry's messages mostly share their topic
                topic = messageTopic;
                topicHash = EventKey.topicHash(topic);
            }
            EventKey key = EventKey.ofHash(topicHash, dueAt, position.index(), i);
            if (!pid.isEmpty()) {
                producerIds.remember(batch, pid, key, stamp);
                inThisEntry.put(pid, key);
            }
            StoredMessage stored = StoredMessage.newBuilder()
                    .setTopicBytes(topic)
                    .setPayload(m.getPayload())
                    .putAllHeaders(m.getHeadersMap())
                    .setEnqueuedAtMs(stamp)
                    .setDueAtMs(dueAt)
                    .setExpiresAtMs(m.getTtlMs() > 0 ? dueAt + m.getTtlMs() : 0)
                    .setProducerIdBytes(pid)
                    .setKeyBytes(m.getKeyBytes())
                    .setEveryMs(m.getEveryMs())
                    .build();
            replacements.replace(stored); // before the put: the key's entry then names the new message
            batch.putMessage(key, stored);
            replacements.stored(key, stored);
            keys.add(key);
            due |= dueAt <= stamp;
        }
        return replacements.any()
                ? new ApplyResult(position, stamp, keys, due, replacements.deleted(), List.of(), List.of(replacements))
                : new ApplyResult(position, stamp, keys, due, List.of(), List.of());
    }

    /**
     * Records receipts and removes messages: {@link #ALL_GROUPS} removes outright, a durable group's
     * deletion records its receipt and removes the message once every durable group of its topic
     * has one (counting the receipts earlier in this batch).
     */
    private ApplyResult applyDeletes(StoreBatch batch, DeleteBatchCmd cmd, long stamp, TermIndex position) {
        List<EventKey> deleted = new ArrayList<>();
        List<EventKey> rearmed = new ArrayList<>();
        List<ApplyResult.Receipt> receipts = new ArrayList<>();
        Set<EventKey> gone = new HashSet<>();
        Map<EventKey, Set<String>> receiptsInBatch = new HashMap<>();
        for (Deletion d : cmd.getDeletionsList()) {
            EventKey key = EventKey.fromBytes(d.getEventKey().toByteArray());
            if (gone.contains(key)) {
                continue;
            }
            Optional<StoredMessage> message = store.queue().message(key);
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
                receipts.add(new ApplyResult.Receipt(key, d.getGroup()));
                Set<String> acked = receiptsInBatch.computeIfAbsent(key, k -> new HashSet<>());
                acked.add(d.getGroup());
                remove = durable.stream().allMatch(g -> acked.contains(g) || store.queue().hasReceipt(key, g));
                if (!remove) {
                    batch.putReceipt(key, d.getGroup()); // a message deleted here needs none
                }
            }
            if (remove) {
                batch.deleteMessage(key, m);
                gone.add(key);
                deleted.add(key);
                fireOnRemoval(batch, key, m, stamp, position, rearmed.size()).ifPresent(rearmed::add);
            }
        }
        for (io.hourglass.core.proto.DeliveryCount c : cmd.getCountsList()) {
            if (c.getEventKey().size() != EventKey.LENGTH) {
                continue;
            }
            EventKey key = EventKey.fromBytes(c.getEventKey().toByteArray());
            if (gone.contains(key) || receiptsInBatch.getOrDefault(key, Set.of()).contains(c.getGroup())) {
                continue;
            }
            Optional<StoredMessage> m = store.queue().message(key);
            if (m.isPresent() && batch.durableGroups(m.get().getTopic()).contains(c.getGroup())
                    && !store.queue().hasReceipt(key, c.getGroup())
                    && c.getDeliveries() > store.queue().deliveryCount(key, c.getGroup())) {
                batch.putDeliveryCount(key, c.getGroup(), c.getDeliveries());
            }
        }
        return new ApplyResult(position, stamp, rearmed, false, deleted, receipts);
    }

    /** Makes the group durable and merges the command's fields into its stored policy. */
    private ApplyResult applyConfigureGroup(StoreBatch batch, io.hourglass.core.proto.ConfigureGroupCmd cmd, long stamp,
                                            TermIndex position) {
        Set<String> groups = new HashSet<>(batch.durableGroups(cmd.getTopic()));
        if (groups.add(cmd.getGroup())) {
            batch.putTopicGroups(cmd.getTopic(), groups);
        }
        io.hourglass.core.proto.GroupPolicy.Builder p = store.queue().groupPolicy(cmd.getTopic(), cmd.getGroup())
                .map(io.hourglass.core.proto.GroupPolicy::toBuilder)
                .orElseGet(io.hourglass.core.proto.GroupPolicy::newBuilder);
        if (cmd.getSetBackoff()) {
            p.clearBackoffMs().addAllBackoffMs(cmd.getBackoffMsList());
        }
        if (cmd.hasMaxDeliveries()) {
            p.setMaxDeliveries(cmd.getMaxDeliveries());
        }
        if (cmd.hasDeadLetterTopic()) {
            p.setDeadLetterTopic(cmd.getDeadLetterTopic());
        }
        io.hourglass.core.proto.GroupPolicy policy = p.build();
        batch.putGroupPolicy(cmd.getTopic(), cmd.getGroup(),
                policy.equals(io.hourglass.core.proto.GroupPolicy.getDefaultInstance()) ? null : policy);
        return ApplyResult.unchanged(position, stamp);
    }

    /**
     * Recurring messages that fell due: each leaves the index of those to fire and stays stored as
     * this firing's message; its next firing is stored under the same key, due at the first
     * {@code due + k·every} after the stamp (a firing missed while no leader ran is skipped, not
     * caught up), with the stamp as its enqueue time and a TTL as long as the first one's. A key
     * fired already, replaced or cancelled meanwhile changes nothing.
     */
    private ApplyResult applyFire(StoreBatch batch, io.hourglass.core.proto.FireCmd cmd, long stamp, TermIndex position) {
        List<EventKey> armed = new ArrayList<>();
        int i = 0;
        for (com.google.protobuf.ByteString b : cmd.getEventKeysList()) {
            if (b.size() != EventKey.LENGTH || i >= EventKey.MAX_MESSAGES_PER_ENTRY) {
                continue;
            }
            EventKey key = EventKey.fromBytes(b.toByteArray());
            Optional<StoredMessage> stored = store.queue().message(key);
            if (stored.isEmpty() || stored.get().getEveryMs() <= 0 || !store.queue().armed(key, stored.get())
                    || stored.get().getDueAtMs() > stamp) {
                continue;
            }
            batch.fired(key, stored.get());
            armed.add(rearm(batch, stored.get(), stamp, position, i++));
        }
        return armed.isEmpty() ? ApplyResult.unchanged(position, stamp)
                : new ApplyResult(position, stamp, armed, false, List.of(), List.of());
    }

    /** Stores the next firing of recurring message {@code m} (see {@link #applyFire}); returns its key. */
    private static EventKey rearm(StoreBatch batch, StoredMessage m, long stamp, TermIndex position, int slot) {
        long every = m.getEveryMs();
        long next = m.getDueAtMs() + every * (Math.max(0, stamp - m.getDueAtMs()) / every + 1);
        long ttl = m.getExpiresAtMs() > 0 ? m.getExpiresAtMs() - m.getDueAtMs() : 0;
        EventKey nextKey = EventKey.of(m.getTopic(), next, position.index(), slot);
        batch.putMessage(nextKey, m.toBuilder().setEnqueuedAtMs(stamp).setDueAtMs(next)
                .setExpiresAtMs(ttl > 0 ? next + ttl : 0).setProducerId("").build());
        return nextKey;
    }

    /**
     * A recurring message removed by its consumers (or its TTL) before the leader fired it: it fires
     * in the same batch, so no firing is lost. A cancel, replace or purge ends the recurrence instead.
     */
    private Optional<EventKey> fireOnRemoval(StoreBatch batch, EventKey key, StoredMessage m, long stamp,
                                            TermIndex position, int slot) {
        if (m.getEveryMs() <= 0 || !store.queue().armed(key, m)) {
            return Optional.empty();
        }
        return Optional.of(rearm(batch, m, stamp, position, slot));
    }

    /** Headers a dead-lettered copy carries (DESIGN §9). */
    public static final String DEAD_LETTER_TOPIC = "hourglass-dead-letter-topic";
    public static final String DEAD_LETTER_GROUP = "hourglass-dead-letter-group";
    public static final String DEAD_LETTER_ID = "hourglass-dead-letter-id";
    public static final String DEAD_LETTER_DELIVERIES = "hourglass-dead-letter-deliveries";
    public static final String DEAD_LETTER_REASON = "hourglass-dead-letter-reason";

    /**
     * Moves a message out of a durable group: a copy published to the dead-letter topic, due at
     * the stamp, and the group's receipt here, in one batch, so the message is never in neither place
     * nor (for that group) in both. Nothing happens when the message is gone, the group is not
     * durable, or it has acknowledged already.
     */
    /** A dead-letter copy's headers: the message's own, and where, whence and why it was moved. */
    public static java.util.Map<String, String> deadLetterHeaders(StoredMessage m, EventKey key, String group,
                                                                  int deliveries, String reason) {
        java.util.Map<String, String> h = new java.util.LinkedHashMap<>(m.getHeadersMap()); // the order the bytes had
        h.put(DEAD_LETTER_TOPIC, m.getTopic());
        h.put(DEAD_LETTER_GROUP, group);
        h.put(DEAD_LETTER_ID, key.toHex());
        h.put(DEAD_LETTER_DELIVERIES, Integer.toString(deliveries));
        h.put(DEAD_LETTER_REASON, reason);
        return h;
    }

    private ApplyResult applyDeadLetter(StoreBatch batch, io.hourglass.core.proto.DeadLetterCmd cmd, long stamp,
                                        TermIndex position) {
        if (cmd.getEventKey().size() != EventKey.LENGTH || cmd.getDeadLetterTopic().isEmpty()) {
            return ApplyResult.unchanged(position, stamp);
        }
        EventKey key = EventKey.fromBytes(cmd.getEventKey().toByteArray());
        Optional<StoredMessage> stored = store.queue().message(key);
        if (stored.isEmpty()) {
            return ApplyResult.unchanged(position, stamp);
        }
        StoredMessage m = stored.get();
        Set<String> durable = batch.durableGroups(m.getTopic());
        if (!durable.contains(cmd.getGroup()) || store.queue().hasReceipt(key, cmd.getGroup())
                || cmd.getDeadLetterTopic().equals(m.getTopic())) {
            return ApplyResult.unchanged(position, stamp);
        }
        List<EventKey> published = new ArrayList<>();
        if (!cmd.getCopiedElsewhere()) {
            EventKey copyKey = EventKey.of(cmd.getDeadLetterTopic(), stamp, position.index(), 0);
            batch.putMessage(copyKey, StoredMessage.newBuilder()
                    .setTopic(cmd.getDeadLetterTopic())
                    .setPayload(m.getPayload())
                    .putAllHeaders(deadLetterHeaders(m, key, cmd.getGroup(), cmd.getDeliveries(), cmd.getReason()))
                    .setEnqueuedAtMs(stamp)
                    .setDueAtMs(stamp)
                    .build());
            published.add(copyKey);
        }
        batch.putReceipt(key, cmd.getGroup());
        List<EventKey> deleted = List.of();
        if (durable.stream().allMatch(g -> g.equals(cmd.getGroup()) || store.queue().hasReceipt(key, g))) {
            batch.deleteMessage(key, m);
            deleted = List.of(key);
            fireOnRemoval(batch, key, m, stamp, position, 1).ifPresent(published::add);
        }
        return new ApplyResult(position, stamp, published, true, deleted,
                List.of(new ApplyResult.Receipt(key, cmd.getGroup())));
    }

    /**
     * Forgets a durable group: its receipts go, and messages that every remaining group has
     * acknowledged are removed (they waited only for the deleted group).
     */
    private ApplyResult applyDeleteGroup(StoreBatch batch, String topic, String group, long stamp, TermIndex position) {
        Set<String> groups = new HashSet<>(batch.durableGroups(topic));
        if (!groups.remove(group)) {
            return ApplyResult.unchanged(position, stamp);
        }
        batch.putTopicGroups(topic, groups);
        batch.putGroupPolicy(topic, group, null);
        List<EventKey> deleted = new ArrayList<>();
        store.queue().scanTopic(topic, (key, m) -> {
            batch.forgetGroup(key, group);
            if (!groups.isEmpty() && groups.stream().allMatch(g -> store.queue().hasReceipt(key, g))) {
                batch.deleteMessage(key, m);
                deleted.add(key);
            }
            return true;
        });
        return new ApplyResult(position, stamp, List.of(), false, deleted, List.of());
    }

    /**
     * Deletes one message with its expiry entry and receipts, whatever its groups acknowledged; the
     * result lists it as deleted, so every replica drops it from its in-flight map and it is not
     * redelivered. A key of another topic (or of nothing) changes nothing: the topic in the value
     * guards against a caller naming the wrong topic as much as against hash collisions.
     */
    private ApplyResult applyDeleteMessage(StoreBatch batch, DeleteMessageCmd cmd, long stamp, TermIndex position) {
        if (cmd.getEventKey().size() != EventKey.LENGTH) {
            return ApplyResult.unchanged(position, stamp);
        }
        EventKey key = EventKey.fromBytes(cmd.getEventKey().toByteArray());
        Optional<StoredMessage> message = store.queue().message(key);
        if (message.isEmpty() && cmd.getByKey()) {
            return applyDeleteRearmed(batch, cmd, key, stamp, position);
        }
        if (message.isEmpty() || !message.get().getTopic().equals(cmd.getTopic())) {
            return ApplyResult.unchanged(position, stamp);
        }
        StoredMessage m = message.get();
        batch.deleteMessage(key, m);
        List<EventKey> deleted = new ArrayList<>(List.of(key));
        if (cmd.getByKey() && m.getEveryMs() > 0 && !m.getKey().isEmpty()) {
            store.queue().keyed(m.getTopic(), m.getKey()).filter(next -> !next.equals(key)).ifPresent(next -> {
                store.queue().message(next).ifPresent(n -> batch.deleteMessage(next, n));
                deleted.add(next);
            });
        }
        return new ApplyResult(position, stamp, List.of(), false, deleted, List.of());
    }

    /**
     * A cancel by key whose message went before it committed (acknowledged, expired): when that removal
     * re-armed a recurrence, the firing now under the key is on the removed one's grid, and goes in its
     * place so the recurrence ends. Anything else under the key (a message published with it since) stays.
     */
    private ApplyResult applyDeleteRearmed(StoreBatch batch, DeleteMessageCmd cmd, EventKey gone, long stamp,
                                           TermIndex position) {
        Optional<EventKey> armed = cmd.getScheduleKey().isEmpty() ? Optional.empty()
                : store.queue().keyed(cmd.getTopic(), cmd.getScheduleKey());
        Optional<StoredMessage> next = armed.flatMap(store.queue()::message);
        if (next.isEmpty()) {
            return ApplyResult.unchanged(position, stamp);
        }
        long every = next.get().getEveryMs();
        long after = armed.get().dueAtMs() - gone.dueAtMs();
        if (every <= 0 || after <= 0 || after % every != 0) {
            return ApplyResult.unchanged(position, stamp);
        }
        batch.deleteMessage(armed.get(), next.get());
        return new ApplyResult(position, stamp, List.of(), false, List.of(armed.get()), List.of());
    }
}
