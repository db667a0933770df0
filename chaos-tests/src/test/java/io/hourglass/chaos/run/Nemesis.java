package io.hourglass.chaos.run;

import static org.awaitility.Awaitility.await;

import io.grpc.Status;
import io.hourglass.chaos.NetnsNetwork;
import io.hourglass.chaos.ServerProcess;
import io.hourglass.client.AdminClient;
import io.hourglass.client.HourglassClient;
import io.hourglass.client.HourglassClientException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * Injects a seeded schedule of faults into a {@link ChaosCluster}, one at a time, each undone
 * (restarted, resumed, healed, removed) and the cluster ready again before the next, and records
 * each as a {@code fault} event with its start and end.
 *
 * <p>The schedule: first every fault kind the cluster supports once, in a seeded order (the short
 * CI run covers them all), then seeded random kinds until the requested time is used up. Every
 * random choice is drawn when a fault is planned, before anything timing-dependent happens, so the
 * same seed gives the same sequence of kinds, node picks and durations. Which node leads at a
 * given moment is up to the cluster: "kill the leader" kills whichever node leads then.
 *
 * <p>Running faults one at a time, each healed and every node caught up before the next, keeps
 * the wiped-node fault safe: a node that lost its log may vote for a candidate missing committed
 * entries only while another fault takes a majority member away.
 */
final class Nemesis {
    /** Longer than the 2 s maximum election timeout, shorter than the 10 s leader step-down wait. */
    private static final Duration PAUSE = Duration.ofSeconds(4);
    private static final Duration LEADER_TIMEOUT = Duration.ofSeconds(30);

    /** One planned fault: every seeded choice it needs. */
    record Fault(FaultKind kind, int nodePick, List<Integer> shuffled, long holdMs, long gapMs) {
    }

    private final ChaosCluster cluster;
    private final HistoryRecorder history;
    private final Random random;
    private final List<FaultKind> kinds;
    private final HourglassClient adminClient;

    /**
     * @param only fault labels to restrict the run to (e.g. {@code pause,kill-leader}); empty = all
     */
    Nemesis(ChaosCluster cluster, HistoryRecorder history, long seed, HourglassClient adminClient, Set<String> only) {
        this.cluster = cluster;
        this.history = history;
        this.random = new Random(seed);
        this.adminClient = adminClient;
        this.kinds = Arrays.stream(FaultKind.values())
                .filter(k -> !k.needsNetwork() || cluster.partitionable())
                .filter(k -> !k.needsFaketime() || ServerProcess.faketimeLibrary().isPresent())
                .filter(k -> k != FaultKind.SLOW_NETWORK || NetnsNetwork.canSlowLinks())
                .filter(k -> k != FaultKind.DISK_FULL || cluster.smallDisk().isPresent())
                .filter(k -> only.isEmpty() || only.contains(k.label())).toList();
        if (kinds.isEmpty()) {
            throw new IllegalArgumentException("no fault kind left to run from " + only);
        }
    }

    /** The fault kinds this run can inject. */
    List<FaultKind> kinds() {
        return kinds;
    }

    private Fault draw(FaultKind kind) {
        int size = cluster.voters().size();
        List<Integer> shuffled = new ArrayList<>();
        for (int i = 0; i < size; i++) {
            shuffled.add(i);
        }
        Collections.shuffle(shuffled, random);
        return new Fault(kind, random.nextInt(size), List.copyOf(shuffled), 500 + random.nextInt(2_500),
                1_000 + random.nextInt(2_000));
    }

    /**
     * Runs every kind once, then random faults until {@code minimum} has passed since the start.
     * Returns the faults run.
     */
    List<Fault> run(Duration minimum) {
        long end = System.currentTimeMillis() + minimum.toMillis();
        List<FaultKind> firstRound = new ArrayList<>(kinds);
        Collections.shuffle(firstRound, random);
        List<Fault> done = new ArrayList<>();
        int i = 0;
        while (i < firstRound.size() || System.currentTimeMillis() < end) {
            FaultKind kind = i < firstRound.size() ? firstRound.get(i) : kinds.get(random.nextInt(kinds.size()));
            Fault fault = draw(kind);
            inject(fault);
            done.add(fault);
            hold(fault.gapMs());
            i++;
        }
        return done;
    }

    private void inject(Fault f) {
        switch (f.kind()) {
            case KILL_LEADER -> killAndRestart(f, List.of(leader()));
            case KILL_NODE -> killAndRestart(f, List.of(voter(f.nodePick())));
            case KILL_MAJORITY -> killAndRestart(f, f.shuffled().subList(0, majority()).stream()
                    .map(this::voter).toList());
            case PAUSE_LEADER -> pauseLeader(f);
            case PARTITION_LEADER -> partition(f, List.of(cluster.slotOf(leader())));
            case PARTITION_SPLIT -> partition(f, f.shuffled().subList(0, cluster.voters().size() - majority())
                    .stream().map(i -> i + 1).toList());
            case WIPE_NODE -> wipe(f, voter(f.nodePick()));
            case MEMBERSHIP -> membership(f);
            case TRANSFER_LEADER -> transfer(f);
            case SLOW_NETWORK -> slowNetwork(f);
            case CLOCK_SKEW -> clockSkew(f);
            case CORRUPT_LOG -> corruptLog(f);
            case DISK_FULL -> DiskFaults.fillAndRecover(cluster.smallDisk().orElseThrow(),
                    (node, detail) -> announce(f, node, detail), (node, start) -> record(f, node, start));
        }
    }

