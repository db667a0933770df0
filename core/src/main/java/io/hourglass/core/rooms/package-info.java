/**
 * Lock-step rooms (ROOMS.md, DESIGN §6): every message sent to a room goes to all of its
 * subscribers in priority order, and the next one is released only when every sync member has
 * acknowledged the last; out-of-band messages bypass the gate.
 *
 * <pre>
 *  send / configure ──propose──▶ Raft ──▶ StateApplier ──▶ RoomApplier ──▶ rooms column family
 *                                                │ ApplyResult.changes (RoomChange)
 *                                                ▼
 *  client calls ──events──▶ RoomEngine ──one thread──▶ RoomsLeader (leader only)
 *  (subscribe, ack, ping,        │                       ├─ ClientSession per client (sink, timeout)
 *   out-of-band, queries)        │ housekeeping tick     ├─ RoomGate per room: S, R, pending, in flight
 *                                ▼                       │      │ GateAction (release, flush, settle)
 *                           evictions, retries           │      ▼
 *                                                        ├─ ReleasePipeline ──propose release──▶ Raft
 *                                                        └─ Fanout ◀── release applied here ──┘
 *                                                              │
 *                                                              ▼ RoomSink (deliveries, ejections)
 * </pre>
 *
 * <p>What is replicated: pending messages (key {@code xxhash64(room) · priority · sequence}, see
 * {@link io.hourglass.core.rooms.RoomKey}), each room's settings, and its in-flight message (whole
 * for at-least-once rooms, an id-only marker for at-most-once ones). What lives only on the leader:
 * sessions, S, R, last-seen times and the gate decisions not yet committed. A new leader rebuilds
 * its gates from the store and keeps a surviving backlog for {@code rooms.resubscribeGrace} while
 * clients reconnect and resubscribe.
 *
 * <p>Failover hold ({@link io.hourglass.core.rooms.FailoverHold}): a room whose message was in flight
 * releases nothing until the members that held it are back, since the first member back cannot know
 * who else still holds it. Each release entry records the holders' {@link io.hourglass.core.rooms.SessionId}s
 * — chosen by the client, the same on every subscribe of a session, unlike the leader-issued
 * {@code ClientId} — with the in-flight record, so the new leader ends the hold as soon as every
 * recorded holder has resubscribed (holding the message or not). Holders that do not come back are
 * waited for at most {@code min(rooms.clientTimeout, rooms.resubscribeGrace)}, and so are all of them
 * when none were recorded (a member without a session id, or an older entry).
 *
 * <p>Ordering: a gate decides at once and the decision's entry is proposed only after the room's
 * previous decision was applied, so a released message is never overtaken. A message reaches sinks
 * only after its release entry was applied on this node: an at-most-once message is therefore never
 * delivered by two leaders.
 *
 * <p>Threads: the engine thread ({@code hourglass-rooms}) owns {@code RoomsLeader} and everything in
 * it, and calls sinks and observers; the apply thread only runs {@code RoomApplier} and queues
 * {@code RoomChange}s; callers' threads only queue events or propose.
 */
package io.hourglass.core.rooms;
