package io.hourglass.client;

/**
 * What the broker answered for one published message.
 *
 * @param id the message id: hex of its 24-byte delivery tag
 * @param dueAtMs when it becomes deliverable, epoch milliseconds
 * @param enqueuedAtMs when the leader accepted it, epoch milliseconds
 */
public record PublishResult(String id, long dueAtMs, long enqueuedAtMs) {
    public PublishResult {
        if (id == null || id.isEmpty()) {
            throw new IllegalArgumentException("id must not be empty");
        }
    }
}
