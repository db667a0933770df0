package io.hourglass.client;

import io.hourglass.api.v1.BrokerGrpc;
import io.hourglass.api.v1.CancelRequest;
import io.hourglass.api.v1.CancelResponse;
import io.hourglass.api.v1.PublishMessage;
import io.hourglass.api.v1.RoomsGrpc;
import io.hourglass.api.v1.PublishRequest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Hourglass Java client: publishes messages and subscribes to topics; {@link #rooms()}
 * sends to and joins lock-step rooms.
 *
 * <p>One channel per configured server; requests stick to one server and move to the next when
 * it answers {@code UNAVAILABLE} (not the leader, no leader yet, down). Publishes are retried on
 * {@code UNAVAILABLE} with backoff until the {@link RetryPolicy} deadline (30 s by default),
 * never on an invalid request. Subscriptions reconnect on their own (see {@link Subscription}).
 *
 * <p>Thread-safe; meant to be shared. Synchronous methods throw, and asynchronous ones complete
 * their futures with, {@link HourglassClientException} subtypes: {@link InvalidRequestException},
 * {@link UnavailableException}, or the base type for anything else. Futures complete on gRPC or
 * client threads: do not block in their dependent stages. {@link #close()} flushes pending
 * publishes (waiting up to the close timeout), closes subscriptions and room sessions, then the
 * channels.
 */
public final class HourglassClient implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(HourglassClient.class);
    /** {@link Builder#stallTimeout}'s default. */
    public static final Duration DEFAULT_STALL_TIMEOUT = Duration.ofSeconds(1);

    private final List<ServerAddress> servers;
    private final Duration closeTimeout;
    private final ServerPool pool;
    private final ScheduledThreadPoolExecutor timer;
    private final StallWatch stallWatch;
    private final PublishCaller caller;
    private final PublishBatcher batcher;
    private final RoomClient rooms;
    private final UnaryCaller<BrokerGrpc.BrokerStub> cancels;
    private final AdminClient admin;
    private final Set<Subscription> subscriptions = ConcurrentHashMap.newKeySet();
    private final AtomicInteger subscriptionCount = new AtomicInteger();
    private final AtomicBoolean closed = new AtomicBoolean();

    private HourglassClient(Builder b) {
        this.servers = List.copyOf(b.servers);
        this.closeTimeout = b.closeTimeout;
        this.timer = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "hourglass-client-timer");
            t.setDaemon(true);
            return t;
        });
        this.timer.setRemoveOnCancelPolicy(true);
        this.pool = new ServerPool(servers, b.channelFactory);
        this.stallWatch = new StallWatch(pool, b.stallTimeout, timer);
        pool.stallWatch(stallWatch);
        this.caller = new PublishCaller(pool, b.retryPolicy, b.publishConfig.callTimeout(), timer, stallWatch);
        this.batcher = new PublishBatcher(b.publishConfig, caller::call, timer, caller.shardMap()::split);
        this.rooms = new RoomClient(pool,
                new UnaryCaller<>(pool, RoomsGrpc::newStub, b.retryPolicy, b.publishConfig.callTimeout(), timer), timer,
                caller.shardMap());
        this.cancels = new UnaryCaller<>(pool, BrokerGrpc::newStub, b.retryPolicy, b.publishConfig.callTimeout(), timer);
        this.admin = new AdminClient(pool, b.retryPolicy, AdminClient.DEFAULT_CALL_TIMEOUT);
    }

    public static Builder builder() {
        return new Builder();
    }

    /** The servers this client talks to, in failover order. */
    public List<ServerAddress> servers() {
        return servers;
    }

    /**
     * Publishes one message in its own request and waits for the broker to commit it.
     *
     * @throws InvalidRequestException if the server refused the message
     * @throws UnavailableException if no server committed it before the retry deadline
     */
    public PublishResult publish(Message message) {
        return await(publishAll(List.of(message))).get(0);
    }

    /**
     * Queues a message for the next batch (see {@link PublishConfig}); never blocks. Messages
     * published concurrently share requests, so this is the fast path for many messages.
     */
    public CompletableFuture<PublishResult> publishAsync(Message message) {
        Objects.requireNonNull(message, "message");
        return batcher.add(ProtoCodec.toProto(message));
    }

    /**
     * Publishes messages in as few requests as the batch limits allow (each request one Raft log
     * entry, committed all or nothing) and waits for all of them.
     *
     * @return results in the order of {@code messages}
     * @throws HourglassClientException as {@link #publish}; some requests may have committed
     */
    public List<PublishResult> publishBatch(List<Message> messages) {
        return await(publishAll(messages));
    }

    /**
     * Cancels a pending message by the id its publish answered; returns once the cancel is committed
     * (asked of the leader, followed there from any server). Before any copy went out nobody receives
     * the message; after one had, the answer is {@link CancelResult#ALREADY_DELIVERED} and the copy
     * is not redelivered.
     *
     * @throws InvalidRequestException with status NOT_FOUND when the topic holds no such pending
     *     message (never published, acknowledged by every group, expired or cancelled), or
     *     INVALID_ARGUMENT for a malformed id
     * @throws UnavailableException if no leader answered before the retry deadline
     */
    public CancelResult cancel(String topic, String id) {
        return cancel(CancelRequest.newBuilder().setTopic(Objects.requireNonNull(topic, "topic"))
                .setId(Objects.requireNonNull(id, "id")).build(), "cancel of " + id + " in topic '" + topic + "'");
    }

    /** {@link #cancel(String, String)} of the topic's pending message with schedule key {@code key}. */
    public CancelResult cancelKey(String topic, String key) {
        return cancel(CancelRequest.newBuilder().setTopic(Objects.requireNonNull(topic, "topic"))
                .setKey(Objects.requireNonNull(key, "key")).build(), "cancel of key '" + key + "' in topic '" + topic + "'");
    }

    private CancelResult cancel(CancelRequest request, String what) {
        if (closed.get()) {
            throw new HourglassClientException("client is closed");
        }
        CancelResponse response = await(cancels.call(what, request, BrokerGrpc.BrokerStub::cancel));
        return response.getOutcome() == CancelResponse.Outcome.ALREADY_DELIVERED
                ? CancelResult.ALREADY_DELIVERED : CancelResult.CANCELLED;
    }

    /** Sends the open batch of {@link #publishAsync} now instead of after the linger. */
    public void flush() {
        batcher.flush();
    }

    /** Subscribes with {@link SubscribeOptions#DEFAULT}. */
    public Subscription subscribe(String topic, String group, DeliveryHandler handler) {
        return subscribe(topic, group, SubscribeOptions.DEFAULT, handler);
    }

    /**
     * Starts consuming {@code topic}. Returns at once; the stream connects in the background
     * and failures show in {@link Subscription#terminated()}.
     *
     * @param group the consumer group (competing consumers), or empty / null for a universal
     *     consumer that gets every message
     * @throws IllegalArgumentException if the topic is blank
     * @throws HourglassClientException if the client is closed
     */
    public Subscription subscribe(String topic, String group, SubscribeOptions options,
                                  DeliveryHandler handler) {
        if (topic == null || topic.isBlank()) {
            throw new IllegalArgumentException("topic must not be empty");
        }
        Objects.requireNonNull(options, "options");
        Objects.requireNonNull(handler, "handler");
        if (closed.get()) {
            throw new HourglassClientException("client is closed");
        }
        String threadName = "hourglass-consumer-" + topic + "-" + subscriptionCount.incrementAndGet();
        Subscription subscription = new Subscription(topic, group == null ? "" : group, handler,
                options, pool, timer, stallWatch, threadName, subscriptions::remove);
        subscriptions.add(subscription);
        subscription.start();
        return subscription;
    }

    /**
     * Lock-step rooms: send, peek, state, metrics, configure, and sessions that join rooms. Shares
     * this client's servers, retry policy and call timeout; closed with it.
     */
    public RoomClient rooms() {
        return rooms;
    }

    /**
     * Cluster administration (status, membership, snapshots, topics, groups, consumers) over the
     * {@code Admin} service. Shares this client's servers and retry policy; closed with it.
     */
    public AdminClient admin() {
        return admin;
    }

    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        for (Subscription subscription : new ArrayList<>(subscriptions)) {
            subscription.close();
        }
        rooms.close();
        cancels.close();
        cancels.failPending(new HourglassClientException("client is closed"));
        admin.close();
        try {
            batcher.close().get(closeTimeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (TimeoutException | ExecutionException e) {
            LOG.warn("pending publishes not finished within {} ms; failing them", closeTimeout.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        HourglassClientException closedException = new HourglassClientException("client is closed");
        caller.close();
        caller.failPending(closedException);
        batcher.failUnsettled(closedException);
        stallWatch.close();
        timer.shutdownNow();
        pool.shutdown(Duration.ofSeconds(1));
    }

    private CompletableFuture<List<PublishResult>> publishAll(List<Message> messages) {
        List<PublishMessage> protos = new ArrayList<>(messages.size());
        for (Message message : messages) {
            protos.add(ProtoCodec.toProto(Objects.requireNonNull(message, "message")));
        }
        return batcher.addAll(protos);
    }

    private static <T> T await(CompletableFuture<T> future) {
        try {
            return future.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new HourglassClientException("interrupted while waiting for the server", e);
        } catch (ExecutionException e) {
            Throwable cause = PublishBatcher.unwrap(e.getCause());
            if (cause instanceof HourglassClientException h) {
                throw h;
            }
            throw new HourglassClientException(String.valueOf(cause.getMessage()), cause);
        }
    }

    /** Configures a {@link HourglassClient}; not thread-safe. */
    public static final class Builder {
        private List<ServerAddress> servers =
                List.of(new ServerAddress("localhost", ServerAddress.DEFAULT_PORT));
        private ChannelFactory channelFactory = ChannelFactory.plaintext();
        private PublishConfig publishConfig = PublishConfig.DEFAULT;
        private RetryPolicy retryPolicy = RetryPolicy.DEFAULT;
        private Duration closeTimeout = Duration.ofSeconds(5);
        private Duration stallTimeout = DEFAULT_STALL_TIMEOUT;

        private Builder() {
        }

        /**
         * The servers, each {@code host:port} (default {@code localhost:7070}).
         *
         * @throws IllegalArgumentException if the list is empty or an entry is not host:port
         */
        public Builder servers(List<String> hostPorts) {
            if (hostPorts.isEmpty()) {
                throw new IllegalArgumentException("at least one server is required");
            }
            this.servers = hostPorts.stream().map(ServerAddress::parse).toList();
            return this;
        }

        public Builder servers(String... hostPorts) {
            return servers(List.of(hostPorts));
        }

        /**
         * TLS, client certificate and bearer token for every channel, reconnects included (default:
         * {@link ClientCredentials#NONE}, plain text); replaces any {@link #channelFactory}.
         */
        public Builder credentials(ClientCredentials value) {
            this.channelFactory = ChannelFactory.secured(Objects.requireNonNull(value, "credentials"));
            return this;
        }

        /** How channels are opened (default: plaintext TCP); tests pass in-process channels. */
        public Builder channelFactory(ChannelFactory value) {
            this.channelFactory = Objects.requireNonNull(value, "channelFactory");
            return this;
        }

        public Builder publishConfig(PublishConfig value) {
            this.publishConfig = Objects.requireNonNull(value, "publishConfig");
            return this;
        }

        public Builder maxBatchMessages(int value) {
            PublishConfig c = publishConfig;
            return publishConfig(new PublishConfig(value, c.maxBatchBytes(), c.linger(),
                    c.maxInFlightBatches(), c.callTimeout()));
        }

        public Builder maxBatchBytes(int value) {
            PublishConfig c = publishConfig;
            return publishConfig(new PublishConfig(c.maxBatchMessages(), value, c.linger(),
                    c.maxInFlightBatches(), c.callTimeout()));
        }

        public Builder linger(Duration value) {
            PublishConfig c = publishConfig;
            return publishConfig(new PublishConfig(c.maxBatchMessages(), c.maxBatchBytes(), value,
                    c.maxInFlightBatches(), c.callTimeout()));
        }

        public Builder maxInFlightBatches(int value) {
            PublishConfig c = publishConfig;
            return publishConfig(new PublishConfig(c.maxBatchMessages(), c.maxBatchBytes(),
                    c.linger(), value, c.callTimeout()));
        }

        public Builder callTimeout(Duration value) {
            PublishConfig c = publishConfig;
            return publishConfig(new PublishConfig(c.maxBatchMessages(), c.maxBatchBytes(),
                    c.linger(), c.maxInFlightBatches(), value));
        }

        public Builder retryPolicy(RetryPolicy value) {
            this.retryPolicy = Objects.requireNonNull(value, "retryPolicy");
            return this;
        }

        /** Shorthand for {@code retryPolicy(retryPolicy.withDeadline(value))}. */
        public Builder retryDeadline(Duration value) {
            return retryPolicy(retryPolicy.withDeadline(value));
        }

        /** How long {@link HourglassClient#close()} waits for pending publishes (default 5 s). */
        public Builder closeTimeout(Duration value) {
            if (value == null || value.isNegative()) {
                throw new IllegalArgumentException("closeTimeout must not be negative: " + value);
            }
            this.closeTimeout = value;
            return this;
        }

        /**
         * How long a server may leave a liveness question unanswered while a call waits on it
         * before the call moves to another server (default 1 s; zero: never, calls wait out their
         * own deadlines). It catches a server whose process is paused or frozen with its
         * connections open; a server that answers but is slow to commit is not affected.
         */
        public Builder stallTimeout(Duration value) {
            if (value == null || value.isNegative()) {
                throw new IllegalArgumentException("stallTimeout must not be negative: " + value);
            }
            this.stallTimeout = value;
            return this;
        }

        public HourglassClient build() {
            return new HourglassClient(this);
        }
    }
}
