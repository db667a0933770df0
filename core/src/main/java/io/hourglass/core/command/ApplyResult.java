package io.hourglass.core.command;

import com.google.protobuf.ByteString;
import io.hourglass.core.proto.CommandReply;
import io.hourglass.core.storage.EventKey;
import io.hourglass.core.storage.TermIndex;
import java.util.List;

/**
 * What applying one entry changed, for the listeners on this replica (dispatcher wake-up,
 * in-flight clean-up, the room leader) and, through {@link #reply()}, for the proposer.
 *
 * @param published keys of new messages, in entry order
 * @param duePublished whether any new message was already due at the entry's stamp
 * @param deleted messages removed from the store
 * @param receipts durable-group receipts written (message not necessarily removed)
 * @param changes what a command of a domain registered with the {@link StateApplier} changed
 *        (rooms: {@code RoomChange}); empty for the queue's commands. Their
 *        {@link Change#answeredIds()} are answered to the proposer in {@code published_keys},
 *        after any event keys
 */
public record ApplyResult(TermIndex position, long stampedAtMs, List<EventKey> published, boolean duePublished,
                          List<EventKey> deleted, List<Receipt> receipts, List<Change> changes) {

    /** A durable group's acknowledgement of one message, now replicated. */
    public record Receipt(EventKey key, String group) {
    }

    /**
     * A domain's own account of what its command changed. The seam carries it to that domain's
     * listeners without knowing its type; listeners pick theirs out with {@code instanceof}.
     */
    public interface Change {
        /** Ids the proposer is answered with, in entry order; none by default. */
        default List<ByteString> answeredIds() {
            return List.of();
        }

        /** Per published key, the key it replaced (empty: none), answered in {@code replaced_keys}. */
        default List<ByteString> replacedIds() {
            return List.of();
        }

        /** Why the command changed nothing, answered to the proposer; empty when it applied. */
        default String refusal() {
            return "";
        }
    }

    public ApplyResult {
        published = List.copyOf(published);
        deleted = List.copyOf(deleted);
        receipts = List.copyOf(receipts);
        changes = List.copyOf(changes);
    }

    /** A result of the queue's commands (no domain change). */
    public ApplyResult(TermIndex position, long stampedAtMs, List<EventKey> published, boolean duePublished,
                       List<EventKey> deleted, List<Receipt> receipts) {
        this(position, stampedAtMs, published, duePublished, deleted, receipts, List.of());
    }

    /** The result of an entry that changed nothing a listener follows. */
    public static ApplyResult unchanged(TermIndex position, long stampedAtMs) {
        return new ApplyResult(position, stampedAtMs, List.of(), false, List.of(), List.of());
    }

    public CommandReply reply() {
        CommandReply.Builder b = CommandReply.newBuilder().setStampedAtMs(stampedAtMs).setDeletedCount(deleted.size())
                .setLogIndex(position.index());
        for (EventKey k : published) {
            b.addPublishedKeys(ByteString.copyFrom(k.toBytes()));
        }
        for (Change change : changes) {
            b.addAllPublishedKeys(change.answeredIds());
            b.addAllReplacedKeys(change.replacedIds());
            if (!change.refusal().isEmpty()) {
                b.setRefused(change.refusal());
            }
        }
        return b.build();
    }
}
