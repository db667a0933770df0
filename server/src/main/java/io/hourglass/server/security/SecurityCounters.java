package io.hourglass.server.security;

import java.util.concurrent.atomic.LongAdder;

/** Refused requests by reason, for {@code hourglass_security_refused_total{reason}}. */
public final class SecurityCounters {
    private final LongAdder unauthenticated = new LongAdder();
    private final LongAdder denied = new LongAdder();

    void unauthenticated() {
        unauthenticated.increment();
    }

    void denied() {
        denied.increment();
    }

    public long unauthenticatedCount() {
        return unauthenticated.sum();
    }

    public long deniedCount() {
        return denied.sum();
    }
}
