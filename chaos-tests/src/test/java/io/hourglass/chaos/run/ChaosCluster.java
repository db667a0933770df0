package io.hourglass.chaos.run;

import static org.awaitility.Awaitility.await;

import io.hourglass.chaos.Distribution;
import io.hourglass.chaos.NetnsNetwork;
import io.hourglass.chaos.NodePorts;
import io.hourglass.chaos.ProcessCluster;
import io.hourglass.chaos.ChaosSecurity;
import io.hourglass.chaos.ServerProcess;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.Assumptions;

/**
 * The processes of one chaos run: {@code size} voters {@code n1..nN} from the distribution, and
 * joiners added and removed by the membership fault. With a {@link NetnsNetwork} every node runs
 * in its own namespace (slot {@code i} for voter {@code ni}, slot {@code N+1} for the joiner of
 * the moment) and can be partitioned; without, all run on loopback and partitions are impossible.
 *
 * <p>Tracks which pids are SIGSTOPped, so that leader lookups skip them and
 * {@link #healEverything()} resumes them. Thread-safe enough for one fault thread plus readers.
 */
final class ChaosCluster implements AutoCloseable {
    static final Duration READY_TIMEOUT = Duration.ofSeconds(90);
    private static final Duration POLL = Duration.ofMillis(200);

    private final Distribution distribution;
    private final Path runDir;
    private final Optional<NetnsNetwork> network;
    private final List<ServerProcess> voters = new CopyOnWriteArrayList<>();
    private final List<ServerProcess> joiners = new CopyOnWriteArrayList<>();
    private final Set<Long> paused = ConcurrentHashMap.newKeySet();
    private int joinerCount;

    /** The last voter's data directory, a small file system the disk-full fault fills; null where none can be mounted. */
    private io.hourglass.chaos.Tmpfs smallDisk;
    /** Size of that file system, and the free space below which its node stops (node.minFreeDiskMb). */
    static final int SMALL_DISK_MB = 1024;
    static final int SMALL_DISK_MIN_FREE_MB = 16;

    /** Security on for every node and client, or null. */
    private ChaosSecurity security;

    /** {@code HOURGLASS_CLUSTER_SHARDS} for every node, when the cluster has more than one shard. */
    private Map<String, String> shardEnv = Map.of();

    private ChaosCluster(Distribution distribution, Path runDir, Optional<NetnsNetwork> network) {
        this.distribution = distribution;
        this.runDir = runDir;
        this.network = network;
    }

    /** Creates and starts {@code size} voters, in namespaces when {@code network} is given. */
    static ChaosCluster start(Distribution distribution, Path runDir, int size, Optional<NetnsNetwork> network,
                              boolean secure) {
        return start(distribution, runDir, size, network, secure, 1);
    }

    /** The same, every node (joiners too) with {@code shards} event shards ({@code cluster.shards}). */
    static ChaosCluster start(Distribution distribution, Path runDir, int size, Optional<NetnsNetwork> network,
                              boolean secure, int shards) {
        ChaosCluster cluster = new ChaosCluster(distribution, runDir, network);
        cluster.shardEnv = shards > 1 ? Map.of("HOURGLASS_CLUSTER_SHARDS", Integer.toString(shards)) : Map.of();
        List<NodePorts> ports = new ArrayList<>();
        for (int i = 1; i <= size; i++) {
            ports.add(cluster.portsFor(i));
        }
        if (secure) {
            List<String> hosts = new ArrayList<>();
            for (int slot = 1; slot <= size + 1; slot++) { // the joiner's slot too
                hosts.add(network.isPresent() ? cluster.portsFor(slot).host() : "127.0.0.1");
            }
            cluster.security = ChaosSecurity.make(runDir.resolve("certs"), hosts);
        }
        List<String> peers = new ArrayList<>();
        for (int i = 1; i <= size; i++) {
            peers.add(ports.get(i - 1).peerEntry("n" + i));
        }
        for (int i = 1; i <= size; i++) {
            cluster.voters.add(ServerProcess.member(distribution, runDir, "n" + i, ports.get(i - 1), peers,
                    cluster.launcherFor(i), false).withSecurity(cluster.security).withEnv(cluster.shardEnv));
        }
        try {
            if (!"false".equals(System.getProperty("chaos.diskFull")) && io.hourglass.chaos.Tmpfs.unavailable() == null) {
                ServerProcess last = cluster.voters.get(size - 1);
                cluster.smallDisk = io.hourglass.chaos.Tmpfs.mount(last.dataDir(), SMALL_DISK_MB);
                cluster.voters.set(size - 1, last.withEnv(Map.of("HOURGLASS_NODE_MINFREEDISKMB",
                        Integer.toString(SMALL_DISK_MIN_FREE_MB))));
            }
            cluster.voters.forEach(ServerProcess::start);
            cluster.voters.forEach(n -> n.awaitReady(READY_TIMEOUT));
        } catch (RuntimeException | AssertionError e) {
            cluster.close();
            throw e;
        }
        return cluster;
    }

