/**
 * Node-to-node API: serving and downloading store checkpoints, so that a follower too far behind
 * the leader's log (wiped, or down while the log was purged) catches up.
 */
package io.hourglass.server.replica;
