/**
 * The lock-step rooms API end to end on real nodes (ROOMS.md): every numbered scenario over raw
 * gRPC streams ({@code RoomScenariosTest}), the wire protocol and its errors
 * ({@code RoomProtocolTest}), failover on a 3-node cluster ({@code RoomFailoverTest}; with the client
 * library's session ids, a room resuming once the holders of its message are back,
 * {@code RoomHoldersFailoverTest}), and the round-trip measurement behind
 * {@code -Dhourglass.measure=true}. {@code SessionClient} drives one Session stream frame by frame;
 * {@code RoomsApi} makes the unary calls.
 */
package io.hourglass.server.rooms;
