/** Event shards on a node: which shard a topic belongs to, and each shard's parts. */
package io.hourglass.server.shard;
