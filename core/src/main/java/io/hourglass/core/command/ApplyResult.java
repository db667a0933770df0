package io.hourglass.core.command;

import io.hourglass.core.proto.CommandReply;
import io.hourglass.core.rooms.PendingMessage;
import io.hourglass.core.rooms.RoomChange;
import io.hourglass.core.storage.EventKey;
import io.hourglass.core.storage.TermIndex;
import java.util.List;

/**
 * What applying one entry changed, for the listeners on this replica (dispatcher wake-up,
 * in-flight clean-up) and, through {@link #reply()}, for the proposer.
 *
 * @param published keys of new messages, in entry order
 * @param duePublished whether any new message was already due at the entry's stamp
 * @param deleted messages removed from the store
 * @param receipts durable-group receipts written (message not necessarily removed)
 * @param rooms what a room command changed (empty for other commands); the keys of sent room
 *        messages are answered to the proposer in {@code published_keys}, after any event keys
 */
public record ApplyResult(TermIndex position, long stampedAtMs, List<EventKey> published, boolean duePublished,
                          List<EventKey> deleted, List<Receipt> receipts, List<RoomChange> rooms) {

    /** A durable group's acknowledgement of one message, now replicated. */
    public record Receipt(EventKey key, String group) {
    }

    public ApplyResult {
        published = List.copyOf(published);
        deleted = List.copyOf(deleted);
        receipts = List.copyOf(receipts);
        rooms = List.copyOf(rooms);
    }

    /** A result that changed no room. */
    public ApplyResult(TermIndex position, long stampedAtMs, List<EventKey> published, boolean duePublished,
                       List<EventKey> deleted, List<Receipt> receipts) {
        this(position, stampedAtMs, published, duePublished, deleted, receipts, List.of());
    }

    public CommandReply reply() {
        CommandReply.Builder b = CommandReply.newBuilder().setStampedAtMs(stampedAtMs).setDeletedCount(deleted.size());
        for (EventKey k : published) {
            b.addPublishedKeys(com.google.protobuf.ByteString.copyFrom(k.toBytes()));
        }
        for (RoomChange change : rooms) {
            if (change instanceof RoomChange.Sent sent) {
                for (io.hourglass.core.rooms.RoomKey k : sent.answered()) {
                    b.addPublishedKeys(com.google.protobuf.ByteString.copyFrom(k.toBytes()));
                }
            }
        }
        return b.build();
    }
}
