package io.hourglass.core.rooms;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import io.hourglass.core.command.ApplyResult;
import io.hourglass.core.command.StateApplier;
import io.hourglass.core.proto.Command;
import io.hourglass.core.proto.RoomCommand;
import io.hourglass.core.proto.RoomConfigureCmd;
import io.hourglass.core.proto.RoomGuarantee;
import io.hourglass.core.proto.RoomMessage;
import io.hourglass.core.proto.RoomNewMessage;
import io.hourglass.core.proto.RoomReleaseCmd;
import io.hourglass.core.proto.RoomSendCmd;
import io.hourglass.core.proto.StoredRoom;
import io.hourglass.core.storage.EventStore;
import io.hourglass.core.storage.TermIndex;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The deterministic apply of room commands, through {@link StateApplier} as Raft drives it. */
@Timeout(30)
class RoomApplierTest {
    @TempDir
    Path dir;
    private EventStore store;
    private StateApplier applier;
    private RoomStore rooms;
    private long index;

    @BeforeEach
    void open() {
        store = EventStore.open(dir.resolve("db"));
        applier = new StateApplier(store, new RoomApplier(store));
        rooms = new RoomStore(store);
    }

    @AfterEach
    void close() {
        store.close();
    }

    private ApplyResult apply(RoomCommand.Builder c) {
        return applier.apply(Command.newBuilder().setStampedAtMs(5000 + index).setRoom(c).build(),
                new TermIndex(1, ++index));
    }

    private static RoomCommand.Builder send(String room, Object... priorityPayloadPairs) {
        RoomSendCmd.Builder s = RoomSendCmd.newBuilder();
        for (int i = 0; i < priorityPayloadPairs.length; i += 2) {
            s.addMessages(RoomNewMessage.newBuilder().setPriority((Integer) priorityPayloadPairs[i])
                    .setPayload(ByteString.copyFromUtf8((String) priorityPayloadPairs[i + 1])).setProducer("p"));
        }
        return RoomCommand.newBuilder().setRoom(room).setSend(s);
    }

    private static RoomCommand.Builder release(String room, long ticket, boolean awaitAcks, String settles,
                                               RoomKey... keys) {
        RoomReleaseCmd.Builder r = RoomReleaseCmd.newBuilder().setTicket(ticket).setAwaitAcks(awaitAcks)
                .setSettles(settles);
        for (RoomKey k : keys) {
            r.addKeys(ByteString.copyFrom(k.toBytes()));
        }
        return RoomCommand.newBuilder().setRoom(room).setRelease(r);
    }

    private static RoomCommand.Builder releaseTo(String room, long ticket, RoomKey key, String... holders) {
        RoomCommand.Builder c = release(room, ticket, true, "", key);
        c.getReleaseBuilder().addAllHolders(List.of(holders));
        return c;
    }

    private static RoomCommand.Builder atLeastOnce(String room) {
        return RoomCommand.newBuilder().setRoom(room)
                .setConfigure(RoomConfigureCmd.newBuilder().setGuarantee(RoomGuarantee.ROOM_AT_LEAST_ONCE));
    }

    private static List<RoomKey> keys(ApplyResult r) {
        return ((RoomChange.Sent) r.changes().get(0)).messages().stream().map(PendingMessage::key).toList();
    }

    @Test
    void aRetriedSendWithTheSameProducerIdAnswersTheFirstMessageAndEnqueuesNothing() {
        RoomCommand.Builder first = RoomCommand.newBuilder().setRoom("r").setSend(RoomSendCmd.newBuilder()
                .addMessages(RoomNewMessage.newBuilder().setPriority(1).setPayload(ByteString.copyFromUtf8("once"))
                        .setProducerId("send-1")));
        ApplyResult r1 = apply(first);
        ApplyResult r2 = apply(first.clone());
        RoomKey key = keys(r1).get(0);
        assertEquals(List.of(), keys(r2), "nothing appended to the queue");
        assertEquals(r1.reply().getPublishedKeysList(), r2.reply().getPublishedKeysList(), "the retry gets the first id");
        assertEquals(List.of(key), ((RoomChange.Sent) r2.changes().get(0)).answered());
        assertEquals(1, rooms.loadAll().pending().get("r").size());
    }

