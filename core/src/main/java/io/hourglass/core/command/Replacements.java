package io.hourglass.core.command;

import com.google.protobuf.ByteString;
import io.hourglass.core.proto.StoredMessage;
import io.hourglass.core.storage.EventKey;
import io.hourglass.core.storage.EventStore;
import io.hourglass.core.storage.StoreBatch;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Schedule keys within one publish entry (DESIGN §9): a message with a key replaces the topic's
 * message stored under that key, whether stored before or earlier in the same entry, in the same
 * write batch. The replaced message goes with its expiry entry and receipts, and is listed as
 * deleted so that every replica drops its in-flight copies. Answered to the proposer as
 * {@code replaced_keys}, one per published key (empty: it replaced nothing). Apply thread only.
 */
final class Replacements implements ApplyResult.Change {
    private final StoreBatch batch;
    private final EventStore store;
    /** Topic and key → the message stored under it earlier in this entry. */
    private final Map<List<String>, Map.Entry<EventKey, StoredMessage>> inThisEntry = new HashMap<>();
    /** Per published key so far, what it replaced; null until a keyed message comes (most entries have none). */
    private List<ByteString> replaced;
    /** Published keys seen while {@code replaced} is still null. */
    private int unkeyed;
    private final List<EventKey> deleted = new ArrayList<>();

    Replacements(StoreBatch batch, EventStore store) {
        this.batch = batch;
        this.store = store;
    }

    /** The next published key replaced nothing (a deduplicated retry). */
    void none() {
        add(ByteString.EMPTY);
    }

    private void add(ByteString id) {
        if (replaced == null) {
            if (id.isEmpty()) {
                unkeyed++;
                return;
            }
            replaced = new ArrayList<>(Collections.nCopies(unkeyed, ByteString.EMPTY));
        }
        replaced.add(id);
    }

    /** Deletes the message {@code next}'s key names, if any; call before storing {@code next}. */
    void replace(StoredMessage next) {
        if (next.getKey().isEmpty()) {
            add(ByteString.EMPTY);
            return;
        }
        List<String> id = List.of(next.getTopic(), next.getKey());
        Map.Entry<EventKey, StoredMessage> earlier = inThisEntry.remove(id);
        if (earlier == null) {
            Optional<EventKey> stored = store.queue().keyed(next.getTopic(), next.getKey());
            Optional<StoredMessage> message = stored.flatMap(store.queue()::message);
            if (message.isPresent() && !deleted.contains(stored.get())) {
                earlier = Map.entry(stored.get(), message.get());
            }
        }
        if (earlier == null) {
            add(ByteString.EMPTY);
            return;
        }
        batch.deleteMessage(earlier.getKey(), earlier.getValue());
        deleted.add(earlier.getKey());
        add(ByteString.copyFrom(earlier.getKey().toBytes()));
    }

    /** {@code message} is stored under {@code key} by this entry. */
    void stored(EventKey key, StoredMessage message) {
        if (!message.getKey().isEmpty()) {
            inThisEntry.put(List.of(message.getTopic(), message.getKey()), Map.entry(key, message));
        }
    }

    boolean any() {
        return !deleted.isEmpty();
    }

    List<EventKey> deleted() {
        return List.copyOf(deleted);
    }

    @Override
    public List<ByteString> replacedIds() {
        return replaced == null ? List.of() : replaced;
    }
}
