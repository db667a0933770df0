/**
 * The {@code hourglass} command line (Picocli).
 *
 * <pre>
 *  Main ─▶ HourglassCommand.newCommandLine ─▶ publish | consume | room send|join|peek|state|configure
 *             │ global options (--servers, --output, --deadline, --verbose)
 *             │ ClientFactory ─▶ HourglassClient          RecordPrinter ─▶ table | json
 *             └ ErrorReporter (one line on stderr) ─▶ ExitCodes (the one exit-code mapping)
 * </pre>
 *
 * <p>Record fields and flags follow DESIGN §7, which outside scripts rely on. Durations are
 * read and written as {@code 500ms}, {@code 5s}, {@code 1m30s} ({@link io.hourglass.cli.DurationConverter}).
 */
package io.hourglass.cli;
