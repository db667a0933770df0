package io.hourglass.core.security;

import io.hourglass.core.command.ApplyResult;
import io.hourglass.core.command.CommandApplier;
import io.hourglass.core.proto.Command;
import io.hourglass.core.proto.SecurityCmd;
import io.hourglass.core.proto.StoredToken;
import io.hourglass.core.storage.SecurityRecords;
import io.hourglass.core.storage.StoreBatch;
import io.hourglass.core.storage.TermIndex;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * Applies {@link SecurityCmd}: tokens (their SHA-256 only) and grants in the {@code security}
 * column family. Deterministic: it reads the command, the leader's stamp and the store. A token
 * name already taken, or a revoke of something that does not exist, changes nothing and answers
 * why ({@link SecurityChange#refusal()}), so two racing creates of one name leave the first.
 */
public final class SecurityApplier implements CommandApplier {
    private final SecurityRecords records;

    public SecurityApplier(SecurityRecords records) {
        this.records = records;
    }

    @Override
    public Set<Command.BodyCase> kinds() {
        return EnumSet.of(Command.BodyCase.SECURITY);
    }

    @Override
    public ApplyResult apply(StoreBatch batch, Command command, long stampMs, TermIndex position) {
        SecurityCmd c = command.getSecurity();
        String refusal = switch (c.getOpCase()) {
            case TOKEN_PUT -> {
                String name = c.getTokenPut().getName();
                if (records.token(name).isPresent()) {
                    yield "a token named " + name + " exists; revoke it first";
                }
                batch.putToken(name, StoredToken.newBuilder().setSha256(c.getTokenPut().getSha256())
                        .setCreatedAtMs(stampMs).build());
                yield "";
            }
            case TOKEN_REVOKE -> {
                if (records.token(c.getTokenRevoke()).isEmpty()) {
                    yield "no token named " + c.getTokenRevoke();
                }
                batch.deleteToken(c.getTokenRevoke());
                yield "";
            }
            case GRANT_PUT -> {
                batch.putGrant(c.getGrantPut());
                yield "";
            }
            case GRANT_REVOKE -> {
                if (!records.hasGrant(c.getGrantRevoke())) {
                    yield "no such grant";
                }
                batch.deleteGrant(c.getGrantRevoke());
                yield "";
            }
            default -> throw new IllegalStateException("security command without an operation at " + position);
        };
        return new ApplyResult(position, stampMs, List.of(), false, List.of(), List.of(),
                List.of(new SecurityChange(refusal)));
    }
}
