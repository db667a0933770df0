package io.hourglass.core.storage;

import java.nio.ByteBuffer;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;
import org.rocksdb.ReadOptions;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;
import org.rocksdb.Snapshot;

/**
 * SHA-256 over every replicated column family of one snapshot, in handle then key order, each
 * entry framed by its key and value lengths. The applied position is left out of the hash and
 * reported beside it, so two replicas at the same index compare equal exactly when they wrote the
 * same bytes. Each family is also digested on its own ({@code name → hex prefix:entries}), so a
 * divergence names the families that differ. O(store): an operator's and a test's query.
 */
final class StoreDigest {
    /** Hex digits of a family's own digest: enough to tell which families two replicas disagree on. */
    private static final int FAMILY_HEX = 16;

    private StoreDigest() {
    }

    static EventStore.Digest of(Db d, Snapshot snapshot) {
        try (ReadOptions ro = new ReadOptions().setSnapshot(snapshot)) {
            MessageDigest sha = MessageDigest.getInstance("SHA-256");
            Map<String, String> families = new LinkedHashMap<>();
            TermIndex at = TermIndex.INITIAL;
            for (int i = 1; i < d.handles.size(); i++) {
                sha.update((byte) i);
                MessageDigest family = MessageDigest.getInstance("SHA-256");
                long entries = 0;
                try (RocksIterator it = d.rocks.newIterator(d.handles.get(i), ro)) {
                    for (it.seekToFirst(); it.isValid(); it.next()) {
                        byte[] k = it.key();
                        byte[] v = it.value();
                        if (d.handles.get(i) == d.meta && Arrays.equals(k, Db.APPLIED_KEY)) {
                            at = Db.decodeApplied(v);
                            continue; // the position is reported beside the digest, not inside it
                        }
                        byte[] lengths = ByteBuffer.allocate(8).putInt(k.length).putInt(v.length).array();
                        for (MessageDigest md : new MessageDigest[] {sha, family}) {
                            md.update(lengths);
                            md.update(k);
                            md.update(v);
                        }
                        entries++;
                    }
                    it.status();
                }
                families.put(Db.COLUMN_FAMILIES.get(i - 1),
                        HexFormat.of().formatHex(family.digest()).substring(0, FAMILY_HEX) + ":" + entries);
            }
            return new EventStore.Digest(at, HexFormat.of().formatHex(sha.digest()), families);
        } catch (RocksDBException | NoSuchAlgorithmException e) {
            throw new StorageException("digest failed: " + e.getMessage(), e);
        }
    }
}
