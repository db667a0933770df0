package io.hourglass.server.console;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.MessageOrBuilder;
import com.google.protobuf.util.JsonFormat;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.AbstractStub;
import io.grpc.stub.MetadataUtils;
import io.hourglass.api.v1.AdminGrpc;
import io.hourglass.api.v1.ClusterStatusRequest;
import io.hourglass.api.v1.DeleteGroupRequest;
import io.hourglass.api.v1.DeleteMessageRequest;
import io.hourglass.api.v1.ListConsumersRequest;
import io.hourglass.api.v1.ListGroupsRequest;
import io.hourglass.api.v1.ListTopicsRequest;
import io.hourglass.api.v1.PeekTopicRequest;
import io.hourglass.api.v1.PurgeTopicRequest;
import io.hourglass.api.v1.RoomListRequest;
import io.hourglass.api.v1.RoomPeekRequest;
import io.hourglass.api.v1.RoomStateRequest;
import io.hourglass.api.v1.RoomsGrpc;
import io.hourglass.api.v1.SecurityGrpc;
import io.hourglass.api.v1.TopicScheduleRequest;
import io.hourglass.api.v1.TopicStatsRequest;
import io.hourglass.api.v1.TransferLeaderRequest;
import io.hourglass.api.v1.WhoAmIRequest;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The JSON the web console reads and the actions it takes ({@code /api/v1/…} on the HTTP port,
 * documented in {@code docs/console.md}). Every call is made on this node's own gRPC client port
 * with the caller's bearer token, so the console can do exactly what that token may do through
 * the API — the same authentication, permissions and audit, nothing of its own. Answers are the
 * proto3 JSON mapping of the gRPC responses (64-bit integers as strings), or
 * {@code {"error": CODE, "message": …}} with the HTTP status that matches the gRPC one.
 *
 * <p>Threads: the HTTP server's pool; each request blocks on at most a handful of calls, each
 * with {@link #CALL_DEADLINE_MS}.
 */
public final class ConsoleApi implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ConsoleApi.class);
    /** Deadline of each gRPC call a request makes. */
    static final long CALL_DEADLINE_MS = 10_000;
    /** The most topics or rooms one page lists. */
    static final int MAX_PAGE = 1_000;
    /** The most messages the next-messages peek shows. */
    static final int MAX_PEEK = 100;
    private static final Metadata.Key<String> AUTHORIZATION =
            Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);
    private static final JsonFormat.Printer JSON = JsonFormat.printer().omittingInsignificantWhitespace()
            .alwaysPrintFieldsWithNoPresence();

    /** An answer: HTTP status and JSON body. */
    public record Reply(int status, String json) {
    }

    /** A request the console sent wrong: 400 with its message. */
    private static final class BadRequest extends RuntimeException {
        BadRequest(String message) {
            super(message);
        }
    }

    private final ManagedChannel self;
    private final String nodeId;
    private final int shards;

    /**
     * @param self a channel to this node's client port with its TLS and no token of its own
     * @param shards the cluster's event shard count
     */
    public ConsoleApi(ManagedChannel self, String nodeId, int shards) {
        this.self = self;
        this.nodeId = nodeId;
        this.shards = shards;
    }

    /**
     * Answers one call.
     *
     * @param method the HTTP method
     * @param path the path below {@code /api/v1}, e.g. {@code /topics}
     * @param query the query parameters (first value of each)
     * @param bearer the caller's token, or null
     */
    public Reply handle(String method, String path, Map<String, String> query, String bearer) {
        Calls calls = new Calls(bearer);
        try {
            boolean post = "POST".equals(method);
            if (!post && !"GET".equals(method)) {
                return error(405, "METHOD_NOT_ALLOWED", "use GET to read and POST for actions");
            }
            String json = post ? action(path, query, calls) : read(path, query, calls);
            return json == null ? error(404, "NOT_FOUND", "no such console call: see docs/console.md")
                    : new Reply(200, json);
        } catch (BadRequest e) {
            return error(400, "INVALID_ARGUMENT", e.getMessage());
        } catch (StatusRuntimeException e) {
            return fromStatus(e.getStatus());
        } catch (RuntimeException e) {
            LOG.warn("console call {} {} failed", method, path, e);
            return error(500, "INTERNAL", "the console call failed: " + e.getClass().getSimpleName());
        }
    }

    private String read(String path, Map<String, String> q, Calls calls) {
        return switch (path) {
            case "/info" -> {
                var me = calls.security().whoAmI(WhoAmIRequest.getDefaultInstance());
                yield "{\"node\":" + quote(nodeId) + ",\"shards\":" + shards + ",\"securityEnabled\":"
                        + me.getSecurityEnabled() + ",\"principal\":" + quote(me.getPrincipal()) + "}";
            }
            case "/cluster" -> json(calls.admin().clusterStatus(ClusterStatusRequest.getDefaultInstance()));
            case "/topics" -> json(calls.admin().listTopics(ListTopicsRequest.newBuilder()
                    .setOffset(number(q, "offset", 0, Integer.MAX_VALUE, 0))
                    .setLimit(number(q, "limit", 1, MAX_PAGE, 50)).setPrefix(q.getOrDefault("prefix", "")).build()));
            case "/topic" -> topic(required(q, "name"), q, calls);
            case "/rooms" -> json(calls.rooms().list(RoomListRequest.newBuilder()
                    .setOffset(number(q, "offset", 0, 9_000, 0)).setLimit(number(q, "limit", 1, MAX_PAGE, 50)).build()));
            case "/room" -> {
                String room = required(q, "name");
                yield object(Map.of(
                        "state", json(calls.rooms().state(RoomStateRequest.newBuilder().setRoom(room).build())),
                        "pending", json(calls.rooms().peek(RoomPeekRequest.newBuilder().setRoom(room)
                                .setLimit(number(q, "peek", 1, MAX_PEEK, 20)).build()))));
            }
            default -> null;
        };
    }

    /** A topic's page: figures, groups, consumers, the schedule timeline and the next messages. */
    private String topic(String name, Map<String, String> q, Calls calls) {
        AdminGrpc.AdminBlockingStub admin = calls.admin();
        long bucketMs = number(q, "bucketMs", 1_000, 86_400_000, 60_000);
        int buckets = number(q, "buckets", 1, 1_000, 60);
        long from = System.currentTimeMillis() / bucketMs * bucketMs;
        return object(Map.of(
                "stats", json(admin.topicStats(TopicStatsRequest.newBuilder().setTopic(name).build())),
                "groups", json(admin.listGroups(ListGroupsRequest.newBuilder().setTopic(name).build())),
                "consumers", json(admin.listConsumers(ListConsumersRequest.newBuilder().setTopic(name).build())),
                "schedule", json(admin.topicSchedule(TopicScheduleRequest.newBuilder().setTopic(name)
                        .setBucketMs(bucketMs).setFromMs(from).setUntilMs(from + buckets * bucketMs).build())),
                "next", json(admin.peekTopic(PeekTopicRequest.newBuilder().setTopic(name)
                        .setLimit(number(q, "peek", 1, MAX_PEEK, 20)).build()))));
    }

    private String action(String path, Map<String, String> q, Calls calls) {
        AdminGrpc.AdminBlockingStub admin = calls.admin();
        return switch (path) {
            case "/topic/purge" -> json(admin.purgeTopic(PurgeTopicRequest.newBuilder()
                    .setTopic(required(q, "name")).build()));
            case "/topic/cancel" -> json(admin.deleteMessage(DeleteMessageRequest.newBuilder()
                    .setTopic(required(q, "name")).setId(required(q, "id")).build()));
            case "/group/delete" -> json(admin.deleteGroup(DeleteGroupRequest.newBuilder()
                    .setTopic(required(q, "topic")).setGroup(required(q, "group")).build()));
            case "/cluster/transfer" -> json(admin.transferLeader(TransferLeaderRequest.newBuilder()
                    .setId(required(q, "to")).build()));
            default -> null;
        };
    }

    /** Stubs carrying the caller's token (none when it sent none), each call with its deadline. */
    private final class Calls {
        private final String bearer;

        Calls(String bearer) {
            this.bearer = bearer;
        }

        AdminGrpc.AdminBlockingStub admin() {
            return prepare(AdminGrpc.newBlockingStub(self));
        }

        RoomsGrpc.RoomsBlockingStub rooms() {
            return prepare(RoomsGrpc.newBlockingStub(self));
        }

        SecurityGrpc.SecurityBlockingStub security() {
            return prepare(SecurityGrpc.newBlockingStub(self));
        }

        private <S extends AbstractStub<S>> S prepare(S stub) {
            S timed = stub.withDeadlineAfter(CALL_DEADLINE_MS, TimeUnit.MILLISECONDS);
            if (bearer == null) {
                return timed;
            }
            Metadata headers = new Metadata();
            headers.put(AUTHORIZATION, "Bearer " + bearer);
            return timed.withInterceptors(MetadataUtils.newAttachHeadersInterceptor(headers));
        }
    }

    private static String required(Map<String, String> q, String name) {
        String v = q.get(name);
        if (v == null || v.isEmpty()) {
            throw new BadRequest("the query parameter '" + name + "' is required");
        }
        return v;
    }

    private static int number(Map<String, String> q, String name, int min, int max, int otherwise) {
        String v = q.get(name);
        if (v == null || v.isEmpty()) {
            return otherwise;
        }
        try {
            int n = Integer.parseInt(v);
            if (n < min || n > max) {
                throw new BadRequest("'" + name + "' must be between " + min + " and " + max + ", got " + n);
            }
            return n;
        } catch (NumberFormatException e) {
            throw new BadRequest("'" + name + "' must be a whole number, got '" + excerpt(v) + "'");
        }
    }

    private static Reply fromStatus(Status status) {
        int http = switch (status.getCode()) {
            case INVALID_ARGUMENT, OUT_OF_RANGE -> 400;
            case UNAUTHENTICATED -> 401;
            case PERMISSION_DENIED -> 403;
            case NOT_FOUND -> 404;
            case ALREADY_EXISTS, FAILED_PRECONDITION, ABORTED -> 409;
            case RESOURCE_EXHAUSTED -> 429;
            case UNAVAILABLE -> 503;
            case DEADLINE_EXCEEDED -> 504;
            default -> 500;
        };
        return error(http, status.getCode().name(), status.getDescription() == null ? status.getCode().name()
                : status.getDescription());
    }

    private static Reply error(int http, String code, String message) {
        return new Reply(http, "{\"error\":" + quote(code) + ",\"message\":" + quote(message) + "}");
    }

    private static String json(MessageOrBuilder message) {
        try {
            return JSON.print(message);
        } catch (InvalidProtocolBufferException e) {
            throw new IllegalStateException("cannot print " + message.getClass().getSimpleName(), e);
        }
    }

    /** A JSON object of already-printed values, keys in sorted order. */
    private static String object(Map<String, String> members) {
        StringBuilder b = new StringBuilder("{");
        new java.util.TreeMap<>(members).forEach((k, v) -> {
            if (b.length() > 1) {
                b.append(',');
            }
            b.append(quote(k)).append(':').append(v);
        });
        return b.append('}').toString();
    }

    static String quote(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                case '<' -> b.append("\\u003c"); // never closes a script element it may end up in
                default -> {
                    if (c < 0x20) {
                        b.append(String.format("\\u%04x", (int) c));
                    } else {
                        b.append(c);
                    }
                }
            }
        }
        return b.append('"').toString();
    }

    private static String excerpt(String s) {
        return s.length() <= 40 ? s : s.substring(0, 40) + "…";
    }

    @Override
    public void close() {
        self.shutdownNow();
    }
}
