package io.hourglass.client.contract;

import com.google.protobuf.DescriptorProtos.FileDescriptorProto;
import com.google.protobuf.DescriptorProtos.SourceCodeInfo;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The comments protoc kept for one file ({@code includeSourceInfoInDescriptorSet}), by element path.
 *
 * <p>A path is the chain of field numbers and indexes that leads from the file to an element, as
 * {@link SourceCodeInfo.Location#getPathList()} spells it: message 2's field 0 is {@code 4, 2, 2, 0}.
 * The constants below are the field numbers of {@code descriptor.proto} that such paths use.
 */
final class SourceComments {
    static final int FILE_PACKAGE = 2;
    static final int FILE_MESSAGE = 4;
    static final int FILE_ENUM = 5;
    static final int FILE_SERVICE = 6;
    static final int FILE_SYNTAX = 12;
    static final int MESSAGE_FIELD = 2;
    static final int MESSAGE_NESTED = 3;
    static final int MESSAGE_ENUM = 4;
    static final int MESSAGE_ONEOF = 8;
    static final int ENUM_VALUE = 2;
    static final int SERVICE_METHOD = 2;

    private final Map<List<Integer>, SourceCodeInfo.Location> byPath = new HashMap<>();

    SourceComments(FileDescriptorProto file) {
        for (SourceCodeInfo.Location location : file.getSourceCodeInfo().getLocationList()) {
            byPath.putIfAbsent(location.getPathList(), location);
        }
    }

    /** {@code parent} followed by {@code more}: the path of a child element. */
    static List<Integer> path(List<Integer> parent, int... more) {
        List<Integer> p = new ArrayList<>(parent.size() + more.length);
        p.addAll(parent);
        for (int i : more) {
            p.add(i);
        }
        return List.copyOf(p);
    }

    /** The comment on the lines right above the element, cleaned ({@link #clean}); empty when none. */
    String leading(List<Integer> path) {
        SourceCodeInfo.Location l = byPath.get(path);
        return l == null ? "" : clean(l.getLeadingComments());
    }

    /** The comment after the element on its own line, cleaned; empty when none. */
    String trailing(List<Integer> path) {
        SourceCodeInfo.Location l = byPath.get(path);
        return l == null ? "" : clean(l.getTrailingComments());
    }

    /** The leading comment, then the trailing one, as paragraphs. */
    String text(List<Integer> path) {
        String lead = leading(path);
        String trail = trailing(path);
        if (lead.isEmpty() || trail.isEmpty()) {
            return lead + trail;
        }
        return lead + "\n\n" + trail;
    }

    /** The line the element starts on (0-based), or -1 when protoc recorded no span. */
    int line(List<Integer> path) {
        SourceCodeInfo.Location l = byPath.get(path);
        return l == null || l.getSpanCount() == 0 ? -1 : l.getSpan(0);
    }

    /**
     * A comment as written, without the one space after each {@code //} and without trailing blank
     * lines; lines stay lines, and an empty {@code //} line stays an empty line (a paragraph break).
     */
    static String clean(String raw) {
        List<String> lines = new ArrayList<>();
        for (String line : raw.split("\n", -1)) {
            lines.add((line.startsWith(" ") ? line.substring(1) : line).stripTrailing());
        }
        while (!lines.isEmpty() && lines.get(lines.size() - 1).isEmpty()) {
            lines.remove(lines.size() - 1);
        }
        while (!lines.isEmpty() && lines.get(0).isEmpty()) {
            lines.remove(0);
        }
        return String.join("\n", lines);
    }
}
