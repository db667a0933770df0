package io.hourglass.server;

import io.hourglass.core.delivery.DeliveryEngine;
import io.hourglass.core.delivery.DeliveryMetrics;
import io.hourglass.core.proto.NewMessage;
import io.hourglass.core.rooms.RoomCounters;
import io.hourglass.core.rooms.RoomEngine;
import io.hourglass.raft.RaftCounters;
import io.hourglass.raft.RaftNode;
import io.hourglass.server.grpc.RoomsService;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.jvm.ClassLoaderMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.core.instrument.binder.system.UptimeMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.ToDoubleFunction;

/**
 * The node's metrics in a Micrometer Prometheus registry, scraped on {@code /metrics}. Names get
 * the {@code hourglass_} prefix; counters end in {@code _total}, timers are in seconds. The
 * delivery pipeline's counters live in the core as lock-free adders and are read at scrape time;
 * Raft figures are read from the Ratis division at scrape time too.
 */
public final class NodeMetrics implements AutoCloseable {
    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    private final JvmGcMetrics gc = new JvmGcMetrics();
    private final LongAdder publishedAll = new LongAdder();
    private final Timer publishLatency;
    private final Timer proposeLatency;
    /** Per-topic meters, looked up once per topic instead of built on every message (hot path). */
    private final java.util.Map<String, Counter> published = new java.util.concurrent.ConcurrentHashMap<>();
    private final java.util.Map<String, Timer[]> deliveryTimers = new java.util.concurrent.ConcurrentHashMap<>();
    /** Subscribe frames that carried deliveries, one or several (with dispatched: messages per frame). */
    private final LongAdder deliveryFrames = new LongAdder();

    public NodeMetrics() {
        new JvmMemoryMetrics().bindTo(registry);
        gc.bindTo(registry);
        new JvmThreadMetrics().bindTo(registry);
        new ClassLoaderMetrics().bindTo(registry);
        new ProcessorMetrics().bindTo(registry);
        new UptimeMetrics().bindTo(registry);
        publishLatency = Timer.builder("hourglass.publish.latency").description("Publish request to commit")
                .publishPercentiles(0.5, 0.99).register(registry);
        proposeLatency = Timer.builder("hourglass.raft.propose.latency").description("Raft proposal to apply on this node")
                .publishPercentiles(0.5, 0.99).register(registry);
        FunctionCounter.builder("hourglass.delivery.frames", deliveryFrames, LongAdder::doubleValue)
                .description("Subscribe frames written that carried deliveries: one, or several ready together").register(registry);
    }

    /** One Subscribe frame carrying deliveries was written. */
    public void recordDeliveryFrame() {
        deliveryFrames.increment();
    }

    void bindPublishCoalescer(io.hourglass.core.command.PublishCoalescer publishes) {
        bindPublishCoalescer(publishes, null);
    }

    /** One shard's group commit, labelled {@code shard} unless it is null. */
    void bindPublishCoalescer(io.hourglass.core.command.PublishCoalescer publishes, String shard) {
        Tags tags = shard == null ? Tags.empty() : Tags.of("shard", shard);
        FunctionCounter.builder("hourglass.publish.entries", publishes, io.hourglass.core.command.PublishCoalescer::entries)
                .description("Raft log entries that carried publish requests").tags(tags).register(registry);
        FunctionCounter.builder("hourglass.publish.requests", publishes, io.hourglass.core.command.PublishCoalescer::requests)
                .description("Publish requests proposed (several may share one entry)").tags(tags).register(registry);
        FunctionCounter.builder("hourglass.publish.entries.past.limit", publishes,
                        io.hourglass.core.command.PublishCoalescer::entriesPastLimit)
                .description("Publish entries proposed past raft.publishEntriesInFlight because every entry out "
                        + "had waited " + java.util.concurrent.TimeUnit.NANOSECONDS.toMillis(
                                io.hourglass.core.command.PublishCoalescer.STUCK_NANOS) + " ms (a failover or a stall)")
                .tags(tags).register(registry);
    }

    /** Held here: a Micrometer gauge keeps only a weak reference to what it reads. */
    private DueWithin dueWithin;
    /** The labels of the meters {@link #bind} registers: its shard's, or none. */
    private Tags bindTags = Tags.empty();
    private boolean nodeBound;

