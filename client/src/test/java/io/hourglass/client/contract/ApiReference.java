package io.hourglass.client.contract;

import static io.hourglass.client.contract.SourceComments.ENUM_VALUE;
import static io.hourglass.client.contract.SourceComments.FILE_ENUM;
import static io.hourglass.client.contract.SourceComments.FILE_MESSAGE;
import static io.hourglass.client.contract.SourceComments.FILE_SERVICE;
import static io.hourglass.client.contract.SourceComments.FILE_SYNTAX;
import static io.hourglass.client.contract.SourceComments.MESSAGE_ENUM;
import static io.hourglass.client.contract.SourceComments.MESSAGE_FIELD;
import static io.hourglass.client.contract.SourceComments.MESSAGE_NESTED;
import static io.hourglass.client.contract.SourceComments.SERVICE_METHOD;
import static io.hourglass.client.contract.SourceComments.path;

import com.google.protobuf.DescriptorProtos.DescriptorProto;
import com.google.protobuf.DescriptorProtos.EnumDescriptorProto;
import com.google.protobuf.DescriptorProtos.EnumValueDescriptorProto;
import com.google.protobuf.DescriptorProtos.FieldDescriptorProto;
import com.google.protobuf.DescriptorProtos.FileDescriptorProto;
import com.google.protobuf.DescriptorProtos.FileDescriptorSet;
import com.google.protobuf.DescriptorProtos.MethodDescriptorProto;
import com.google.protobuf.DescriptorProtos.ServiceDescriptorProto;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * Renders the API reference, one Markdown page per {@code .proto} file ({@code broker.proto} →
 * {@code broker.md}): its services with their RPCs and streaming kinds, then its messages (field
 * tables: number, name, type, label, description) and enums, each in source order, every type a
 * link. The descriptions are the protos' comments, read as Markdown; nothing is written by hand
 * here, so the pages say what the protos say and nothing else ({@code ApiReferenceTest} keeps the
 * checked-in copies equal to what this renders).
 */
final class ApiReference {
    /** Where the protos are, from the repository root: named in each page's header. */
    static final String PROTO_DIR = "client/src/main/proto/";
    /** The hand-written guide next to the pages, which every page links to. */
    static final String GUIDE = "README.md";

    /** Where a message or enum is rendered: its page and anchor. */
    private record Target(String page, String anchor) {
    }

    /** A message or enum with what locates it in its file. */
    record Declared<T>(String name, T proto, List<Integer> path, int line) {
    }

    /** Each message and enum by full name ({@code .hourglass.v1.Ack}). */
    private final Map<String, Target> targets = new HashMap<>();
    /** Map entry messages by full name: shown as {@code map<K, V>}, never as messages of their own. */
    private final Map<String, DescriptorProto> mapEntries = new HashMap<>();

    private ApiReference(FileDescriptorSet set) {
        for (FileDescriptorProto file : set.getFileList()) {
            for (Declared<DescriptorProto> m : messages(file)) {
                targets.put(fullName(file, m.name()), new Target(page(file), anchor(m.name())));
            }
            for (Declared<EnumDescriptorProto> e : enums(file)) {
                targets.put(fullName(file, e.name()), new Target(page(file), anchor(e.name())));
            }
            collectMapEntries(file.getPackage().isEmpty() ? "" : "." + file.getPackage(), file.getMessageTypeList());
        }
    }

    /** Every page, by file name, in name order. */
    static Map<String, String> pages(FileDescriptorSet set) {
        ApiReference reference = new ApiReference(set);
        Map<String, String> pages = new TreeMap<>();
        for (FileDescriptorProto file : set.getFileList()) {
            if (pages.put(page(file), reference.render(file)) != null) {
                throw new IllegalStateException("two protos render to " + page(file));
            }
        }
        return pages;
    }

    /** {@code hourglass/v1/broker.proto} → {@code broker.md}. */
    static String page(FileDescriptorProto file) {
        String name = file.getName().substring(file.getName().lastIndexOf('/') + 1);
        return name.replaceFirst("\\.proto$", "") + ".md";
    }

    private String render(FileDescriptorProto file) {
        SourceComments comments = new SourceComments(file);
        Set<String> anchors = new HashSet<>();
        StringBuilder out = new StringBuilder();
        String base = file.getName().substring(file.getName().lastIndexOf('/') + 1);
        out.append("# `").append(file.getPackage()).append("` — ").append(base).append("\n\n")
                .append("<!-- Generated from ").append(PROTO_DIR).append(file.getName())
                .append(" by ApiReferenceTest (client): edit the comments in the .proto, not this file. -->\n\n");
        paragraph(out, comments.leading(List.of(FILE_SYNTAX)));
        out.append("What every call shares — connecting, leader redirects, retries, flow control, acknowledgements, "
                + "status codes — is in [the API guide](").append(GUIDE).append(").\n");

        if (file.getServiceCount() > 0) {
            out.append("\n## Services\n");
            for (int s = 0; s < file.getServiceCount(); s++) {
                service(out, anchors, file, comments, file.getService(s), List.of(FILE_SERVICE, s));
            }
        }
        List<Declared<DescriptorProto>> messages = messages(file).stream()
                .filter(m -> !mapEntries.containsKey(fullName(file, m.name()))).toList();
        if (!messages.isEmpty()) {
            out.append("\n## Messages\n");
            for (Declared<DescriptorProto> m : messages) {
                message(out, anchors, file, comments, m);
            }
        }
        List<Declared<EnumDescriptorProto>> enums = enums(file);
        if (!enums.isEmpty()) {
            out.append("\n## Enums\n");
            for (Declared<EnumDescriptorProto> e : enums) {
                enumeration(out, anchors, comments, e);
            }
        }
        // Blocks each add the blank line they need; where two meet, one is enough.
        return out.toString().replaceAll("\n{3,}", "\n\n");
    }

