package io.hourglass.server.rooms;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.google.protobuf.ByteString;
import io.grpc.Channel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.hourglass.api.v1.RoomConfigureRequest;
import io.hourglass.api.v1.RoomMetricsRequest;
import io.hourglass.api.v1.RoomMetricsResponse;
import io.hourglass.api.v1.RoomPeekRequest;
import io.hourglass.api.v1.RoomSendOutOfBandResponse;
import io.hourglass.api.v1.RoomSendRequest;
import io.hourglass.api.v1.RoomState;
import io.hourglass.api.v1.RoomStateRequest;
import io.hourglass.api.v1.RoomsGrpc;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/** The unary calls of {@code Rooms} through a raw blocking stub, each with a deadline. */
final class RoomsApi {
    private final RoomsGrpc.RoomsBlockingStub stub;

    RoomsApi(Channel channel) {
        this.stub = RoomsGrpc.newBlockingStub(channel);
    }

    RoomsGrpc.RoomsBlockingStub stub() {
        return stub.withDeadlineAfter(20, TimeUnit.SECONDS);
    }

    /** Sends with priority 0; the message id. */
    String send(String room, String payload) {
        return send(room, 0, payload);
    }

    String send(String room, int priority, String payload) {
        return stub().send(RoomSendRequest.newBuilder().setRoom(room).setPriority(priority)
                .setPayload(ByteString.copyFromUtf8(payload)).build()).getMessageId();
    }

    RoomSendOutOfBandResponse sendOutOfBand(String room, String payload) {
        return stub().sendOutOfBand(RoomSendRequest.newBuilder().setRoom(room)
                .setPayload(ByteString.copyFromUtf8(payload)).build());
    }

    /** The payloads {@code peek} answers. */
    List<String> peek(String room, int offset, int limit) {
        return stub().peek(RoomPeekRequest.newBuilder().setRoom(room).setOffset(offset).setLimit(limit).build())
                .getMessagesList().stream().map(m -> m.getPayload().toStringUtf8()).toList();
    }

    RoomState state(String room) {
        return stub().state(RoomStateRequest.newBuilder().setRoom(room).build());
    }

    RoomMetricsResponse metrics(int topN) {
        return stub().metrics(RoomMetricsRequest.newBuilder().setTopN(topN).build());
    }

    void configure(String room, boolean atLeastOnce, long ackTimeoutMs) {
        stub().configure(RoomConfigureRequest.newBuilder().setRoom(room).setAtLeastOnce(atLeastOnce)
                .setAckTimeoutMs(ackTimeoutMs).build());
    }

    /** The status a call fails with. */
    static Status failure(Supplier<?> call) {
        return assertThrows(StatusRuntimeException.class, call::get).getStatus();
    }

    /** Asserts INVALID_ARGUMENT and returns the description a person would read. */
    static String invalid(Supplier<?> call) {
        Status s = failure(call);
        assertEquals(Status.Code.INVALID_ARGUMENT, s.getCode(), s::toString);
        return s.getDescription();
    }
}