    void bindDueWithin(DueWithin due) {
        this.dueWithin = due;
        for (int i = 0; i < DueWithin.WINDOWS_MS.length; i++) {
            int window = i;
            Gauge.builder("hourglass.messages.due.within", due, d -> d.count(window)).tag("window", DueWithin.WINDOW_NAMES[i])
                    .description("Stored messages falling due within the window from now, all topics (this replica)")
                    .register(registry);
        }
    }

    /** One shard's meters, with no shard label: a node of one shard (its series as before shards). */
    void bind(DeliveryEngine engine, RaftNode raft) {
        bind(engine, raft, null);
    }

    /**
     * One shard's meters, labelled {@code shard} when {@code shard} is not null (a node of several
     * shards); the node's own (clock, disk, refused peer calls) come with the first call only.
     */
    synchronized void bind(DeliveryEngine engine, RaftNode raft, String shard) {
        bindTags = shard == null ? Tags.empty() : Tags.of("shard", shard);
        if (!nodeBound) {
            nodeBound = true;
            bindNode(raft);
        }
        DeliveryMetrics m = engine.metrics();
        counter("hourglass.messages.dispatched", "Deliveries handed to consumers", m.dispatched);
        counter("hourglass.messages.redelivered", "Deliveries with attempt > 1", m.redelivered);
        counter("hourglass.messages.expired", "Messages removed because their TTL passed", m.expired);
        counter("hourglass.deliveries.expired.in.buffer", "Deliveries not sent because their TTL passed while "
                + "they waited in a consumer's buffer (a slow stream); the message is deleted as expired",
                m.expiredInBuffer);
        counter("hourglass.messages.cancelled", "Cancels committed before any copy of the message went out", m.cancelled);
        counter("hourglass.messages.cancelled.after.delivery",
                "Cancels committed after a copy had gone out (deleted, not redelivered)", m.cancelledAfterDelivery);
        counter("hourglass.messages.dead.lettered", "Messages moved to a group's dead-letter topic after its max deliveries",
                m.deadLettered);
        counter("hourglass.messages.backed.off", "Redeliveries a group's back-off delayed (after a NACK or an in-flight timeout)",
                m.backedOff);
        counter("hourglass.consumer.ack", "ACKs accepted", m.acks);
        counter("hourglass.consumer.nack", "NACKs accepted", m.nacks);
        io.micrometer.core.instrument.DistributionSummary batchSize = io.micrometer.core.instrument.DistributionSummary
                .builder("hourglass.delete.batch.size").description("Deletions per committed delete batch")
                .publishPercentiles(0.5, 0.99).tags(bindTags).register(registry);
        m.deleteBatchObserver = batchSize::record;
        counter("hourglass.delete.failures", "Delete batches that failed and were re-queued", m.deleteFailures);
        counter("hourglass.dispatch.passes", "Dispatcher passes", m.dispatchPasses);
        counter("hourglass.dispatch.messages.read", "Stored messages read by dispatcher passes", m.messagesRead);
        counter("hourglass.dispatch.passes.without.lease", "Dispatcher passes put off because the leader could not"
                + " show its lease (no majority heard from within 90% of raft.electionTimeoutMin)", m.passesWithoutLease);
        gauge("hourglass.messages.in.flight", "Deliveries awaiting ACK", engine, e -> e.inFlightCount());
        gauge("hourglass.active.consumers", "Consumers registered on this node", engine, e -> e.hub().size());
        gauge("hourglass.pending.deletions", "ACKs and expirations waiting for the next delete batch", engine,
                e -> e.queuedDeletions());
        gauge("hourglass.is.leader", "1 when this node leads and dispatches", raft, r -> r.isLeader() ? 1 : 0);
        gauge("hourglass.raft.term", "Current Raft term", raft, r -> r.status().term());
        gauge("hourglass.raft.commit.index", "Highest log index known committed", raft, r -> r.status().commitIndex());
        gauge("hourglass.raft.applied.index", "Highest log index applied to the store", raft, r -> r.status().appliedIndex());
        gauge("hourglass.raft.log.repairs", "Repairs the log check made to the Raft log at this start: a torn tail cut "
                + "off the open segment, an open segment closed behind the store's applied index", raft.counters(),
                RaftCounters::logRepairs);
        FunctionCounter.builder("hourglass.raft.leader.changes", raft.counters(), RaftCounters::leaderChanges)
                .description("Leadership changes this node saw").tags(bindTags).register(registry);
        FunctionCounter.builder("hourglass.raft.snapshots.taken", raft, r -> r.stateMachine().snapshotsTaken())
                .description("Snapshots taken (store synced, log purgeable)").tags(bindTags).register(registry);
        FunctionCounter.builder("hourglass.raft.snapshot.installs", raft, r -> r.stateMachine().snapshotsInstalled())
                .description("Leader checkpoints installed by this node").tags(bindTags).register(registry);
        FunctionCounter.builder("hourglass.raft.lost.log.step.down.requests", raft.counters(), RaftCounters::lostLogStepDownRequests)
                .description("Step-downs this node asked of a leader that appended nothing past its log's end "
                        + "(raft.lostLogTimeout): the leader counted on a log this node had lost").tags(bindTags).register(registry);
        FunctionCounter.builder("hourglass.raft.pending.install.step.down.requests", raft.counters(),
                        RaftCounters::pendingInstallStepDownRequests)
                .description("Step-downs this node asked of a leader that sent no notice to install the checkpoint "
                        + "this node had downloaded (raft.lostLogTimeout): Ratis installs it only on such a notice")
                .tags(bindTags).register(registry);
        FunctionCounter.builder("hourglass.raft.install.nudges", raft.counters(), RaftCounters::installNudges)
                .description("Install notifications this leader sent again to a follower that had fetched a checkpoint "
                        + "Ratis 3.3 would never have installed (its next index past the log start, nothing matched)")
                .tags(bindTags).register(registry);
        FunctionCounter.builder("hourglass.raft.append.chain.mends", raft.counters(), RaftCounters::appendChainMends)
                .description("Failed follower log appends after which Ratis 3.3 would have failed every later append "
                        + "(the node never catching up), cleared so the leader's resend runs").tags(bindTags).register(registry);
        FunctionCounter.builder("hourglass.raft.leader.exit.elections", raft.counters(), RaftCounters::leaderExitElections)
                .description("Elections this node started at once because its leader's process was gone "
                        + "(raft.leaderExitStagger)").tags(bindTags).register(registry);
        FunctionCounter.builder("hourglass.raft.leader.silence.elections", raft.counters(), RaftCounters::leaderSilenceElections)
                .description("Elections this node started at once because a majority of the voters had not heard from "
                        + "its leader for raft.electionTimeoutMin (a cut-off or paused leader)").tags(bindTags).register(registry);
        FunctionCounter.builder("hourglass.raft.forward.attempts.abandoned", raft.counters(), RaftCounters::forwardsRetargeted)
                .tag("reason", "new_leader").description("Proposal attempts forwarded to a leader and sent again to "
                        + "the new leader this node learnt of meanwhile").tags(bindTags).register(registry);
        FunctionCounter.builder("hourglass.raft.forward.attempts.abandoned", raft.counters(), RaftCounters::forwardsUnanswered)
                .tag("reason", "no_answer").description("Proposal attempts forwarded to a leader that did not answer "
                        + "within raft.electionTimeoutMin, sent again on a new connection").tags(bindTags).register(registry);
        FunctionCounter.builder("hourglass.raft.forwarded", raft.counters(), RaftCounters::forwards)
                .description("Proposals this node forwarded to the leader (made while it did not lead)")
                .tags(bindTags).register(registry);
        bindTags = Tags.empty();
    }