    /** Damages a seeded follower's log while it is down (see {@link DiskFaults}); a minority, so never the leader. */
    private void corruptLog(Fault f) {
        ServerProcess leader = leader();
        List<ServerProcess> followers = cluster.voters().stream().filter(n -> n != leader).toList();
        ServerProcess victim = followers.get(f.nodePick() % followers.size());
        victim.kill();
        long start = System.currentTimeMillis();
        DiskFaults.Damage damage = DiskFaults.damage(victim, f.holdMs() % 2 == 0);
        announce(f, victim.nodeId(), damage == DiskFaults.Damage.FLIPPED
                ? "(kill -9, a byte flipped inside its Raft log: it must refuse to start; then wiped and restarted)"
                : "(kill -9, its open Raft log segment cut inside the last entry: a torn write it repairs)");
        DiskFaults.restartDamaged(victim, damage);
        record(f, victim.nodeId(), start);
    }

    private int majority() {
        return cluster.voters().size() / 2 + 1;
    }

    private ServerProcess voter(int index) {
        return cluster.voters().get(index);
    }

    private ServerProcess leader() {
        return cluster.awaitLeader(LEADER_TIMEOUT);
    }

    private void killAndRestart(Fault f, List<ServerProcess> victims) {
        announce(f, names(victims), "for " + f.holdMs() + " ms");
        victims.forEach(ServerProcess::kill);
        long start = System.currentTimeMillis();
        hold(f.holdMs());
        victims.forEach(ServerProcess::start);
        victims.forEach(n -> n.awaitReady(ChaosCluster.READY_TIMEOUT));
        record(f, names(victims), start);
    }

    private void pauseLeader(Fault f) {
        ServerProcess leader = leader();
        announce(f, leader.nodeId(), "(pid " + leader.pid() + ") for " + PAUSE.toMillis() + " ms");
        cluster.pause(leader);
        long start = System.currentTimeMillis();
        hold(PAUSE.toMillis());
        cluster.resume(leader);
        record(f, leader.nodeId(), start);
        leader.awaitReady(ChaosCluster.READY_TIMEOUT);
    }

    /** Cuts the given 1-based slots off the other voters for longer than an election, then heals. */
    private void partition(Fault f, List<Integer> minority) {
        String side = minority.stream().map(s -> "n" + s).collect(Collectors.joining(","));
        long holdMs = PAUSE.toMillis() + f.holdMs();
        announce(f, side, "off " + cluster.otherSlots(minority).stream().map(s -> "n" + s)
                .collect(Collectors.joining(",")) + " for " + holdMs + " ms");
        cluster.cutOff(minority);
        long start = System.currentTimeMillis();
        hold(holdMs);
        cluster.network().orElseThrow().healAll();
        record(f, side, start);
        cluster.voters().forEach(n -> n.awaitReady(ChaosCluster.READY_TIMEOUT));
    }

    private void wipe(Fault f, ServerProcess victim) {
        announce(f, victim.nodeId(), "(kill -9, delete data, restart empty)");
        victim.kill();
        long start = System.currentTimeMillis();
        victim.wipeData();
        victim.start();
        victim.awaitReady(ChaosCluster.READY_TIMEOUT);
        record(f, victim.nodeId(), start);
    }

    private void membership(Fault f) {
        ServerProcess joiner = cluster.startJoiner();
        long start = announce(f, joiner.nodeId(), "added, kept " + f.holdMs() + " ms, removed");
        addVoter(joiner);
        joiner.awaitReady(ChaosCluster.READY_TIMEOUT);
        hold(f.holdMs());
        removeNotLeading(joiner, f.nodePick());
        cluster.retire(joiner);
        record(f, joiner.nodeId(), start);
    }

