package io.hourglass.core.rooms;

import io.hourglass.core.proto.RoomMessage;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Hands messages and events to client sinks on the engine thread. A committed message goes only to
 * the recipients of its decision that are still subscribed to the room, ackable for those still
 * subscribed SYNC. A failing sink is logged and skipped; it cannot stall the room.
 */
final class Fanout {
    private static final Logger LOG = LoggerFactory.getLogger(Fanout.class);
    private final Map<ClientId, ClientSession> sessions;
    private final RoomCounters counters;

    Fanout(Map<ClientId, ClientSession> sessions, RoomCounters counters) {
        this.sessions = sessions;
        this.counters = counters;
    }

    /**
     * Delivers what a resolved pipeline step released, as the applied entry reports it.
     *
     * @return the key of the message that is now in flight and delivered, if the step released one
     */
    Optional<RoomKey> committed(String room, ReleasePipeline.Step step, RoomChange.Released applied, long nowMs) {
        Map<String, RoomMessage> released = new HashMap<>();
        applied.released().forEach(m -> released.put(m.getId(), m));
        if (!applied.missing().isEmpty()) {
            LOG.warn("release in room '{}' found {} messages gone: {}", room, applied.missing().size(),
                    applied.missing());
        }
        Optional<RoomKey> inFlight = Optional.empty();
        for (GateAction action : step.actions) {
            if (action instanceof GateAction.Release r) {
                RoomMessage m = released.get(r.message().id());
                if (m != null) {
                    List<ClientId> recipients = new ArrayList<>(r.members());
                    recipients.addAll(r.listeners());
                    handOut(room, m, recipients, r.redelivery(), nowMs);
                    (r.redelivery() ? counters.redelivered : counters.released).increment();
                    inFlight = Optional.of(r.message().key());
                }
            } else if (action instanceof GateAction.Flush f) {
                for (int i = 0; i < f.messages().size(); i++) {
                    RoomMessage m = released.get(f.messages().get(i).id());
                    if (m != null) {
                        handOut(room, m, List.copyOf(f.listeners()), i == 0 && f.redeliveryFirst(), nowMs);
                        counters.flushed.increment();
                    }
                }
            }
        }
        return inFlight;
    }

    private void handOut(String room, RoomMessage m, List<ClientId> recipients, boolean redelivered, long nowMs) {
        for (ClientId c : recipients) {
            ClientSession s = sessions.get(c);
            SubscriptionMode mode = s == null ? null : s.rooms.get(room);
            if (mode != null) {
                deliver(s, new RoomDelivery(room, m.getId(), m.getPriority(), m.getPayload(), false,
                        mode == SubscriptionMode.SYNC, m.getSentAtMs(), nowMs, m.getProducer(), redelivered));
            }
        }
    }

    void deliver(ClientSession s, RoomDelivery d) {
        if (s == null) {
            return;
        }
        try {
            s.sink.deliver(d);
            counters.deliveries.increment();
        } catch (RuntimeException e) {
            LOG.warn("sink of {} failed on a delivery in room '{}': {}", s, d.room(), e.toString());
        }
    }

    void ejected(ClientSession s, String room, EjectReason reason) {
        try {
            s.sink.ejected(room, reason);
        } catch (RuntimeException e) {
            LOG.warn("sink of {} failed on ejection: {}", s, e.toString());
        }
    }

    void closed(ClientSession s, String reason) {
        try {
            s.sink.closed(reason);
        } catch (RuntimeException e) {
            LOG.warn("sink of {} failed on close: {}", s, e.toString());
        }
    }
}