    /**
     * The metadata group's Raft meters (peer registry, security state), under names of their own so
     * that no event shard's series changes.
     */
    void bindMetadata(RaftNode meta) {
        gauge("hourglass.metadata.is.leader", "1 when this node leads the metadata group (peer registry, security "
                + "state, membership changes)", meta, r -> r.isLeader() ? 1 : 0);
        gauge("hourglass.metadata.raft.term", "The metadata group's current Raft term", meta, r -> r.status().term());
        gauge("hourglass.metadata.raft.commit.index", "The metadata group's highest log index known committed", meta,
                r -> r.status().commitIndex());
        gauge("hourglass.metadata.raft.applied.index", "The metadata group's highest log index applied to its store",
                meta, r -> r.status().appliedIndex());
        FunctionCounter.builder("hourglass.metadata.raft.leader.changes", meta.counters(), RaftCounters::leaderChanges)
                .description("Leadership changes of the metadata group this node saw").register(registry);
    }

    /** The node's own meters, read through its first shard's replica. */
    private void bindNode(RaftNode raft) {
        Tags saved = bindTags;
        bindTags = Tags.empty();
        gauge("hourglass.clock.offset.ms", "This node's clock minus the other voters' (median of the last readings; "
                + "beyond raft.maxClockSkew the node stamps no entries)", raft.counters(), RaftCounters::clockOffsetMs);
        gauge("hourglass.disk.free.bytes", "Free bytes on the fullest file system of this node's data directory; below "
                + "hourglass_disk_min_free_bytes the node stops (exit 70) and does not start", raft.counters(),
                RaftCounters::freeDiskBytes);
        gauge("hourglass.disk.min.free.bytes", "node.minFreeDiskMb in bytes (0: not checked)", raft.counters(),
                RaftCounters::minFreeDiskBytes);
        FunctionCounter.builder("hourglass.security.refused", raft.counters(), RaftCounters::refusedPeerCalls)
                .tag("reason", "no_peer_certificate")
                .description("Calls the Raft port refused: the caller presented no certificate").register(registry);
        bindTags = saved;
    }

