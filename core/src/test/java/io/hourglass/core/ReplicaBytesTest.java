package io.hourglass.core;

import io.hourglass.core.proto.Grant;
import io.hourglass.core.proto.SecurityCmd;
import io.hourglass.core.storage.EventKey;
import java.util.List;
import io.hourglass.core.proto.TokenPut;
import io.hourglass.core.security.SecurityApplier;
import io.hourglass.core.storage.SecurityRecords;
import static org.junit.jupiter.api.Assertions.assertEquals;

import com.google.protobuf.ByteString;
import io.hourglass.core.command.ApplyResult;
import io.hourglass.core.command.StateApplier;
import io.hourglass.core.proto.Command;
import io.hourglass.core.proto.DeleteBatchCmd;
import io.hourglass.core.proto.DeleteGroupCmd;
import io.hourglass.core.proto.DeleteMessageCmd;
import io.hourglass.core.proto.Deletion;
import io.hourglass.core.proto.NewMessage;
import io.hourglass.core.proto.PurgeTopicCmd;
import io.hourglass.core.proto.PutCmd;
import io.hourglass.core.proto.RegisterGroupCmd;
import io.hourglass.core.proto.RegisterPeerCmd;
import io.hourglass.core.proto.RoomCommand;
import io.hourglass.core.proto.RoomConfigureCmd;
import io.hourglass.core.proto.RoomGuarantee;
import io.hourglass.core.proto.RoomNewMessage;
import io.hourglass.core.proto.RoomReleaseCmd;
import io.hourglass.core.proto.RoomSendCmd;
import io.hourglass.core.rooms.RoomApplier;
import io.hourglass.core.storage.EventStore;
import io.hourglass.core.storage.TermIndex;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every replica writes identical bytes, and a refactoring of the apply path writes the same bytes
 * as before it: one script of every command kind, applied to two stores, digested and compared
 * with each other and with the digest the script produced when it was written. A change of the
 * stored format must change {@link #GOLDEN} on purpose, in the same commit, with a reason.
 */
@Timeout(60)
class ReplicaBytesTest {
    /**
     * SHA-256 of {@link #script} as applied at the time the test was written; changed on purpose
     * with the {@code keys} and {@code deferred} column families, and the keyed publishes and
     * deferrals at the script's end (DESIGN §9); again with the {@code deliveries} column family,
     * a group policy, a delivery count and a dead-letter move; again with the {@code recurring} column
     * family, a recurring publish and its firing; again with two groups of topic {@code v} whose
     * names collide in a hash bucket (their stored order once depended on the JVM).
     */
    static final String GOLDEN = "8e2ddbd02800ef7a7032d04f82a8d21f3537bf602c26e21262463fe739a50054";
    private static final long WINDOW_MS = 15 * 60_000;

    @Test
    void everyCommandKindWritesTheSameBytesOnEveryReplica(@TempDir Path dir) {
        try (EventStore a = EventStore.open(dir.resolve("a")); EventStore b = EventStore.open(dir.resolve("b"))) {
            script(new StateApplier(a, new RoomApplier(a), new SecurityApplier(new SecurityRecords(a))));
            script(new StateApplier(b, new RoomApplier(b), new SecurityApplier(new SecurityRecords(b))));
            EventStore.Digest da = a.digest();
            assertEquals(da, b.digest());
            assertEquals(new TermIndex(3, 33), da.applied());
            assertEquals(GOLDEN, da.sha256());
        }
    }

    private static void script(StateApplier applier) {
        long[] index = {0};
        Apply apply = (c, stamp) -> applier.apply(c.setStampedAtMs(stamp).build(), new TermIndex(3, ++index[0]));
        apply.run(group("t", "g1"), 1_000);
        apply.run(group("t", "g2"), 1_001);
        // Names that share a bucket of a small HashSet: a set built from the registry's (JVM-seeded)
        // immutable set keeps them in that JVM's order, which must not reach the bytes.
        apply.run(group("v", "group-0"), 1_002);
        apply.run(group("v", "group-15"), 1_003);
        apply.run(group("v", "group-26"), 1_004); // the set it joins is built from the registry's
        ApplyResult put = apply.run(Command.newBuilder().setPut(PutCmd.newBuilder()
                .addMessages(message("t", "a", 0, 1_000, "p-1"))
                .addMessages(message("t", "b", 5_000, 0, ""))
                .addMessages(message("t", "a-again", 0, 0, "p-1"))), 2_000);
        ApplyResult other = apply.run(Command.newBuilder().setPut(PutCmd.newBuilder()
                .addMessages(message("u", "c", 0, 0, "p-2"))), 2_001);
        apply.run(Command.newBuilder().setDeleteBatch(DeleteBatchCmd.newBuilder()
                .addDeletions(deletion(put, 0, "g1"))
                .addDeletions(deletion(put, 1, "g1"))
                .addDeletions(deletion(put, 0, "g2"))), 3_000);
        apply.run(room(RoomCommand.newBuilder().setConfigure(RoomConfigureCmd.newBuilder()
                .setGuarantee(RoomGuarantee.ROOM_AT_LEAST_ONCE).setAckTimeoutMs(2_000))), 3_001);
        ApplyResult sent = apply.run(room(RoomCommand.newBuilder().setSend(RoomSendCmd.newBuilder()
                .addMessages(roomMessage(1, "x", "rp-1")).addMessages(roomMessage(-1, "y", "")))), 3_002);
        apply.run(room(RoomCommand.newBuilder().setSend(RoomSendCmd.newBuilder()
                .addMessages(roomMessage(1, "x", "rp-1")))), 3_003);
        apply.run(room(RoomCommand.newBuilder().setRelease(RoomReleaseCmd.newBuilder()
                .addKeys(sent.reply().getPublishedKeys(1)).setAwaitAcks(true).setTicket(7))), 3_004);
        apply.run(Command.newBuilder().setRegisterPeer(RegisterPeerCmd.newBuilder().setId("n2")
                .setGrpcAddress("10.0.0.2:7070")), 3_005);
        long later = 3_000 + WINDOW_MS + 1; // forgets p-1, p-2 and rp-1
        apply.run(Command.newBuilder().setPut(PutCmd.newBuilder().addMessages(message("t", "d", 0, 0, "p-3"))), later);
        apply.run(Command.newBuilder().setDeleteGroup(DeleteGroupCmd.newBuilder().setTopic("t").setGroup("g2")),
                later + 1);
        apply.run(Command.newBuilder().setPurgeTopic(PurgeTopicCmd.newBuilder().setTopic("u")), later + 2);
        apply.run(Command.newBuilder().setDeleteMessage(DeleteMessageCmd.newBuilder().setTopic("t")
                .setEventKey(put.reply().getPublishedKeys(1))), later + 3);
        apply.run(Command.newBuilder().setDeleteMessage(DeleteMessageCmd.newBuilder().setTopic("t")
                .setEventKey(other.reply().getPublishedKeys(0))), later + 4);
        apply.run(security(SecurityCmd.newBuilder().setTokenPut(TokenPut.newBuilder().setName("app")
                .setSha256(ByteString.copyFromUtf8("hash-1")))), later + 5);
        ApplyResult taken = apply.run(security(SecurityCmd.newBuilder().setTokenPut(TokenPut.newBuilder().setName("app")
                .setSha256(ByteString.copyFromUtf8("hash-2")))), later + 6);
        assertEquals("a token named app exists; revoke it first", taken.reply().getRefused());
        apply.run(security(SecurityCmd.newBuilder().setGrantPut(grant("app", "publish", "orders.*"))), later + 7);
        apply.run(security(SecurityCmd.newBuilder().setGrantPut(grant("ops", "admin", "*"))), later + 8);
        apply.run(security(SecurityCmd.newBuilder().setGrantRevoke(grant("ops", "admin", "*"))), later + 9);
        assertEquals("no such grant", apply.run(security(SecurityCmd.newBuilder()
                .setGrantRevoke(grant("ops", "admin", "*"))), later + 10).reply().getRefused());
        apply.run(Command.newBuilder().setPut(PutCmd.newBuilder()
                .addMessages(message("t", "k-1", 60_000, 0, "").toBuilder().setKey("k"))), later + 11);
        ApplyResult replaced = apply.run(Command.newBuilder().setPut(PutCmd.newBuilder()
                .addMessages(message("t", "k-2", 30_000, 5_000, "").toBuilder().setKey("k"))), later + 12);
        assertEquals(1, replaced.deleted().size(), "the schedule key replaced k-1");
        apply.run(io.hourglass.core.command.QueueCommands.defer(replaced.published().get(0), "g1", later + 60_000).toBuilder(),
                later + 13);
        apply.run(io.hourglass.core.command.QueueCommands.defer(replaced.published().get(0), "no-such-group", later + 60_000)
                .toBuilder(), later + 14);
        EventKey keyed = replaced.published().get(0);
        apply.run(io.hourglass.core.command.QueueCommands.configureGroup("t", "g1", List.of(1_000L, 5_000L), 3, "t.dlq")
                .toBuilder(), later + 15);
        apply.run(io.hourglass.core.command.QueueCommands.deleteBatch(List.of(), List.of(
                new io.hourglass.core.command.QueueCommands.Count(keyed, "g1", 2))).toBuilder(), later + 16);
        ApplyResult moved = apply.run(io.hourglass.core.command.QueueCommands.deadLetter(keyed, "g1", "t.dlq", 3, "nack")
                .toBuilder(), later + 17);
        assertEquals(1, moved.published().size(), "the dead-lettered copy");
        ApplyResult recurring = apply.run(Command.newBuilder().setPut(PutCmd.newBuilder()
                .addMessages(message("t", "tick", 0, 0, "").toBuilder().setKey("r").setEveryMs(5_000))), later + 18);
        ApplyResult fired = apply.run(io.hourglass.core.command.QueueCommands.fire(recurring.published()).toBuilder(),
                later + 18 + 5_001);
        assertEquals(1, fired.published().size(), "re-armed");
    }

    private static Command.Builder security(SecurityCmd.Builder cmd) {
        return Command.newBuilder().setSecurity(cmd);
    }

    private static Grant grant(String principal, String permission, String resource) {
        return Grant.newBuilder().setPrincipal(principal).setPermission(permission).setResource(resource).build();
    }

    @FunctionalInterface
    private interface Apply {
        ApplyResult run(Command.Builder command, long stampMs);
    }

    private static Command.Builder group(String topic, String group) {
        return Command.newBuilder().setRegisterGroup(RegisterGroupCmd.newBuilder().setTopic(topic).setGroup(group));
    }

    private static NewMessage message(String topic, String payload, long delayMs, long ttlMs, String producerId) {
        return NewMessage.newBuilder().setTopic(topic).setPayload(ByteString.copyFromUtf8(payload))
                .putHeaders("h", payload).setDelayMs(delayMs).setTtlMs(ttlMs).setProducerId(producerId).build();
    }

    private static Deletion deletion(ApplyResult put, int i, String group) {
        return Deletion.newBuilder().setEventKey(put.reply().getPublishedKeys(i)).setGroup(group).build();
    }

    private static Command.Builder room(RoomCommand.Builder op) {
        return Command.newBuilder().setRoom(op.setRoom("r"));
    }

    private static RoomNewMessage roomMessage(int priority, String payload, String producerId) {
        return RoomNewMessage.newBuilder().setPriority(priority).setPayload(ByteString.copyFromUtf8(payload))
                .setProducer("c-1").setProducerId(producerId).build();
    }
}
