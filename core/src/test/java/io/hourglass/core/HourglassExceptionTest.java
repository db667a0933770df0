package io.hourglass.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** What an error message may quote of client input. */
@Timeout(10)
class HourglassExceptionTest {
    @Test
    void anExcerptOfShortInputIsTheInput() {
        assertEquals("n1", HourglassException.excerpt("n1"));
        assertEquals("null", HourglassException.excerpt(null));
        String limit = "y".repeat(HourglassException.MAX_EXCERPT);
        assertEquals(limit, HourglassException.excerpt(limit));
    }

    @Test
    void anExcerptOfLongInputIsAShortPrefixAndSaysHowMuchWasLeftOut() {
        String huge = "x".repeat(1 << 20);
        String shown = HourglassException.excerpt(huge);
        assertTrue(shown.startsWith("x".repeat(HourglassException.MAX_EXCERPT) + "…"), shown);
        assertTrue(shown.length() < 100, shown);
        assertTrue(shown.endsWith("(" + ((1 << 20) - HourglassException.MAX_EXCERPT) + " more characters)"), shown);
    }
}
