package io.hourglass.server.security;

import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.ForwardingServerCall;
import io.grpc.ForwardingServerCallListener;
import io.grpc.Grpc;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import io.hourglass.api.v1.CancelRequest;
import io.hourglass.api.v1.PublishMessage;
import io.hourglass.api.v1.PublishRequest;
import io.hourglass.api.v1.RoomConfigureRequest;
import io.hourglass.api.v1.RoomPeekRequest;
import io.hourglass.api.v1.RoomSendRequest;
import io.hourglass.api.v1.RoomStateRequest;
import io.hourglass.api.v1.SessionRequest;
import io.hourglass.api.v1.SubscribeRequest;
import io.hourglass.core.HourglassException;
import io.hourglass.core.security.AccessControl;
import io.hourglass.core.security.Permission;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import javax.naming.InvalidNameException;
import javax.naming.ldap.LdapName;
import javax.naming.ldap.Rdn;
import javax.net.ssl.SSLPeerUnverifiedException;
import javax.net.ssl.SSLSession;

/**
 * Authentication and authorization of the client port, deny by default (DESIGN §8).
 *
 * <p>A call authenticates with {@code authorization: Bearer <token>} (a replicated token, or the
 * bootstrap token as {@code admin}) or, without that header, with a client certificate whose
 * subject CN is the principal. No credentials, or a token no node knows: UNAUTHENTICATED.
 *
 * <p>Each method has a rule ({@link #RULES}): admin calls need {@code admin} on {@code *} when the
 * call starts; calls that name a topic or room are checked on each message that names one — every
 * topic of a publish, the {@code init} frame of a subscription, each room a session subscribes to.
 * A method without a rule is refused. A refusal is PERMISSION_DENIED naming the permission and
 * resource, and an audit line; admin calls are audited with their outcome.
 *
 * <p>Server reflection needs credentials but no grant, as {@code WhoAmI} does: it tells an
 * authenticated caller the schema of the public API. The health checks ({@link #PROBES}) are the one
 * exception to authentication, as {@code /healthz} and {@code /readyz} are on the HTTP port: a kubelet's
 * gRPC probe presents no credentials, and they reveal only whether the node is ready.
 */
