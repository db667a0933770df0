package io.hourglass.core.delivery;

/**
 * Who a message goes out to once: a durable group (one of its consumers takes it) or one universal
 * consumer (fan-out). The in-flight state, the dispatch cursors and the redelivery queues are kept
 * per recipient.
 */
sealed interface Recipient {
    /** A consumer group of a topic: every message goes to one of its members. */
    record Group(String name) implements Recipient {
    }

    /** A universal consumer: it receives every message of its topic itself. */
    record Universal(String consumerId) implements Recipient {
    }

    default boolean isUniversal() {
        return this instanceof Universal;
    }
}
