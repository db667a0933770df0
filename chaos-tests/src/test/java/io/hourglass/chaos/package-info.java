/**
 * Process-level tests: the built distribution runs as real OS processes and is driven only
 * through its scripts, the way an operator would.
 *
 * <pre>
 *   test ──► ServerProcess ──► bin/hourglass-server (one JVM per node; own data dir, ports, log)
 *     │          kill -9 / SIGTERM / restart on the same data dir and ports
 *     ├────► Cli ───────────► bin/hourglass --output json ──► CliResult (one JSON record per line)
 *     └────► HourglassClient ─► gRPC to every node of a ProcessCluster (N ServerProcesses, one group)
 *                 └─ DeliveryWiretap ──► DeliveryHistory (deliveries and confirmed ACKs, one order)
 * </pre>
 *
 * <p>Every node and every CLI run writes its output to a file under {@code target/chaos-runs/},
 * kept after the test; a node that does not become ready fails the test with its log's tail.
 * Every wait has a deadline, every test class a {@code @Timeout}; nothing sleeps. Measurements
 * run only with {@code -Dhourglass.measure=true}; see the module's README.
 */
package io.hourglass.chaos;
