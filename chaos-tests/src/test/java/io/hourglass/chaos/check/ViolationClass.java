package io.hourglass.chaos.check;

/** The kinds of violation the checker names; see the package documentation for each rule. */
public enum ViolationClass {
    LOST("acknowledged publish never received by a receiver"),
    EARLY("delivered before due (beyond clock tolerance)"),
    EXPIRED("delivered after expiry"),
    AFTER_CONFIRM("delivered to a group after its confirmed ACK"),
    AFTER_CANCEL("delivered after a committed cancel"),
    AFTER_REPLACE("replaced message delivered after its replacement committed"),
    DEAD_LETTER_LOST("message past its group's max deliveries never reached the dead-letter topic"),
    DOUBLE_HOLD("held by two members of one group at once"),
    ROOM_LOCKSTEP("room message released before every sync member acked the previous"),
    ROOM_STALLED("room kept a backlog after healing with every member acking"),
    DIVERGENCE("nodes differ in state digest at the same applied index");

    private final String description;

    ViolationClass(String description) {
        this.description = description;
    }

    public String description() {
        return description;
    }
}