    private void service(StringBuilder out, Set<String> anchors, FileDescriptorProto file, SourceComments comments,
                         ServiceDescriptorProto service, List<Integer> at) {
        heading(out, anchors, "###", service.getName());
        paragraph(out, comments.text(at));
        out.append("| RPC | request | response | streaming |\n|---|---|---|---|\n");
        for (MethodDescriptorProto rpc : service.getMethodList()) {
            String qualified = service.getName() + "." + rpc.getName();
            out.append("| [`").append(rpc.getName()).append("`](#").append(anchor(qualified)).append(") | ")
                    .append(type(file, rpc.getInputType())).append(" | ").append(type(file, rpc.getOutputType()))
                    .append(" | ").append(streaming(rpc)).append(" |\n");
        }
        for (int m = 0; m < service.getMethodCount(); m++) {
            MethodDescriptorProto rpc = service.getMethod(m);
            out.append('\n');
            heading(out, anchors, "####", service.getName() + "." + rpc.getName());
            out.append("`rpc ").append(rpc.getName()).append('(').append(rpc.getClientStreaming() ? "stream " : "")
                    .append(simpleName(rpc.getInputType())).append(") returns (")
                    .append(rpc.getServerStreaming() ? "stream " : "").append(simpleName(rpc.getOutputType()))
                    .append(")` — ").append(streaming(rpc)).append("\n\n");
            paragraph(out, comments.text(path(at, SERVICE_METHOD, m)));
        }
    }

    private void message(StringBuilder out, Set<String> anchors, FileDescriptorProto file, SourceComments comments,
                         Declared<DescriptorProto> declared) {
        DescriptorProto message = declared.proto();
        heading(out, anchors, "###", declared.name());
        paragraph(out, comments.text(declared.path()));
        if (message.getFieldCount() == 0) {
            out.append("No fields.\n");
            return;
        }
        out.append("| number | field | type | label | description |\n|---|---|---|---|---|\n");
        for (int f = 0; f < message.getFieldCount(); f++) {
            FieldDescriptorProto field = message.getField(f);
            out.append("| ").append(field.getNumber()).append(" | `").append(field.getName()).append("` | ")
                    .append(fieldType(file, field)).append(" | ").append(label(message, field)).append(" | ")
                    .append(cell(comments.text(path(declared.path(), MESSAGE_FIELD, f)))).append(" |\n");
        }
    }

    private static void enumeration(StringBuilder out, Set<String> anchors, SourceComments comments,
                                    Declared<EnumDescriptorProto> declared) {
        heading(out, anchors, "###", declared.name());
        paragraph(out, comments.text(declared.path()));
        out.append("| number | value | description |\n|---|---|---|\n");
        for (int v = 0; v < declared.proto().getValueCount(); v++) {
            EnumValueDescriptorProto value = declared.proto().getValue(v);
            out.append("| ").append(value.getNumber()).append(" | `").append(value.getName()).append("` | ")
                    .append(cell(comments.text(path(declared.path(), ENUM_VALUE, v)))).append(" |\n");
        }
    }

    private String fieldType(FileDescriptorProto file, FieldDescriptorProto field) {
        DescriptorProto entry = mapEntries.get(field.getTypeName());
        if (entry != null) {
            FieldDescriptorProto value = entry.getField(1);
            String key = scalar(entry.getField(0));
            return value.getTypeName().isEmpty() ? "`map<" + key + ", " + scalar(value) + ">`"
                    : "map<`" + key + "`, " + type(file, value.getTypeName()) + ">";
        }
        return field.getTypeName().isEmpty() ? "`" + scalar(field) + "`" : type(file, field.getTypeName());
    }

    /** {@code TYPE_STRING} → {@code string}. */
    private static String scalar(FieldDescriptorProto field) {
        return field.getType().name().substring("TYPE_".length()).toLowerCase(Locale.ROOT);
    }

    /** A message or enum as a link to where it is rendered; a type outside the set (a well-known one) as its name. */
    private String type(FileDescriptorProto file, String fullName) {
        Target t = targets.get(fullName);
        String shown = "`" + relativeName(file, fullName) + "`";
        if (t == null) {
            return shown;
        }
        return "[" + shown + "](" + (t.page().equals(page(file)) ? "" : t.page()) + "#" + t.anchor() + ")";
    }

