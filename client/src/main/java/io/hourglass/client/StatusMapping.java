package io.hourglass.client;

import io.grpc.Status;

/**
 * The one place where gRPC statuses become client exceptions and retry decisions.
 *
 * <p>Only {@code UNAVAILABLE} is retried: the server uses it for "not the leader", "no leader
 * yet" and "shutting down", and the transport uses it for "cannot connect". A deadline that
 * expires is not retried because the request may have been committed.
 */
final class StatusMapping {
    private StatusMapping() {
    }

    static boolean isRetryable(Status status) {
        return status.getCode() == Status.Code.UNAVAILABLE;
    }

    /** Whether a consumer stream that ended with this status should be re-opened. */
    static boolean isReconnectable(Status status) {
        return switch (status.getCode()) {
            case INVALID_ARGUMENT, FAILED_PRECONDITION, OUT_OF_RANGE, NOT_FOUND, ALREADY_EXISTS,
                    PERMISSION_DENIED, UNAUTHENTICATED, UNIMPLEMENTED -> false;
            default -> true;
        };
    }

    static HourglassClientException toException(Status status) {
        String description = describe(status);
        return switch (status.getCode()) {
            case INVALID_ARGUMENT, FAILED_PRECONDITION, OUT_OF_RANGE, NOT_FOUND, ALREADY_EXISTS ->
                    new InvalidRequestException("request rejected: " + description, description,
                            status.asRuntimeException());
            case UNAVAILABLE, DEADLINE_EXCEEDED ->
                    new UnavailableException("server unavailable: " + description, description,
                            status.asRuntimeException());
            default -> new HourglassClientException(
                    "server error " + status.getCode() + ": " + description, description,
                    status.asRuntimeException());
        };
    }

    /** Maps a refused ACK or NACK ({@code AckReply.ok == false}) to an exception. */
    static HourglassClientException fromAckReply(int code, String error) {
        return toException(Status.fromCodeValue(code).withDescription(error));
    }

    /**
     * The status description (or the code's name when there is none), with the transport's
     * cause when there is one ("io exception: Connection refused: host/addr:port").
     */
    static String describe(Status status) {
        String description = status.getDescription();
        if (description == null || description.isBlank()) {
            description = status.getCode().name();
        }
        Throwable cause = status.getCause();
        if (cause != null && cause.getMessage() != null && !description.contains(cause.getMessage())) {
            description = description + ": " + cause.getMessage();
        }
        return description;
    }
}
