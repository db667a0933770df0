package io.hourglass.server.security;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The audit log: its own logger, {@code hourglass.audit}, one line per admin operation (INFO) and
 * per refused request (WARN), each with principal, RPC, resource and outcome. Route it to a file
 * of its own in logback.xml to keep it.
 */
public final class Audit {
    private static final Logger LOG = LoggerFactory.getLogger("hourglass.audit");

    private Audit() {
    }

    static void admin(String principal, String rpc, String resource, String outcome) {
        LOG.info("principal={} rpc={} resource={} outcome={}", principal, rpc, resource, outcome);
    }

    static void refused(String principal, String rpc, String resource, String reason) {
        LOG.warn("principal={} rpc={} resource={} outcome=refused reason=\"{}\"", principal, rpc, resource, reason);
    }
}
