package io.hourglass.raft;

import io.hourglass.core.proto.ClockReading;
import io.hourglass.core.proto.ClockRequest;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.apache.ratis.thirdparty.io.grpc.CallOptions;
import org.apache.ratis.thirdparty.io.grpc.ManagedChannel;
import org.apache.ratis.thirdparty.io.grpc.MethodDescriptor;
import org.apache.ratis.thirdparty.io.grpc.ServerServiceDefinition;
import org.apache.ratis.thirdparty.io.grpc.stub.ClientCalls;
import org.apache.ratis.thirdparty.io.grpc.stub.ServerCalls;
import org.apache.ratis.thirdparty.io.grpc.stub.StreamObserver;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Tells whether this node's wall clock is off the cluster's, and keeps a node whose clock is from
 * stamping time into the log.
 *
 * <p>Replicated time is the leader's clock: it stamps each entry, and due times, TTLs and the
 * dedup window all count from the stamps. A leader whose clock runs minutes ahead would deliver
 * messages minutes early and expire them early; one behind would hold them back. So every node
 * reads every other voter's clock once per {@link #INTERVAL} over the Raft port (the way NTP does:
 * the offset is the peer's reading minus the midpoint of the call, good to half its round trip),
 * and counts itself <em>skewed</em> while a majority of the voters see its clock off by more than
 * {@code raft.maxClockSkew} plus that error. One node alone cannot make the others look skewed:
 * they agree with each other. A skewed node refuses to stamp (its proposals, forwarded ones
 * included, fail with UNAVAILABLE and the client tries another server), holds no lease (so its
 * dispatcher, which judges what is due by this clock, delivers nothing), and, leading, hands its
 * leadership to a follower; it serves again once its clock is back within the bound. While a
 * majority cannot be read (one node of three down), no node calls itself skewed: it cannot know.
 *
 * <p>A clock can also jump (set by hand, a VM resumed) between two readings: each stamp first
 * compares the wall clock's progress with the monotonic clock's since the last look, and after a
 * step beyond the bound the node stamps nothing until the others' clocks have been read again,
 * which it does at once. So not even the entries of the next second carry a jumped clock.
 *
 * <p>A node that has just started has read nobody's clock yet, and a clock set wrong before the
 * start shows no jump. So a start counts as a jump: the node stamps nothing until the other
 * voters' clocks have been read (it asks at once; answers come within milliseconds). Before, a node
 * started two minutes ahead and made leader within its first second stamped entries two minutes
 * ahead, and since replicated time never goes backwards, every due time after them was two minutes
 * late (seen in the chaos run: zero-delay messages delivered after 37–111 s).
 *
 * <p>Threads: probes and verdicts on this watch's scheduler; {@link #refusal()} and the gauges
 * from any thread (volatile fields).
 */
