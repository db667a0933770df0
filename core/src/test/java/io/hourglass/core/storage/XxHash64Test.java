package io.hourglass.core.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class XxHash64Test {
    private static long h(String s) {
        return XxHash64.hash(s.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void matchesReferenceVectors() {
        assertEquals(0xEF46DB3751D8E999L, h(""));
        assertEquals(0xD24EC4F1A98C6E5BL, h("a"));
        assertEquals(0x44BC2CF5AD770999L, h("abc"));
    }

    @Test
    void longInputsUseAllStripesAndTails() {
        // 32-byte stripes plus an 8-, 4- and 1-byte tail: every branch of the algorithm.
        String s = "0123456789abcdef0123456789abcdef0123456789abcd";
        assertEquals(h(s), h(new String(s)));
        assertEquals(false, h(s) == h(s.substring(1)));
    }
}