    @Test
    void sendStoresEachMessageUnderAKeyDerivedFromTheEntryAndAnswersTheKeys() {
        ApplyResult r = apply(send("r", 3, "a", -1, "b"));
        List<RoomKey> keys = keys(r);
        assertEquals(List.of(RoomKey.of("r", 3, 1, 0), RoomKey.of("r", -1, 1, 1)), keys);
        assertEquals(keys.stream().map(k -> ByteString.copyFrom(k.toBytes())).toList(), r.reply().getPublishedKeysList());
        RoomMessage b = rooms.message("r", keys.get(1)).orElseThrow();
        assertEquals(keys.get(1).id(), b.getId());
        assertEquals("r", b.getRoom());
        assertEquals("p", b.getProducer());
        assertEquals(-1, b.getPriority());
        assertEquals("b", b.getPayload().toStringUtf8());
        assertEquals(5000, b.getSentAtMs());
        assertEquals(keys.get(1).sequence(), b.getSequence());
    }

    @Test
    void atMostOnceReleaseDeletesTheMessageAndKeepsOnlyAMarker() {
        RoomKey k = keys(apply(send("r", 0, "m"))).get(0);
        ApplyResult r = apply(release("r", 9, true, "", k));
        RoomChange.Released change = (RoomChange.Released) r.changes().get(0);
        assertEquals(9, change.ticket());
        assertEquals("m", change.released().get(0).getPayload().toStringUtf8());
        assertTrue(rooms.message("r", k).isEmpty());
        StoredRoom stored = rooms.room("r");
        assertEquals(k.id(), stored.getInFlight().getId());
        assertTrue(stored.getInFlight().getPayload().isEmpty(), "never redelivered, so no payload kept");
        assertFalse(stored.getInFlightWhole());
    }

    @Test
    void aReleaseDecidedInAnotherTermThanItsEntrysChangesNothingOnEveryReplica() {
        RoomKey k = keys(apply(send("r", 0, "m"))).get(0);
        RoomCommand.Builder stale = release("r", 9, true, "", k);
        stale.getReleaseBuilder().setLeaderTerm(1);
        ApplyResult r = applier.apply(Command.newBuilder().setStampedAtMs(6000).setRoom(stale).build(),
                new TermIndex(2, ++index));
        assertEquals(List.of(), r.changes(), "the leader of term 2 never asked for it");
        assertTrue(rooms.message("r", k).isPresent(), "still pending");
        assertFalse(rooms.room("r").hasInFlight());
        assertEquals(new TermIndex(2, index), store.appliedIndex(), "the entry still counts as applied");
        RoomCommand.Builder current = release("r", 10, true, "", k);
        current.getReleaseBuilder().setLeaderTerm(2);
        applier.apply(Command.newBuilder().setStampedAtMs(6001).setRoom(current).build(), new TermIndex(2, ++index));
        assertEquals(k.id(), rooms.room("r").getInFlight().getId(), "its own term's release applies");
    }

    @Test
    void aFenceMakesTheSameTermsEarlierLeadershipsReleasesChangeNothingOnEveryReplica() {
        RoomKey k = keys(apply(send("r", 0, "m"))).get(0);
        applier.apply(fence(2, 2), new TermIndex(2, ++index));
        assertEquals(List.of(), applyRelease(k, 9, 2, 1, 6000, new TermIndex(2, ++index)).changes(),
                "decided before the leader of term 2 rebuilt its rooms");
        assertTrue(rooms.message("r", k).isPresent(), "still pending");
        assertEquals(new TermIndex(2, index), store.appliedIndex(), "the entry still counts as applied");
        applier.apply(fence(1, 7), new TermIndex(2, ++index)); // an older term's fence, late: no effect
        applier.apply(fence(2, 1), new TermIndex(2, ++index)); // an older incarnation's: no effect
        applyRelease(k, 10, 2, 2, 6001, new TermIndex(2, ++index));
        assertEquals(k.id(), rooms.room("r").getInFlight().getId(), "the current leadership's release applies");
    }

