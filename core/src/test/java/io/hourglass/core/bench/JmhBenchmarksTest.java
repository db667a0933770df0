package io.hourglass.core.bench;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.openjdk.jmh.results.format.ResultFormatType;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.Options;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

/**
 * Runs core's JMH benchmarks (codec, apply path, dispatch pass) when asked:
 * {@code mvn -pl core test -Dtest=JmhBenchmarksTest -Dhourglass.jmh=true [-Dhourglass.jmh.include=Dispatch]}.
 * Results go to {@code core/target/jmh-results.json} and the test output. Skipped in the normal
 * build: benchmarks take minutes and mean nothing on a busy machine.
 */
@EnabledIfSystemProperty(named = "hourglass.jmh", matches = "true")
class JmhBenchmarksTest {
    @Test
    void runBenchmarks() throws RunnerException {
        Options options = new OptionsBuilder()
                .include("io\\.hourglass\\.core\\..*(" + System.getProperty("hourglass.jmh.include", "") + ").*Bench.*")
                .forks(1).shouldFailOnError(true)
                .warmupIterations(3).warmupTime(TimeValue.seconds(2))
                .measurementIterations(5).measurementTime(TimeValue.seconds(2))
                .resultFormat(ResultFormatType.JSON).result("target/jmh-results.json")
                .build();
        new Runner(options).run();
    }
}
