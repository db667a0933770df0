package io.hourglass.core.delivery;

import io.hourglass.core.proto.StoredMessage;
import io.hourglass.core.storage.EventKey;

/** One message handed to one consumer; {@code attempt} is 1 on first delivery to that recipient. */
public record Delivery(EventKey tag, StoredMessage message, int attempt, long deliveredAtMs) {
}
