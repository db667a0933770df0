package io.hourglass.core.command;

import io.hourglass.core.proto.CommandReply;
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
 */
public record ApplyResult(TermIndex position, long stampedAtMs, List<EventKey> published, boolean duePublished,
                          List<EventKey> deleted, List<Receipt> receipts) {

    /** A durable group's acknowledgement of one message, now replicated. */
    public record Receipt(EventKey key, String group) {
    }

    public ApplyResult {
        published = List.copyOf(published);
        deleted = List.copyOf(deleted);
        receipts = List.copyOf(receipts);
    }

    public CommandReply reply() {
        CommandReply.Builder b = CommandReply.newBuilder().setStampedAtMs(stampedAtMs);
        for (EventKey k : published) {
            b.addPublishedKeys(com.google.protobuf.ByteString.copyFrom(k.toBytes()));
        }
        return b.build();
    }
}
