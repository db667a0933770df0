package io.hourglass.server.logging;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.turbo.TurboFilter;
import ch.qos.logback.core.spi.FilterReply;
import org.slf4j.Marker;

/**
 * Drops what Ratis and gRPC log about the throwaway servers of a node's start-up warm-up (their
 * members are named {@code hg-warmup-N}): closing them, and one of them on purpose while the others
 * run, makes Ratis warn as it would about real peers, which would only mislead whoever reads the log.
 * The warm-up's own outcome is logged by the node. Only events of Ratis' and gRPC's loggers at WARN
 * and above are looked at, so the filter costs nothing on the paths that log at lower levels.
 */
public final class WarmUpLogFilter extends TurboFilter {
    /** The prefix of the warm-up members' ids (io.hourglass.raft.RaftWarmUp). */
    static final String MEMBER_PREFIX = io.hourglass.raft.RaftNode.WARM_UP_MEMBER_PREFIX; // a constant: inlined, loads nothing

    @Override
    public FilterReply decide(Marker marker, Logger logger, Level level, String format, Object[] params, Throwable t) {
        if (level == null || !level.isGreaterOrEqual(Level.WARN) || !fromRaft(logger.getName())) {
            return FilterReply.NEUTRAL;
        }
        return aboutWarmUp(Thread.currentThread().getName(), format, params, t) ? FilterReply.DENY : FilterReply.NEUTRAL;
    }

    static boolean fromRaft(String loggerName) {
        return loggerName.startsWith("org.apache.ratis") || loggerName.startsWith("io.grpc");
    }

    static boolean aboutWarmUp(String thread, String format, Object[] params, Throwable t) {
        if (thread.contains(MEMBER_PREFIX) || format != null && format.contains(MEMBER_PREFIX)) {
            return true;
        }
        if (params != null) {
            for (Object p : params) {
                if (p != null && !(p instanceof Throwable) && String.valueOf(p).contains(MEMBER_PREFIX)) {
                    return true;
                }
            }
        }
        return t != null && t.getMessage() != null && t.getMessage().contains(MEMBER_PREFIX);
    }
}
