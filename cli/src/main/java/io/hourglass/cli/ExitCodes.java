package io.hourglass.cli;

import io.hourglass.client.AccessDeniedException;
import io.hourglass.client.AdminClient;
import io.hourglass.client.InvalidRequestException;
import io.hourglass.client.UnavailableException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import picocli.CommandLine;

/**
 * The one mapping from failures to the {@code hourglass} command's exit codes. Scripts rely on
 * these numbers; the top-level help lists them ({@code HourglassCommand}'s
 * {@code exitCodeList}, kept in step by a test).
 */
final class ExitCodes implements CommandLine.IExitCodeExceptionMapper {
    static final int OK = 0;
    /** Anything not covered below: a server error, an I/O error, a bug. */
    static final int FAILURE = 1;
    /** Bad command line or input: unknown option, bad duration, missing argument. */
    static final int USAGE = 2;
    /** The server refused the request as invalid ({@code INVALID_ARGUMENT}). */
    static final int INVALID_REQUEST = 3;
    /** No server reachable, or none could serve the request before the deadline. */
    static final int UNAVAILABLE = 4;
    /** The server knows no such thing: topic, group or node ({@code NOT_FOUND}). */
    static final int NOT_FOUND = 5;
    /** The cluster is not in a state to do it, e.g. removing the leader ({@code FAILED_PRECONDITION}). */
    static final int FAILED_PRECONDITION = 6;
    /** It exists already, e.g. adding a member twice ({@code ALREADY_EXISTS}). */
    static final int ALREADY_EXISTS = 7;
    /** No, wrong or revoked credentials (UNAUTHENTICATED). */
    static final int UNAUTHENTICATED = 8;
    /** The principal lacks a permission (PERMISSION_DENIED). */
    static final int PERMISSION_DENIED = 9;

    @Override
    public int getExitCode(Throwable failure) {
        Throwable t = unwrap(failure);
        if (t instanceof CommandLine.ParameterException) {
            return USAGE;
        }
        if (t instanceof InvalidRequestException) {
            return switch (AdminClient.statusCode(t)) {
                case NOT_FOUND -> NOT_FOUND;
                case FAILED_PRECONDITION -> FAILED_PRECONDITION;
                case ALREADY_EXISTS -> ALREADY_EXISTS;
                default -> INVALID_REQUEST;
            };
        }
        if (t instanceof UnavailableException) {
            return UNAVAILABLE;
        }
        if (t instanceof AccessDeniedException) {
            return AdminClient.statusCode(t) == io.grpc.Status.Code.PERMISSION_DENIED ? PERMISSION_DENIED : UNAUTHENTICATED;
        }
        return FAILURE;
    }

    /** Strips the wrappers that futures and picocli put around the real failure. */
    static Throwable unwrap(Throwable failure) {
        Throwable t = failure;
        while ((t instanceof CompletionException || t instanceof ExecutionException
                || t instanceof CommandLine.ExecutionException) && t.getCause() != null) {
            t = t.getCause();
        }
        return t;
    }
}
