package io.hourglass.raft;

import io.hourglass.core.InvalidRequestException;
import io.hourglass.core.NotLeaderException;
import io.hourglass.core.UnavailableException;
import io.hourglass.core.proto.Command;
import io.hourglass.core.proto.CommandReply;
import java.io.IOException;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.protocol.exceptions.StateMachineException;
import org.apache.ratis.server.RaftServer;

/**
 * How a node's commands reach the Raft log: straight into its own division while it leads, else
 * forwarded to the leader ({@link Forwarder}); replies and failures translated into core exceptions;
 * the time each successful one took reported to a {@link ProposalObserver}.
 * Thread-safe: every field is final or atomic.
 */
final class Proposer {
    private final RaftServer server;
    private final Forwarder forwarder;
    private final RaftPeerId selfId;
    private final int maxEntryBytes;
    private final Duration requestTimeout;
    private final Function<String, String> grpcAddressOf;
    private final ProposalObserver observer;
    private final ContactGuard contact;
    /** The group proposals go to. */
    private final org.apache.ratis.protocol.RaftGroupId groupId;

    /**
     * Non-null while this leader prepares a transfer of its leadership ({@link #hold}): proposals
     * wait for it, then go wherever the leader is by then.
     */
    private final AtomicReference<CompletableFuture<Void>> held = new AtomicReference<>();
    /** Proposals handed to this node's division and not answered yet. */
    private final Set<CompletableFuture<RaftClientReply>> inDivision = ConcurrentHashMap.newKeySet();
    /** Proposals between reading {@link #held} and joining {@link #inDivision}. */
    private final AtomicInteger routing = new AtomicInteger();

    /** The client id of proposals this node hands to its own division while it leads. */
    private final ClientId directClientId = ClientId.randomId();
    private final AtomicLong directCallIds = new AtomicLong();

    Proposer(RaftServer server, org.apache.ratis.protocol.RaftGroupId groupId, Forwarder forwarder, RaftPeerId selfId,
             int maxEntryBytes, Duration requestTimeout,
             Function<String, String> grpcAddressOf, ProposalObserver observer, ContactGuard contact) {
        this.server = server;
        this.groupId = groupId;
        this.forwarder = forwarder;
        this.selfId = selfId;
        this.maxEntryBytes = maxEntryBytes;
        this.requestTimeout = requestTimeout;
        this.grpcAddressOf = grpcAddressOf;
        this.observer = observer;
        this.contact = contact;
    }

    /**
     * Proposes a command. It is checked here first: Ratis' ordered async client closes its stream
     * when the state machine refuses a request, so nothing malformed may ever reach it.
     */
    CompletableFuture<CommandReply> propose(Command command, boolean leads) {
        long start = System.nanoTime();
        if (command.getBodyCase() == Command.BodyCase.BODY_NOT_SET) {
            return CompletableFuture.failedFuture(new InvalidRequestException("a command must have a body"));
        }
        if (command.getSerializedSize() > maxEntryBytes) {
            return CompletableFuture.failedFuture(new InvalidRequestException("command of " + command.getSerializedSize()
                    + " bytes exceeds the entry limit of " + maxEntryBytes));
        }
        UnavailableException cutOff = contact.refusal();
        if (cutOff != null) {
            return CompletableFuture.failedFuture(cutOff);
        }
        Message message = Message.valueOf(org.apache.ratis.thirdparty.com.google.protobuf.UnsafeByteOperations.unsafeWrap(command.toByteArray()));
        CompletableFuture<RaftClientReply> sent;
        routing.incrementAndGet();
        try {
            CompletableFuture<Void> gate = held.get();
            sent = gate == null ? route(message, leads) : gate.thenCompose(v -> route(message, leadsNow()));
        } finally {
            routing.decrementAndGet();
        }
        return contact.track(sent)
                // Bounded: without a quorum nothing commits, and callers must hear so, not hang.
                .orTimeout(requestTimeout.toMillis(), TimeUnit.MILLISECONDS)
                .handle((reply, error) -> {
                    if (error != null) {
                        throw translate(error);
                    }
                    if (!reply.isSuccess()) {
                        throw translate(reply.getException());
                    }
                    CommandReply parsed = parseReply(reply);
                    observer.committed(System.nanoTime() - start);
                    return parsed;
                });
    }

