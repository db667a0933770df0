package io.hourglass.core;

import static com.tngtech.archunit.library.Architectures.layeredArchitecture;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.lang.ArchRule;

/**
 * The package dependencies of the core, written down and checked in the build. They run one way:
 *
 * <pre>
 *   delivery   rooms          the two domains; neither knows the other
 *      │  ╲     ╱  │
 *      │  command  │          the apply seam: router, queue applier, ApplyResult, Replicator
 *      │     │     │
 *      │  storage  │  config  RocksDB and its domain views; typed settings
 *      ╰── loop ───╯          the single-threaded event loop both domains run on
 *   proto   (root)            stored values and commands; the exception hierarchy
 * </pre>
 *
 * A domain plugs into the apply seam by registering its {@code CommandApplier} with the
 * {@code StateApplier} at the node's composition root, so the seam never names a domain.
 */
@AnalyzeClasses(packages = "io.hourglass.core", importOptions = ImportOption.DoNotIncludeTests.class)
class LayeringTest {

    @ArchTest
    static final ArchRule noPackageCycles = slices().matching("io.hourglass.core.(*)..")
            .should().beFreeOfCycles();

    @ArchTest
    static final ArchRule dependenciesRunOneWay = layeredArchitecture()
            .consideringOnlyDependenciesInLayers()
            .layer("errors").definedBy("io.hourglass.core")
            .layer("proto").definedBy("io.hourglass.core.proto..")
            .layer("config").definedBy("io.hourglass.core.config..")
            .layer("storage").definedBy("io.hourglass.core.storage..")
            .layer("loop").definedBy("io.hourglass.core.loop..")
            .layer("command").definedBy("io.hourglass.core.command..")
            .layer("rooms").definedBy("io.hourglass.core.rooms..")
            .layer("delivery").definedBy("io.hourglass.core.delivery..")
            .whereLayer("errors").mayNotAccessAnyLayer()
            .whereLayer("proto").mayNotAccessAnyLayer()
            .whereLayer("config").mayOnlyAccessLayers("errors")
            .whereLayer("storage").mayOnlyAccessLayers("errors", "proto")
            .whereLayer("loop").mayOnlyAccessLayers("errors")
            .whereLayer("command").mayOnlyAccessLayers("errors", "proto", "config", "storage")
            .whereLayer("rooms").mayOnlyAccessLayers("errors", "proto", "config", "storage", "loop", "command")
            .whereLayer("delivery").mayOnlyAccessLayers("errors", "proto", "config", "storage", "loop", "command");

    @ArchTest
    static final ArchRule noConsensusOrNetworkInCore = noClasses().that().resideInAPackage("io.hourglass.core..")
            .should().dependOnClassesThat().resideInAnyPackage("org.apache.ratis..", "io.grpc..",
                    "io.hourglass.raft..", "io.hourglass.server..", "io.hourglass.api..", "io.hourglass.client..")
            .because("core is tested without Raft or a network (DESIGN §1)");
}
