package io.hourglass.core.testing;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;

/** A clock that moves only when a test says so. */
public final class ManualClock extends Clock {
    private volatile long millis;

    public ManualClock(long startMillis) {
        this.millis = startMillis;
    }

    public void advance(Duration d) {
        millis += d.toMillis();
    }

    @Override
    public long millis() {
        return millis;
    }

    @Override
    public ZoneId getZone() {
        return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
        return this;
    }

    @Override
    public Instant instant() {
        return Instant.ofEpochMilli(millis);
    }
}