    /**
     * {@code size} voters, each in its own network namespace, for a test of partitions; the test is
     * skipped (and says why) where namespaces cannot be made. Closing the cluster removes the network.
     */
    static ChaosCluster startInNamespaces(Class<?> test, int size) {
        Optional<String> unavailable = NetnsNetwork.unavailableReason();
        Assumptions.assumeTrue(unavailable.isEmpty(), () -> "needs network namespaces: " + unavailable.orElse(""));
        Distribution distribution = Distribution.locate();
        Path runDir = distribution.newRunDir(test.getSimpleName());
        NetnsNetwork network = NetnsNetwork.create(distribution, runDir, size);
        try {
            return start(distribution, runDir, size, Optional.of(network), false);
        } catch (RuntimeException | AssertionError e) {
            network.close();
            throw e;
        }
    }

    /** The 1-based slots of the voters not in {@code slots}. */
    List<Integer> otherSlots(List<Integer> slots) {
        List<Integer> rest = new ArrayList<>();
        for (int slot = 1; slot <= voters.size(); slot++) {
            if (!slots.contains(slot)) {
                rest.add(slot);
            }
        }
        return rest;
    }

    /** Cuts the voters in {@code slots} off every other voter (clients still reach all of them). */
    void cutOff(List<Integer> slots) {
        network.orElseThrow(() -> new IllegalStateException("nodes on loopback cannot be partitioned"))
                .partition(slots, otherSlots(slots));
    }

    private NodePorts portsFor(int slot) {
        return network.map(n -> NodePorts.defaultsOn(n.address(slot))).orElseGet(NodePorts::allocate);
    }

    private List<String> launcherFor(int slot) {
        return network.map(n -> n.launcher(slot)).orElse(List.of());
    }

    /** A client builder for {@code servers}, with the cluster's credentials when security is on. */
    io.hourglass.client.HourglassClient.Builder client(List<String> servers) {
        io.hourglass.client.HourglassClient.Builder b = io.hourglass.client.HourglassClient.builder().servers(servers);
        return security == null ? b : b.credentials(security.credentials());
    }

    /** The voter whose data directory is a small file system (the last), and that file system; empty where none. */
    Optional<Map.Entry<ServerProcess, io.hourglass.chaos.Tmpfs>> smallDisk() {
        return smallDisk == null ? Optional.empty() : Optional.of(Map.entry(voters.get(voters.size() - 1), smallDisk));
    }

    boolean partitionable() {
        return network.isPresent();
    }

    Optional<NetnsNetwork> network() {
        return network;
    }

    /** The voters {@code n1..nN}, in order. */
    List<ServerProcess> voters() {
        return voters;
    }

    /** 1-based network slot of a voter. */
    int slotOf(ServerProcess voter) {
        int i = voters.indexOf(voter);
        if (i < 0) {
            throw new IllegalArgumentException(voter.nodeId() + " is not a voter");
        }
        return i + 1;
    }

    /** The voters' client addresses, for {@code --servers}. */
    List<String> servers() {
        return voters.stream().map(n -> n.ports().grpcAddress()).toList();
    }

