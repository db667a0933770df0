/**
 * The delivery pipeline of DESIGN §4, run by the leader.
 *
 * <pre>
 *  EventStore ──due range scan──▶ Dispatcher ──▶ Hub ──▶ Consumer buffers ──▶ transport
 *                                   │    ▲                                     │
 *                          InFlightTracker└── wake (register, due put, NACK)   │ ACK / NACK
 *                                   ▲                                          ▼
 *            ApplyListener (receipts, deletes) ◀── Raft ◀── Deleter ◀── DeliveryEngine.ack
 *                                                             ▲
 *                                                 TTL janitor (expiry index)
 * </pre>
 *
 * Threads: the dispatcher loop owns passes; one timer thread flushes the deleter and sweeps
 * expired messages; transport threads call ack/nack/disconnect; the apply thread calls
 * {@code onApplied}. Shared state is guarded by the monitors of {@code Hub}, {@code InFlightTracker}
 * and {@code Deleter}.
 */
package io.hourglass.core.delivery;
