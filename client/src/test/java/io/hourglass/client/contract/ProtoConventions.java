package io.hourglass.client.contract;

import static io.hourglass.client.contract.SourceComments.ENUM_VALUE;
import static io.hourglass.client.contract.SourceComments.FILE_SERVICE;
import static io.hourglass.client.contract.SourceComments.MESSAGE_FIELD;
import static io.hourglass.client.contract.SourceComments.SERVICE_METHOD;
import static io.hourglass.client.contract.SourceComments.path;

import com.google.protobuf.DescriptorProtos.DescriptorProto;
import com.google.protobuf.DescriptorProtos.EnumDescriptorProto;
import com.google.protobuf.DescriptorProtos.EnumValueDescriptorProto;
import com.google.protobuf.DescriptorProtos.FieldDescriptorProto;
import com.google.protobuf.DescriptorProtos.FileDescriptorProto;
import com.google.protobuf.DescriptorProtos.FileDescriptorSet;
import com.google.protobuf.DescriptorProtos.ServiceDescriptorProto;
import io.hourglass.client.contract.ApiReference.Declared;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * The conventions every {@code .proto} of the API keeps, as a list of what breaks them:
 * <ul>
 *   <li>the package is versioned ({@code hourglass.v1}; a breaking change goes to a new version
 *       beside it) and the file sits in the directory its package names ({@code hourglass/v1/});</li>
 *   <li>every service, RPC, message, field, enum and enum value has a leading comment — the lines
 *       right above it. A trailing comment does not count: many code generators (Java, TypeScript,
 *       ...) carry only leading comments into the code other languages' users read;</li>
 *   <li>field numbers are unique in their message and in none of its {@code reserved} ranges, and no
 *       field or enum value takes a {@code reserved} name or number.</li>
 * </ul>
 * protoc refuses some of these already; checking them here as well keeps the rules in one place
 * and lets a test hand-build descriptors that break them.
 */
final class ProtoConventions {
    /** {@code hourglass.v1}, {@code hourglass.v2beta1}: lower-case words, the last one a version. */
    static final Pattern VERSIONED_PACKAGE = Pattern.compile("[a-z][a-z0-9_]*(\\.[a-z][a-z0-9_]*)*\\.v[1-9][0-9]*"
            + "((alpha|beta)[1-9][0-9]*)?");

    private final List<String> violations = new ArrayList<>();

    private ProtoConventions() {
    }

    /** What breaks the conventions, one line each; empty when nothing does. */
    static List<String> violations(FileDescriptorSet set) {
        ProtoConventions check = new ProtoConventions();
        set.getFileList().forEach(check::file);
        return check.violations;
    }

    private void file(FileDescriptorProto file) {
        String pkg = file.getPackage();
        if (!VERSIONED_PACKAGE.matcher(pkg).matches()) {
            add(file, "package '" + pkg + "' is not versioned: name it like hourglass.v1");
        } else if (!file.getName().startsWith(pkg.replace('.', '/') + "/")) {
            add(file, "package " + pkg + " belongs in the directory " + pkg.replace('.', '/') + "/");
        }
        SourceComments comments = new SourceComments(file);
        for (int s = 0; s < file.getServiceCount(); s++) {
            ServiceDescriptorProto service = file.getService(s);
            List<Integer> at = List.of(FILE_SERVICE, s);
            documented(file, comments, at, "service " + pkg + "." + service.getName());
            for (int m = 0; m < service.getMethodCount(); m++) {
                documented(file, comments, path(at, SERVICE_METHOD, m),
                        "rpc " + pkg + "." + service.getName() + "." + service.getMethod(m).getName());
            }
        }
        for (Declared<DescriptorProto> m : ApiReference.messages(file)) {
            if (!m.proto().getOptions().getMapEntry()) {
                message(file, comments, m);
            }
        }
        for (Declared<EnumDescriptorProto> e : ApiReference.enums(file)) {
            enumeration(file, comments, e);
        }
    }

    private void message(FileDescriptorProto file, SourceComments comments, Declared<DescriptorProto> declared) {
        DescriptorProto message = declared.proto();
        String name = file.getPackage() + "." + declared.name();
        documented(file, comments, declared.path(), "message " + name);
        Map<Integer, String> numbers = new HashMap<>();
        for (int f = 0; f < message.getFieldCount(); f++) {
            FieldDescriptorProto field = message.getField(f);
            String what = "field " + name + "." + field.getName() + " (" + field.getNumber() + ")";
            documented(file, comments, path(declared.path(), MESSAGE_FIELD, f), what);
            String earlier = numbers.putIfAbsent(field.getNumber(), field.getName());
            if (earlier != null) {
                add(file, what + " has the number of field " + earlier);
            }
            for (DescriptorProto.ReservedRange r : message.getReservedRangeList()) {
                if (field.getNumber() >= r.getStart() && field.getNumber() < r.getEnd()) {
                    add(file, what + " uses a reserved number (" + range(r.getStart(), r.getEnd() - 1) + ")");
                }
            }
            if (message.getReservedNameList().contains(field.getName())) {
                add(file, what + " uses a reserved name");
            }
        }
    }

    private void enumeration(FileDescriptorProto file, SourceComments comments, Declared<EnumDescriptorProto> declared) {
        EnumDescriptorProto e = declared.proto();
        String name = file.getPackage() + "." + declared.name();
        documented(file, comments, declared.path(), "enum " + name);
        for (int v = 0; v < e.getValueCount(); v++) {
            EnumValueDescriptorProto value = e.getValue(v);
            String what = "enum value " + name + "." + value.getName() + " (" + value.getNumber() + ")";
            documented(file, comments, path(declared.path(), ENUM_VALUE, v), what);
            for (EnumDescriptorProto.EnumReservedRange r : e.getReservedRangeList()) {
                if (value.getNumber() >= r.getStart() && value.getNumber() <= r.getEnd()) {
                    add(file, what + " uses a reserved number (" + range(r.getStart(), r.getEnd()) + ")");
                }
            }
            if (e.getReservedNameList().contains(value.getName())) {
                add(file, what + " uses a reserved name");
            }
        }
    }

    private void documented(FileDescriptorProto file, SourceComments comments, List<Integer> at, String what) {
        if (comments.leading(at).isBlank()) {
            add(file, what + " has no leading comment"
                    + (comments.trailing(at).isBlank() ? "" : " (move its trailing comment above it)"));
        }
    }

    private static String range(int first, int last) {
        return first == last ? String.valueOf(first) : first + " to " + last;
    }

    private void add(FileDescriptorProto file, String violation) {
        violations.add(file.getName() + ": " + violation);
    }
}
