package io.hourglass.client.contract;

import static io.hourglass.client.contract.SourceComments.ENUM_VALUE;
import static io.hourglass.client.contract.SourceComments.FILE_ENUM;
import static io.hourglass.client.contract.SourceComments.FILE_MESSAGE;
import static io.hourglass.client.contract.SourceComments.FILE_SERVICE;
import static io.hourglass.client.contract.SourceComments.MESSAGE_ENUM;
import static io.hourglass.client.contract.SourceComments.MESSAGE_FIELD;
import static io.hourglass.client.contract.SourceComments.MESSAGE_NESTED;
import static io.hourglass.client.contract.SourceComments.SERVICE_METHOD;
import static io.hourglass.client.contract.SourceComments.path;

import com.google.protobuf.DescriptorProtos.DescriptorProto;
import com.google.protobuf.DescriptorProtos.EnumDescriptorProto;
import com.google.protobuf.DescriptorProtos.EnumValueDescriptorProto;
import com.google.protobuf.DescriptorProtos.FieldDescriptorProto;
import com.google.protobuf.DescriptorProtos.FieldDescriptorProto.Label;
import com.google.protobuf.DescriptorProtos.FieldDescriptorProto.Type;
import com.google.protobuf.DescriptorProtos.FileDescriptorProto;
import com.google.protobuf.DescriptorProtos.FileDescriptorSet;
import com.google.protobuf.DescriptorProtos.MethodDescriptorProto;
import com.google.protobuf.DescriptorProtos.ServiceDescriptorProto;
import com.google.protobuf.DescriptorProtos.SourceCodeInfo;
import java.util.List;

/**
 * Descriptors built by hand for the tests of the checks themselves, as protoc would write them:
 * {@link #documented} gives every element a leading comment naming it, on lines in declaration
 * order, so that a test breaks exactly the rule it is about.
 */
final class HandBuilt {
    static final String PACKAGE = "hourglass.v1";

    private HandBuilt() {
    }

    /** A proto3 file {@code hourglass/v1/<name>} of package {@code hourglass.v1}. */
    static FileDescriptorProto.Builder file(String name) {
        return FileDescriptorProto.newBuilder().setName(PACKAGE.replace('.', '/') + "/" + name).setPackage(PACKAGE)
                .setSyntax("proto3");
    }

    static DescriptorProto.Builder message(String name, FieldDescriptorProto.Builder... fields) {
        DescriptorProto.Builder m = DescriptorProto.newBuilder().setName(name);
        for (FieldDescriptorProto.Builder f : fields) {
            m.addField(f);
        }
        return m;
    }

    /** A singular scalar field. */
    static FieldDescriptorProto.Builder field(String name, int number, Type type) {
        return FieldDescriptorProto.newBuilder().setName(name).setNumber(number).setType(type)
                .setLabel(Label.LABEL_OPTIONAL).setJsonName(name);
    }

    /** A singular field of message type {@code hourglass.v1.<typeName>}. */
    static FieldDescriptorProto.Builder field(String name, int number, String typeName) {
        return field(name, number, Type.TYPE_MESSAGE).setTypeName("." + PACKAGE + "." + typeName);
    }

    static EnumDescriptorProto.Builder enumeration(String name, String... values) {
        EnumDescriptorProto.Builder e = EnumDescriptorProto.newBuilder().setName(name);
        for (int i = 0; i < values.length; i++) {
            e.addValue(EnumValueDescriptorProto.newBuilder().setName(values[i]).setNumber(i));
        }
        return e;
    }

    static ServiceDescriptorProto.Builder service(String name, MethodDescriptorProto.Builder... rpcs) {
        ServiceDescriptorProto.Builder s = ServiceDescriptorProto.newBuilder().setName(name);
        for (MethodDescriptorProto.Builder rpc : rpcs) {
            s.addMethod(rpc);
        }
        return s;
    }

    /** A unary RPC between messages of {@code hourglass.v1}. */
    static MethodDescriptorProto.Builder rpc(String name, String request, String response) {
        return MethodDescriptorProto.newBuilder().setName(name).setInputType("." + PACKAGE + "." + request)
                .setOutputType("." + PACKAGE + "." + response);
    }

    static FileDescriptorSet set(FileDescriptorProto.Builder... files) {
        FileDescriptorSet.Builder set = FileDescriptorSet.newBuilder();
        for (FileDescriptorProto.Builder f : files) {
            set.addFile(f);
        }
        return set.build();
    }

    /** {@code file} with a leading comment on every service, RPC, message, field, enum and enum value. */
    static FileDescriptorProto.Builder documented(FileDescriptorProto.Builder file) {
        SourceCodeInfo.Builder info = SourceCodeInfo.newBuilder();
        for (int s = 0; s < file.getServiceCount(); s++) {
            List<Integer> at = List.of(FILE_SERVICE, s);
            comment(info, at, "service " + file.getService(s).getName());
            for (int m = 0; m < file.getService(s).getMethodCount(); m++) {
                comment(info, path(at, SERVICE_METHOD, m), "rpc " + file.getService(s).getMethod(m).getName());
            }
        }
        for (int m = 0; m < file.getMessageTypeCount(); m++) {
            documentMessage(info, List.of(FILE_MESSAGE, m), file.getMessageType(m));
        }
        for (int e = 0; e < file.getEnumTypeCount(); e++) {
            documentEnum(info, List.of(FILE_ENUM, e), file.getEnumType(e));
        }
        return file.setSourceCodeInfo(info);
    }

    private static void documentMessage(SourceCodeInfo.Builder info, List<Integer> at, DescriptorProto message) {
        comment(info, at, "message " + message.getName());
        for (int f = 0; f < message.getFieldCount(); f++) {
            comment(info, path(at, MESSAGE_FIELD, f), "field " + message.getField(f).getName());
        }
        for (int n = 0; n < message.getNestedTypeCount(); n++) {
            documentMessage(info, path(at, MESSAGE_NESTED, n), message.getNestedType(n));
        }
        for (int e = 0; e < message.getEnumTypeCount(); e++) {
            documentEnum(info, path(at, MESSAGE_ENUM, e), message.getEnumType(e));
        }
    }

    private static void documentEnum(SourceCodeInfo.Builder info, List<Integer> at, EnumDescriptorProto e) {
        comment(info, at, "enum " + e.getName());
        for (int v = 0; v < e.getValueCount(); v++) {
            comment(info, path(at, ENUM_VALUE, v), "value " + e.getValue(v).getName());
        }
    }

    private static void comment(SourceCodeInfo.Builder info, List<Integer> at, String text) {
        int line = info.getLocationCount() * 2;
        info.addLocation(SourceCodeInfo.Location.newBuilder().addAllPath(at).addSpan(line).addSpan(0).addSpan(1)
                .setLeadingComments(" " + text + "\n"));
    }

    /** {@code file} with the comment at {@code at} made trailing instead of leading. */
    static FileDescriptorProto.Builder trailingOnly(FileDescriptorProto.Builder file, List<Integer> at) {
        SourceCodeInfo.Builder info = file.getSourceCodeInfoBuilder();
        for (SourceCodeInfo.Location.Builder l : info.getLocationBuilderList()) {
            if (l.getPathList().equals(at)) {
                l.setTrailingComments(l.getLeadingComments()).clearLeadingComments();
            }
        }
        return file;
    }
}
