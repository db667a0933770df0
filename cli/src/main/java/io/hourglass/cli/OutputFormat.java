package io.hourglass.cli;

import java.util.Locale;
import picocli.CommandLine;

/** How records are printed: {@code table} for people, {@code json} (one object per line) for scripts. */
enum OutputFormat {
    TABLE, JSON;

    /** Reads {@code table} or {@code json}, in any case. */
    static final class Converter implements CommandLine.ITypeConverter<OutputFormat> {
        @Override
        public OutputFormat convert(String value) {
            try {
                return OutputFormat.valueOf(value.strip().toUpperCase(Locale.ROOT));
            } catch (IllegalArgumentException e) {
                throw new CommandLine.TypeConversionException(
                        "'" + value + "' is not an output format (table or json)");
            }
        }
    }
}
