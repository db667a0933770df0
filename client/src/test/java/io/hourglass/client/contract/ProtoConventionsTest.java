package io.hourglass.client.contract;

import static io.hourglass.client.contract.HandBuilt.documented;
import static io.hourglass.client.contract.HandBuilt.enumeration;
import static io.hourglass.client.contract.HandBuilt.field;
import static io.hourglass.client.contract.HandBuilt.file;
import static io.hourglass.client.contract.HandBuilt.message;
import static io.hourglass.client.contract.HandBuilt.rpc;
import static io.hourglass.client.contract.HandBuilt.service;
import static io.hourglass.client.contract.HandBuilt.set;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.DescriptorProtos.DescriptorProto;
import com.google.protobuf.DescriptorProtos.EnumDescriptorProto;
import com.google.protobuf.DescriptorProtos.FieldDescriptorProto.Type;
import com.google.protobuf.DescriptorProtos.FileDescriptorProto;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The protos keep the API's conventions ({@link ProtoConventions}: a versioned package, a leading
 * comment on everything, field numbers unique and not reserved); and the check itself finds each
 * breach in descriptors built by hand.
 */
@Timeout(10)
class ProtoConventionsTest {
    @Test
    void theProtosKeepTheConventions() {
        List<String> violations = ProtoConventions.violations(ApiDescriptors.current());
        assertTrue(violations.isEmpty(), violations.size() + " breaches of the API conventions in "
                + "client/src/main/proto (see ProtoConventions):\n  " + String.join("\n  ", violations));
    }

    private static FileDescriptorProto.Builder api() {
        return file("queue.proto")
                .addService(service("Queue", rpc("Put", "PutRequest", "PutResponse")))
                .addMessageType(message("PutRequest", field("topic", 1, Type.TYPE_STRING),
                        field("payload", 2, Type.TYPE_BYTES)))
                .addMessageType(message("PutResponse", field("id", 1, Type.TYPE_STRING))
                        .addEnumType(enumeration("Outcome", "OUTCOME_UNSPECIFIED", "STORED")));
    }

    @Test
    void aDocumentedApiKeepsThem() {
        assertEquals(List.of(), ProtoConventions.violations(set(documented(api()))));
    }

    @Test
    void everyElementNeedsALeadingComment() {
        List<String> found = ProtoConventions.violations(set(api()));
        assertEquals(List.of(
                "hourglass/v1/queue.proto: service hourglass.v1.Queue has no leading comment",
                "hourglass/v1/queue.proto: rpc hourglass.v1.Queue.Put has no leading comment",
                "hourglass/v1/queue.proto: message hourglass.v1.PutRequest has no leading comment",
                "hourglass/v1/queue.proto: field hourglass.v1.PutRequest.topic (1) has no leading comment",
                "hourglass/v1/queue.proto: field hourglass.v1.PutRequest.payload (2) has no leading comment",
                "hourglass/v1/queue.proto: message hourglass.v1.PutResponse has no leading comment",
                "hourglass/v1/queue.proto: field hourglass.v1.PutResponse.id (1) has no leading comment",
                "hourglass/v1/queue.proto: enum hourglass.v1.PutResponse.Outcome has no leading comment",
                "hourglass/v1/queue.proto: enum value hourglass.v1.PutResponse.Outcome.OUTCOME_UNSPECIFIED (0) has no "
                        + "leading comment",
                "hourglass/v1/queue.proto: enum value hourglass.v1.PutResponse.Outcome.STORED (1) has no leading comment"),
                found);
    }

    @Test
    void aTrailingCommentIsNotEnough() {
        FileDescriptorProto.Builder f = HandBuilt.trailingOnly(documented(api()), List.of(4, 0, 2, 1));
        assertEquals(List.of("hourglass/v1/queue.proto: field hourglass.v1.PutRequest.payload (2) has no leading "
                + "comment (move its trailing comment above it)"), ProtoConventions.violations(set(f)));
    }

    @Test
    void thePackageIsVersionedAndMatchesTheDirectory() {
        FileDescriptorProto.Builder unversioned = documented(api()).setPackage("hourglass");
        assertEquals(List.of("hourglass/v1/queue.proto: package 'hourglass' is not versioned: name it like hourglass.v1"),
                ProtoConventions.violations(set(unversioned)));
        FileDescriptorProto.Builder misplaced = documented(api()).setName("queue.proto");
        assertEquals(List.of("queue.proto: package hourglass.v1 belongs in the directory hourglass/v1/"),
                ProtoConventions.violations(set(misplaced)));
        assertTrue(ProtoConventions.VERSIONED_PACKAGE.matcher("hourglass.v2beta1").matches());
        assertTrue(!ProtoConventions.VERSIONED_PACKAGE.matcher("hourglass.v0").matches());
    }

    @Test
    void fieldNumbersAreUniqueAndNotReserved() {
        FileDescriptorProto.Builder f = api();
        DescriptorProto.Builder m = f.getMessageTypeBuilder(0);
        m.addField(field("again", 2, Type.TYPE_STRING));
        m.addReservedRange(DescriptorProto.ReservedRange.newBuilder().setStart(1).setEnd(2)).addReservedName("payload");
        assertEquals(List.of(
                "hourglass/v1/queue.proto: field hourglass.v1.PutRequest.topic (1) uses a reserved number (1)",
                "hourglass/v1/queue.proto: field hourglass.v1.PutRequest.payload (2) uses a reserved name",
                "hourglass/v1/queue.proto: field hourglass.v1.PutRequest.again (2) has the number of field payload"),
                ProtoConventions.violations(set(documented(f))));
    }

    @Test
    void enumValuesAreNotReserved() {
        FileDescriptorProto.Builder f = api();
        f.getMessageTypeBuilder(1).getEnumTypeBuilder(0)
                .addReservedRange(EnumDescriptorProto.EnumReservedRange.newBuilder().setStart(1).setEnd(3));
        assertEquals(List.of("hourglass/v1/queue.proto: enum value hourglass.v1.PutResponse.Outcome.STORED (1) uses "
                + "a reserved number (1 to 3)"), ProtoConventions.violations(set(documented(f))));
    }
}
