/**
 * The chaos history checker: reads the history a chaos run recorded, names every violation and
 * measures how long each fault kept the cluster unavailable.
 *
 * <h2>History format</h2>
 *
 * <p>One JSON object per line (blank lines and lines starting with {@code #} are skipped). Every
 * event has {@code type}, {@code process} (the recording client's id) and {@code t} (epoch ms on
 * the recording client's clock; clocks may disagree by up to the clock tolerance). Per type:
 *
 * <table>
 *   <caption>Event types</caption>
 *   <tr><th>type</th><th>fields</th><th>meaning</th></tr>
 *   <tr><td>{@code config}</td><td>{@code inFlightTimeoutMs}, {@code clockToleranceMs} (both
 *       optional)</td><td>run parameters; the checker's own settings win over the history's</td></tr>
 *   <tr><td>{@code subscribe}</td><td>{@code topic, group, consumer}</td><td>a consumer joined;
 *       declares the receiver (see below) as expecting every later publish to the topic</td></tr>
 *   <tr><td>{@code publish}</td><td>{@code id, topic, dueAt, expiresAt} (0 = none), {@code ok},
 *       {@code start}, {@code delayMs}, {@code key}, {@code replacedId} (all four optional)</td><td>a
 *       publish completed at {@code t}; {@code ok=false} means failed or indeterminate; {@code start}
 *       is when the call was made (absent: {@code t}); {@code delayMs} the requested delay (absent:
 *       unknown); {@code key} its schedule key (absent or empty: none, also on failed attempts);
 *       {@code replacedId} the id the broker answered it replaced (empty: none)</td></tr>
 *   <tr><td>{@code cancel}</td><td>{@code topic}, {@code id} or {@code key}, {@code ok},
 *       {@code outcome}, {@code start}</td><td>a cancel completed at {@code t}: by id or by schedule
 *       key; {@code ok=true} with {@code outcome} {@code CANCELLED} (no copy had gone out),
 *       {@code ALREADY_DELIVERED} or {@code NOT_FOUND}; {@code ok=false} failed or indeterminate (it
 *       may still have committed)</td></tr>
 *   <tr><td>{@code group_config}</td><td>{@code topic, group, maxDeliveries, deadLetter}</td><td>the
 *       group's policy was committed: after {@code maxDeliveries} deliveries without an ACK a message
 *       moves to topic {@code deadLetter}</td></tr>
 *   <tr><td>{@code deliver}</td><td>{@code id, topic, group, consumer, attempt}, {@code sentAt},
 *       {@code deadLetterTopic, deadLetterGroup, deadLetterId} (optional)</td><td>a consumer
 *       received a message; {@code group} empty = universal consumer; {@code sentAt} when the server
 *       sent it (the delivery's own stamp); the {@code deadLetter*} fields are the headers of a
 *       dead-lettered copy, naming the original's topic, group and id</td></tr>
 *   <tr><td>{@code ack}, {@code nack}</td><td>{@code id, group, consumer}</td><td>settled by the
 *       consumer (a plain ack may still be lost by a failover)</td></tr>
 *   <tr><td>{@code confirm}</td><td>{@code id, group}</td><td>a confirmed ACK completed: the
 *       group must never see the message again</td></tr>
 *   <tr><td>{@code disconnect}</td><td>{@code consumer}</td><td>the consumer's stream ended</td></tr>
 *   <tr><td>{@code fault}</td><td>{@code kind, node, start, end} (end 0 = never healed)</td>
 *       <td>an injected fault, e.g. {@code kill-leader}, {@code pause}, {@code partition-split};
 *       {@code node} may be a comma list; {@code start} when injected (absent: {@code t}),
 *       {@code end} when healed</td></tr>
 *   <tr><td>{@code room_send}</td><td>{@code room, messageId}</td><td>a room send committed</td></tr>
 *   <tr><td>{@code room_deliver}</td><td>{@code room, messageId, member, sync, oob}</td><td>a
 *       member received a room message ({@code oob=true}: out-of-band, never gated)</td></tr>
 *   <tr><td>{@code room_ack}</td><td>{@code room, messageId, member}</td><td>a sync member acked</td></tr>
 *   <tr><td>{@code room_evict}, {@code room_unsubscribe}</td><td>{@code room, member}</td><td>the
 *       member left the room's sync set</td></tr>
 *   <tr><td>{@code room_state}</td><td>{@code room, backlog, inFlight, members, ready}</td><td>a
 *       room's state after healing and after the senders stopped and the room had time to drain</td></tr>
 *   <tr><td>{@code digest}</td><td>{@code node, appliedIndex, digest}</td><td>a node's state digest
 *       after healing (admin query)</td></tr>
 * </table>
 *
 * <p>Unknown types are counted as operations and otherwise ignored.
 *
 * <h2>Violation classes</h2>
 *
 * <p>A <em>receiver</em> is a durable group (its name), or a universal consumer ({@code *} plus the
 * consumer id) when {@code group} is empty. T is the clock tolerance (default 200 ms), END the
 * largest {@code t} in the history.
 *
 * <p>A publish P <em>may have been removed</em> when an {@code ok} publish names it as
 * {@code replacedId}; when a {@code cancel} of any outcome names its id; or when P has a key and
 * another publish or cancel attempt of that key may have committed after P: it is not {@code ok},
 * or it returned at or after P's start - T. A delivery <em>starts</em> at
 * {@code min(t, sentAt)} (absent {@code sentAt}: at {@code t}).
 *
 * <ul>
 *   <li><b>LOST</b> — an {@code ok} publish without TTL, due by {@code END - T}, that may not have
 *       been removed, that a receiver of
 *       its topic never got. A receiver expects publishes made at or after its first
 *       {@code subscribe}; a receiver seen only in deliveries expects all of the topic's publishes.
 *       Only durable groups count: a universal consumer is not durable (it gets what is pending
 *       while it is connected), so a message it missed is not lost.
 *   <li><b>EARLY</b> — a delivery at {@code t < dueAt - T}.
 *   <li><b>EXPIRED</b> — a delivery at {@code t > expiresAt + T} ({@code expiresAt > 0}).
 *   <li><b>AFTER_CONFIRM</b> — a delivery to a group at {@code t > confirm.t + T}.
 *   <li><b>AFTER_CANCEL</b> — after an {@code ok} cancel C that answered {@code CANCELLED}, a
 *       delivery (to anyone) of the message it removed that starts after {@code C.t + T}; after one
 *       that answered {@code ALREADY_DELIVERED}, the same for deliveries with {@code sentAt} (a
 *       receipt without the send time may be of the copy that went out before). A cancel by key
 *       removed the key's {@code ok} publish that returned last at or before the cancel's start (any
 *       publish of the key committed later replaced that one first, so it is gone either way). A
 *       failed, indeterminate or {@code NOT_FOUND} cancel proves nothing; deliveries that started
 *       before {@code C.t + T} are allowed (a deposed leader's, or one racing the cancel).
 *   <li><b>AFTER_REPLACE</b> — a delivery of a message named {@code replacedId} by an {@code ok}
 *       publish R that starts after {@code R.t + T}. One that started earlier is allowed, even if
 *       received later (it raced the replacement).
 *   <li><b>DEAD_LETTER_LOST</b> — for a {@code group_config} G (topic S, group g,
 *       {@code maxDeliveries > 0}, dead-letter topic D): an {@code ok} publish to S made after G,
 *       without TTL, due by {@code END - T}, that may not have been removed, made at least T after g
 *       and some durable group of D first subscribed, with no {@code ack} or {@code confirm} by g,
 *       of which no consumer of D received a copy (a {@code deliver} in D whose {@code deadLetter*}
 *       fields name S, g and its id). At least once: copies received twice are fine.
 *   <li><b>DOUBLE_HOLD</b> — a group member receives a message another member of that group
 *       holds, with no ack/NACK/confirm by (its {@code consumer}, else its {@code process}) or
 *       disconnect of the holder, no in-flight timeout
 *       ({@code t >= held + inFlightTimeout - T}) and no fault overlapping the interval in between.
 *   <li><b>ROOM_LOCKSTEP</b> — a room's next gated message reaches any member while a sync member
 *       that received the previous one had neither acked it nor been evicted/unsubscribed by
 *       {@code t + T}.
 *   <li><b>ROOM_STALLED</b> — a {@code room_state} with {@code backlog > 0}: with the cluster
 *       healed, every member connected and acking, and no more sends, the room still held
 *       messages it never released.
 *   <li><b>DIVERGENCE</b> — two nodes report different digests at the same applied index.
 * </ul>
 *
 * <h2>Availability</h2>
 *
 * <p>For each fault F (all times epoch ms; a publish's start is its {@code start}, else its
 * {@code t}):
 *
 * <ul>
 *   <li><b>duration</b> — {@code F.end - F.start}; none if never healed.
 *   <li><b>publish recovery</b> — {@code t - F.start} of the earliest-returning {@code ok} publish
 *       whose start is {@code >= F.start}; none if there is no such publish.
 *   <li><b>delivery recovery</b> — the smallest {@code d.t - F.start} over the deliveries d of
 *       {@code ok} publishes p with start {@code >= F.start} and no delay: {@code delayMs == 0},
 *       or, without {@code delayMs}, {@code dueAt <= start + T}. None if there is no such delivery.
 *       A negative difference (clocks disagreeing) counts as 0.
 * </ul>
 *
 * <p>Per fault kind the report gives the count and the median and maximum of both recoveries; a
 * fault that never recovered counts as infinitely long, so the median or maximum can be none. The
 * median of an even count is the lower middle value. Availability is informational: it is never a
 * violation and never makes the check fail. A figure that does not exist is {@code -1}
 * ({@link io.hourglass.chaos.check.FaultAvailability#NONE}) in the API and {@code none} in the table.
 *
 * <p>{@link io.hourglass.chaos.check.HistoryChecker#main} runs the checker on a file on its own.
 */
package io.hourglass.chaos.check;
