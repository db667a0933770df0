package io.hourglass.client;

/**
 * What the broker answered for one published message.
 *
 * @param id the message id: hex of its 24-byte delivery tag
 * @param dueAtMs when it becomes deliverable, epoch milliseconds
 * @param enqueuedAtMs when the leader accepted it, epoch milliseconds
 * @param replacedId the id of the pending message with the same schedule key that this one
 *     replaced; empty when it replaced none
 */
public record PublishResult(String id, long dueAtMs, long enqueuedAtMs, String replacedId) {
    public PublishResult {
        if (id == null || id.isEmpty()) {
            throw new IllegalArgumentException("id must not be empty");
        }
        replacedId = replacedId == null ? "" : replacedId;
    }

    /** A result that replaced nothing. */
    public PublishResult(String id, long dueAtMs, long enqueuedAtMs) {
        this(id, dueAtMs, enqueuedAtMs, "");
    }
}
