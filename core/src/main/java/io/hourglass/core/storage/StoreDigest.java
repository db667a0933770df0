package io.hourglass.core.storage;

import java.nio.ByteBuffer;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.HexFormat;
import org.rocksdb.ReadOptions;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;
import org.rocksdb.Snapshot;

/**
 * SHA-256 over every replicated column family of one snapshot, in handle then key order, each
 * entry framed by its key and value lengths. The applied position is left out of the hash and
 * reported beside it, so two replicas at the same index compare equal exactly when they wrote the
 * same bytes. O(store): an operator's and a test's query.
 */
final class StoreDigest {
    private StoreDigest() {
    }

    static EventStore.Digest of(Db d, Snapshot snapshot) {
        try (ReadOptions ro = new ReadOptions().setSnapshot(snapshot)) {
            MessageDigest sha = MessageDigest.getInstance("SHA-256");
            TermIndex at = TermIndex.INITIAL;
            for (int i = 1; i < d.handles.size(); i++) {
                sha.update((byte) i);
                try (RocksIterator it = d.rocks.newIterator(d.handles.get(i), ro)) {
                    for (it.seekToFirst(); it.isValid(); it.next()) {
                        byte[] k = it.key();
                        byte[] v = it.value();
                        if (d.handles.get(i) == d.meta && Arrays.equals(k, Db.APPLIED_KEY)) {
                            at = Db.decodeApplied(v);
                            continue; // the position is reported beside the digest, not inside it
                        }
                        sha.update(ByteBuffer.allocate(8).putInt(k.length).putInt(v.length).array());
                        sha.update(k);
                        sha.update(v);
                    }
                    it.status();
                }
            }
            return new EventStore.Digest(at, HexFormat.of().formatHex(sha.digest()));
        } catch (RocksDBException | NoSuchAlgorithmException e) {
            throw new StorageException("digest failed: " + e.getMessage(), e);
        }
    }
}
