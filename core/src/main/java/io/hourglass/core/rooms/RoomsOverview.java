package io.hourglass.core.rooms;

import java.util.List;

/**
 * Backlog across rooms, as {@link RoomEngine#metrics} answers it.
 *
 * @param roomsWithBacklog how many rooms have pending messages
 * @param top the rooms with the largest backlog, largest first (ties by name), exactly
 *        {@code min(topN, roomsWithBacklog)} of them
 */
public record RoomsOverview(int roomsWithBacklog, List<RoomBacklog> top) {
    public RoomsOverview {
        top = List.copyOf(top);
    }

    public record RoomBacklog(String room, int backlog) {
    }
}
