package io.hourglass.raft;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.google.protobuf.ByteString;
import io.hourglass.core.proto.Command;
import io.hourglass.core.proto.NewMessage;
import io.hourglass.core.proto.PutCmd;
import org.junit.jupiter.api.Test;

/** The leader stamps an entry by appending the stamp field to the request's bytes instead of re-encoding it. */
class StampFieldTest {
    private static Command put() {
        return Command.newBuilder().setPut(PutCmd.newBuilder().addMessages(NewMessage.newBuilder()
                .setTopic("t").setPayload(ByteString.copyFromUtf8("p")).setDelayMs(5))).build();
    }

    @Test
    void anAppendedStampParsesAsTheCommandStampedOnce() throws Exception {
        for (long stamp : new long[] {1, 127, 128, 1_700_000_000_000L, Long.MAX_VALUE}) {
            byte[] appended = org.apache.ratis.thirdparty.com.google.protobuf.ByteString.copyFrom(put().toByteArray())
                    .concat(HourglassStateMachine.stampField(stamp)).toByteArray();
            assertEquals(put().toBuilder().setStampedAtMs(stamp).build(), Command.parseFrom(appended));
        }
    }

    @Test
    void anAppendedStampOverridesOneTheRequestCarried() throws Exception {
        Command carried = put().toBuilder().setStampedAtMs(42).build();
        byte[] appended = org.apache.ratis.thirdparty.com.google.protobuf.ByteString.copyFrom(carried.toByteArray())
                .concat(HourglassStateMachine.stampField(7)).toByteArray();
        assertEquals(7, Command.parseFrom(appended).getStampedAtMs());
    }
}
