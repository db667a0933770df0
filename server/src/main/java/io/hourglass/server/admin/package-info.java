/** The operator's gRPC API: cluster status, membership changes, topics, groups, consumers. */
package io.hourglass.server.admin;
