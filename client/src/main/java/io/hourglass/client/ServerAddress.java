package io.hourglass.client;

/**
 * A server's client-facing gRPC address, written {@code host:port} ({@code [::1]:7070} for
 * IPv6 literals).
 *
 * @param host host name or IP literal (without brackets)
 * @param port TCP port, 1–65535
 */
public record ServerAddress(String host, int port) {
    public static final int DEFAULT_PORT = 7070;

    public ServerAddress {
        if (host == null || host.isBlank() || host.chars().anyMatch(Character::isWhitespace)) {
            throw new IllegalArgumentException("server host must not be empty: '" + host + "'");
        }
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException("server port out of range (1-65535): " + port);
        }
    }

    /**
     * Parses {@code host:port}.
     *
     * @throws IllegalArgumentException if the text is not {@code host:port}
     */
    public static ServerAddress parse(String text) {
        String s = text == null ? "" : text.strip();
        int colon = s.lastIndexOf(':');
        if (colon <= 0 || colon == s.length() - 1) {
            throw new IllegalArgumentException("expected host:port, got '" + text + "'");
        }
        String host = s.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        } else if (host.indexOf(':') >= 0) {
            throw new IllegalArgumentException("IPv6 addresses must be bracketed: '" + text + "'");
        }
        int port;
        try {
            port = Integer.parseInt(s.substring(colon + 1));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("expected host:port, got '" + text + "'", e);
        }
        return new ServerAddress(host, port);
    }

    /** The address as {@code host:port}, the form {@link #parse} reads. */
    @Override
    public String toString() {
        return host.indexOf(':') >= 0 ? "[" + host + "]:" + port : host + ":" + port;
    }
}
