package io.hourglass.core.security;

import io.hourglass.core.command.ApplyResult;

/** What a security command changed: tokens or grants (listeners reload), or nothing and why. */
public record SecurityChange(String refusal) implements ApplyResult.Change {
}
