package io.hourglass.server.grpc;

import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.hourglass.core.AlreadyExistsException;
import io.hourglass.core.FailedPreconditionException;
import io.hourglass.core.InvalidRequestException;
import io.hourglass.core.NotFoundException;
import io.hourglass.core.NotLeaderException;
import io.hourglass.core.UnavailableException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one place where domain exceptions become gRPC statuses, and where every error text a client
 * receives is bounded ({@link #bounded}): a status description travels in a response header, so an
 * error that echoed a 1 MiB input would overflow the client's header limit and reach it as
 * {@code INTERNAL: Header size exceeded} instead of the real reason.
 */
public final class StatusMapper {
    /** The longest error text sent to a client, in characters; longer ones are cut with a note of how much. */
    public static final int MAX_DESCRIPTION = 300;
    /** Trailer naming the leader's client address when a node refuses because it does not lead. */
    public static final Metadata.Key<String> LEADER_KEY = Metadata.Key.of("hourglass-leader", Metadata.ASCII_STRING_MARSHALLER);
    private static final Logger LOG = LoggerFactory.getLogger(StatusMapper.class);

    private StatusMapper() {
    }

    /**
     * The status a client sees for {@code error}, unwrapped from completion wrappers: a status as it
     * is; {@link InvalidRequestException} (and {@link IllegalArgumentException}) INVALID_ARGUMENT;
     * {@link NotFoundException} NOT_FOUND; {@link AlreadyExistsException} ALREADY_EXISTS;
     * {@link FailedPreconditionException} FAILED_PRECONDITION; {@link NotLeaderException} UNAVAILABLE
     * with the leader trailer; {@link UnavailableException} UNAVAILABLE; anything else INTERNAL, logged.
     * The description is the exception's message; it is bounded when the call closes
     * ({@link BoundedStatusInterceptor}).
     */
    public static StatusRuntimeException toStatus(Throwable error) {
        Throwable e = unwrap(error);
        if (e instanceof StatusRuntimeException sre) {
            return sre;
        }
        if (e instanceof InvalidRequestException || e instanceof IllegalArgumentException) {
            return Status.INVALID_ARGUMENT.withDescription(e.getMessage()).asRuntimeException();
        }
        if (e instanceof NotFoundException) {
            return Status.NOT_FOUND.withDescription(e.getMessage()).asRuntimeException();
        }
        if (e instanceof AlreadyExistsException) {
            return Status.ALREADY_EXISTS.withDescription(e.getMessage()).asRuntimeException();
        }
        if (e instanceof FailedPreconditionException) {
            return Status.FAILED_PRECONDITION.withDescription(e.getMessage()).asRuntimeException();
        }
        if (e instanceof NotLeaderException nle) {
            return unavailable(nle.getMessage(), nle.leaderHint().orElse(null));
        }
        if (e instanceof UnavailableException) {
            return Status.UNAVAILABLE.withDescription(e.getMessage()).asRuntimeException();
        }
        LOG.error("unexpected error serving a request", e);
        return Status.INTERNAL.withDescription("internal error: " + e).asRuntimeException();
    }

    /**
     * UNAVAILABLE with the {@link #LEADER_KEY} trailer when a leader is known: what a client sees when
     * this node cannot serve it and it should go elsewhere, or reconnect.
     */
    public static StatusRuntimeException unavailable(String description, String leaderHint) {
        Metadata trailers = new Metadata();
        if (leaderHint != null) {
            trailers.put(LEADER_KEY, leaderHint);
        }
        return Status.UNAVAILABLE.withDescription(description).asRuntimeException(trailers);
    }

    /** {@code text} cut to {@link #MAX_DESCRIPTION} characters (null stays null). */
    public static String bounded(String text) {
        if (text == null || text.length() <= MAX_DESCRIPTION) {
            return text;
        }
        String note = "… (" + (text.length() - MAX_DESCRIPTION + 40) + " more characters)";
        return text.substring(0, MAX_DESCRIPTION - 40) + note;
    }

    /** {@code status} with its description {@link #bounded}. */
    public static Status bounded(Status status) {
        String d = status.getDescription();
        return d == null || d.length() <= MAX_DESCRIPTION ? status : status.withDescription(bounded(d));
    }

    public static Throwable unwrap(Throwable error) {
        Throwable e = error;
        while ((e instanceof CompletionException || e instanceof ExecutionException) && e.getCause() != null) {
            e = e.getCause();
        }
        return e;
    }
}
