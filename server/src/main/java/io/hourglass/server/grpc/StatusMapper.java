package io.hourglass.server.grpc;

import com.google.protobuf.Any;
import com.google.rpc.BadRequest;
import com.google.rpc.ErrorInfo;
import com.google.rpc.QuotaFailure;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.protobuf.ProtoUtils;
import io.hourglass.core.AlreadyExistsException;
import io.hourglass.core.FailedPreconditionException;
import io.hourglass.core.InvalidRequestException;
import io.hourglass.core.NotFoundException;
import io.hourglass.core.NotLeaderException;
import io.hourglass.core.UnavailableException;
import java.util.List;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one place where domain exceptions become gRPC statuses, and where every error text a client
 * receives is bounded ({@link #bounded}): a status description travels in a response header, so an
 * error that echoed a 1 MiB input would overflow the client's header limit and reach it as
 * {@code INTERNAL: Header size exceeded} instead of the real reason.
 *
 * <p>Where a client needs structure, the status also carries the standard {@code google.rpc} error
 * details (in the {@code grpc-status-details-bin} trailer, read with {@code StatusProto}): an
 * {@link ErrorInfo} of domain {@link #ERROR_DOMAIN} saying why, with a {@link BadRequest} or
 * {@link QuotaFailure} for an exceeded limit. The {@code hourglass-leader} trailer and the
 * descriptions stay as they were, for clients that read only those.
 */
public final class StatusMapper {
    /** The longest error text sent to a client, in characters; longer ones are cut with a note of how much. */
    public static final int MAX_DESCRIPTION = 300;
    /** Trailer naming the leader's client address when a node refuses because it does not lead. */
    public static final Metadata.Key<String> LEADER_KEY = Metadata.Key.of("hourglass-leader", Metadata.ASCII_STRING_MARSHALLER);
    /** The domain of every {@link ErrorInfo} this API sends. */
    public static final String ERROR_DOMAIN = "hourglass.io";
    /** ErrorInfo reason: this node does not lead; {@link #LEADER_METADATA} names the leader when one is known. */
    public static final String NOT_LEADER = "NOT_LEADER";
    /** ErrorInfo metadata: the leader's client address (host:port), as the {@link #LEADER_KEY} trailer has it. */
    public static final String LEADER_METADATA = "leader";
    /** ErrorInfo (and BadRequest violation) reason: the request exceeds a configured limit, named by {@link #LIMIT_METADATA}. */
    public static final String LIMIT_EXCEEDED = "LIMIT_EXCEEDED";
    /** ErrorInfo metadata: the config key of the limit exceeded, such as {@code limits.maxPayloadBytes}. */
    public static final String LIMIT_METADATA = "limit";
    /** The trailer of the {@code google.rpc.Status} with the details, as {@code StatusProto} reads it. */
    static final Metadata.Key<com.google.rpc.Status> DETAILS_KEY = Metadata.Key.of("grpc-status-details-bin",
            ProtoUtils.metadataMarshaller(com.google.rpc.Status.getDefaultInstance()));
    /**
     * A limit named by a refusal: every one names the config key that sets it, as {@code (limits.maxPayloadBytes)}
     * or {@code exceeds rooms.maxAckTimeout}. Only {@code max} keys, so that a description merely mentioning a
     * setting ("0 = the server's rooms.clientTimeout") is not taken for a limit.
     */
    private static final Pattern LIMIT = Pattern.compile("(?:\\(|exceeds )((?:limits|grpc|rooms)\\.max[A-Za-z]+)");
    private static final Logger LOG = LoggerFactory.getLogger(StatusMapper.class);

    private StatusMapper() {
    }

    /**
     * The status a client sees for {@code error}, unwrapped from completion wrappers: a status as it
     * is; {@link InvalidRequestException} (and {@link IllegalArgumentException}) INVALID_ARGUMENT;
     * {@link NotFoundException} NOT_FOUND; {@link AlreadyExistsException} ALREADY_EXISTS;
     * {@link FailedPreconditionException} FAILED_PRECONDITION; {@link NotLeaderException} UNAVAILABLE
     * ({@link #notLeader}); {@link UnavailableException} UNAVAILABLE; anything else INTERNAL, logged.
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
            return notLeader(nle.getMessage(), nle.leaderHint().orElse(null));
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
        return Status.UNAVAILABLE.withDescription(description).asRuntimeException(leaderTrailer(leaderHint));
    }

    /**
     * UNAVAILABLE because this node does not lead: the {@link #LEADER_KEY} trailer when the leader is known,
     * and an {@link ErrorInfo} (reason {@link #NOT_LEADER}, metadata {@link #LEADER_METADATA} = the leader's
     * client address when known).
     */
    public static StatusRuntimeException notLeader(String description, String leaderHint) {
        ErrorInfo.Builder info = ErrorInfo.newBuilder().setReason(NOT_LEADER).setDomain(ERROR_DOMAIN);
        if (leaderHint != null) {
            info.putMetadata(LEADER_METADATA, leaderHint);
        }
        Status status = bounded(Status.UNAVAILABLE.withDescription(description));
        Metadata trailers = leaderTrailer(leaderHint);
        trailers.put(DETAILS_KEY, details(status, List.of(Any.pack(info.build()))));
        return status.asRuntimeException(trailers);
    }

    private static Metadata leaderTrailer(String leaderHint) {
        Metadata trailers = new Metadata();
        if (leaderHint != null) {
            trailers.put(LEADER_KEY, leaderHint);
        }
        return trailers;
    }

    /**
     * The status a call closes with ({@link BoundedStatusInterceptor}): {@code status} {@link #bounded}, and,
     * when it refuses a request for a limit its description names (INVALID_ARGUMENT or RESOURCE_EXHAUSTED;
     * see {@link #LIMIT}), the error details added to {@code trailers}: an {@link ErrorInfo} (reason
     * {@link #LIMIT_EXCEEDED}, metadata {@link #LIMIT_METADATA} = the key) and, for INVALID_ARGUMENT, a
     * {@link BadRequest} violation, for RESOURCE_EXHAUSTED a {@link QuotaFailure} violation whose quota id is
     * the key. The key is looked for before the description is bounded, which may cut it off. Trailers with
     * details already keep theirs.
     */
    public static Status closing(Status status, Metadata trailers) {
        Status bounded = bounded(status);
        boolean limitCode = status.getCode() == Status.Code.INVALID_ARGUMENT
                || status.getCode() == Status.Code.RESOURCE_EXHAUSTED;
        if (!limitCode || status.getDescription() == null || trailers.containsKey(DETAILS_KEY)) {
            return bounded;
        }
        Matcher m = LIMIT.matcher(status.getDescription());
        if (!m.find()) {
            return bounded;
        }
        String limit = m.group(1);
        String text = bounded.getDescription();
        Any info = Any.pack(ErrorInfo.newBuilder().setReason(LIMIT_EXCEEDED).setDomain(ERROR_DOMAIN)
                .putMetadata(LIMIT_METADATA, limit).build());
        Any specific = status.getCode() == Status.Code.INVALID_ARGUMENT
                ? Any.pack(BadRequest.newBuilder().addFieldViolations(BadRequest.FieldViolation.newBuilder()
                        .setDescription(text).setReason(LIMIT_EXCEEDED)).build())
                : Any.pack(QuotaFailure.newBuilder().addViolations(QuotaFailure.Violation.newBuilder()
                        .setQuotaId(limit).setDescription(text)).build());
        trailers.put(DETAILS_KEY, details(bounded, List.of(info, specific)));
        return bounded;
    }

    /** The {@code google.rpc.Status} of {@code status} with {@code details}: same code, same (bounded) message. */
    private static com.google.rpc.Status details(Status status, List<Any> details) {
        return com.google.rpc.Status.newBuilder().setCode(status.getCode().value())
                .setMessage(status.getDescription() == null ? "" : status.getDescription()).addAllDetails(details).build();
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