    private boolean leadsNow() {
        try {
            return server.getDivision(groupId).getInfo().isLeader();
        } catch (IOException e) {
            return false;
        }
    }

    private CompletableFuture<RaftClientReply> route(Message message, boolean leads) {
        CompletableFuture<RaftClientReply> sent = leads ? submitToOwnDivision(message) : null;
        return sent != null ? sent : forwarder.forward(message);
    }

    /**
     * Holds proposals back from this leader's division and waits, at most {@code maxMs}, until those
     * already in it are answered; returns what lets them go on (to this node's division if it still
     * leads, else to the leader). A leadership transfer calls it right before Ratis compares the
     * transferee's log with the leader's: an entry appended after that comparison (a proposal that
     * passed Ratis' stepping-down check a moment before the transfer began) left the transferee one
     * entry short, every voter refused it, and the group had no leader for an election timeout
     * (1.2-1.6 s, in 3 of 16 transfers at 1 000 msg/s).
     */
    Runnable hold(long maxMs) {
        CompletableFuture<Void> gate = new CompletableFuture<>();
        if (!held.compareAndSet(null, gate)) {
            return () -> { };
        }
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(maxMs);
        while (routing.get() > 0 && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
        try {
            CompletableFuture.allOf(inDivision.toArray(CompletableFuture[]::new))
                    .get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException e) {
            // answered with a failure, or not within the bound: the transfer goes ahead all the same
        }
        return () -> {
            held.set(null);
            gate.complete(null);
        };
    }

    /**
     * While this node leads, a proposal goes straight into its own division: no loopback gRPC
     * call, no second serialisation, and no ordered sliding window that makes every concurrent
     * publish wait for the one before it. If leadership moved meanwhile the division answers
     * NotLeader (or, handing its leadership over, "stepping down"), and the proposal is forwarded
     * to the new leader (the producer-id dedup makes that retry safe). Returns null when the division cannot
     * be reached, so the caller forwards.
     */
    private CompletableFuture<RaftClientReply> submitToOwnDivision(Message message) {
        RaftClientRequest request = RaftClientRequest.newBuilder()
                .setClientId(directClientId)
                .setServerId(selfId)
                .setGroupId(groupId)
                .setCallId(directCallIds.incrementAndGet())
                .setMessage(message)
                .setType(RaftClientRequest.writeRequestType())
                .build();
        try {
            CompletableFuture<RaftClientReply> submitted = server.submitClientRequestAsync(request);
            inDivision.add(submitted);
            submitted.whenComplete((r, e) -> inDivision.remove(submitted));
            return submitted.thenCompose(reply -> Forwarder.leadershipRefusal(reply.getException())
                    ? forwarder.forward(message) : CompletableFuture.completedFuture(reply));
        } catch (IOException e) {
            return null;
        }
    }

    private static CommandReply parseReply(RaftClientReply reply) {
        try {
            return CommandReply.parseFrom(reply.getMessage().getContent().toByteArray());
        } catch (com.google.protobuf.InvalidProtocolBufferException e) {
            throw new IllegalStateException("unreadable reply from the state machine", e);
        }
    }

    private RuntimeException translate(Throwable error) {
        Throwable e = error;
        while ((e instanceof CompletionException || e instanceof java.util.concurrent.ExecutionException) && e.getCause() != null) {
            e = e.getCause();
        }
        if (e instanceof StateMachineException sme
                && (sme.getCause() instanceof StoreFailedException || sme.getCause() instanceof ClockSkewedException)) {
            return new UnavailableException(sme.getCause().getMessage(), sme.getCause());
        }
        if (e instanceof StateMachineException sme) {
            return new InvalidRequestException(sme.getCause() != null ? sme.getCause().getMessage() : sme.getMessage());
        }
        if (e instanceof java.util.concurrent.TimeoutException) {
            return new UnavailableException("not committed within " + requestTimeout.toMillis()
                    + " ms (raft.requestTimeout): the cluster has no leader or no quorum right now", e);
        }
        if (e instanceof org.apache.ratis.protocol.exceptions.NotLeaderException nle) {
            return new NotLeaderException(nle.getSuggestedLeader() == null ? null
                    : grpcAddressOf.apply(nle.getSuggestedLeader().getId().toString()));
        }
        if (e instanceof UnavailableException u) {
            return u; // ContactGuard: this node is cut off
        }
        return new UnavailableException("replication did not complete: " + e, e);
    }
}
