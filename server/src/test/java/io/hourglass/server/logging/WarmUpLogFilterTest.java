package io.hourglass.server.logging;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.core.spi.FilterReply;
import org.junit.jupiter.api.Test;

/** What {@link WarmUpLogFilter} drops: Ratis' warnings about warm-up members, nothing else. */
class WarmUpLogFilterTest {
    private final LoggerContext context = new LoggerContext();
    private final Logger ratis = context.getLogger("org.apache.ratis.grpc.server.GrpcLogAppender");
    private final Logger ours = context.getLogger("io.hourglass.raft.RaftNode");
    private final WarmUpLogFilter filter = new WarmUpLogFilter();

    @Test
    void ratisWarningsAboutWarmUpMembersAreDropped() {
        Object appender = new Object() {
            @Override
            public String toString() {
                return "hg-warmup-1@group-3A48762C2B2C->hg-warmup-2-InstallNudgingAppender";
            }
        };
        assertEquals(FilterReply.DENY, filter.decide(null, ratis, Level.WARN, "{}: Failed appendEntries: {}",
                new Object[] {appender, new RuntimeException("UNAVAILABLE")}, null));
        assertEquals(FilterReply.DENY, filter.decide(null, ratis, Level.ERROR, "closing",
                null, new IllegalStateException("hg-warmup-3 is already CLOSED")));
        assertTrue(WarmUpLogFilter.aboutWarmUp(
                "hg-warmup-1@group-3A48762C2B2C->hg-warmup-3-InstallNudgingAppender-LogAppenderDaemon", "{} is interrupted",
                null, null), "a warm-up server's own thread");
    }

    @Test
    void everythingElseIsLeftToTheConfiguration() {
        Object[] realPeer = {"n1@group-C1A8289C016B->n2-InstallNudgingAppender"};
        assertEquals(FilterReply.NEUTRAL, filter.decide(null, ratis, Level.WARN, "{}: Failed appendEntries", realPeer, null));
        // Our own loggers, and levels below WARN, are not even looked at.
        assertEquals(FilterReply.NEUTRAL, filter.decide(null, ours, Level.WARN, "{}", new Object[] {"hg-warmup-1"}, null));
        assertEquals(FilterReply.NEUTRAL, filter.decide(null, ratis, Level.INFO, "{}", new Object[] {"hg-warmup-1"}, null));
        assertEquals(FilterReply.NEUTRAL, filter.decide(null, ratis, null, "{}", new Object[] {"hg-warmup-1"}, null));
    }
}
