package io.hourglass.core.storage;

import com.google.protobuf.InvalidProtocolBufferException;
import io.hourglass.core.proto.Grant;
import io.hourglass.core.proto.StoredToken;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * The replicated tokens and grants of the {@code security} column family (DESIGN §8):
 * {@code token/<name>} → {@link StoredToken}, {@code grant/<principal>\0<permission>\0<resource>}
 * → empty. Reads from any thread; writes through {@link StoreBatch}. Names may hold any character
 * but NUL, which the security commands refuse.
 */
public final class SecurityRecords {
    private static final byte[] TOKENS = "token/".getBytes(StandardCharsets.UTF_8);
    private static final byte[] GRANTS = "grant/".getBytes(StandardCharsets.UTF_8);

    private final EventStore store;

    public SecurityRecords(EventStore store) {
        this.store = store;
    }

    static byte[] tokenKey(String name) {
        return concat(TOKENS, name.getBytes(StandardCharsets.UTF_8));
    }

    static byte[] grantKey(Grant g) {
        return concat(GRANTS, (g.getPrincipal() + '\0' + g.getPermission() + '\0' + g.getResource())
                .getBytes(StandardCharsets.UTF_8));
    }

    public Optional<StoredToken> token(String name) {
        byte[] v = store.get(d -> d.security, tokenKey(name));
        return v == null ? Optional.empty() : Optional.of(parseToken(v));
    }

    /** Every token by principal name, in name order. */
    public Map<String, StoredToken> tokens() {
        Map<String, StoredToken> out = new TreeMap<>();
        store.scan(d -> d.security, TOKENS, end(TOKENS), (k, v) -> {
            out.put(new String(k, TOKENS.length, k.length - TOKENS.length, StandardCharsets.UTF_8), parseToken(v));
            return true;
        });
        return out;
    }

    public boolean hasGrant(Grant grant) {
        return store.get(d -> d.security, grantKey(grant)) != null;
    }

    /** Every grant, in principal, permission, resource order. */
    public List<Grant> grants() {
        List<Grant> out = new ArrayList<>();
        store.scan(d -> d.security, GRANTS, end(GRANTS), (k, v) -> {
            String[] parts = new String(k, GRANTS.length, k.length - GRANTS.length, StandardCharsets.UTF_8)
                    .split("\0", 3);
            out.add(Grant.newBuilder().setPrincipal(parts[0]).setPermission(parts[1]).setResource(parts[2]).build());
            return true;
        });
        return out;
    }

    private static StoredToken parseToken(byte[] v) {
        try {
            return StoredToken.parseFrom(v);
        } catch (InvalidProtocolBufferException e) {
            throw new StorageException("corrupt token record: " + e.getMessage(), e);
        }
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] out = new byte[a.length + b.length];
        System.arraycopy(a, 0, out, 0, a.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }

    /** The first key after every key that starts with {@code prefix} (its last byte + 1; ASCII prefixes). */
    private static byte[] end(byte[] prefix) {
        byte[] e = prefix.clone();
        e[e.length - 1]++;
        return e;
    }
}
