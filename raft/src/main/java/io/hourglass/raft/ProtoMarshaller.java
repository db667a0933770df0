package io.hourglass.raft;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.MessageLite;
import com.google.protobuf.Parser;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import org.apache.ratis.thirdparty.io.grpc.MethodDescriptor;
import org.apache.ratis.thirdparty.io.grpc.Status;

/**
 * Carries our own (unshaded) protobuf messages over Ratis' shaded gRPC, which knows only its own
 * shaded protobuf: the message crosses as bytes.
 */
final class ProtoMarshaller<T extends MessageLite> implements MethodDescriptor.Marshaller<T> {
    private final Parser<T> parser;

    ProtoMarshaller(Parser<T> parser) {
        this.parser = parser;
    }

    @Override
    public InputStream stream(T value) {
        return new ByteArrayInputStream(value.toByteArray());
    }

    @Override
    public T parse(InputStream stream) {
        try {
            return parser.parseFrom(stream);
        } catch (InvalidProtocolBufferException e) {
            throw Status.INTERNAL.withDescription("malformed message: " + e.getMessage()).asRuntimeException();
        } catch (IOException e) {
            throw Status.INTERNAL.withDescription("cannot read message: " + e.getMessage()).asRuntimeException();
        }
    }
}
