/**
 * The node's RocksDB: composite keys ({@link io.hourglass.core.storage.EventKey}), column
 * families, atomic commits of data plus applied log position ({@link io.hourglass.core.storage.EventStore},
 * {@link io.hourglass.core.storage.StoreBatch}), and the small domain views over them: the queue's
 * messages, receipts and expiry index ({@code QueueStore}, {@link io.hourglass.core.storage.DueRange}),
 * the topic registry, and producer-id deduplication ({@link io.hourglass.core.storage.ProducerIds}).
 * Depends on no other package of the core but the stored values ({@code …core.proto}) and the
 * exception root.
 */
package io.hourglass.core.storage;
