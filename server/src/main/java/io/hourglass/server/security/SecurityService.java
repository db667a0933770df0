package io.hourglass.server.security;

import com.google.protobuf.ByteString;
import io.grpc.stub.StreamObserver;
import io.hourglass.api.v1.CreateTokenRequest;
import io.hourglass.api.v1.CreateTokenResponse;
import io.hourglass.api.v1.GrantInfo;
import io.hourglass.api.v1.GrantRequest;
import io.hourglass.api.v1.GrantResponse;
import io.hourglass.api.v1.ListGrantsRequest;
import io.hourglass.api.v1.ListGrantsResponse;
import io.hourglass.api.v1.ListTokensRequest;
import io.hourglass.api.v1.ListTokensResponse;
import io.hourglass.api.v1.RevokeTokenRequest;
import io.hourglass.api.v1.RevokeTokenResponse;
import io.hourglass.api.v1.SecurityGrpc;
import io.hourglass.api.v1.TokenInfo;
import io.hourglass.api.v1.WhoAmIRequest;
import io.hourglass.api.v1.WhoAmIResponse;
import io.hourglass.core.AlreadyExistsException;
import io.hourglass.core.HourglassException;
import io.hourglass.core.InvalidRequestException;
import io.hourglass.core.NotFoundException;
import io.hourglass.core.command.Replicator;
import io.hourglass.core.proto.Command;
import io.hourglass.core.proto.CommandReply;
import io.hourglass.core.proto.Grant;
import io.hourglass.core.proto.SecurityCmd;
import io.hourglass.core.proto.TokenPut;
import io.hourglass.core.security.AccessControl;
import io.hourglass.core.security.Permission;
import io.hourglass.core.storage.SecurityRecords;
import java.security.SecureRandom;
import java.util.regex.Pattern;

/**
 * Tokens and grants over gRPC ({@code hourglass.v1.Security}). Who may call what is the
 * interceptor's business ({@link AuthInterceptor}: {@code admin} on {@code *}, WhoAmI open to any
 * authenticated caller); this service validates, proposes the replicated command and answers what
 * the apply decided. The token is generated here, on the node that takes the call, and only its
 * SHA-256 enters the log.
 */
public final class SecurityService extends SecurityGrpc.SecurityImplBase {
    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9._@-]{1,128}");
    private static final Pattern RESOURCE = Pattern.compile("[^\\x00-\\x1f]{1,256}");

    private final Replicator replicator;
    private final SecurityRecords records;
    private final boolean enabled;
    private final SecureRandom random = new SecureRandom();

    /** Waits, bounded, until every node has a change (its log index): "revoked at once everywhere". */
    private final java.util.function.LongConsumer everywhere;

    public SecurityService(Replicator replicator, SecurityRecords records, boolean enabled) {
        this(replicator, records, enabled, index -> { });
    }

    /**
     * @param everywhere called with each committed change's log index before the call answers; it
     *        waits (bounded) until every voter has the change, so that a token revoked or a grant
     *        made is in force on every node that is up when the call returns
     */
    public SecurityService(Replicator replicator, SecurityRecords records, boolean enabled,
                           java.util.function.LongConsumer everywhere) {
        this.replicator = replicator;
        this.records = records;
        this.enabled = enabled;
        this.everywhere = everywhere;
    }

    @Override
    public void createToken(CreateTokenRequest r, StreamObserver<CreateTokenResponse> out) {
        String name = name(r.getName(), "token name");
        if (records.token(name).isPresent()) {
            throw new AlreadyExistsException("a token named " + name + " exists; revoke it first");
        }
        String token = AccessControl.newToken(random);
        propose(SecurityCmd.newBuilder().setTokenPut(TokenPut.newBuilder().setName(name)
                .setSha256(ByteString.copyFrom(AccessControl.sha256(token)))), true);
        reply(out, CreateTokenResponse.newBuilder().setName(name).setToken(token).build());
    }

    @Override
    public void listTokens(ListTokensRequest r, StreamObserver<ListTokensResponse> out) {
        ListTokensResponse.Builder b = ListTokensResponse.newBuilder();
        records.tokens().forEach((name, t) -> b.addTokens(TokenInfo.newBuilder().setName(name)
                .setCreatedAtMs(t.getCreatedAtMs())));
        reply(out, b.build());
    }

    @Override
    public void revokeToken(RevokeTokenRequest r, StreamObserver<RevokeTokenResponse> out) {
        String name = name(r.getName(), "token name");
        propose(SecurityCmd.newBuilder().setTokenRevoke(name), false);
        reply(out, RevokeTokenResponse.getDefaultInstance());
    }

    @Override
    public void addGrant(GrantRequest r, StreamObserver<GrantResponse> out) {
        Grant g = grant(r);
        propose(SecurityCmd.newBuilder().setGrantPut(g), false);
        reply(out, GrantResponse.getDefaultInstance());
    }

    @Override
    public void revokeGrant(GrantRequest r, StreamObserver<GrantResponse> out) {
        Grant g = grant(r);
        propose(SecurityCmd.newBuilder().setGrantRevoke(g), false);
        reply(out, GrantResponse.getDefaultInstance());
    }

    @Override
    public void listGrants(ListGrantsRequest r, StreamObserver<ListGrantsResponse> out) {
        ListGrantsResponse.Builder b = ListGrantsResponse.newBuilder();
        for (Grant g : records.grants()) {
            if (r.getPrincipal().isEmpty() || g.getPrincipal().equals(r.getPrincipal())) {
                b.addGrants(GrantInfo.newBuilder().setPrincipal(g.getPrincipal()).setPermission(g.getPermission())
                        .setResource(g.getResource()));
            }
        }
        reply(out, b.build());
    }

    @Override
    public void whoAmI(WhoAmIRequest r, StreamObserver<WhoAmIResponse> out) {
        String principal = Caller.principal();
        reply(out, WhoAmIResponse.newBuilder().setPrincipal(principal == null ? "" : principal)
                .setSecurityEnabled(enabled).build());
    }

    private void propose(SecurityCmd.Builder cmd, boolean existsIsConflict) {
        CommandReply reply = replicator.propose(Command.newBuilder().setSecurity(cmd).build()).join();
        if (!reply.getRefused().isEmpty()) {
            throw existsIsConflict ? new AlreadyExistsException(reply.getRefused()) : new NotFoundException(reply.getRefused());
        }
        everywhere.accept(reply.getLogIndex());
    }

    private static Grant grant(GrantRequest r) {
        String principal = name(r.getPrincipal(), "principal");
        Permission p = Permission.parse(r.getPermission());
        String resource = r.getResource().isEmpty() ? "*" : r.getResource();
        if (!RESOURCE.matcher(resource).matches()) {
            throw new InvalidRequestException("resource '" + HourglassException.excerpt(resource)
                    + "' must be 1 to 256 printable characters: a topic or room name, or a prefix ending in *");
        }
        return Grant.newBuilder().setPrincipal(principal).setPermission(p.wireName()).setResource(resource).build();
    }

    private static String name(String value, String what) {
        if (!NAME.matcher(value).matches()) {
            throw new InvalidRequestException(what + " '" + HourglassException.excerpt(value)
                    + "' must be 1 to 128 letters, digits, '.', '_', '@' or '-'");
        }
        return value;
    }

    private static <T> void reply(StreamObserver<T> out, T value) {
        out.onNext(value);
        out.onCompleted();
    }
}