    @Test
    void aFenceOfAnotherTermLeavesThisTermsReleasesAlone() {
        RoomKey k = keys(apply(send("r", 0, "m"))).get(0);
        applier.apply(fence(2, 3), new TermIndex(2, ++index));
        applyRelease(k, 9, 3, 1, 6000, new TermIndex(3, ++index));
        assertEquals(k.id(), rooms.room("r").getInFlight().getId(), "term 3's first leadership is not fenced off");
    }

    /** Applies, at {@code at} with stamp {@code stampMs}, a release of {@code k} decided by {@code term}'s leadership number {@code incarnation}. */
    private ApplyResult applyRelease(RoomKey k, long ticket, long term, long incarnation, long stampMs, TermIndex at) {
        RoomCommand.Builder release = release("r", ticket, true, "", k);
        release.getReleaseBuilder().setLeaderTerm(term).setIncarnation(incarnation);
        return applier.apply(Command.newBuilder().setStampedAtMs(stampMs).setRoom(release).build(), at);
    }

    private static Command fence(long term, long incarnation) {
        return Command.newBuilder().setStampedAtMs(5000).setRoom(RoomCommand.newBuilder().setFence(
                io.hourglass.core.proto.RoomFenceCmd.newBuilder().setLeaderTerm(term).setIncarnation(incarnation))).build();
    }

    @Test
    void atLeastOnceReleaseKeepsTheWholeMessageAndAnswersARetryFromIt() {
        apply(atLeastOnce("r"));
        RoomKey k = keys(apply(send("r", 0, "m"))).get(0);
        apply(release("r", 1, true, "", k));
        assertEquals("m", rooms.room("r").getInFlight().getPayload().toStringUtf8());
        assertTrue(rooms.room("r").getInFlightWhole());
        RoomChange.Released again = (RoomChange.Released) apply(release("r", 2, true, "", k)).changes().get(0);
        assertEquals(List.of(k.id()), again.released().stream().map(RoomMessage::getId).toList());
        RoomKey unknown = RoomKey.of("r", 0, 99, 0);
        RoomChange.Released none = (RoomChange.Released) apply(release("r", 3, true, "", unknown)).changes().get(0);
        assertEquals(List.of(unknown), none.missing());
        assertEquals(k.id(), rooms.room("r").getInFlight().getId(), "a release that found nothing changes nothing");
    }

    @Test
    void settlingClearsTheInFlightRecordOnlyIfItIsTheOneNamed() {
        apply(atLeastOnce("r"));
        List<RoomKey> k = keys(apply(send("r", 0, "m1", 0, "m2")));
        apply(release("r", 1, true, "", k.get(0)));
        apply(release("r", 2, true, "", k.get(1)));
        apply(release("r", 1, false, k.get(0).id())); // a late retry naming the older message
        assertEquals(k.get(1).id(), rooms.room("r").getInFlight().getId());
        apply(release("r", 3, false, k.get(1).id()));
        assertFalse(rooms.room("r").hasInFlight());
    }

    @Test
    void theInFlightRecordKeepsItsHoldersUntilTheNextReleaseReplacesThemOrASettleClearsThem() {
        List<RoomKey> k = keys(apply(send("r", 0, "m1", 0, "m2", 0, "m3")));
        apply(releaseTo("r", 1, k.get(0), "s-a", "s-b"));
        assertEquals(List.of("s-a", "s-b"), rooms.room("r").getHoldersList());
        apply(releaseTo("r", 2, k.get(1), "s-b"));
        assertEquals(List.of("s-b"), rooms.room("r").getHoldersList(), "the next release's holders replace them");
        apply(releaseTo("r", 3, k.get(2)));
        assertEquals(List.of(), rooms.room("r").getHoldersList(), "a release that knows none records none");
        apply(releaseTo("r", 4, k.get(2), "s-c")); // a retry of the last release, from the record
        apply(release("r", 5, false, k.get(1).id())); // a late settle of the older message
        assertEquals(List.of("s-c"), rooms.room("r").getHoldersList());
        apply(release("r", 6, false, k.get(2).id()));
        assertFalse(rooms.room("r").hasInFlight());
        assertEquals(List.of(), rooms.room("r").getHoldersList(), "cleared with the in-flight record");
        List<byte[]> entries = new ArrayList<>();
        store.scanRoomEntries((key, value) -> entries.add(key));
        assertEquals(0, entries.size(), "nothing of the room is left");
    }

