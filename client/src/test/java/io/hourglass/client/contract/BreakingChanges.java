package io.hourglass.client.contract;

import com.google.protobuf.DescriptorProtos.DescriptorProto;
import com.google.protobuf.DescriptorProtos.EnumDescriptorProto;
import com.google.protobuf.DescriptorProtos.EnumValueDescriptorProto;
import com.google.protobuf.DescriptorProtos.FieldDescriptorProto;
import com.google.protobuf.DescriptorProtos.FileDescriptorProto;
import com.google.protobuf.DescriptorProtos.FileDescriptorSet;
import com.google.protobuf.DescriptorProtos.MethodDescriptorProto;
import com.google.protobuf.DescriptorProtos.ServiceDescriptorProto;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * What a new version of the API breaks for clients built against an old one, found by comparing
 * their descriptors: a file's package changed; a service, RPC, message, enum, field or enum value
 * removed; a field number given to another field, or a field given another number; a field's type,
 * label ({@code repeated}, {@code optional}) or oneof changed; an RPC's request or response type or
 * its streaming changed; an enum value's number changed. Anything added is compatible, and so is a
 * change of comments, of options or of declaration order.
 *
 * <p>Types are compared by full name ({@code .hourglass.v1.Ack}) wherever they are declared: moving
 * one to another file of its package changes nothing on the wire or in JSON, and passes.
 */
final class BreakingChanges {
    private final List<String> found = new ArrayList<>();

    private BreakingChanges() {
    }

    /** What {@code current} breaks of {@code baseline}, one line each; empty when it is compatible. */
    static List<String> between(FileDescriptorSet baseline, FileDescriptorSet current) {
        BreakingChanges check = new BreakingChanges();
        check.compare(Index.of(baseline), Index.of(current));
        return check.found;
    }

    /** A descriptor set's files, services, messages and enums, by full name. */
    private record Index(Map<String, FileDescriptorProto> files, Map<String, ServiceDescriptorProto> services,
                         Map<String, DescriptorProto> messages, Map<String, EnumDescriptorProto> enums) {
        static Index of(FileDescriptorSet set) {
            Index index = new Index(new LinkedHashMap<>(), new LinkedHashMap<>(), new LinkedHashMap<>(),
                    new LinkedHashMap<>());
            for (FileDescriptorProto file : set.getFileList()) {
                index.files.put(file.getName(), file);
                String scope = file.getPackage().isEmpty() ? "" : "." + file.getPackage();
                file.getServiceList().forEach(s -> index.services.put(scope + "." + s.getName(), s));
                file.getEnumTypeList().forEach(e -> index.enums.put(scope + "." + e.getName(), e));
                index.addMessages(scope, file.getMessageTypeList());
            }
            return index;
        }

        private void addMessages(String scope, List<DescriptorProto> list) {
            for (DescriptorProto m : list) {
                String name = scope + "." + m.getName();
                messages.put(name, m);
                m.getEnumTypeList().forEach(e -> enums.put(name + "." + e.getName(), e));
                addMessages(name, m.getNestedTypeList());
            }
        }
    }

    private void compare(Index was, Index is) {
        was.files().forEach((name, file) -> {
            FileDescriptorProto now = is.files().get(name);
            if (now != null && !now.getPackage().equals(file.getPackage())) {
                found.add("file " + name + ": package changed from " + file.getPackage() + " to " + now.getPackage());
            }
        });
        was.services().forEach((name, service) -> {
            ServiceDescriptorProto now = is.services().get(name);
            if (now == null) {
                found.add("service " + shown(name) + " was removed");
            } else {
                service(name, service, now);
            }
        });
        was.messages().forEach((name, message) -> {
            DescriptorProto now = is.messages().get(name);
            if (now == null) {
                found.add("message " + shown(name) + " was removed");
            } else {
                message(name, message, now);
            }
        });
        was.enums().forEach((name, e) -> {
            EnumDescriptorProto now = is.enums().get(name);
            if (now == null) {
                found.add("enum " + shown(name) + " was removed");
            } else {
                enumeration(name, e, now);
            }
        });
    }

