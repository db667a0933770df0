package io.hourglass.client.contract;

import com.google.protobuf.DescriptorProtos.FileDescriptorSet;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Where the API's descriptors are: the ones this build's protoc wrote from
 * {@code src/main/proto} (with their comments; see the protobuf plugin's configuration in
 * {@code client/pom.xml}), and the last release's, checked in as a test resource.
 */
final class ApiDescriptors {
    /** Written by protoc during generate-sources; paths are relative to the module, surefire's working directory. */
    static final Path CURRENT = Path.of("target", "api-descriptors", "hourglass-v1.pb");
    /** The descriptors of the last release, on the test classpath. */
    static final String BASELINE_RESOURCE = "/api-baseline/hourglass-v1.pb";
    /** The same, in the source tree: where a release copies {@link #CURRENT} to. */
    static final Path BASELINE_SOURCE = Path.of("src", "test", "resources", "api-baseline", "hourglass-v1.pb");

    private ApiDescriptors() {
    }

    /** The descriptors of the protos as they are now. */
    static FileDescriptorSet current() {
        if (!Files.isRegularFile(CURRENT)) {
            throw new IllegalStateException(CURRENT.toAbsolutePath() + " is missing: protoc writes it during "
                    + "generate-sources (mvn -pl client test-compile, or any later phase)");
        }
        try (InputStream in = Files.newInputStream(CURRENT)) {
            return FileDescriptorSet.parseFrom(in);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The descriptors of the last release. */
    static FileDescriptorSet baseline() {
        try (InputStream in = ApiDescriptors.class.getResourceAsStream(BASELINE_RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException(BASELINE_RESOURCE + " is not on the test classpath");
            }
            return FileDescriptorSet.parseFrom(in);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