    /** Requests the client port refused: {@code hourglass_security_refused_total{reason}}. */
    void bindSecurity(io.hourglass.server.security.SecurityCounters counters) {
        FunctionCounter.builder("hourglass.security.refused", counters,
                        io.hourglass.server.security.SecurityCounters::unauthenticatedCount)
                .tag("reason", "unauthenticated").description("Calls refused for missing, wrong or revoked credentials")
                .register(registry);
        FunctionCounter.builder("hourglass.security.refused", counters,
                        io.hourglass.server.security.SecurityCounters::deniedCount)
                .tag("reason", "permission_denied").description("Calls refused for a missing permission")
                .register(registry);
    }

    /** One shard's lock-step rooms engine ({@code hourglass_room_*}), labelled {@code shard} unless it is null. */
    synchronized void bindRooms(RoomEngine engine, String shard) {
        bindTags = shard == null ? Tags.empty() : Tags.of("shard", shard);
        RoomCounters c = engine.counters();
        counter("hourglass.room.messages.sent", "Messages committed to a room's pending queue", c.sent);
        counter("hourglass.room.messages.released", "Messages released by a room's gate once all sync members acked",
                c.released);
        counter("hourglass.room.messages.flushed",
                "Messages handed to listeners of rooms without sync members, or dropped", c.flushed);
        counter("hourglass.room.messages.redelivered", "At-least-once messages sent again after a failover",
                c.redelivered);
        counter("hourglass.room.messages.out.of.band", "Out-of-band messages", c.outOfBand);
        counter("hourglass.room.deliveries", "Deliveries handed to room sessions (one per recipient)", c.deliveries);
        counter("hourglass.room.acks", "Acks that made a sync member ready", c.acks);
        counter("hourglass.room.acks.ignored", "Acks that changed nothing (duplicate, stale, foreign, out-of-band)",
                c.ignoredAcks);
        counter("hourglass.room.evictions", "Sync members evicted (heartbeat or ack timeout)", c.evictions);
        counter("hourglass.room.release.failures", "Release proposals that failed and were retried", c.releaseFailures);
        gauge("hourglass.room.is.leader", "1 when this node's rooms engine leads", engine, e -> e.isLeading() ? 1 : 0);
        bindTags = Tags.empty();
    }

    /** The node's room sessions (all shards'). */
    void bindRoomSessions(RoomsService service) {
        Gauge.builder("hourglass.room.sessions", service, RoomsService::openSessions)
                .description("Room Session streams open on this node").register(registry);
        FunctionCounter.builder("hourglass.room.sessions.opened", service, RoomsService::sessionsOpened)
                .description("Room Session streams opened on this node").register(registry);
        FunctionCounter.builder("hourglass.room.sessions.cut.off", service, RoomsService::sessionsCutOff)
                .description("Room sessions ended with RESOURCE_EXHAUSTED: the client did not read fast enough")
                .register(registry);
        FunctionCounter.builder("hourglass.room.calls.forwarded", service, RoomsService::forwardedCalls)
                .description("Rooms calls this node forwarded to the leader of the room's shard").register(registry);
    }

