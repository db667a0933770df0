package io.hourglass.raft;

import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.ratis.proto.grpc.RaftServerProtocolServiceGrpc;
import org.apache.ratis.thirdparty.io.grpc.Attributes;
import org.apache.ratis.thirdparty.io.grpc.Metadata;
import org.apache.ratis.thirdparty.io.grpc.ServerCall;
import org.apache.ratis.thirdparty.io.grpc.ServerCallHandler;
import org.apache.ratis.thirdparty.io.grpc.ServerInterceptor;
import org.apache.ratis.thirdparty.io.grpc.ServerTransportFilter;

/**
 * Passes on the close of those connections into the Raft port that carried a leader's appends, and
 * of no other. The leader-exit watch ({@link LeaderExitWatch}) takes a closed connection as the hint
 * that the leader's process may be gone and probes the leader's port over TCP, several times. Every
 * connection that opens and closes without a call — such a probe from another node, a load
 * balancer's or a supervisor's TCP check, a port scanner — set that off too: on an idle local 3-node
 * cluster the probes of one node's watches, landing on another, set off that node's, and the
 * leaders' boss and worker threads were busier accepting them than with anything else. A leader
 * killed with {@code kill -9} still closes the connection that carried its appends, which is all the
 * watch needs.
 *
 * <p>Each transport gets a flag when it is ready; a call to Ratis' {@code appendEntries} on it sets
 * the flag; its close is passed on only with the flag set.
 */
final class AppendTransports extends ServerTransportFilter implements ServerInterceptor {
    private static final Attributes.Key<AtomicBoolean> CARRIED_APPENDS =
            Attributes.Key.create("hourglass.carriedAppends");
    private static final String APPEND_ENTRIES =
            RaftServerProtocolServiceGrpc.getAppendEntriesMethod().getFullMethodName();

    private final ServerTransportFilter onClose;

    /** @param onClose told when a connection that carried appends closes */
    AppendTransports(ServerTransportFilter onClose) {
        this.onClose = onClose;
    }

    @Override
    public Attributes transportReady(Attributes transportAttrs) {
        return transportAttrs.toBuilder().set(CARRIED_APPENDS, new AtomicBoolean()).build();
    }

    @Override
    public void transportTerminated(Attributes transportAttrs) {
        // null for a connection closed before it was ready (a bare TCP probe)
        AtomicBoolean carried = transportAttrs == null ? null : transportAttrs.get(CARRIED_APPENDS);
        if (carried != null && carried.get()) {
            onClose.transportTerminated(transportAttrs);
        }
    }

    @Override
    public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
                                                      ServerCallHandler<Q, R> next) {
        if (APPEND_ENTRIES.equals(call.getMethodDescriptor().getFullMethodName())) {
            AtomicBoolean carried = call.getAttributes().get(CARRIED_APPENDS);
            if (carried != null) {
                carried.set(true);
            }
        }
        return next.startCall(call, headers);
    }
}
