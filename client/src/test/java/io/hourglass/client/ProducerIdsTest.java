package io.hourglass.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Drawn producer ids are unique, of one length, and sort (as the broker's byte keys do) in draw order. */
class ProducerIdsTest {
    @Test
    void idsAreUniqueFixedWidthAndSortInTheOrderTheyWereDrawn() throws Exception {
        List<String> ids = new ArrayList<>();
        Set<String> seen = new HashSet<>();
        for (int i = 0; i < 100_000; i++) {
            String id = ProducerIds.next();
            ids.add(id);
            assertTrue(seen.add(id), "drawn twice: " + id);
            assertEquals(33, id.length(), id);
        }
        for (int i = 1; i < ids.size(); i++) {
            assertTrue(ids.get(i - 1).compareTo(ids.get(i)) < 0, ids.get(i - 1) + " then " + ids.get(i));
        }
        // Drawn from several threads at once: still no id twice.
        Set<String> concurrent = java.util.concurrent.ConcurrentHashMap.newKeySet();
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < 4; t++) {
            Thread th = new Thread(() -> {
                for (int i = 0; i < 10_000; i++) {
                    concurrent.add(ProducerIds.next());
                }
            });
            threads.add(th);
            th.start();
        }
        for (Thread th : threads) {
            th.join();
        }
        assertEquals(40_000, concurrent.size());
    }
}
