package io.hourglass.server.e2e;

import io.hourglass.client.DeliveryContext;
import io.hourglass.client.DeliveryHandler;
import io.hourglass.client.ReceivedMessage;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.BiConsumer;

/** A delivery handler that remembers every delivery (with the local receive time) and then acts on it. */
final class Recorder implements DeliveryHandler {
    record Received(ReceivedMessage message, long receivedAtMs) {
        String payload() {
            return message.payloadUtf8();
        }
    }

    private final List<Received> received = new CopyOnWriteArrayList<>();
    private final BiConsumer<ReceivedMessage, DeliveryContext> action;

    Recorder(BiConsumer<ReceivedMessage, DeliveryContext> action) {
        this.action = action;
    }

    static Recorder acking() {
        return new Recorder((m, ctx) -> ctx.ack());
    }

    @Override
    public void onDelivery(ReceivedMessage message, DeliveryContext context) {
        received.add(new Received(message, System.currentTimeMillis()));
        action.accept(message, context);
    }

    List<Received> received() {
        return new ArrayList<>(received);
    }

    List<String> payloads() {
        return received.stream().map(Received::payload).toList();
    }

    int count() {
        return received.size();
    }
}
