package io.hourglass.core;

/**
 * Root of Hourglass' unchecked domain exceptions; mapped to gRPC status in one place (the server's
 * {@code StatusMapper}). Each subtype names one kind of refusal: {@link InvalidRequestException},
 * {@link NotFoundException}, {@link AlreadyExistsException}, {@link FailedPreconditionException},
 * {@link NotLeaderException}, {@link UnavailableException}.
 *
 * <p>A message reaches the client as the status description, so it quotes client input that was
 * not validated (and so not length-checked) only through {@link #excerpt}.
 */
public class HourglassException extends RuntimeException {
    /** The most characters of unvalidated client input an error message quotes. */
    public static final int MAX_EXCERPT = 60;

    public HourglassException(String message) {
        super(message);
    }

    public HourglassException(String message, Throwable cause) {
        super(message, cause);
    }

    /**
     * {@code input} as an error message may quote it: whole when short, else its first
     * {@link #MAX_EXCERPT} characters and how many more there were (null stays "null").
     */
    public static String excerpt(String input) {
        if (input == null || input.length() <= MAX_EXCERPT) {
            return String.valueOf(input);
        }
        return input.substring(0, MAX_EXCERPT) + "… (" + (input.length() - MAX_EXCERPT) + " more characters)";
    }
}
