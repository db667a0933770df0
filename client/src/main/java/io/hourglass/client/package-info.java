/**
 * The Hourglass Java client library.
 *
 * <pre>
 *  publishAsync ─▶ PublishBatcher ─(batch = 1 request)─▶ PublishCaller ─retry/failover─▶ ServerPool
 *  publish / publishBatch ──(chunks)──▶ PublishBatcher                                  (1 channel
 *                                                                                       per server)
 *  subscribe ─▶ Subscription ─(one per connection)─▶ ConsumerStream ◀─ deliveries ─ Broker.Subscribe
 *                    │ reconnect with backoff              │ request(1) per handled delivery
 *                    └────────▶ HandlerLoop (1 thread) ─▶ DeliveryHandler ─▶ ack / nack on its stream
 *
 *  rooms() ─▶ RoomClient ─ send / peek / state / ... ─▶ UnaryCaller ─retry/leader hint─▶ ServerPool
 *                 │ openSession
 *                 ▼
 *  RoomSession ─▶ RoomConnection ─(one per stream)─▶ RoomSessionStream ◀─ deliveries ─ Rooms.Session
 *                    │ RoomMemberships: rooms, held messages, requests to carry over on reconnect
 *                    │ pings (timer), RoomReconnects (backoff, give up)
 *                    └────────▶ RoomHandlerLoop (1 thread) ─▶ RoomHandler ─▶ ack on the open stream
 * </pre>
 *
 * <p>Entry point: {@link io.hourglass.client.HourglassClient}. Errors are
 * {@link io.hourglass.client.HourglassClientException} subtypes; gRPC statuses are mapped to them
 * in one place ({@code StatusMapping}).
 */
package io.hourglass.client;
