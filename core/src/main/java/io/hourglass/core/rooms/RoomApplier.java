package io.hourglass.core.rooms;

import io.hourglass.core.command.ApplyResult;
import io.hourglass.core.command.CommandApplier;
import io.hourglass.core.proto.Command;
import io.hourglass.core.proto.RoomCommand;
import io.hourglass.core.proto.RoomConfigureCmd;
import io.hourglass.core.proto.RoomFenceCmd;
import io.hourglass.core.proto.RoomGuarantee;
import io.hourglass.core.proto.RoomMessage;
import io.hourglass.core.proto.RoomNewMessage;
import io.hourglass.core.proto.RoomReleaseCmd;
import io.hourglass.core.proto.RoomSendCmd;
import io.hourglass.core.proto.StoredRoom;
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
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The deterministic apply of {@link RoomCommand}s, registered with the
 * {@link io.hourglass.core.command.StateApplier} at the node's composition root and called on the
 * apply thread. It reads only the command, the entry's stamp and position, and the store, so every
 * replica writes the same bytes.
 *
 * <ul>
 *   <li>send: stores each message under {@code RoomKey.of(room, priority, logIndex, position)};</li>
 *   <li>release: deletes the released keys from pending; with {@code await_acks} the released message
 *       becomes the room's in-flight record (whole when at least once, without payload when at most
 *       once; {@code in_flight_whole} says which, so a new leader redelivers only what it kept whole)
 *       with the command's {@code holders}, the session ids of the members it went to; otherwise the
 *       in-flight record and its holders are cleared if it is the one the command settles;</li>
 *   <li>configure: replaces the room's guarantee and ack timeout;</li>
 *   <li>fence: records that the leader of its term rebuilt its rooms (its {@code incarnation}-th
 *       leadership in that term); a release of that term decided by an earlier one changes nothing.</li>
 * </ul>
 *
 * A command naming no room changes nothing (every replica agrees on that); a command of a kind this
 * version does not know throws, because skipping it would let replicas diverge silently.
 */
public final class RoomApplier implements CommandApplier {
    private static final Logger LOG = LoggerFactory.getLogger(RoomApplier.class);
    private final RoomStore rooms;
    private final ProducerIds producerIds;

    public RoomApplier(EventStore store) {
        this.rooms = new RoomStore(store);
        this.producerIds = new ProducerIds(store);
    }

    @Override
    public Set<Command.BodyCase> kinds() {
        return EnumSet.of(Command.BodyCase.ROOM);
    }

    @Override
    public ApplyResult apply(StoreBatch batch, Command entry, long stampMs, TermIndex position) {
        RoomCommand command = entry.getRoom();
        String room = command.getRoom();
        RoomChange change;
        switch (command.getOpCase()) {
            case SEND -> change = room.isEmpty() ? null : send(batch, room, command.getSend(), stampMs, position);
            case RELEASE -> {
                if (isStale(command.getRelease(), position) || isFencedOff(command.getRelease(), position, rooms.fence())) {
                    LOG.info("entry {}: a release in room '{}' decided by the leader of term {} (incarnation {}) is "
                            + "ignored in term {}", position, room, command.getRelease().getLeaderTerm(),
                            command.getRelease().getIncarnation(), position.term());
                    return new ApplyResult(position, stampMs, List.of(), false, List.of(), List.of(), List.of());
                }
                change = room.isEmpty() ? null : release(batch, room, command.getRelease(), stampMs);
            }
            case CONFIGURE -> change = room.isEmpty() ? null : configure(batch, room, command.getConfigure());
            case FENCE -> {
                fence(batch, command.getFence());
                return new ApplyResult(position, stampMs, List.of(), false, List.of(), List.of(), List.of());
            }
            default -> throw new IllegalStateException("entry " + position + " holds an unknown room command: "
                    + command.getOpCase());
        }
        if (change == null) {
            LOG.warn("entry {} holds a room command without a room; nothing changed", position);
        }
        return new ApplyResult(position, stampMs, List.of(), false, List.of(), List.of(),
                change == null ? List.of() : List.of(change));
    }

