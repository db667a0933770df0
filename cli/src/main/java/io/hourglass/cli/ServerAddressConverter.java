package io.hourglass.cli;

import io.hourglass.client.ServerAddress;
import picocli.CommandLine;

/** Reads one {@code host:port} of {@code --servers}. */
final class ServerAddressConverter implements CommandLine.ITypeConverter<ServerAddress> {
    @Override
    public ServerAddress convert(String value) {
        try {
            return ServerAddress.parse(value);
        } catch (IllegalArgumentException e) {
            throw new CommandLine.TypeConversionException(e.getMessage());
        }
    }
}
