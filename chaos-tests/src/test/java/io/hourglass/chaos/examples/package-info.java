/**
 * The client examples of {@code examples/} (Python, Node.js) run as separate processes against a
 * process-level cluster, the leader killed while they consume.
 *
 * <pre>
 *   ClientExamplesTest
 *     ├── ExampleToolchain ─ checks python3-grpcio/protoc or node/npm (fails naming the package),
 *     │                      npm ci into target/examples/node, extracts the shipped .proto files
 *     ├── ProcessCluster ── 3 × ServerProcess (bin/hourglass-server) on loopback; leader by gauge
 *     └── ExampleProcess ─── python3 quickstart.py | node quickstart.js --servers … --protos …
 *                              output read line by line: the kill -9 follows "ACK … confirmed"
 * </pre>
 *
 * <p>Nothing sleeps: every wait is an Awaitility deadline or a process wait with a timeout. The
 * examples' output and the nodes' logs stay under {@code target/chaos-runs/ClientExamplesTest-*}.
 */
package io.hourglass.chaos.examples;
