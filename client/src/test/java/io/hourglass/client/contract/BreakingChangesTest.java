package io.hourglass.client.contract;

import static io.hourglass.client.contract.HandBuilt.enumeration;
import static io.hourglass.client.contract.HandBuilt.field;
import static io.hourglass.client.contract.HandBuilt.file;
import static io.hourglass.client.contract.HandBuilt.message;
import static io.hourglass.client.contract.HandBuilt.rpc;
import static io.hourglass.client.contract.HandBuilt.service;
import static io.hourglass.client.contract.HandBuilt.set;
import static org.junit.jupiter.api.Assertions.assertEquals;

import com.google.protobuf.DescriptorProtos.DescriptorProto;
import com.google.protobuf.DescriptorProtos.EnumValueDescriptorProto;
import com.google.protobuf.DescriptorProtos.FieldDescriptorProto.Label;
import com.google.protobuf.DescriptorProtos.FieldDescriptorProto.Type;
import com.google.protobuf.DescriptorProtos.FileDescriptorProto;
import com.google.protobuf.DescriptorProtos.FileDescriptorSet;
import com.google.protobuf.DescriptorProtos.OneofDescriptorProto;
import java.util.List;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The compatibility checker itself, on descriptors built by hand: each change, and what it reports. */
@Timeout(10)
class BreakingChangesTest {
    /** A small API: a service with one RPC, a message with three fields and a nested enum. */
    private static FileDescriptorProto.Builder api() {
        return file("queue.proto")
                .addService(service("Queue", rpc("Put", "PutRequest", "PutResponse")))
                .addMessageType(message("PutRequest", field("topic", 1, Type.TYPE_STRING),
                        field("payload", 2, Type.TYPE_BYTES), field("delay_ms", 3, Type.TYPE_INT64))
                        .addEnumType(enumeration("Mode", "MODE_UNSPECIFIED", "NOW", "LATER")))
                .addMessageType(message("PutResponse", field("id", 1, Type.TYPE_STRING)));
    }

    /** What the checker finds when {@code change} is applied to {@link #api()}. */
    private static List<String> after(Consumer<FileDescriptorProto.Builder> change) {
        FileDescriptorProto.Builder changed = api();
        change.accept(changed);
        return BreakingChanges.between(set(api()), set(changed));
    }

    private static DescriptorProto.Builder putRequest(FileDescriptorProto.Builder f) {
        return f.getMessageTypeBuilder(0);
    }

    @Test
    void theSameApiIsCompatible() {
        assertEquals(List.of(), after(f -> { }));
    }

    @Test
    void additionsAreCompatible() {
        assertEquals(List.of(), after(f -> {
            putRequest(f).addField(field("ttl_ms", 4, Type.TYPE_INT64));
            putRequest(f).getEnumTypeBuilder(0).addValue(EnumValueDescriptorProto.newBuilder().setName("NEVER").setNumber(3));
            f.addMessageType(message("Empty"));
            f.getServiceBuilder(0).addMethod(rpc("Ping", "Empty", "Empty"));
            f.addService(service("Other", rpc("Ping", "Empty", "Empty")));
        }));
        FileDescriptorSet withAnotherFile = set(api(), file("more.proto").addMessageType(message("More")));
        assertEquals(List.of(), BreakingChanges.between(set(api()), withAnotherFile));
    }

    @Test
    void reorderingFieldsIsCompatible() {
        assertEquals(List.of(), after(f -> {
            DescriptorProto.Builder m = putRequest(f);
            var first = m.getField(0);
            m.removeField(0).addField(first);
        }));
    }

    @Test
    void aRemovedFieldBreaks() {
        assertEquals(List.of("field hourglass.v1.PutRequest.payload (2) was removed"),
                after(f -> putRequest(f).removeField(1)));
    }

    @Test
    void aRenumberedFieldBreaks() {
        assertEquals(List.of("field hourglass.v1.PutRequest.delay_ms (3) was renumbered to 4"),
                after(f -> putRequest(f).getFieldBuilder(2).setNumber(4)));
    }