    /**
     * A new empty node started with {@code --join} in the spare slot, named {@code j1, j2, …}.
     * It is not a voter until the Admin API adds it; {@link #retire(ServerProcess)} ends it.
     */
    ServerProcess startJoiner() {
        int slot = voters.size() + 1;
        String id = "j" + (++joinerCount);
        NodePorts ports = portsFor(slot);
        List<String> peers = new ArrayList<>();
        for (ServerProcess v : voters) {
            peers.add(v.ports().peerEntry(v.nodeId()));
        }
        peers.add(ports.peerEntry(id));
        ServerProcess joiner = ServerProcess.member(distribution, runDir, id, ports, peers, launcherFor(slot), true)
                .withSecurity(security).withEnv(shardEnv);
        joiners.add(joiner);
        joiner.start();
        return joiner;
    }

    /** Kills a joiner that was removed from the group and deletes its data. */
    void retire(ServerProcess joiner) {
        joiner.close();
        joiners.remove(joiner);
    }

    /** Waits for exactly one running, unpaused voter that reports itself leader. */
    ServerProcess awaitLeader(Duration timeout) {
        try {
            return await("a single leader").atMost(timeout).pollInterval(POLL)
                    .until(this::soleLeader, Optional::isPresent).orElseThrow();
        } catch (ConditionTimeoutException e) {
            throw new AssertionError("no single leader within " + timeout + ": " + describe(), e);
        }
    }

    Optional<ServerProcess> soleLeader() {
        List<ServerProcess> leaders = new ArrayList<>();
        for (ServerProcess n : allNodes()) {
            if (n.isAlive() && !paused.contains(n.pid()) && ProcessCluster.leaderGauge(n).orElse(false)) {
                leaders.add(n);
            }
        }
        return leaders.size() == 1 ? Optional.of(leaders.get(0)) : Optional.empty();
    }

    private List<ServerProcess> allNodes() {
        List<ServerProcess> all = new ArrayList<>(voters);
        all.addAll(joiners);
        return all;
    }

    void pause(ServerProcess node) {
        long pid = node.pid();
        paused.add(pid);
        signal("STOP", pid);
    }

    void resume(ServerProcess node) {
        long pid = node.pid();
        signal("CONT", pid);
        paused.remove(pid);
    }

    /** Resumes paused nodes, removes every cut, restarts dead voters and waits until all are ready. */
    void healEverything() {
        for (long pid : paused) {
            signal("CONT", pid);
        }
        paused.clear();
        network.ifPresent(NetnsNetwork::healAll);
        for (ServerProcess node : voters) {
            if (!node.isAlive()) {
                node.start();
            }
        }
        voters.forEach(n -> n.awaitReady(READY_TIMEOUT));
    }

    /** One line per node: alive, leader gauge, paused. */
    String describe() {
        return allNodes().stream().map(n -> n.nodeId() + (n.isAlive()
                        ? (paused.contains(n.pid()) ? " paused" : " leader=" + ProcessCluster.leaderGauge(n)
                                .map(String::valueOf).orElse("?"))
                        : " down"))
                .collect(Collectors.joining(", ", "[", "]"));
    }

    static void signal(String signal, long pid) {
        try {
            Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(pid)).inheritIO().start();
            if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
                throw new IllegalStateException("kill -" + signal + " " + pid + " failed");
            }
        } catch (IOException e) {
            throw new IllegalStateException("cannot run kill -" + signal + " " + pid, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    /** Resumes paused nodes, kills every node (data deleted, logs kept) and removes the network. */
    @Override
    public void close() {
        for (long pid : paused) {
            try {
                signal("CONT", pid);
            } catch (RuntimeException e) {
                System.out.println("resuming " + pid + " failed: " + e);
            }
        }
        paused.clear();
        for (ServerProcess node : allNodes()) {
            try {
                node.close();
            } catch (RuntimeException | AssertionError e) {
                System.out.println("closing " + node.nodeId() + " failed: " + e);
            }
        }
        if (smallDisk != null) {
            try {
                smallDisk.close();
            } catch (RuntimeException e) {
                System.out.println("unmounting the small disk failed: " + e);
            }
        }
        network.ifPresent(n -> {
            try {
                n.close();
            } catch (RuntimeException e) {
                System.out.println("removing " + n + " failed: " + e);
            }
        });
    }
}
