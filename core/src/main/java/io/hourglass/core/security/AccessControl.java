package io.hourglass.core.security;

import io.hourglass.core.command.ApplyListener;
import io.hourglass.core.proto.Grant;
import io.hourglass.core.storage.SecurityRecords;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HexFormat;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Who a token is and what a principal may do, from the replicated tokens and grants
 * ({@link SecurityRecords}) plus this node's configuration: super-users and the bootstrap token
 * (principal {@code admin}). Every node decides alike because it reads the same applied state;
 * a change is seen as soon as its entry is applied here ({@link #listener()}) or a checkpoint is
 * installed ({@link #reload()}). Thread-safe: readers use an immutable snapshot.
 */
public final class AccessControl {
    /** The principal the bootstrap token authenticates as. */
    public static final String BOOTSTRAP_PRINCIPAL = "admin";
    private static final String TOKEN_PREFIX = "hg_";

    private final SecurityRecords records;
    private final Set<String> superUsers;
    private final String bootstrapHash;
    private volatile Snapshot snapshot = new Snapshot(Map.of(), Map.of());

    private record Snapshot(Map<String, String> principalByHash, Map<String, List<Grant>> grantsByPrincipal) {
    }

    /** @param bootstrapToken the token of the bootstrap file, or null */
    public AccessControl(SecurityRecords records, Set<String> superUsers, String bootstrapToken) {
        this.records = records;
        this.superUsers = Set.copyOf(superUsers);
        this.bootstrapHash = bootstrapToken == null ? null : HexFormat.of().formatHex(sha256(bootstrapToken));
        reload();
    }

    /** Reads tokens and grants again from the store. */
    public void reload() {
        Map<String, String> byHash = new HashMap<>();
        records.tokens().forEach((name, t) -> byHash.put(HexFormat.of().formatHex(t.getSha256().toByteArray()), name));
        Map<String, List<Grant>> grants = new HashMap<>();
        for (Grant g : records.grants()) {
            grants.computeIfAbsent(g.getPrincipal(), k -> new ArrayList<>()).add(g);
        }
        grants.replaceAll((k, v) -> List.copyOf(v));
        snapshot = new Snapshot(Map.copyOf(byHash), Map.copyOf(grants));
    }

    /** Reloads after each applied security command. */
    public ApplyListener listener() {
        return result -> {
            if (result.changes().stream().anyMatch(c -> c instanceof SecurityChange)) {
                reload();
            }
        };
    }

    /** The principal {@code token} authenticates as: a stored token's name, or admin for the bootstrap token. */
    public Optional<String> principalOfToken(String token) {
        String hash = HexFormat.of().formatHex(sha256(token));
        if (hash.equals(bootstrapHash)) {
            return Optional.of(BOOTSTRAP_PRINCIPAL);
        }
        return Optional.ofNullable(snapshot.principalByHash().get(hash));
    }

    /** Whether {@code principal} may do {@code permission} on {@code resource} (a topic or room name, or {@code *}). */
    public boolean allows(String principal, Permission permission, String resource) {
        if (superUsers.contains(principal)) {
            return true;
        }
        String wire = permission.wireName();
        for (Grant g : snapshot.grantsByPrincipal().getOrDefault(principal, List.of())) {
            if (g.getPermission().equals(wire) && covers(g.getResource(), resource)) {
                return true;
            }
        }
        return false;
    }

    /** A grant's resource covers a name: equal, or a prefix ending in {@code *} ({@code *} alone: everything). */
    static boolean covers(String pattern, String resource) {
        return pattern.endsWith("*") ? resource.startsWith(pattern.substring(0, pattern.length() - 1))
                : pattern.equals(resource);
    }

    /** A new random token: {@code hg_} and 32 random bytes, URL-safe base64. */
    public static String newToken(SecureRandom random) {
        byte[] bytes = new byte[32];
        random.nextBytes(bytes);
        return TOKEN_PREFIX + Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
    }

    public static byte[] sha256(String token) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(token.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("no SHA-256 in this JVM", e);
        }
    }
}
