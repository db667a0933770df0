package io.hourglass.chaos;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Every {@code hourglass_*} series that {@code deploy/grafana/hourglass.json} queries is exported by
 * real nodes: a three-node cluster from the distribution (follower lag exists only with peers) with
 * one message published and consumed, so the per-topic series exist too.
 */
@Timeout(value = 4, unit = TimeUnit.MINUTES)
final class GrafanaDashboardTest {
    private static final Duration READY_TIMEOUT = Duration.ofSeconds(90);
    private static final Duration CLI_TIMEOUT = Duration.ofSeconds(60);
    private static final Path DASHBOARD = Path.of(System.getProperty("basedir", System.getProperty("user.dir")))
            .toAbsolutePath().resolveSibling("deploy").resolve("grafana").resolve("hourglass.json").normalize();
    private static final Pattern METRIC = Pattern.compile("\\bhourglass_[a-z0-9_]+");
    private static final Pattern EXPOSITION = Pattern.compile("(?m)^(hourglass_[a-z0-9_]+)[{ ]");

    private ProcessCluster cluster;

    @AfterEach
    void close() {
        if (cluster != null) {
            cluster.close();
        }
    }

    /** The metric names in the dashboard's PromQL expressions and template-variable queries. */
    static Set<String> dashboardMetrics() throws IOException {
        JsonNode dashboard = new ObjectMapper().readTree(DASHBOARD.toFile());
        assertTrue(dashboard.path("templating").toString().contains("\"type\":\"datasource\""),
                "a Prometheus data-source variable");
        List<String> expressions = new ArrayList<>();
        for (JsonNode panel : dashboard.path("panels")) {
            assertEquals("${datasource}", panel.path("datasource").path("uid").asText(),
                    () -> "panel " + panel.path("title") + " uses the data-source variable");
            for (JsonNode target : panel.path("targets")) {
                expressions.add(target.path("expr").asText());
            }
        }
        for (JsonNode variable : dashboard.path("templating").path("list")) {
            expressions.add(variable.path("definition").asText());
        }
        Set<String> names = new TreeSet<>();
        for (String expr : expressions) {
            Matcher m = METRIC.matcher(expr);
            while (m.find()) {
                names.add(m.group());
            }
        }
        return names;
    }

    @Test
    void everyMetricOnTheDashboardIsExportedByARealNode() throws IOException {
        Set<String> used = dashboardMetrics();
        for (String required : List.of("hourglass_messages_published_total", "hourglass_messages_dispatched_total",
                "hourglass_publish_latency_seconds", "hourglass_delivery_lateness_seconds_sum",
                "hourglass_delivery_lateness_seconds_count", "hourglass_messages_in_flight", "hourglass_active_consumers",
                "hourglass_raft_leader_changes_total", "hourglass_raft_follower_lag", "hourglass_raft_commit_index")) {
            assertTrue(used.contains(required), () -> "the dashboard has no panel on " + required + ": " + used);
        }

        Distribution distribution = Distribution.locate();
        Path runDir = distribution.newRunDir(getClass().getSimpleName());
        cluster = ProcessCluster.create(distribution, runDir, 3);
        cluster.startAll(READY_TIMEOUT);
        cluster.awaitLeader(READY_TIMEOUT);
        Cli cli = new Cli(distribution, runDir);
        String servers = String.join(",", cluster.clientAddresses());
        cli.run(CLI_TIMEOUT, "--servers", servers, "publish", "grafana", "hello").assertSuccess();
        CliResult consumed = cli.run(CLI_TIMEOUT, "--servers", servers, "--output", "json",
                "consume", "grafana", "--count", "1", "--timeout", "20s");
        consumed.assertSuccess();
        assertEquals(1, consumed.records().size(), consumed::describe);

        Set<String> exported = new TreeSet<>();
        await("per-topic series on the leader").atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200))
                .untilAsserted(() -> {
                    exported.clear();
                    for (ServerProcess node : cluster.nodes()) {
                        String body = node.httpGet("/metrics").orElse("");
                        Matcher m = EXPOSITION.matcher(body);
                        while (m.find()) {
                            exported.add(m.group(1));
                        }
                    }
                    assertTrue(exported.contains("hourglass_delivery_lateness_seconds_count"), exported::toString);
                    assertTrue(exported.contains("hourglass_raft_follower_lag"), exported::toString);
                });

        List<String> missing = used.stream().filter(name -> !exported.contains(name)).toList();
        assertEquals(List.of(), missing, () -> "queried by the dashboard but exported by no node; exported: " + exported);
        assertFalse(exported.isEmpty());
    }
}
