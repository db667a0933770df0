package io.hourglass.raft;

import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.RaftConfigKeys;
import org.apache.ratis.client.RaftClientConfigKeys;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.grpc.GrpcConfigKeys;
import org.apache.ratis.protocol.exceptions.StateMachineException;
import org.apache.ratis.retry.ExceptionDependentRetry;
import org.apache.ratis.retry.ExponentialBackoffRetry;
import org.apache.ratis.retry.RetryPolicies;
import org.apache.ratis.retry.RetryPolicy;
import org.apache.ratis.server.RaftServerConfigKeys;
import org.apache.ratis.util.SizeInBytes;
import org.apache.ratis.util.TimeDuration;

/** How a node's {@link RaftConfig} becomes Ratis' server and client settings (RATIS-NOTES.md). */
final class RatisSettings {
    private RatisSettings() {
    }

    /**
     * For a node that joins with an empty directory: the cluster creates each of its groups a moment
     * before that group's leader starts the configuration change that adds it. A division that timed
     * out in between would stand for election, and the leader, which does not count it yet, answers
     * "shut down": the division closes for good and the node never catches up on that group (seen in
     * a chaos run with five groups on a busy node: 2 s between the two steps). So a fresh joiner's
     * divisions wait {@link #JOINER_FIRST_ELECTION_MS} before their first candidacy; the leader's
     * first append resets that wait. Once added, a restart uses the normal timeouts.
     */
    static void delayFirstElection(RaftProperties p) {
        RaftServerConfigKeys.Rpc.setFirstElectionTimeoutMin(p, millis(JOINER_FIRST_ELECTION_MS));
        RaftServerConfigKeys.Rpc.setFirstElectionTimeoutMax(p, millis(JOINER_FIRST_ELECTION_MS + 5_000));
    }

    /** How long a fresh joiner's divisions wait before their first candidacy ({@link #delayFirstElection}). */
    static final long JOINER_FIRST_ELECTION_MS = 30_000;

    static RaftProperties properties(RaftConfig config, int maxEntryBytes) {
        RaftProperties p = new RaftProperties();
        RaftServerConfigKeys.setStorageDir(p, List.of(config.storageDir().toFile()));
        GrpcConfigKeys.Server.setPort(p, config.raftPort());
        RaftServerConfigKeys.Rpc.setTimeoutMin(p, millis(config.electionTimeoutMin().toMillis()));
        RaftServerConfigKeys.Rpc.setTimeoutMax(p, millis(config.electionTimeoutMax().toMillis()));
        RaftServerConfigKeys.LeaderElection.setPreVote(p, true);
        // A leader that stepped down for want of a majority sits out elections this long (Ratis: 10 s),
        // and a JVM pause longer than it makes a leader step down. 10 s kept a node that had just been
        // cut off, and rejoined, from standing in the next failover (chaos run: partition-leader right
        // after another). Pre-vote already keeps a node out of touch from disrupting a leader, so one
        // maximum election timeout is enough. (Ratis' own pause monitor, which would make a leader step
        // down after a stall that long, is replaced by PauseWatch.)
        RaftServerConfigKeys.LeaderElection.setLeaderStepDownWaitTime(p, millis(config.electionTimeoutMax().toMillis()));
        RaftServerConfigKeys.Snapshot.setAutoTriggerEnabled(p, true);
        RaftServerConfigKeys.Snapshot.setAutoTriggerThreshold(p, config.snapshotEveryEntries());
        RaftServerConfigKeys.Log.setPurgeUptoSnapshotIndex(p, true);
        RaftServerConfigKeys.Log.setPurgeGap(p, config.purgeGap());
        RaftServerConfigKeys.Log.setSegmentSizeMax(p, SizeInBytes.valueOf(config.logSegmentBytes()));
        // Followers too far behind fetch a store checkpoint from the leader (the DB is the snapshot).
        RaftServerConfigKeys.Log.Appender.setInstallSnapshotEnabled(p, false);
        // Ratis waits at least this long after an append request to a follower before the next one
        // (10 ms by default): at a paced load, each entry then waited for the next 10 ms tick before
        // it even left the leader (see raft.appendWaitMin).
        RaftServerConfigKeys.Log.Appender.setWaitTimeMin(p, millis(config.appendWaitMin().toMillis()));
        // No commit-index metadata entries: Ratis' leader appends one to the log after each commit
        // advance, and it is replicated and fsynced like any entry, so at a paced load every publish
        // cost two append rounds and two fsyncs on each voter, and the metadata entry took the
        // append slot the next publish waited for. A restarted node learns the commit index from the
        // leader's first append instead (the store keeps its own applied index); safety never rested on it.
        RaftServerConfigKeys.Log.setLogMetadataEnabled(p, false);
        // gRPC, with an appender that un-sticks a follower whose fetched checkpoint Ratis would never install.
        RaftConfigKeys.Rpc.setType(p, new InstallNudgingAppender.Rpc());
        SizeInBytes entryLimit = SizeInBytes.valueOf(entryLimitBytes(maxEntryBytes));
        RaftServerConfigKeys.Log.Appender.setBufferByteLimit(p, entryLimit);
        RaftServerConfigKeys.Log.setWriteBufferSize(p, SizeInBytes.valueOf(writeBufferBytes(maxEntryBytes)));
        GrpcConfigKeys.setMessageSizeMax(p, SizeInBytes.valueOf(entryLimit.getSize() + (2 << 20)));
        RaftClientConfigKeys.Rpc.setRequestTimeout(p, millis(config.requestTimeout().toMillis()));
        return p;
    }

    /** The largest entry Ratis accepts: twice the largest command, at least its 4 MB default. */
    static long entryLimitBytes(int maxEntryBytes) {
        return Math.max(4 << 20, maxEntryBytes * 2L);
    }

    /** Ratis' log write buffer: an entry and then some; no entry frame on disk is larger. */
    static long writeBufferBytes(int maxEntryBytes) {
        return entryLimitBytes(maxEntryBytes) + (1 << 20);
    }

    /** First sleep between two attempts of a forwarded proposal: short, since a failover takes ~100 ms. */
    static final long RETRY_FIRST_SLEEP_MS = 10;
    /** Longest sleep between two attempts, once a failover takes longer (no quorum, an election). */
    static final long RETRY_MAX_SLEEP_MS = 200;

    /**
     * Bounded and sleeping (Ratis' default retries forever without sleeping): 10 ms, doubling up to
     * 200 ms, for as long as {@code raft.requestTimeout}; a refusal by the state machine is final,
     * retrying it cannot help.
     */
    static RetryPolicy retryPolicy(RaftConfig config) {
        RetryPolicy transientFailures = ExponentialBackoffRetry.newBuilder()
                .setBaseSleepTime(millis(RETRY_FIRST_SLEEP_MS))
                .setMaxSleepTime(millis(RETRY_MAX_SLEEP_MS))
                .setMaxAttempts(Math.max(1, (int) (config.requestTimeout().toMillis() / RETRY_FIRST_SLEEP_MS)))
                .build();
        return ExceptionDependentRetry.newBuilder()
                .setExceptionToPolicy(StateMachineException.class, RetryPolicies.noRetry())
                .setDefaultPolicy(transientFailures)
                .build();
    }

    private static TimeDuration millis(long ms) {
        return TimeDuration.valueOf(ms, TimeUnit.MILLISECONDS);
    }
}
