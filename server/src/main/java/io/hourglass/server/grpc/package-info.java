/** gRPC services of a node and the mapping of domain errors to statuses. */
package io.hourglass.server.grpc;
