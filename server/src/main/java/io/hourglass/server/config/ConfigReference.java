package io.hourglass.server.config;

import io.hourglass.core.config.ConfigKey;
import io.hourglass.core.config.ConfigSection;
import java.util.List;

/**
 * Renders the configuration reference from the key declarations: the tables of
 * {@code docs/configuration.md} and the commented-out keys of the shipped {@code conf/hourglass.properties}.
 * Each file keeps its hand-written prose; only the part between its markers is generated
 * ({@code ConfigReferenceTest} fails, and writes the regenerated file, when a checked-in copy differs).
 */
public final class ConfigReference {
    public static final String MARKDOWN_BEGIN = "<!-- BEGIN generated from the config key declarations "
            + "(ConfigReferenceTest): edit those, not this part -->";
    public static final String MARKDOWN_END = "<!-- END generated -->";
    /** The generated part of the properties file runs from this line to the end of the file. */
    public static final String PROPERTIES_BEGIN = "# (Generated from the key declarations by ConfigReferenceTest: "
            + "edit those, not the lines below.)";
    private static final String RULE = "# " + "-".repeat(93);
    private static final int WIDTH = 100;

    private ConfigReference() {
    }

    /** One table per section: key, default, bounds, meaning. */
    public static String markdown(List<ConfigSection> sections) {
        StringBuilder out = new StringBuilder();
        for (ConfigSection section : sections) {
            out.append("\n## ").append(section.title()).append("\n\n")
                    .append("| key | default | bounds | meaning |\n|---|---|---|---|\n");
            for (ConfigKey<?> key : section.keys()) {
                out.append("| `").append(key.name()).append("` | `")
                        .append(key.defaultText().isEmpty() ? "(empty)" : key.defaultText()).append("` | ")
                        .append(cell(bounds(key))).append(" | ").append(cell(key.doc())).append(" |\n");
            }
        }
        return out.toString();
    }

    /** Every key commented out with its default, under its description, section by section. */
    public static String properties(List<ConfigSection> sections) {
        StringBuilder out = new StringBuilder();
        for (ConfigSection section : sections) {
            out.append('\n').append(RULE).append("\n# ").append(section.title()).append('\n').append(RULE).append('\n');
            for (ConfigKey<?> key : section.keys()) {
                String bounds = bounds(key);
                String text = key.doc().replace("`", "") + (bounds.isEmpty() ? "" : " Allowed: " + bounds + ".");
                out.append('\n').append(comment(text)).append('#').append(key.name()).append('=')
                        .append(key.defaultText()).append('\n');
            }
        }
        return out.toString();
    }

    /** {@code file} with the part between {@code begin} and {@code end} (null: the end of the file) replaced. */
    public static String splice(String file, String begin, String end, String generated) {
        int from = file.indexOf(begin);
        int to = end == null ? file.length() : file.indexOf(end, Math.max(from, 0));
        if (from < 0 || to < 0) {
            throw new IllegalArgumentException("the file has no marker " + (from < 0 ? begin : end));
        }
        return file.substring(0, from + begin.length()) + "\n" + generated + (end == null ? "" : "\n")
                + file.substring(to);
    }

    private static String bounds(ConfigKey<?> key) {
        return key.type() == Boolean.class ? "true or false" : key.bounds();
    }

    private static String cell(String text) {
        return text.replace("|", "\\|");
    }

    /** {@code text} as {@code # } lines of at most {@link #WIDTH} characters, broken between words. */
    private static String comment(String text) {
        StringBuilder out = new StringBuilder();
        StringBuilder line = new StringBuilder("#");
        for (String word : text.split(" ")) {
            if (line.length() > 1 && line.length() + 1 + word.length() > WIDTH) {
                out.append(line).append('\n');
                line.setLength(1);
            }
            line.append(' ').append(word);
        }
        return out.append(line).append('\n').toString();
    }
}