public final class AuthInterceptor implements ServerInterceptor {
    private static final Metadata.Key<String> AUTHORIZATION =
            Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);

    /** What a method needs: at the call's start (admin), and of each request message. */
    private record Rule(Permission atStart, Function<Object, List<String>> resources, Permission perMessage) {
        static Rule admin() {
            return new Rule(Permission.ADMIN, m -> List.of(), null);
        }

        static Rule open() {
            return new Rule(null, m -> List.of(), null);
        }

        static Rule each(Permission p, Function<Object, List<String>> resources) {
            return new Rule(null, resources, p);
        }
    }

    private static final Map<String, Rule> SERVICES = Map.of(
            "hourglass.v1.Admin", Rule.admin(),
            "hourglass.v1.Security", Rule.admin());
    private static final Map<String, Rule> RULES = Map.ofEntries(
            Map.entry("hourglass.v1.Security/WhoAmI", Rule.open()),
            Map.entry("grpc.reflection.v1.ServerReflection/ServerReflectionInfo", Rule.open()),
            Map.entry("grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo", Rule.open()),
            Map.entry("hourglass.v1.Broker/Publish", Rule.each(Permission.PUBLISH, AuthInterceptor::publishTopics)),
            Map.entry("hourglass.v1.Broker/PublishStream", Rule.each(Permission.PUBLISH, AuthInterceptor::publishTopics)),
            Map.entry("hourglass.v1.Broker/Shards", Rule.open()),
            Map.entry("hourglass.v1.Broker/Cancel", Rule.each(Permission.PUBLISH, m -> List.of(((CancelRequest) m).getTopic()))),
            Map.entry("hourglass.v1.Broker/Subscribe", Rule.each(Permission.CONSUME, m ->
                    ((SubscribeRequest) m).hasInit() ? List.of(((SubscribeRequest) m).getInit().getTopic()) : List.of())),
            Map.entry("hourglass.v1.Rooms/Session", Rule.each(Permission.ROOMS, m ->
                    ((SessionRequest) m).hasSubscribe() ? List.of(((SessionRequest) m).getSubscribe().getRoom()) : List.of())),
            Map.entry("hourglass.v1.Rooms/Send", Rule.each(Permission.ROOMS, m -> List.of(((RoomSendRequest) m).getRoom()))),
            Map.entry("hourglass.v1.Rooms/SendOutOfBand", Rule.each(Permission.ROOMS,
                    m -> List.of(((RoomSendRequest) m).getRoom()))),
            Map.entry("hourglass.v1.Rooms/Peek", Rule.each(Permission.ROOMS, m -> List.of(((RoomPeekRequest) m).getRoom()))),
            Map.entry("hourglass.v1.Rooms/State", Rule.each(Permission.ROOMS, m -> List.of(((RoomStateRequest) m).getRoom()))),
            Map.entry("hourglass.v1.Rooms/List", Rule.each(Permission.ROOMS, m -> List.of("*"))),
            Map.entry("hourglass.v1.Rooms/Metrics", Rule.each(Permission.ROOMS, m -> List.of("*"))),
            Map.entry("hourglass.v1.Rooms/Configure", Rule.each(Permission.ADMIN,
                    m -> List.of(((RoomConfigureRequest) m).getRoom()))));

    /**
     * Methods served without credentials: the standard health checks, by name (a method added to the
     * health service later is refused until it is listed here).
     */
    private static final Set<String> PROBES = Set.of("grpc.health.v1.Health/Check", "grpc.health.v1.Health/Watch");

    private final AccessControl access;
    private final SecurityCounters counters;

    public AuthInterceptor(AccessControl access, SecurityCounters counters) {
        this.access = access;
        this.counters = counters;
    }

    /** The topics of a publish request, each once; a batch is almost always of one topic. */
    private static List<String> publishTopics(Object m) {
        List<PublishMessage> messages = ((PublishRequest) m).getMessagesList();
        if (messages.isEmpty()) {
            return List.of();
        }
        String first = messages.get(0).getTopic();
        Set<String> others = null;
        for (int i = 1; i < messages.size(); i++) {
            String topic = messages.get(i).getTopic();
            if (!topic.equals(first)) {
                if (others == null) {
                    others = new LinkedHashSet<>();
                    others.add(first);
                }
                others.add(topic);
            }
        }
        return others == null ? List.of(first) : List.copyOf(others);
    }

    @Override
    public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
                                                        ServerCallHandler<Q, R> next) {
        String method = call.getMethodDescriptor().getFullMethodName();
        if (PROBES.contains(method)) {
            return next.startCall(call, headers);
        }
        String rpc = method.substring(method.lastIndexOf('.') + 1);
        String principal;
        try {
            principal = authenticate(call, headers);
        } catch (Refusal r) {
            counters.unauthenticated();
            Audit.refused("(none)", rpc, "-", r.getMessage());
            call.close(Status.UNAUTHENTICATED.withDescription(r.getMessage()), new Metadata());
            return new ServerCall.Listener<>() { };
        }
        Rule rule = RULES.get(method);
        if (rule == null) {
            rule = SERVICES.get(call.getMethodDescriptor().getServiceName());
        }
        if (rule == null) {
            return deny(call, principal, rpc, "no permission opens " + method, "-");
        }
        if (rule.atStart() != null && !access.allows(principal, rule.atStart(), "*")) {
            return deny(call, principal, rpc, deniedText(principal, rule.atStart(), "*"), "*");
        }
        ServerCall<Q, R> served = rule.atStart() == Permission.ADMIN ? new Audited<>(call, principal, rpc) : call;
        Context context = Context.current().withValue(Caller.PRINCIPAL, principal);
        ServerCall.Listener<Q> listener = Contexts.interceptCall(context, served, headers, next);
        if (rule.perMessage() == null) {
            return listener;
        }
        Rule checked = rule;
        return new ForwardingServerCallListener.SimpleForwardingServerCallListener<>(listener) {
            private boolean refused;

            @Override
            public void onMessage(Q message) {
                if (refused) {
                    return;
                }
                for (String resource : checked.resources().apply(message)) {
                    if (!access.allows(principal, checked.perMessage(), resource)) {
                        refused = true;
                        counters.denied();
                        String text = deniedText(principal, checked.perMessage(), resource);
                        Audit.refused(principal, rpc, HourglassException.excerpt(resource), text);
                        call.close(Status.PERMISSION_DENIED.withDescription(text), new Metadata());
                        return;
                    }
                }
                super.onMessage(message);
            }

            @Override
            public void onHalfClose() {
                if (!refused) {
                    super.onHalfClose();
                }
            }
        };
    }

    private <Q, R> ServerCall.Listener<Q> deny(ServerCall<Q, R> call, String principal, String rpc, String text,
                                               String resource) {
        counters.denied();
        Audit.refused(principal, rpc, resource, text);
        call.close(Status.PERMISSION_DENIED.withDescription(text), new Metadata());
        return new ServerCall.Listener<>() { };
    }

    private static String deniedText(String principal, Permission p, String resource) {
        return "principal " + principal + " lacks the " + p.wireName() + " permission on "
                + ("*".equals(resource) ? "*" : "'" + HourglassException.excerpt(resource) + "'");
    }

    private String authenticate(ServerCall<?, ?> call, Metadata headers) throws Refusal {
        String authorization = headers.get(AUTHORIZATION);
        if (authorization != null) {
            if (!authorization.regionMatches(true, 0, "Bearer ", 0, 7)) {
                throw new Refusal("the authorization metadata must be 'Bearer <token>'");
            }
            return access.principalOfToken(authorization.substring(7).trim())
                    .orElseThrow(() -> new Refusal("unknown or revoked token"));
        }
        Optional<String> fromCertificate = certificatePrincipal(call.getAttributes().get(Grpc.TRANSPORT_ATTR_SSL_SESSION));
        return fromCertificate.orElseThrow(() -> new Refusal(
                "no credentials: send the metadata 'authorization: Bearer <token>' or a client certificate"));
    }

    /** The CN of a verified client certificate's subject. */
    static Optional<String> certificatePrincipal(SSLSession session) {
        if (session == null) {
            return Optional.empty();
        }
        try {
            Certificate[] chain = session.getPeerCertificates();
            if (chain.length == 0 || !(chain[0] instanceof X509Certificate x509)) {
                return Optional.empty();
            }
            for (Rdn rdn : new LdapName(x509.getSubjectX500Principal().getName()).getRdns()) {
                if (rdn.getType().equalsIgnoreCase("CN")) {
                    return Optional.of(rdn.getValue().toString());
                }
            }
            return Optional.empty();
        } catch (SSLPeerUnverifiedException | InvalidNameException e) {
            return Optional.empty();
        }
    }

    /** An admin call, audited with its outcome when it closes. */
    private static final class Audited<Q, R> extends ForwardingServerCall.SimpleForwardingServerCall<Q, R> {
        private final String principal;
        private final String rpc;

        Audited(ServerCall<Q, R> call, String principal, String rpc) {
            super(call);
            this.principal = principal;
            this.rpc = rpc;
        }

        @Override
        public void close(Status status, Metadata trailers) {
            Audit.admin(principal, rpc, "*", status.isOk() ? "ok" : status.getCode() + ": " + status.getDescription());
            super.close(status, trailers);
        }
    }

    private static final class Refusal extends Exception {
        Refusal(String message) {
            super(message, null, false, false);
        }
    }
}
