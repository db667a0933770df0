package io.hourglass.core.rooms;

import io.hourglass.core.InvalidRequestException;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * A client session's own identity, chosen by the client (the client library draws one random UUID
 * per session object) and sent with every subscribe, the resubscribes after a reconnect included.
 * Unlike a {@link ClientId}, which the leader issues afresh to every stream, it survives reconnects
 * and failovers: a release entry records the session ids of the members it went to, so that a new
 * leader can tell when every holder of the in-flight message is back.
 *
 * <p>The broker never interprets it beyond equality; it is not a credential. 1 to
 * {@value #MAX_LENGTH} characters: letters, digits and {@code . _ - :}.
 */
public record SessionId(String value) implements Comparable<SessionId> {
    public static final int MAX_LENGTH = 64;
    private static final Pattern ALPHABET = Pattern.compile("[A-Za-z0-9._:\\-]+");
    /** How much of a refused value an error message repeats. */
    private static final int SHOWN = 16;

    public SessionId {
        Objects.requireNonNull(value, "value");
        if (value.isEmpty() || value.length() > MAX_LENGTH || !ALPHABET.matcher(value).matches()) {
            throw new InvalidRequestException("session_id must be 1 to " + MAX_LENGTH
                    + " letters, digits or . _ - : (the client library sends a UUID), got " + describe(value));
        }
    }

    /** The session id a request names, or null when it names none (empty: an older client). */
    public static SessionId parseOptional(String text) {
        return text == null || text.isEmpty() ? null : new SessionId(text);
    }

    @Override
    public int compareTo(SessionId other) {
        return value.compareTo(other.value);
    }

    @Override
    public String toString() {
        return value;
    }

    /** Length and a short, printable prefix of a refused value: enough to recognise it, never all of it. */
    private static String describe(String value) {
        if (value.isEmpty()) {
            return "an empty one";
        }
        StringBuilder shown = new StringBuilder();
        value.codePoints().limit(SHOWN).forEach(cp -> shown.append(cp >= 0x20 && cp < 0x7f ? (char) cp : '?'));
        return value.length() + " characters: '" + shown + (value.length() > SHOWN ? "…'" : "'");
    }
}
