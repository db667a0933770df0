package io.hourglass.cli;

import java.io.PrintWriter;
import picocli.CommandLine;

/**
 * Reports a failed command as one line on stderr ({@code hourglass: <what went wrong>}), plus the
 * stack trace only with {@code --verbose}, and returns the exit code from {@link ExitCodes}.
 */
final class ErrorReporter implements CommandLine.IExecutionExceptionHandler,
        CommandLine.IParameterExceptionHandler {
    private final ExitCodes exitCodes;

    ErrorReporter(ExitCodes exitCodes) {
        this.exitCodes = exitCodes;
    }

    @Override
    public int handleParseException(CommandLine.ParameterException ex, String[] args) {
        CommandLine cl = ex.getCommandLine();
        PrintWriter err = cl.getErr();
        err.println("hourglass: " + oneLine(ex.getMessage()) + " (see '"
                + cl.getCommandSpec().qualifiedName() + " --help')");
        err.flush();
        return ExitCodes.USAGE;
    }

    @Override
    public int handleExecutionException(Exception ex, CommandLine cl, CommandLine.ParseResult parsed) {
        if (ex instanceof CommandLine.ParameterException pe) {
            return handleParseException(pe, parsed.originalArgs().toArray(new String[0]));
        }
        Throwable cause = ExitCodes.unwrap(ex);
        PrintWriter err = cl.getErr();
        err.println("hourglass: " + describe(cause));
        if (isVerbose(cl)) {
            cause.printStackTrace(err);
        }
        err.flush();
        return exitCodes.getExitCode(cause);
    }

    private static String describe(Throwable t) {
        String message = t.getMessage();
        if (message == null || message.isBlank()) {
            return t.getClass().getSimpleName();
        }
        return oneLine(message);
    }

    private static String oneLine(String message) {
        String s = message.strip();
        int newline = s.indexOf('\n');
        return newline < 0 ? s : s.substring(0, newline).strip();
    }

    private static boolean isVerbose(CommandLine cl) {
        return cl.getCommandSpec().root().userObject() instanceof HourglassCommand root && root.verbose();
    }
}
