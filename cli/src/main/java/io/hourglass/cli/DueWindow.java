package io.hourglass.cli;

import picocli.CommandLine.Option;

/**
 * {@code --from T --until T}: a window of due times, shared by {@code topic schedule} and
 * {@code topic peek} (times as {@link TimeConverter} reads them). Absent bounds are 0, which the
 * server takes as its default (the command's description says which).
 */
final class DueWindow {
    @Option(names = "--from", paramLabel = "T", converter = TimeConverter.class,
            description = "The window's start, inclusive: now, now+1h, +30m, epoch ms or ISO-8601.")
    private Long from;

    @Option(names = "--until", paramLabel = "T", converter = TimeConverter.class,
            description = "The window's end, exclusive.")
    private Long until;

    long fromMs() {
        return from == null ? 0 : from;
    }

    long untilMs() {
        return until == null ? 0 : until;
    }
}
