package io.hourglass.core.rooms;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hourglass.core.InvalidRequestException;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(10)
class SessionIdTest {
    @Test
    void aUuidAsTheClientLibrarySendsItIsASessionId() {
        String uuid = UUID.randomUUID().toString();
        assertEquals(uuid, SessionId.parseOptional(uuid).value());
        assertEquals("a.b_c-d:9", new SessionId("a.b_c-d:9").toString());
        assertEquals(64, new SessionId("x".repeat(64)).value().length());
    }

    @Test
    void anEmptyOneIsNoneAsAnOlderClientSendsIt() {
        assertNull(SessionId.parseOptional(""));
        assertNull(SessionId.parseOptional(null));
    }

    @Test
    void aTooLongOneIsRefusedNamingItsLengthAndOnlyAShortPrefix() {
        String huge = "abcdefghijklmnopqrstuvwxyz".repeat(40_000);
        InvalidRequestException e = assertThrows(InvalidRequestException.class, () -> SessionId.parseOptional(huge));
        assertTrue(e.getMessage().startsWith("session_id must be 1 to 64 letters, digits or . _ - :"), e.getMessage());
        assertTrue(e.getMessage().endsWith("got " + huge.length() + " characters: 'abcdefghijklmnop…'"), e.getMessage());
        assertTrue(e.getMessage().length() < 200, e.getMessage());
        assertThrows(InvalidRequestException.class, () -> new SessionId("x".repeat(65)));
    }

    @Test
    void controlCharactersAreRefusedAndNotEchoed() {
        InvalidRequestException e = assertThrows(InvalidRequestException.class,
                () -> SessionId.parseOptional("ab\ncd\u0000é"));
        assertTrue(e.getMessage().endsWith("got 7 characters: 'ab?cd??'"), e.getMessage());
        assertThrows(InvalidRequestException.class, () -> new SessionId("has space"));
    }
}
