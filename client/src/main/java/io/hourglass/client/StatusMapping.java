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
        return status.getCode() == Status.Code.UNAVAILABLE && !isNotHourglass(status);
    }

    /**
     * Whether the server is not an Hourglass client port: the Raft port (a gRPC server without
     * our services: {@code UNIMPLEMENTED} for an {@code hourglass.v1} method) or something that
     * does not speak HTTP/2 at all, e.g. the HTTP port (netty's "First received frame was not
     * SETTINGS"). Neither gets better by retrying.
     */
    static boolean isNotHourglass(Status status) {
        String d = describe(status);
        if (status.getCode() == Status.Code.UNIMPLEMENTED) {
            return d.contains("hourglass.v1.");
        }
        return d.contains("First received frame was not SETTINGS")
                || d.contains("HTTP/2 client preface string missing");
    }

    /** Whether a consumer stream that ended with this status should be re-opened. */
    static boolean isReconnectable(Status status) {
        return switch (status.getCode()) {
            case INVALID_ARGUMENT, FAILED_PRECONDITION, OUT_OF_RANGE, NOT_FOUND, ALREADY_EXISTS,
                    PERMISSION_DENIED, UNAUTHENTICATED, UNIMPLEMENTED -> false;
            default -> !isNotHourglass(status);
        };
    }

    /**
     * {@link #toException(Status)}, naming {@code server} when it is not an Hourglass client port
     * (an {@link UnavailableException}: exit 4 in the CLI), instead of an HTTP/2 hex dump.
     */
    static HourglassClientException toException(Status status, ServerAddress server) {
        if (!isNotHourglass(status)) {
            return toException(status);
        }
        String why = status.getCode() == Status.Code.UNIMPLEMENTED
                ? "it does not serve " + methodOf(describe(status)) + "; is it the Raft port, or an older server?"
                : "it does not speak gRPC; is it the HTTP port?";
        return new UnavailableException(server + " is not an Hourglass client port (" + why + ")",
                status.getCode().name(), status.asRuntimeException());
    }

    private static String methodOf(String description) {
        int at = description.indexOf("hourglass.v1.");
        String method = description.substring(at).strip();
        return method.length() > 100 ? method.substring(0, 100) : method;
    }

    static HourglassClientException toException(Status status) {
        String description = describe(status);
        return switch (status.getCode()) {
            case INVALID_ARGUMENT, FAILED_PRECONDITION, OUT_OF_RANGE, NOT_FOUND, ALREADY_EXISTS ->
                    new InvalidRequestException("request rejected: " + description, description,
                            status.asRuntimeException());
            case UNAUTHENTICATED, PERMISSION_DENIED ->
                    new AccessDeniedException("access refused: " + description, description,
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
