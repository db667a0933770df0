package io.hourglass.core.storage;

/** A Raft log position: the last entry whose effects the store holds. */
public record TermIndex(long term, long index) {
    public static final TermIndex INITIAL = new TermIndex(0, -1);

    @Override
    public String toString() {
        return "(t:" + term + ", i:" + index + ")";
    }
}
