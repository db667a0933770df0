package io.hourglass.core.command;

/**
 * Told about every entry this replica applied, on the apply thread, after the store committed it
 * and before the proposer's future completes. Must be quick and must not block.
 */
@FunctionalInterface
public interface ApplyListener {
    void onApplied(ApplyResult result);
}
