/**
 * Loading and typing of node configuration: file, HOURGLASS_* environment, flags. The server's records
 * (and {@link io.hourglass.server.config.RaftKeys} for the raft module's record) declare their keys;
 * {@link io.hourglass.server.config.KnownKeys} is the registry of every key, which the environment mapping,
 * the unknown-key warning and {@link io.hourglass.server.config.ConfigReference} (the generated docs) use.
 */
package io.hourglass.server.config;