    private RoomChange send(StoreBatch batch, String room, RoomSendCmd send, long stampMs, TermIndex position) {
        if (send.getMessagesCount() > EventKey.MAX_MESSAGES_PER_ENTRY) {
            throw new IllegalStateException("entry " + position + " carries " + send.getMessagesCount()
                    + " room messages");
        }
        List<PendingMessage> sent = new ArrayList<>(send.getMessagesCount());
        List<RoomKey> answered = new ArrayList<>(send.getMessagesCount());
        Map<String, RoomKey> inThisEntry = new HashMap<>();
        producerIds.forgetExpired(batch, stampMs);
        for (int i = 0; i < send.getMessagesCount(); i++) {
            RoomNewMessage m = send.getMessages(i);
            String pid = m.getProducerId();
            if (!pid.isEmpty()) {
                RoomKey earlier = inThisEntry.get(pid);
                if (earlier == null) {
                    earlier = producerIds.roomKeyOf(pid).map(RoomKey::fromBytes).orElse(null);
                }
                if (earlier != null) {
                    answered.add(earlier); // a retry: answer with the message stored the first time
                    continue;
                }
            }
            RoomKey key = RoomKey.of(room, m.getPriority(), position.index(), i);
            if (!pid.isEmpty()) {
                producerIds.rememberRoom(batch, pid, key.toBytes(), stampMs);
                inThisEntry.put(pid, key);
            }
            answered.add(key);
            RoomMessage stored = RoomMessage.newBuilder()
                    .setId(key.id())
                    .setRoom(room)
                    .setProducer(m.getProducer())
                    .setPriority(m.getPriority())
                    .setPayload(m.getPayload())
                    .setSentAtMs(stampMs)
                    .setSequence(key.sequence())
                    .build();
            rooms.putMessage(batch, key, stored);
            sent.add(PendingMessage.of(key, stored));
        }
        return new RoomChange.Sent(room, sent, answered);
    }

    /**
     * Whether a release was decided by a leader of another term than the one that appended it: one
     * proposed by a leader that then handed its leadership over, forwarded to the next leader. Raft
     * keeps an entry's term across leaders, so every replica answers the same.
     */
    static boolean isStale(RoomReleaseCmd release, TermIndex position) {
        return release.getLeaderTerm() != 0 && release.getLeaderTerm() != position.term();
    }

    /**
     * Whether a release was decided by an earlier leadership of the same node in the same term than
     * the last fence applied ({@code RoomFenceCmd}): the leader rebuilt its rooms since, from a store
     * that did not hold this release yet, and acts on that state.
     */
    static boolean isFencedOff(RoomReleaseCmd release, TermIndex position, long[] fence) {
        return release.getIncarnation() != 0 && fence[0] == position.term() && release.getIncarnation() < fence[1];
    }

    /** Records a fence newer than the stored one (a later term, or a later incarnation in the same term). */
    private void fence(StoreBatch batch, RoomFenceCmd fence) {
        long[] stored = rooms.fence();
        if (fence.getLeaderTerm() > stored[0] || fence.getLeaderTerm() == stored[0] && fence.getIncarnation() > stored[1]) {
            rooms.putFence(batch, fence.getLeaderTerm(), fence.getIncarnation());
        }
    }

    private RoomChange release(StoreBatch batch, String room, RoomReleaseCmd release, long stampMs) {
        StoredRoom stored = rooms.room(room);
        RoomMessage inFlight = stored.hasInFlight() ? stored.getInFlight() : null;
        List<RoomMessage> released = new ArrayList<>();
        List<RoomKey> missing = new ArrayList<>();
        Set<RoomKey> seen = new HashSet<>();
        boolean lastFromRecord = false;
        for (var bytes : release.getKeysList()) {
            RoomKey key;
            try {
                key = RoomKey.fromBytes(bytes.toByteArray());
            } catch (IllegalArgumentException e) {
                LOG.warn("release in room '{}' names a malformed key; skipped", room);
                continue;
            }
            if (!seen.add(key)) {
                continue;
            }
            Optional<RoomMessage> m = rooms.message(room, key);
            if (m.isPresent()) {
                rooms.deleteMessage(batch, key);
                released.add(m.get());
                lastFromRecord = false;
            } else if (inFlight != null && inFlight.getId().equals(key.id())) {
                released.add(inFlight);
                lastFromRecord = true;
            } else {
                missing.add(key);
            }
        }
        StoredRoom.Builder next = stored.toBuilder();
        if (!release.getAwaitAcks()) {
            if (inFlight != null && inFlight.getId().equals(release.getSettles())) {
                next.clearInFlight().clearReleasedAtMs().clearInFlightWhole().clearHolders();
            }
        } else if (!released.isEmpty()) {
            RoomMessage last = released.get(released.size() - 1);
            // a message released again from the record is only as whole as the record kept it
            boolean keepWhole = stored.getGuarantee() == RoomGuarantee.ROOM_AT_LEAST_ONCE
                    && (!lastFromRecord || stored.getInFlightWhole());
            next.setInFlight(keepWhole ? last : last.toBuilder().clearPayload().build()).setReleasedAtMs(stampMs)
                    .setInFlightWhole(keepWhole).clearHolders().addAllHolders(release.getHoldersList());
        }
        StoredRoom after = next.build();
        if (!after.equals(stored)) {
            rooms.putRoom(batch, after);
        }
        return new RoomChange.Released(room, release.getTicket(), released, missing, release.getAwaitAcks());
    }

    private RoomChange configure(StoreBatch batch, String room, RoomConfigureCmd cmd) {
        StoredRoom stored = rooms.room(room);
        StoredRoom after = stored.toBuilder()
                .setGuaranteeValue(cmd.getGuaranteeValue())
                .setAckTimeoutMs(Math.max(0, cmd.getAckTimeoutMs()))
                .build();
        if (!after.equals(stored)) {
            rooms.putRoom(batch, after);
        }
        return new RoomChange.Configured(room, cmd);
    }
}
