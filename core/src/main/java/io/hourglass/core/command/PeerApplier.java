package io.hourglass.core.command;

import io.hourglass.core.proto.Command;
import io.hourglass.core.proto.RegisterPeerCmd;
import io.hourglass.core.storage.StoreBatch;
import io.hourglass.core.storage.TermIndex;
import java.util.EnumSet;
import java.util.Set;

/** Applies {@link RegisterPeerCmd}: a member's client address, which Ratis' configuration does not carry. */
final class PeerApplier implements CommandApplier {
    @Override
    public Set<Command.BodyCase> kinds() {
        return EnumSet.of(Command.BodyCase.REGISTER_PEER);
    }

    @Override
    public ApplyResult apply(StoreBatch batch, Command command, long stampMs, TermIndex position) {
        RegisterPeerCmd peer = command.getRegisterPeer();
        batch.putPeerAddress(peer.getId(), peer.getGrpcAddress());
        return ApplyResult.unchanged(position, stampMs);
    }
}
