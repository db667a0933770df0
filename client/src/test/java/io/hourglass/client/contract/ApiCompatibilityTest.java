package io.hourglass.client.contract;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.DescriptorProtos.FileDescriptorProto;
import com.google.protobuf.DescriptorProtos.FileDescriptorSet;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The API as the protos declare it now breaks nothing of the last release's
 * ({@code src/test/resources/api-baseline/hourglass-v1.pb}, see {@link BreakingChanges} for what
 * counts). A change that must break goes to a new package version beside this one
 * ({@code hourglass.v2}), never into {@code hourglass.v1}.
 *
 * <p>The baseline moves only at a release, once the release's protos are final; from the
 * repository root, after {@code mvn -pl client generate-sources}:
 * {@code cp client/target/api-descriptors/hourglass-v1.pb client/src/test/resources/api-baseline/hourglass-v1.pb}
 * (see the README.md beside the baseline).
 */
@Timeout(30)
class ApiCompatibilityTest {
    @Test
    void theApiBreaksNothingOfTheLastRelease() {
        List<String> breaks = BreakingChanges.between(ApiDescriptors.baseline(), ApiDescriptors.current());
        assertTrue(breaks.isEmpty(), breaks.size() + " breaking changes against the last release's API ("
                + ApiDescriptors.BASELINE_SOURCE + "):\n  " + String.join("\n  ", breaks)
                + "\nClients built against the release would fail: add instead of changing (a new field, RPC or "
                + "message), or start hourglass.v2 beside hourglass.v1. The baseline is refreshed at a release only.");
    }

    @Test
    void theBaselineHoldsTheReleasedServices() {
        FileDescriptorSet baseline = ApiDescriptors.baseline();
        assertEquals(List.of("hourglass.v1.Admin", "hourglass.v1.Broker", "hourglass.v1.Rooms", "hourglass.v1.Security"),
                baseline.getFileList().stream()
                        .flatMap((FileDescriptorProto f) -> f.getServiceList().stream()
                                .map(s -> f.getPackage() + "." + s.getName()))
                        .sorted().toList());
    }
}
