/**
 * The node's RocksDB: composite keys ({@link io.hourglass.core.storage.EventKey}), column
 * families, atomic commits of data plus applied log position.
 */
package io.hourglass.core.storage;
