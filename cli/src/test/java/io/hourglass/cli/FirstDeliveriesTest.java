package io.hourglass.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class FirstDeliveriesTest {
    @Test
    void aMessageDeliveredAgainIsADuplicateNotADelivery() {
        FirstDeliveries d = new FirstDeliveries();
        assertTrue(d.first(0));
        assertTrue(d.first(7));
        assertFalse(d.first(7));
        assertFalse(d.first(0));
        assertFalse(d.first(7));
        assertTrue(d.first(1_000_000));
        assertEquals(3, d.duplicates());
    }

    @Test
    void aNumberNoBenchMessageCarriesIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> new FirstDeliveries().first(-1));
    }
}
