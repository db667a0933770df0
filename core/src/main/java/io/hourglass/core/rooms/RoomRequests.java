package io.hourglass.core.rooms;

import io.hourglass.core.InvalidRequestException;
import io.hourglass.core.config.LimitsConfig;
import io.hourglass.core.config.RoomsConfig;
import io.hourglass.core.config.Settings;
import java.time.Duration;
import java.util.List;
import java.util.regex.Pattern;

/**
 * Checks room requests before anything is proposed or queued, against {@link LimitsConfig}: a room
 * name follows the topic rules (ROOMS.md: "any characters a topic name allows"), payloads and
 * batches the publish limits. Every failure is an {@link InvalidRequestException} naming the limit.
 */
final class RoomRequests {
    /** The same alphabet as topic names (see {@code PublishValidator}). */
    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9._:/\\-]+");
    static final int MAX_PAGE = 10_000;

    private final LimitsConfig limits;

    RoomRequests(LimitsConfig limits) {
        this.limits = limits;
    }

    void room(String room) {
        if (room == null || room.isEmpty()) {
            throw new InvalidRequestException("room must not be empty");
        }
        if (room.length() > limits.maxTopicLength()) {
            throw new InvalidRequestException("room is " + room.length() + " characters long; the limit is "
                    + limits.maxTopicLength() + " (limits.maxTopicLength)");
        }
        if (!NAME.matcher(room).matches()) {
            throw new InvalidRequestException("room '" + room + "' may only contain letters, digits and . _ - / :");
        }
    }

    void sends(List<RoomSend> messages) {
        if (messages.isEmpty()) {
            throw new InvalidRequestException("a send request must carry at least one message");
        }
        if (messages.size() > limits.maxBatchMessages()) {
            throw new InvalidRequestException("a send request may carry at most " + limits.maxBatchMessages()
                    + " messages (limits.maxBatchMessages), got " + messages.size());
        }
        long bytes = 0;
        for (RoomSend m : messages) {
            payload(m.payload().size());
            bytes += m.payload().size() + 16;
        }
        if (bytes > limits.maxBatchBytes()) {
            throw new InvalidRequestException("a send request may carry at most " + limits.maxBatchBytes()
                    + " bytes (limits.maxBatchBytes), got " + bytes);
        }
    }

    void payload(int size) {
        if (size > limits.maxPayloadBytes()) {
            throw new InvalidRequestException("payload is " + size + " bytes; the limit is "
                    + limits.maxPayloadBytes() + " (limits.maxPayloadBytes)");
        }
    }

    void page(int offset, int limit) {
        if (offset < 0 || limit < 0) {
            throw new InvalidRequestException("offset and limit must not be negative, got " + offset + ", " + limit);
        }
        if (limit > MAX_PAGE) {
            throw new InvalidRequestException("limit may be at most " + MAX_PAGE + ", got " + limit);
        }
    }

    /** A session's heartbeat timeout: between {@link RoomsConfig#MIN_CLIENT_TIMEOUT} and the maximum. */
    static long clientTimeoutMs(Duration requested) {
        if (requested.compareTo(RoomsConfig.MIN_CLIENT_TIMEOUT) < 0
                || requested.compareTo(RoomsConfig.MAX_CLIENT_TIMEOUT) > 0) {
            throw new InvalidRequestException("client timeout must be between "
                    + Settings.format(RoomsConfig.MIN_CLIENT_TIMEOUT) + " and "
                    + Settings.format(RoomsConfig.MAX_CLIENT_TIMEOUT) + ", got " + requested.toMillis() + "ms");
        }
        return requested.toMillis();
    }
}
