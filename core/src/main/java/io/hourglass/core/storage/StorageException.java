package io.hourglass.core.storage;

import io.hourglass.core.HourglassException;

/** RocksDB failed. The node must stop rather than continue with a diverged state. */
public final class StorageException extends HourglassException {
    public StorageException(String message, Throwable cause) {
        super(message, cause);
    }
}