    @Test
    void aFieldNumberReusedForAnotherNameBreaks() {
        assertEquals(List.of("field hourglass.v1.PutRequest.delay_ms (3): number 3 now belongs to field delay"),
                after(f -> putRequest(f).getFieldBuilder(2).setName("delay")));
    }

    @Test
    void aChangedFieldTypeBreaks() {
        assertEquals(List.of("field hourglass.v1.PutRequest.delay_ms (3): type changed from int64 to int32"),
                after(f -> putRequest(f).getFieldBuilder(2).setType(Type.TYPE_INT32)));
        assertEquals(List.of("field hourglass.v1.PutRequest.payload (2): type changed from bytes to "
                        + "hourglass.v1.PutResponse"),
                after(f -> putRequest(f).getFieldBuilder(1).setType(Type.TYPE_MESSAGE)
                        .setTypeName(".hourglass.v1.PutResponse")));
    }

    @Test
    void aChangedLabelBreaks() {
        assertEquals(List.of("field hourglass.v1.PutRequest.topic (1): label changed from singular to repeated"),
                after(f -> putRequest(f).getFieldBuilder(0).setLabel(Label.LABEL_REPEATED)));
        assertEquals(List.of("field hourglass.v1.PutRequest.topic (1): label changed from singular to optional"),
                after(f -> {
                    putRequest(f).addOneofDecl(OneofDescriptorProto.newBuilder().setName("_topic"));
                    putRequest(f).getFieldBuilder(0).setProto3Optional(true).setOneofIndex(0);
                }));
    }

    @Test
    void movingAFieldIntoAOneofBreaks() {
        assertEquals(List.of("field hourglass.v1.PutRequest.payload (2): oneof changed from none to body"),
                after(f -> {
                    putRequest(f).addOneofDecl(OneofDescriptorProto.newBuilder().setName("body"));
                    putRequest(f).getFieldBuilder(1).setOneofIndex(0);
                }));
    }

    @Test
    void removedOrRenumberedEnumValuesBreak() {
        assertEquals(List.of("enum value hourglass.v1.PutRequest.Mode.LATER (2) was removed"),
                after(f -> putRequest(f).getEnumTypeBuilder(0).removeValue(2)));
        assertEquals(List.of("enum value hourglass.v1.PutRequest.Mode.LATER (2): number changed to 5"),
                after(f -> putRequest(f).getEnumTypeBuilder(0).getValueBuilder(2).setNumber(5)));
    }

    @Test
    void removedTypesBreak() {
        assertEquals(List.of("enum hourglass.v1.PutRequest.Mode was removed"),
                after(f -> putRequest(f).removeEnumType(0)));
        assertEquals(List.of("message hourglass.v1.PutResponse was removed"),
                after(f -> f.removeMessageType(1)));
    }

    @Test
    void removedOrChangedRpcsBreak() {
        assertEquals(List.of("rpc hourglass.v1.Queue.Put was removed"),
                after(f -> f.getServiceBuilder(0).removeMethod(0)));
        assertEquals(List.of("service hourglass.v1.Queue was removed"),
                after(f -> f.removeService(0)));
        assertEquals(List.of("rpc hourglass.v1.Queue.Put: response type changed from hourglass.v1.PutResponse to "
                        + "hourglass.v1.PutRequest"),
                after(f -> f.getServiceBuilder(0).getMethodBuilder(0).setOutputType(".hourglass.v1.PutRequest")));
        assertEquals(List.of("rpc hourglass.v1.Queue.Put: streaming changed from request, response to "
                        + "stream request, response"),
                after(f -> f.getServiceBuilder(0).getMethodBuilder(0).setClientStreaming(true)));
    }

    @Test
    void aChangedPackageBreaks() {
        List<String> found = after(f -> f.setPackage("hourglass.v2"));
        assertEquals("file hourglass/v1/queue.proto: package changed from hourglass.v1 to hourglass.v2", found.get(0));
        assertEquals("service hourglass.v1.Queue was removed", found.get(1));
    }
}
