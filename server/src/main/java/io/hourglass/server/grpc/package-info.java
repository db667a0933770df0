/**
 * gRPC services of a node — the scheduled queue ({@link io.hourglass.server.grpc.BrokerService}) and
 * the lock-step rooms ({@link io.hourglass.server.grpc.RoomsService}) — and the one mapping of domain
 * errors to statuses ({@link io.hourglass.server.grpc.StatusMapper}). A unary handler refuses a request
 * by throwing a domain exception; {@link io.hourglass.server.grpc.ErrorStatusInterceptor} closes the
 * call with its status, and {@link io.hourglass.server.grpc.BoundedStatusInterceptor} bounds every
 * description a client receives.
 *
 * <p>Beside them the port serves the standard server reflection
 * ({@link io.hourglass.server.grpc.ClientPort#reflection}) and {@code grpc.health.v1.Health}, whose
 * statuses {@link io.hourglass.server.grpc.ReadinessHealth} sets from this node's readiness, as
 * {@code /readyz} answers it.
 *
 * <p>Streams ({@code SubscribeSession}, {@code RoomSession}) never block the engine that feeds them:
 * they buffer, and a writer executor drains the buffer while gRPC flow control says the client can
 * take more.
 */
package io.hourglass.server.grpc;