    private String label(DescriptorProto message, FieldDescriptorProto field) {
        if (mapEntries.containsKey(field.getTypeName())) {
            return "";
        }
        if (field.getLabel() == FieldDescriptorProto.Label.LABEL_REPEATED) {
            return "repeated";
        }
        if (field.getProto3Optional()) {
            return "optional";
        }
        if (field.hasOneofIndex()) {
            return "oneof `" + message.getOneofDecl(field.getOneofIndex()).getName() + "`";
        }
        return "";
    }

    private static String streaming(MethodDescriptorProto rpc) {
        if (rpc.getClientStreaming() && rpc.getServerStreaming()) {
            return "bidirectional streaming";
        }
        if (rpc.getClientStreaming()) {
            return "client streaming";
        }
        return rpc.getServerStreaming() ? "server streaming" : "unary";
    }

    private void collectMapEntries(String scope, List<DescriptorProto> messages) {
        for (DescriptorProto m : messages) {
            String name = scope + "." + m.getName();
            if (m.getOptions().getMapEntry()) {
                mapEntries.put(name, m);
            }
            collectMapEntries(name, m.getNestedTypeList());
        }
    }

    /** Every message of the file, nested ones with dotted names, in source order. */
    static List<Declared<DescriptorProto>> messages(FileDescriptorProto file) {
        SourceComments comments = new SourceComments(file);
        List<Declared<DescriptorProto>> all = new ArrayList<>();
        for (int m = 0; m < file.getMessageTypeCount(); m++) {
            addMessage(all, comments, "", file.getMessageType(m), List.of(FILE_MESSAGE, m));
        }
        all.sort(Comparator.comparingInt(Declared::line));
        return all;
    }

    private static void addMessage(List<Declared<DescriptorProto>> all, SourceComments comments, String scope,
                                   DescriptorProto message, List<Integer> at) {
        String name = scope + message.getName();
        all.add(new Declared<>(name, message, at, comments.line(at)));
        for (int n = 0; n < message.getNestedTypeCount(); n++) {
            addMessage(all, comments, name + ".", message.getNestedType(n), path(at, MESSAGE_NESTED, n));
        }
    }

    /** Every enum of the file, nested ones with dotted names, in source order. */
    static List<Declared<EnumDescriptorProto>> enums(FileDescriptorProto file) {
        SourceComments comments = new SourceComments(file);
        List<Declared<EnumDescriptorProto>> all = new ArrayList<>();
        for (int e = 0; e < file.getEnumTypeCount(); e++) {
            List<Integer> at = List.of(FILE_ENUM, e);
            all.add(new Declared<>(file.getEnumType(e).getName(), file.getEnumType(e), at, comments.line(at)));
        }
        for (Declared<DescriptorProto> m : messages(file)) {
            for (int e = 0; e < m.proto().getEnumTypeCount(); e++) {
                EnumDescriptorProto nested = m.proto().getEnumType(e);
                List<Integer> at = path(m.path(), MESSAGE_ENUM, e);
                all.add(new Declared<>(m.name() + "." + nested.getName(), nested, at, comments.line(at)));
            }
        }
        all.sort(Comparator.comparingInt(Declared::line));
        return all;
    }

    private static String fullName(FileDescriptorProto file, String name) {
        return (file.getPackage().isEmpty() ? "" : "." + file.getPackage()) + "." + name;
    }

    /** {@code .hourglass.v1.CancelResponse.Outcome} → {@code CancelResponse.Outcome} within {@code hourglass.v1}. */
    private static String relativeName(FileDescriptorProto file, String fullName) {
        String prefix = "." + file.getPackage() + ".";
        return fullName.startsWith(prefix) ? fullName.substring(prefix.length()) : fullName.substring(1);
    }

    private static String simpleName(String fullName) {
        return fullName.substring(fullName.lastIndexOf('.') + 1);
    }

    /** A heading whose text is {@code name} in code; two headings of one page may not share an anchor. */
    private static void heading(StringBuilder out, Set<String> anchors, String level, String name) {
        if (!anchors.add(anchor(name))) {
            throw new IllegalStateException("two headings would share the anchor #" + anchor(name) + ": " + name);
        }
        out.append('\n').append(level).append(" `").append(name).append("`\n\n");
    }

    /** GitHub's anchor for a heading reading {@code name}: lower case, without the dots. */
    static String anchor(String name) {
        return name.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9_ -]", "").replace(' ', '-');
    }

    private static void paragraph(StringBuilder out, String text) {
        if (!text.isEmpty()) {
            out.append(text).append("\n\n");
        }
    }

    /** A comment fit for a table cell: one line, pipes escaped, paragraphs kept apart. */
    static String cell(String text) {
        return text.replace("|", "\\|").replaceAll("\n[ \t]*\n", "<br><br>").replace('\n', ' ');
    }
}