    /**
     * Adds the joiner as a voter, asking again while the group is busy (a leader change right
     * before, say); an answer that it is already a member means an earlier attempt got through.
     */
    private void addVoter(ServerProcess joiner) {
        await("added " + joiner.nodeId()).atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(500))
                .ignoreExceptionsInstanceOf(HourglassClientException.class).until(() -> {
                    try {
                        adminClient.admin().addNode(joiner.nodeId(), joiner.ports().host(), joiner.ports().raft(),
                                joiner.ports().grpc());
                    } catch (HourglassClientException e) {
                        if (AdminClient.statusCode(e) != Status.Code.ALREADY_EXISTS) {
                            System.out.println("adding " + joiner.nodeId() + " failed, asking again: " + e.getMessage());
                            throw e;
                        }
                    }
                    return true;
                });
    }

    /** Removes {@code node}, first moving leadership to a voter if it leads (a leader cannot be removed). */
    private void removeNotLeading(ServerProcess node, int voterPick) {
        await("removed " + node.nodeId()).atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(500))
                .ignoreExceptionsInstanceOf(HourglassClientException.class).until(() -> {
                    if (cluster.soleLeader().filter(l -> l == node).isPresent()) {
                        adminClient.admin().transferLeader(voter(voterPick).nodeId());
                    }
                    adminClient.admin().removeNode(node.nodeId());
                    return true;
                });
    }

    private void transfer(Fault f) {
        ServerProcess leader = leader();
        ServerProcess target = voter(f.nodePick());
        if (target == leader) {
            target = voter((f.nodePick() + 1) % cluster.voters().size());
        }
        long start = announce(f, leader.nodeId(), "-> " + target.nodeId());
        try {
            adminClient.admin().transferLeader(target.nodeId());
        } catch (HourglassClientException e) {
            System.out.println("transfer to " + target.nodeId() + " failed: " + e.getMessage());
        }
        leader();
        record(f, leader.nodeId() + "->" + target.nodeId(), start);
    }

    /** Every voter's link delayed 50–200 ms (jitter a quarter of it) with 5 % loss, for longer than an election. */
    private void slowNetwork(Fault f) {
        int delayMs = 50 + (int) (f.holdMs() % 151);
        long holdMs = PAUSE.toMillis() + f.holdMs();
        List<Integer> all = new ArrayList<>();
        for (ServerProcess n : cluster.voters()) {
            all.add(cluster.slotOf(n));
        }
        announce(f, "all", "delay " + delayMs + " ms ± " + delayMs / 4 + ", 5 % loss, for " + holdMs + " ms");
        cluster.network().orElseThrow().slow(all, delayMs, delayMs / 4, 5);
        long start = System.currentTimeMillis();
        hold(holdMs);
        cluster.network().orElseThrow().healAll();
        record(f, "all", start);
        cluster.voters().forEach(n -> n.awaitReady(ChaosCluster.READY_TIMEOUT));
    }

    /**
     * A follower restarted with its clock 1–5 minutes ahead or behind and made leader: it must stamp
     * nothing with that clock and hand its leadership over (raft.maxClockSkew), so no delivery is
     * early and no TTL short by the checker's clock. Then restarted with a true clock.
     */
    private void clockSkew(Fault f) {
        ServerProcess leader = leader();
        ServerProcess victim = voter(f.nodePick());
        if (victim == leader) {
            victim = voter((f.nodePick() + 1) % cluster.voters().size());
        }
        long minutes = 1 + f.holdMs() % 5;
        Duration offset = Duration.ofMinutes(f.shuffled().get(0) % 2 == 0 ? minutes : -minutes);
        announce(f, victim.nodeId(), "restarted with its clock " + offset.toSeconds() + " s off, then made leader");
        long start = System.currentTimeMillis();
        victim.kill();
        victim.clockOffset(offset);
        victim.start();
        victim.awaitReady(ChaosCluster.READY_TIMEOUT);
        try {
            adminClient.admin().transferLeader(victim.nodeId());
            System.out.println("clock-skew: " + victim.nodeId() + " was made leader");
        } catch (HourglassClientException e) {
            System.out.println("clock-skew: the transfer to " + victim.nodeId() + " failed: " + e.getMessage());
        }
        hold(f.holdMs());
        ServerProcess skewed = victim;
        long handedOver = System.currentTimeMillis();
        ServerProcess next = cluster.awaitLeader(LEADER_TIMEOUT);
        System.out.println("clock-skew: leader " + next.nodeId() + (next == skewed ? " (still the skewed node!)" : "")
                + " " + (System.currentTimeMillis() - handedOver) + " ms after the hold");
        victim.kill();
        victim.clockOffset(null);
        victim.start();
        victim.awaitReady(ChaosCluster.READY_TIMEOUT);
        record(f, victim.nodeId(), start);
    }

    private static String names(List<ServerProcess> nodes) {
        return nodes.stream().map(ServerProcess::nodeId).collect(Collectors.joining(","));
    }

    /**
     * Prints the fault and returns now. Faults that take effect by an action (a kill, a signal, a
     * cut) stamp their start once it is done instead, so that availability counts from the moment
     * the fault is in place.
     */
    private long announce(Fault f, String nodes, String detail) {
        System.out.println("FAULT " + f.kind().label() + " " + nodes + " " + detail);
        return System.currentTimeMillis();
    }

    private void record(Fault f, String nodes, long start) {
        history.record("fault", "nemesis", Map.of("kind", f.kind().label(), "node", nodes, "start", start,
                "end", System.currentTimeMillis()));
    }

    /**
     * Keeps a fault in place (or the pause between faults) for its seeded duration. Not a wait for
     * a condition: the duration is part of the schedule.
     */
    private static void hold(long ms) {
        CompletableFuture.runAsync(() -> { }, CompletableFuture.delayedExecutor(ms, TimeUnit.MILLISECONDS)).join();
    }
}