    /** Registers a follower-lag gauge per peer (the leader reports them; others report 0). */
    void bindPeers(RaftNode raft, List<String> peerIds) {
        bindPeers(raft, peerIds, null);
    }

    /** {@link #bindPeers(RaftNode, List)} of one shard, labelled {@code shard} unless it is null. */
    void bindPeers(RaftNode raft, List<String> peerIds, String shard) {
        Tags tags = shard == null ? Tags.empty() : Tags.of("shard", shard);
        for (String peer : peerIds) {
            Gauge.builder("hourglass.raft.follower.lag", raft, r -> {
                        RaftNode.Status s = r.status();
                        Long match = s.followerMatchIndex().get(peer);
                        return match == null ? 0 : Math.max(0, s.commitIndex() - match);
                    }).tag("follower", peer).tags(tags).description("Entries a follower is behind the leader's commit index")
                    .register(registry);
            Gauge.builder("hourglass.raft.follower.stalled", raft.counters(), c -> c.stalledFollowers().contains(peer) ? 1 : 0)
                    .tag("follower", peer).tags(tags)
                    .description("1 while the leader sees this follower behind and not catching up (raft.followerStallTimeout)")
                    .register(registry);
        }
    }

    private void counter(String name, String help, LongAdder adder) {
        FunctionCounter.builder(name, adder, LongAdder::doubleValue).description(help).tags(bindTags).register(registry);
    }

    private <T> void gauge(String name, String help, T target, ToDoubleFunction<T> f) {
        Gauge.builder(name, target, f).description(help).tags(bindTags).register(registry);
    }

    public void recordPublish(List<NewMessage> messages, long nanos) {
        publishLatency.record(nanos, TimeUnit.NANOSECONDS);
        for (NewMessage m : messages) {
            published.computeIfAbsent(m.getTopic(), t -> Counter.builder("hourglass.messages.published").tag("topic", t)
                    .description("Messages committed through Publish on this node").register(registry)).increment();
        }
        publishedAll.add(messages.size());
    }

    public void recordPropose(long nanos) {
        proposeLatency.record(nanos, TimeUnit.NANOSECONDS);
    }

    /** Records one delivery written to a consumer's stream: dispatch minus enqueue, and minus due. */
    public void recordDelivery(String topic, long enqueuedAtMs, long dueAtMs, long deliveredAtMs) {
        Timer[] timers = deliveryTimers.computeIfAbsent(topic, t -> new Timer[] {
            Timer.builder("hourglass.delivery.latency").tag("topic", t).description("Delivered minus enqueued")
                    .register(registry),
            Timer.builder("hourglass.delivery.lateness").tag("topic", t).description("Delivered minus due")
                    .register(registry)});
        timers[0].record(Duration.ofMillis(Math.max(0, deliveredAtMs - enqueuedAtMs)));
        timers[1].record(Duration.ofMillis(Math.max(0, deliveredAtMs - dueAtMs)));
    }

    /**
     * Removes the {@code topic}-labelled series of every topic that {@code gone} says is gone, so that
     * topic names cannot grow /metrics without bound; returns how many topics were dropped. A delivery
     * or publish recorded concurrently into a series being removed may be lost from it; a topic used
     * again gets new series, starting at zero. Runs on the caller's thread (the node's sweep timer).
     */
    public int removeTopicSeries(java.util.function.Predicate<String> gone) {
        java.util.Set<String> topics = new java.util.HashSet<>(published.keySet());
        topics.addAll(deliveryTimers.keySet());
        int removed = 0;
        for (String topic : topics) {
            if (!gone.test(topic)) {
                continue;
            }
            Counter c = published.remove(topic);
            if (c != null) {
                registry.remove(c);
            }
            Timer[] timers = deliveryTimers.remove(topic);
            if (timers != null) {
                for (Timer t : timers) {
                    registry.remove(t);
                }
            }
            removed++;
        }
        return removed;
    }

    /** Topics that have {@code topic}-labelled series now. */
    public java.util.Set<String> topicsWithSeries() {
        java.util.Set<String> topics = new java.util.TreeSet<>(published.keySet());
        topics.addAll(deliveryTimers.keySet());
        return topics;
    }

    public long publishedTotal() {
        return publishedAll.sum();
    }

    public String render() {
        return registry.scrape();
    }

    @Override
    public void close() {
        gc.close();
        registry.close();
    }
}