final class ClockWatch implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ClockWatch.class);
    static final String SERVICE = "hourglass.replica.Clock";
    static final MethodDescriptor<ClockRequest, ClockReading> READ = MethodDescriptor.<ClockRequest, ClockReading>newBuilder()
            .setType(MethodDescriptor.MethodType.UNARY)
            .setFullMethodName(MethodDescriptor.generateFullMethodName(SERVICE, "Read"))
            .setRequestMarshaller(new ProtoMarshaller<>(ClockRequest.parser()))
            .setResponseMarshaller(new ProtoMarshaller<>(ClockReading.parser()))
            .build();
    /** How often the other voters' clocks are read. */
    static final Duration INTERVAL = Duration.ofSeconds(1);
    /** A reading older than this many intervals no longer counts. */
    private static final int FRESH_INTERVALS = 5;
    /** A slow answer is still a good reading (its error is half the round trip), so the deadline is loose. */
    private static final long CALL_DEADLINE_MS = 2_000;

    /** One reading of a peer: this node's clock minus the peer's, how wrong that may be, and when it was asked. */
    record Reading(long offsetMs, long errorMs, long atNanos) {
    }

    private final String nodeId;
    private final Clock clock;
    private final long toleranceMs;
    private final Supplier<List<String>> otherVoters;
    private final Runnable whileSkewed;
    private final PeerChannels channels;
    private final Map<String, Reading> readings = new ConcurrentHashMap<>();
    private final ScheduledExecutorService scheduler;
    private volatile String refusal;
    private volatile long offsetMs;
    /** Guarded by this: the wall and monotonic clocks at the last look, to see the wall clock jump. */
    private long lastWallMs;
    private long lastMonoNanos;
    /** Set when the wall clock jumped: no stamping until readings taken after {@link #jumpedAtNanos} judge it. */
    private volatile String jumpRefusal;
    private volatile long jumpedAtNanos;

    /**
     * @param tolerance {@code raft.maxClockSkew}; zero turns the watch off
     * @param otherVoters the ids of the voters other than this node
     * @param channels to the other nodes' Raft ports
     * @param whileSkewed run after each verdict that finds this node skewed (the node hands its leadership over)
     */
    ClockWatch(String nodeId, Clock clock, Duration tolerance, Supplier<List<String>> otherVoters,
               PeerChannels channels, Runnable whileSkewed) {
        this.nodeId = nodeId;
        this.clock = clock;
        this.toleranceMs = tolerance.toMillis();
        this.otherVoters = otherVoters;
        this.channels = channels;
        this.whileSkewed = whileSkewed;
        this.scheduler = Daemons.scheduler(nodeId + "-clock-watch");
        if (toleranceMs > 0) {
            jumpedAtNanos = System.nanoTime();
            jumpRefusal = nodeId + " has not read the other nodes' clocks since it started: it stamps no entries "
                    + "until it has; try another server";
        }
    }

    /** The clock this watch compares with the others'. */
    Clock clock() {
        return clock;
    }

    /** The service that answers the other nodes' readings of this node's clock. */
    ServerServiceDefinition definition() {
        return ServerServiceDefinition.builder(SERVICE)
                .addMethod(READ, ServerCalls.asyncUnaryCall((ClockRequest request, StreamObserver<ClockReading> out) -> {
                    out.onNext(ClockReading.newBuilder().setNowMs(clock.millis()).build());
                    out.onCompleted();
                }))
                .build();
    }

    void start() {
        if (toleranceMs > 0) {
            scheduler.scheduleWithFixedDelay(this::round, 0, INTERVAL.toMillis(), TimeUnit.MILLISECONDS);
        }
    }

    /**
     * Why this node may not stamp entries now, or null: its clock is off the others', or it has
     * just jumped (stepped by more than the bound against the monotonic clock since the last look)
     * and the others' clocks have not been read since. Cheap: called for every entry a leader stamps.
     */
    String refusal() {
        if (toleranceMs > 0) {
            lookForJump();
        }
        String jumped = jumpRefusal;
        return jumped != null ? jumped : refusal;
    }

    private void lookForJump() {
        long wall = clock.millis();
        long mono = System.nanoTime();
        long stepMs;
        synchronized (this) {
            stepMs = lastMonoNanos == 0 ? 0 : (wall - lastWallMs) - TimeUnit.NANOSECONDS.toMillis(mono - lastMonoNanos);
            lastWallMs = wall;
            lastMonoNanos = mono;
        }
        if (Math.abs(stepMs) > toleranceMs) {
            jumpedAtNanos = mono;
            jumpRefusal = nodeId + "'s clock jumped by " + stepMs + " ms: it stamps no entries until it has read the "
                    + "other nodes' clocks again; try another server";
            LOG.warn("{}: the wall clock jumped by {} ms; stamping waits for fresh readings of the other voters' clocks",
                    nodeId, stepMs);
            try {
                scheduler.execute(this::round);
            } catch (java.util.concurrent.RejectedExecutionException closed) {
                // closing
            }
        }
    }

    /** The median of this node's clock minus each other voter's, from the fresh readings (0 without any). */
    long offsetMs() {
        return offsetMs;
    }

    private void round() {
        try {
            lookForJump();
            verdict(System.nanoTime());
            for (String peer : otherVoters.get()) {
                read(peer);
            }
            if (jumpRefusal != null && retrying.compareAndSet(false, true)) {
                // Not judged yet (just started, or jumped): ask again soon rather than in a second,
                // since this node stamps nothing meanwhile. Answers judge it as they come.
                scheduler.schedule(() -> {
                    retrying.set(false);
                    round();
                }, UNJUDGED_RETRY_MS, TimeUnit.MILLISECONDS);
            }
        } catch (RuntimeException e) {
            LOG.warn("{}: clock watch round failed: {}", nodeId, e.toString());
        }
    }

    /** How soon an unjudged node (just started, or its clock jumped) reads the others' clocks again. */
    private static final long UNJUDGED_RETRY_MS = 100;
    /** Set while a quick retry round is scheduled: one at a time. */
    private final java.util.concurrent.atomic.AtomicBoolean retrying = new java.util.concurrent.atomic.AtomicBoolean();

    private void read(String peer) {
        ManagedChannel channel = channels.of(peer);
        if (channel == null) {
            return;
        }
        long sentMs = clock.millis();
        long sentNanos = System.nanoTime();
        ClientCalls.asyncUnaryCall(channel.newCall(READ, CallOptions.DEFAULT.withDeadlineAfter(CALL_DEADLINE_MS, TimeUnit.MILLISECONDS)),
                ClockRequest.newBuilder().setRequester(nodeId).build(), new StreamObserver<>() {
                    @Override
                    public void onNext(ClockReading reading) {
                        long now = System.nanoTime();
                        long roundTripMs = TimeUnit.NANOSECONDS.toMillis(now - sentNanos);
                        long midpointMs = sentMs + roundTripMs / 2;
                        // Dated by when it was asked: a call under way across a jump read the old clock.
                        readings.put(peer, new Reading(midpointMs - reading.getNowMs(), roundTripMs / 2 + 1, sentNanos));
                        if (jumpRefusal != null) {
                            try {
                                scheduler.execute(() -> verdict(System.nanoTime())); // judge now, not a round later
                            } catch (java.util.concurrent.RejectedExecutionException closed) {
                                // closing
                            }
                        }
                    }

                    @Override
                    public void onError(Throwable t) {
                        // unreachable now: its last reading ages out
                    }

                    @Override
                    public void onCompleted() {
                    }
                });
    }

    /** Judges the fresh readings: skewed while a majority of the voters see this clock off by more than the bound. */
    void verdict(long nowNanos) {
        List<String> others = otherVoters.get();
        int majority = (others.size() + 1) / 2 + 1;
        List<Long> offsets = new ArrayList<>();
        int off = 0;
        int withinSinceJump = 0;
        long jumped = jumpedAtNanos;
        for (String peer : others) {
            Reading r = readings.get(peer);
            if (r == null || nowNanos - r.atNanos() > FRESH_INTERVALS * INTERVAL.toNanos()) {
                continue;
            }
            boolean since = r.atNanos() - jumped > 0;
            if (!since && jumpRefusal != null) {
                continue; // read before the jump: says nothing of the clock now
            }
            offsets.add(r.offsetMs());
            if (Math.abs(r.offsetMs()) > toleranceMs + r.errorMs()) {
                off++;
            } else if (since) {
                withinSinceJump++;
            }
        }
        offsets.sort(Long::compare);
        long median = offsets.isEmpty() ? 0 : offsets.get(offsets.size() / 2);
        offsetMs = median;
        // A verdict needs evidence either way: off for a majority of the voters, or within the
        // bound for a majority counting this node. Too few readings (calls timing out under load)
        // keep the last verdict rather than flapping.
        int within = offsets.size() - off;
        boolean skewed = off >= majority || (refusal != null && within + 1 < majority);
        // The jump (or the start) is judged once readings asked since then decide either way: a
        // majority sees this clock off (skewed), or a majority counting this node sees it within.
        boolean judgedJump = jumpRefusal != null && (skewed || withinSinceJump + 1 >= majority);
        if (skewed && refusal == null) {
            refusal = nodeId + "'s clock is " + median + " ms off the other nodes' (more than raft.maxClockSkew "
                    + toleranceMs + " ms): it stamps no entries until it is set right (NTP); try another server";
            LOG.error("{}: this node's clock is {} ms off the others' (beyond raft.maxClockSkew {} ms for {} of the {} "
                    + "other voters): refusing to stamp entries, and handing leadership over if leading, until it is "
                    + "set right", nodeId, median, toleranceMs, off, others.size());
        } else if (!skewed && refusal != null) {
            refusal = null;
            LOG.info("{}: this node's clock is within raft.maxClockSkew of the others again (offset {} ms)", nodeId, median);
        }
        if (judgedJump) {
            jumpRefusal = null; // judged on readings asked since the jump, the skew verdict above in place first
            LOG.info("{}: the other voters' clocks read since the start or the last jump: offset {} ms", nodeId, median);
        }
        if (skewed) {
            whileSkewed.run();
        }
    }

    @Override
    public void close() {
        scheduler.shutdownNow();
    }
}
