package io.hourglass.core.rooms;

/**
 * Which leadership of this node took a release decision: the Raft term it leads in, and its
 * {@code incarnation} among this node's leaderships of that term (1 the first; more when it was cut
 * off and back in touch before anyone else was elected, and rebuilt its rooms). The applier ignores a
 * release appended in another term, or decided by an incarnation older than the last fence
 * ({@code RoomFenceCmd}) of its term. A term of 0 checks nothing.
 */
record Reign(long term, long incarnation) {
    /** Not fenced: releases that apply whatever the term (tests, entries written before fencing). */
    static final Reign ANY = new Reign(0, 0);
}
