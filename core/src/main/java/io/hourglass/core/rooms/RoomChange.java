package io.hourglass.core.rooms;

import com.google.protobuf.ByteString;
import io.hourglass.core.command.ApplyResult;
import io.hourglass.core.proto.RoomConfigureCmd;
import io.hourglass.core.proto.RoomMessage;
import java.util.List;

/**
 * What applying one room command changed, as told to {@link io.hourglass.core.command.ApplyListener}s
 * through {@link ApplyResult#changes()}. The room leader follows the replicated state with these;
 * followers ignore them.
 */
public sealed interface RoomChange extends ApplyResult.Change
        permits RoomChange.Sent, RoomChange.Released, RoomChange.Configured {
    String room();

    /**
     * Messages appended to the room's pending queue, in entry order; {@code answered} are the ids the
     * proposer gets, one per message it sent — a retried send (same producer id) answers the first
     * message's key and appends nothing.
     */
    record Sent(String room, List<PendingMessage> messages, List<RoomKey> answered) implements RoomChange {
        public Sent {
            messages = List.copyOf(messages);
            answered = List.copyOf(answered);
        }

        public Sent(String room, List<PendingMessage> messages) {
            this(room, messages, messages.stream().map(PendingMessage::key).toList());
        }

        /** The proposer learns the room keys of its messages, in {@code published_keys}. */
        @Override
        public List<ByteString> answeredIds() {
            return answered.stream().map(k -> ByteString.copyFrom(k.toBytes())).toList();
        }
    }

    /**
     * A release entry was applied.
     *
     * @param ticket the proposer's ticket, to recognise its own entry
     * @param released the messages released, whole (with payload), in entry order
     * @param missing keys that were neither pending nor the stored in-flight message
     * @param awaitAcks whether the released message is now the room's in-flight message
     */
    record Released(String room, long ticket, List<RoomMessage> released, List<RoomKey> missing, boolean awaitAcks)
            implements RoomChange {
        public Released {
            released = List.copyOf(released);
            missing = List.copyOf(missing);
        }
    }

    /** The room's settings were replaced. */
    record Configured(String room, RoomConfigureCmd settings) implements RoomChange {
    }
}
