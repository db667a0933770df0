package io.hourglass.core.rooms;

import io.hourglass.core.InvalidRequestException;
import java.util.Objects;
import java.util.UUID;

/**
 * A broker-issued client id: a random UUID, so two sessions never share one (the original derived
 * ids from the clock and could hand out the same id twice within a millisecond). Ids are issued by
 * the room leader and are valid only there; after a failover clients connect again and get new ones.
 */
public record ClientId(UUID value) {
    public ClientId {
        Objects.requireNonNull(value, "value");
    }

    static ClientId random() {
        return new ClientId(UUID.randomUUID());
    }

    /**
     * Parses the form {@link #toString()} writes.
     *
     * @throws InvalidRequestException when {@code text} is not a client id
     */
    public static ClientId parse(String text) {
        try {
            return new ClientId(UUID.fromString(text == null ? "" : text.trim()));
        } catch (IllegalArgumentException e) {
            throw new InvalidRequestException("not a client id: '" + text + "'");
        }
    }

    @Override
    public String toString() {
        return value.toString();
    }
}