    @Test
    void aFlushThatSettlesTheInFlightMessageClearsItsHolders() {
        List<RoomKey> k = keys(apply(send("r", 0, "m1", 0, "m2")));
        apply(releaseTo("r", 1, k.get(0), "s-a"));
        apply(release("r", 2, false, k.get(0).id(), k.get(1)));
        assertFalse(rooms.room("r").hasInFlight());
        assertEquals(List.of(), rooms.room("r").getHoldersList());
    }

    @Test
    void aRoomBackAtTheDefaultsTakesNoSpace() {
        apply(atLeastOnce("r"));
        assertEquals(RoomGuarantee.ROOM_AT_LEAST_ONCE, rooms.room("r").getGuarantee());
        apply(RoomCommand.newBuilder().setRoom("r").setConfigure(RoomConfigureCmd.newBuilder().setAckTimeoutMs(0)));
        List<byte[]> entries = new ArrayList<>();
        store.scanRoomEntries((key, value) -> entries.add(key));
        assertEquals(0, entries.size());
    }

    @Test
    void replicasApplyingTheSameEntriesHoldIdenticalBytes() {
        List<RoomCommand.Builder> log = List.of(atLeastOnce("a"), send("a", 2, "x", 1, "y"), send("b", 0, "z"),
                releaseTo("a", 1, RoomKey.of("a", 1, 2, 1), "s-1", "s-2"),
                release("b", 2, false, "", RoomKey.of("b", 0, 3, 0)));
        log.forEach(this::apply);
        try (EventStore other = EventStore.open(dir.resolve("other"))) {
            StateApplier otherApplier = new StateApplier(other, new RoomApplier(other));
            long i = 0;
            for (RoomCommand.Builder c : log) {
                i++;
                otherApplier.apply(Command.newBuilder().setStampedAtMs(5000 + i - 1).setRoom(c).build(),
                        new TermIndex(1, i));
            }
            assertEquals(dump(store), dump(other));
        }
    }

    @Test
    void theLoadSeesPendingMessagesRoomsAndThePositionTheyHold() {
        apply(atLeastOnce("a"));
        List<RoomKey> k = keys(apply(send("a", 0, "x", 0, "y")));
        apply(release("a", 1, true, "", k.get(0)));
        RoomStore.Loaded loaded = rooms.loadAll();
        assertEquals(3, loaded.position().index());
        assertEquals(List.of(k.get(1)), loaded.pending().get("a").stream().map(PendingMessage::key).toList());
        assertEquals(k.get(0).id(), loaded.rooms().get("a").getInFlight().getId());
    }

    @Test
    void aRoomCommandOfAnUnknownKindStopsTheReplica() {
        assertThrows(IllegalStateException.class, () -> apply(RoomCommand.newBuilder().setRoom("r")));
    }

    @Test
    void aRoomCommandWithoutARoomChangesNothing() {
        ApplyResult r = apply(send("", 0, "x"));
        assertTrue(r.changes().isEmpty());
        assertEquals(1, store.appliedIndex().index());
    }

    private static List<String> dump(EventStore s) {
        List<String> out = new ArrayList<>();
        s.scanRoomEntries((k, v) -> out.add(HexFormat.of().formatHex(k) + "=" + HexFormat.of().formatHex(v)));
        return out;
    }
}