    private void service(String name, ServiceDescriptorProto was, ServiceDescriptorProto is) {
        for (MethodDescriptorProto rpc : was.getMethodList()) {
            String what = "rpc " + shown(name) + "." + rpc.getName();
            MethodDescriptorProto now = is.getMethodList().stream()
                    .filter(m -> m.getName().equals(rpc.getName())).findFirst().orElse(null);
            if (now == null) {
                found.add(what + " was removed");
                continue;
            }
            if (!now.getInputType().equals(rpc.getInputType())) {
                found.add(what + ": request type changed from " + shown(rpc.getInputType()) + " to "
                        + shown(now.getInputType()));
            }
            if (!now.getOutputType().equals(rpc.getOutputType())) {
                found.add(what + ": response type changed from " + shown(rpc.getOutputType()) + " to "
                        + shown(now.getOutputType()));
            }
            if (now.getClientStreaming() != rpc.getClientStreaming() || now.getServerStreaming() != rpc.getServerStreaming()) {
                found.add(what + ": streaming changed from " + streaming(rpc) + " to " + streaming(now));
            }
        }
    }

    private void message(String name, DescriptorProto was, DescriptorProto is) {
        for (FieldDescriptorProto field : was.getFieldList()) {
            String what = "field " + shown(name) + "." + field.getName() + " (" + field.getNumber() + ")";
            FieldDescriptorProto sameNumber = field(is, f -> f.getNumber() == field.getNumber());
            FieldDescriptorProto sameName = field(is, f -> f.getName().equals(field.getName()));
            if (sameNumber == null) {
                found.add(sameName == null ? what + " was removed"
                        : what + " was renumbered to " + sameName.getNumber());
                continue;
            }
            if (!sameNumber.getName().equals(field.getName())) {
                found.add(what + ": number " + field.getNumber() + " now belongs to field " + sameNumber.getName());
                continue;
            }
            if (sameNumber.getType() != field.getType() || !sameNumber.getTypeName().equals(field.getTypeName())) {
                found.add(what + ": type changed from " + type(field) + " to " + type(sameNumber));
            }
            if (!label(field).equals(label(sameNumber))) {
                found.add(what + ": label changed from " + label(field) + " to " + label(sameNumber));
            }
            String oneofWas = oneof(was, field);
            String oneofIs = oneof(is, sameNumber);
            if (!oneofWas.equals(oneofIs)) {
                found.add(what + ": oneof changed from " + oneofWas + " to " + oneofIs);
            }
        }
    }

    private void enumeration(String name, EnumDescriptorProto was, EnumDescriptorProto is) {
        for (EnumValueDescriptorProto value : was.getValueList()) {
            String what = "enum value " + shown(name) + "." + value.getName() + " (" + value.getNumber() + ")";
            EnumValueDescriptorProto now = is.getValueList().stream()
                    .filter(v -> v.getName().equals(value.getName())).findFirst().orElse(null);
            if (now == null) {
                found.add(what + " was removed");
            } else if (now.getNumber() != value.getNumber()) {
                found.add(what + ": number changed to " + now.getNumber());
            }
        }
    }

    private static FieldDescriptorProto field(DescriptorProto message,
                                              java.util.function.Predicate<FieldDescriptorProto> which) {
        return message.getFieldList().stream().filter(which).findFirst().orElse(null);
    }

    private static String type(FieldDescriptorProto field) {
        return field.getTypeName().isEmpty() ? field.getType().name().substring("TYPE_".length()).toLowerCase(Locale.ROOT)
                : shown(field.getTypeName());
    }

    /** repeated, required (proto2), optional (proto3 {@code optional}: with presence), or singular. */
    private static String label(FieldDescriptorProto field) {
        if (field.getLabel() == FieldDescriptorProto.Label.LABEL_REPEATED) {
            return "repeated";
        }
        if (field.getLabel() == FieldDescriptorProto.Label.LABEL_REQUIRED) {
            return "required";
        }
        return field.getProto3Optional() ? "optional" : "singular";
    }

    /** The field's oneof, by name: a proto3 {@code optional}'s synthetic one counts as none. */
    private static String oneof(DescriptorProto message, FieldDescriptorProto field) {
        if (!field.hasOneofIndex() || field.getProto3Optional()) {
            return "none";
        }
        return message.getOneofDecl(field.getOneofIndex()).getName();
    }

    private static String streaming(MethodDescriptorProto rpc) {
        return (rpc.getClientStreaming() ? "stream " : "") + "request, " + (rpc.getServerStreaming() ? "stream " : "")
                + "response";
    }

    /** {@code .hourglass.v1.Ack} → {@code hourglass.v1.Ack}. */
    private static String shown(String fullName) {
        return fullName.startsWith(".") ? fullName.substring(1) : fullName;
    }
}
