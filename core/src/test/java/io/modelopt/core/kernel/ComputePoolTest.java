package io.modelopt.core.kernel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class ComputePoolTest {

    @ParameterizedTest
    @ValueSource(ints = {1, 2, 3, 5})
    void everyIndexRunsOnceInContiguousChunksOnePerWorker(int threads) {
        try (ComputePool pool = new ComputePool(threads)) {
            for (int n : new int[]{1, 2, 3, 7, 64, 1001}) {
                AtomicIntegerArray hits = new AtomicIntegerArray(n);
                int[] chunkStart = new int[threads], chunkEnd = new int[threads];
                java.util.Arrays.fill(chunkStart, -1);
                pool.parallelFor(n, (start, end, worker) -> {
                    assertEquals(-1, chunkStart[worker], "one chunk per worker");
                    chunkStart[worker] = start;
                    chunkEnd[worker] = end;
                    for (int i = start; i < end; i++) hits.incrementAndGet(i);
                });
                for (int i = 0; i < n; i++) assertEquals(1, hits.get(i), "index " + i + " of " + n);
                int expectStart = 0;
                for (int w = 0; w < threads; w++) {
                    if (chunkStart[w] < 0) continue;
                    assertEquals(expectStart, chunkStart[w], "chunks in worker order, contiguous");
                    expectStart = chunkEnd[w];
                }
                assertEquals(n, expectStart);
            }
        }
    }

    /** Guided pieces: every index once, each piece starting at a multiple of the unit, shrinking, at least a unit but for the last. */
    @ParameterizedTest
    @ValueSource(ints = {1, 2, 3, 5})
    void guidedPiecesCoverEveryIndexOnceLargeFirst(int threads) {
        try (ComputePool pool = new ComputePool(threads)) {
            for (int unit : new int[]{1, 4, 7}) {
                for (int n : new int[]{1, 3, 4, 29, 64, 352, 1000}) {
                    AtomicIntegerArray hits = new AtomicIntegerArray(n);
                    java.util.List<int[]> pieces = java.util.Collections.synchronizedList(new java.util.ArrayList<>());
                    pool.parallelForGuided(n, unit, (start, end, worker) -> {
                        pieces.add(new int[]{start, end});
                        for (int i = start; i < end; i++) hits.incrementAndGet(i);
                    });
                    for (int i = 0; i < n; i++) assertEquals(1, hits.get(i), "index " + i + " of " + n + ", unit " + unit);
                    pieces.sort(java.util.Comparator.comparingInt(p -> p[0]));
                    for (int k = 0; k < pieces.size(); k++) {
                        int[] p = pieces.get(k);
                        String where = "piece " + p[0] + ".." + p[1] + " of " + n + ", unit " + unit;
                        assertEquals(0, p[0] % unit, where);
                        if (p[1] < n) assertTrue(p[1] - p[0] >= unit && (p[1] - p[0]) % unit == 0, where);
                        if (k > 0 && p[1] < n) assertTrue(p[1] - p[0] <= pieces.get(k - 1)[1] - pieces.get(k - 1)[0], "shrinking: " + where);
                    }
                }
            }
            assertThrows(IllegalArgumentException.class, () -> pool.parallelForGuided(5, 0, (s, e, w) -> { }));
        }
    }

    @Test
    void callerTakesChunkZeroAndWorkersAreNamedDaemons() {
        try (ComputePool pool = new ComputePool(3)) {
            Set<String> names = ConcurrentHashMap.newKeySet();
            Thread caller = Thread.currentThread();
            pool.parallelFor(30, (s, e, w) -> {
                Thread t = Thread.currentThread();
                if (w == 0) assertSame(caller, t);
                else {
                    assertTrue(t.isDaemon());
                    names.add(t.getName());
                }
            });
            assertEquals(Set.of("modelopt-compute-1", "modelopt-compute-2"), names);
        }
    }

    @Test
    void manyCallsInARow() {
        try (ComputePool pool = new ComputePool(2)) {
            AtomicLong sum = new AtomicLong();
            for (int k = 0; k < 5_000; k++) {
                pool.parallelFor(10, (s, e, w) -> {
                    long local = 0;
                    for (int i = s; i < e; i++) local += i;
                    sum.addAndGet(local);
                });
            }
            assertEquals(5_000L * 45, sum.get());
        }
    }

    @Test
    void workerExceptionReachesTheCallerAndThePoolStaysUsable() throws InterruptedException {
        try (ComputePool pool = new ComputePool(3)) {
            IllegalStateException e = assertThrows(IllegalStateException.class, () -> pool.parallelFor(9, (s, end, w) -> {
                if (w == 2) throw new IllegalStateException("boom in worker 2");
            }));
            assertEquals("boom in worker 2", e.getMessage());
            assertThrows(ArithmeticException.class, () -> pool.parallelFor(9, (s, end, w) -> {
                if (w == 0) throw new ArithmeticException("caller chunk");
            }));
            Thread.sleep(5); // let the workers park, then wake them again
            AtomicLong count = new AtomicLong();
            pool.parallelFor(9, (s, end, w) -> count.addAndGet(end - s));
            assertEquals(9, count.get());
        }
    }

    @Test
    void parkedWorkersWakeUp() throws InterruptedException {
        try (ComputePool pool = new ComputePool(2)) {
            for (int k = 0; k < 3; k++) {
                Thread.sleep(ComputePool.SPIN_NANOS / 1_000_000 + 20);
                AtomicLong count = new AtomicLong();
                pool.parallelFor(4, (s, e, w) -> count.addAndGet(e - s));
                assertEquals(4, count.get());
            }
        }
    }

    @Test
    void closeStopsTheWorkers() throws InterruptedException {
        ComputePool pool = new ComputePool(3);
        Set<Thread> threads = ConcurrentHashMap.newKeySet();
        pool.parallelFor(3, (s, e, w) -> threads.add(Thread.currentThread()));
        pool.close();
        pool.close(); // idempotent
        for (Thread t : threads) {
            if (t == Thread.currentThread()) continue;
            t.join(2000);
            assertFalse(t.isAlive(), t.getName() + " still alive");
        }
        assertThrows(IllegalStateException.class, () -> pool.parallelFor(3, (s, e, w) -> { }));
    }

    @Test
    void nestedCallsAndBadArgumentsAreRejected() {
        try (ComputePool pool = new ComputePool(2)) {
            assertThrows(IllegalStateException.class, () -> pool.parallelFor(4, (s, e, w) -> pool.parallelFor(2, (a, b, c) -> { })));
            assertThrows(IllegalArgumentException.class, () -> pool.parallelFor(-1, (s, e, w) -> { }));
            pool.parallelFor(0, (s, e, w) -> { throw new AssertionError("not called for n = 0"); });
        }
        assertThrows(IllegalArgumentException.class, () -> new ComputePool(0));
    }
}
