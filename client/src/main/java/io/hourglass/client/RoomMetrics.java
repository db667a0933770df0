package io.hourglass.client;

import java.util.List;
import java.util.Objects;

/**
 * Backlog across rooms, as {@link RoomClient#metrics} reads it.
 *
 * @param roomsWithBacklog how many rooms have pending messages
 * @param top the rooms with the largest backlog, largest first
 */
public record RoomMetrics(long roomsWithBacklog, List<Backlog> top) {
    /** One room's backlog. */
    public record Backlog(String room, long backlog) {
        public Backlog {
            Objects.requireNonNull(room, "room");
        }
    }

    public RoomMetrics {
        top = List.copyOf(top);
    }
}
