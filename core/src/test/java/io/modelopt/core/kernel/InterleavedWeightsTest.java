package io.modelopt.core.kernel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.modelopt.core.quant.Q4_0;
import io.modelopt.core.tensor.GgmlType;
import io.modelopt.core.tensor.TensorData;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The repacked decode kernels ({@link InterleavedQ4_0}, {@link InterleavedQ8_0}, and the
 * re-encoded F16 rows of {@link RebiasedF16}) through {@link MatMul}, against the same float64 reference as {@link MatMulTest}: row counts with and
 * without a tail after the last group, 1 to 9 tokens, 1 to 3 threads.
 */
class InterleavedWeightsTest {
    static ComputePool pool1, pool2, pool3;
    Arena arena;

    @BeforeAll
    static void pools() {
        pool1 = new ComputePool(1);
        pool2 = new ComputePool(2);
        pool3 = new ComputePool(3);
    }

    @AfterAll
    static void closePools() {
        pool1.close();
        pool2.close();
        pool3.close();
    }

    @BeforeEach
    void vectorApi() {
        assumeTrue(KernelMode.vectorApiAvailable(), "the repacked kernel is Vector API only");
        arena = Arena.ofShared(); // the pool's threads read it
    }

    @AfterEach
    void free() {
        if (arena != null) arena.close();
    }

    @org.junit.jupiter.params.ParameterizedTest(name = "{0}")
    @org.junit.jupiter.params.provider.EnumSource(value = GgmlType.class, names = {"Q4_0", "Q8_0", "F16"})
    void matchesFloat64Reference(GgmlType type) {
        int[][] shapes = {{32, 32}, {44, 96}, {101, 160}, {64, 480}, {96, 2048}, {16, 64}, {23, 96}};
        int[] tokenCounts = {1, 2, 5, 9};
        ComputePool[] pools = {pool1, pool2, pool3};
        long seed = 500;
        for (int[] s : shapes) {
            for (int nTokens : tokenCounts) {
                seed++;
                int rows = s[0], cols = s[1];
                WeightMatrix plain = MatMulTest.matrix(type, rows, cols, seed);
                WeightMatrix w = plain.repacked(arena);
                assertEquals(type == GgmlType.F16 || rows >= (type == GgmlType.Q4_0 ? 32 : 16), w.isRepacked());
                float[] x = MatMulTest.activations(nTokens * cols, seed * 3);
                float[] out = new float[nTokens * rows];
                MatMul.matmul(KernelMode.VECTOR, pools[(int) (seed % 3)], w, x, 0, cols, nTokens, out, 0, rows);
                double[][] ref = MatMulTest.reference(plain, x, 0, cols, nTokens);
                for (int i = 0; i < out.length; i++) {
                    String where = type + " " + rows + "x" + cols + " tokens " + nTokens + " out[" + i + "]";
                    assertEquals(ref[0][i], out[i], MatMulTest.ACCUMULATION_TOLERANCE * ref[1][i] + 1e-30, where);
                }
            }
        }
    }

    /**
     * Prefill-sized calls decode GEMM panels from the repacked copy: the same floats as panels
     * decoded from the file, so the results equal the in-place GEMM's bit for bit (and the reference).
     */
    @org.junit.jupiter.params.ParameterizedTest(name = "{0}")
    @org.junit.jupiter.params.provider.EnumSource(value = GgmlType.class, names = {"Q4_0", "Q8_0", "F16"})
    void prefillFromTheCopyEqualsPrefillInPlace(GgmlType type) {
        int[][] shapes = {{64, 96}, {45, 160}, {96, 480}};
        long seed = 900;
        for (int[] s : shapes) {
            for (int nTokens : new int[]{16, 20, 33, 64}) {
                seed++;
                int rows = s[0], cols = s[1];
                WeightMatrix plain = MatMulTest.matrix(type, rows, cols, seed);
                WeightMatrix w = plain.repacked(arena);
                float[] x = MatMulTest.activations(nTokens * cols, seed * 5);
                float[] expected = new float[nTokens * rows], out = new float[nTokens * rows];
                MatMul.matmul(KernelMode.VECTOR, pool2, plain, x, 0, cols, nTokens, expected, 0, rows);
                MatMul.matmul(KernelMode.VECTOR, pool3, w, x, 0, cols, nTokens, out, 0, rows);
                org.junit.jupiter.api.Assertions.assertArrayEquals(expected, out, 0f, type + " " + rows + "x" + cols + " tokens " + nTokens);
                double[][] ref = MatMulTest.reference(plain, x, 0, cols, nTokens);
                for (int i = 0; i < out.length; i++) {
                    assertEquals(ref[0][i], out[i], MatMulTest.ACCUMULATION_TOLERANCE * ref[1][i] + 1e-30, type + " out[" + i + "]");
                }
            }
        }
    }

    /** Worst-case block sums: |q - 8| = 8 and |x| = 127 everywhere reach ±32512, the edge of the 16-bit lanes. */
    @Test
    void extremeBlocksDoNotOverflow() {
        int rows = 32, cols = 64;
        MemorySegment m = arena.allocate(GgmlType.Q4_0.bytesFor((long) rows * cols));
        float[] row = new float[cols];
        for (int r = 0; r < rows; r++) {
            // all -1 (quantizes to nibble 0, i.e. q - 8 = -8) or mixed signs per row
            for (int k = 0; k < cols; k++) row[k] = r % 2 == 0 ? -1f : (k % 3 == 0 ? -1f : 0.875f);
            Q4_0.quantizeReference(row, 0, cols, m, r * GgmlType.Q4_0.bytesFor(cols));
        }
        WeightMatrix plain = WeightMatrix.of(new TensorData("w", GgmlType.Q4_0, new long[]{cols, rows}, m));
        WeightMatrix w = plain.repacked(arena);
        for (float sign : new float[]{1f, -1f}) {
            float[] x = new float[cols];
            java.util.Arrays.fill(x, sign * 3f); // quantizes to ±127 in every block
            float[] out = new float[rows];
            MatMul.matmul(KernelMode.VECTOR, pool1, w, x, 0, cols, 1, out, 0, rows);
            double[][] ref = MatMulTest.reference(plain, x, 0, cols, 1);
            for (int r = 0; r < rows; r++) assertEquals(ref[0][r], out[r], 1e-6 * ref[1][r], "row " + r + " sign " + sign);
        }
    }

    @org.junit.jupiter.params.ParameterizedTest(name = "{0}")
    @org.junit.jupiter.params.provider.EnumSource(value = GgmlType.class, names = {"Q4_0", "Q8_0", "F16"})
    void threadCountsGiveIdenticalResults(GgmlType type) {
        WeightMatrix w = MatMulTest.matrix(type, 140, 480, 9).repacked(arena);
        float[] x = MatMulTest.activations(3 * 480, 10);
        float[] a = new float[3 * 140], b = new float[3 * 140], c = new float[3 * 140];
        MatMul.matmul(KernelMode.VECTOR, pool1, w, x, 0, 480, 3, a, 0, 140);
        MatMul.matmul(KernelMode.VECTOR, pool2, w, x, 0, 480, 3, b, 0, 140);
        MatMul.matmul(KernelMode.VECTOR, pool3, w, x, 0, 480, 3, c, 0, 140);
        assertTrue(java.util.Arrays.equals(a, b) && java.util.Arrays.equals(a, c));
    }

    @org.junit.jupiter.params.ParameterizedTest(name = "{0}")
    @org.junit.jupiter.params.provider.EnumSource(value = GgmlType.class, names = {"Q4_0", "Q8_0"})
    void nanPropagates(GgmlType type) {
        int rows = 64, cols = 96;
        WeightMatrix plain = MatMulTest.matrix(type, rows, cols, 12);
        // a NaN scale in row 5's second block, before repacking
        plain.tensor().data().set(ValueLayout.JAVA_SHORT_UNALIGNED, 5 * plain.rowBytes() + type.bytesFor(32), (short) 0x7E00);
        WeightMatrix w = plain.repacked(arena);
        float[] x = MatMulTest.activations(2 * cols, 13);
        float[] out = new float[2 * rows];
        MatMul.matmul(KernelMode.VECTOR, pool2, w, x, 0, cols, 2, out, 0, rows);
        assertTrue(Float.isNaN(out[5]) && Float.isNaN(out[rows + 5]));
        assertTrue(Float.isFinite(out[4]) && Float.isFinite(out[6]));
        x[cols + 40] = Float.POSITIVE_INFINITY; // token 1
        MatMul.matmul(KernelMode.VECTOR, pool2, w, x, 0, cols, 2, out, 0, rows);
        for (int r = 0; r < rows; r++) assertFalse(Float.isFinite(out[rows + r]), "token 1 row " + r);
        assertTrue(Float.isFinite(out[0]));
    }

    @org.junit.jupiter.params.ParameterizedTest(name = "{0}")
    @org.junit.jupiter.params.provider.EnumSource(value = GgmlType.class, names = {"Q4_0", "Q8_0", "F16"})
    void repackingOnThePoolGivesTheSameBytes(GgmlType type) {
        WeightMatrix plain = MatMulTest.matrix(type, 173, 160, 21);
        MemorySegment one = plain.repacked(arena).packed(), three = plain.repacked(arena, pool3).packed();
        assertEquals(-1L, one.mismatch(three));
    }

    @Test
    void onlyQ4_0AndQ8_0WithAWholeGroupAreRepacked() {
        WeightMatrix q4 = MatMulTest.matrix(GgmlType.Q4_0, 70, 64, 1);
        WeightMatrix r = q4.repacked(arena);
        assertEquals(0, q4.residentBytes());
        assertEquals(2L * 2 * InterleavedQ4_0.RECORD, r.residentBytes(), "2 groups x 2 blocks");
        assertSame(r, r.repacked(arena));
        WeightMatrix small = MatMulTest.matrix(GgmlType.Q4_0, 31, 64, 1);
        assertSame(small, small.repacked(arena));
        WeightMatrix q8 = MatMulTest.matrix(GgmlType.Q8_0, 40, 64, 1);
        assertEquals(2L * 2 * InterleavedQ8_0.RECORD, q8.repacked(arena).residentBytes(), "2 groups x 2 blocks");
        // a format without a repacked layout (the K-quants have theirs: InterleavedQ4_KTest, InterleavedQ5_KTest, InterleavedQ6_KTest)
        WeightMatrix q41 = MatMulTest.matrix(GgmlType.Q4_1, 64, 256, 1);
        assertSame(q41, q41.repacked(arena));
        assertFalse(q41.canRepack());
    }

    /**
     * Calls of a few tokens (a decode step of several sequences) take {@code TOKEN_TILE} tokens per
     * pass over a group ({@code groupTokens}; eight tokens over two groups at 512 bits, {@code groupPair8})
     * and the rest one at a time: exact integer block sums
     * and the one-token path's scaling, so every token of a whole group gets the bits of a call of
     * its own, for whole tiles, remainders and several groups, on 1 to 3 threads (a row tail after
     * the last group is held to the reference).
     */
    @org.junit.jupiter.params.ParameterizedTest(name = "{0}")
    @org.junit.jupiter.params.provider.EnumSource(value = GgmlType.class, names = {"Q4_0", "Q8_0"})
    void fewTokenCallsGiveEachTokenItsOneTokenBits(GgmlType type) {
        int groupRows = type == GgmlType.Q4_0 ? InterleavedQ4_0.ROWS : InterleavedQ8_0.ROWS;
        long seed = 1700;
        // {groups, tail rows, columns}
        for (int[] s : new int[][]{{1, 0, 32}, {2, 3, 96}, {5, 0, 2048}, {4, 7, 160}}) {
            int rows = s[0] * groupRows + s[1], cols = s[2], packed = s[0] * groupRows;
            WeightMatrix w = MatMulTest.matrix(type, rows, cols, ++seed).repacked(arena);
            for (int nTokens : new int[]{2, 3, 4, 5, 7, 8, 9, 12, 15}) {
                float[] x = MatMulTest.activations(nTokens * cols, ++seed * 7);
                ComputePool pool = new ComputePool[]{pool1, pool2, pool3}[nTokens % 3];
                float[] batch = new float[nTokens * rows], single = new float[rows];
                MatMul.matmul(KernelMode.VECTOR, pool, w, x, 0, cols, nTokens, batch, 0, rows);
                for (int t = 0; t < nTokens; t++) {
                    MatMul.matmul(KernelMode.VECTOR, pool, w, x, t * cols, cols, 1, single, 0, rows);
                    // the rows of whole groups; the tail goes through the in-place kernel, whose few-token path rounds differently
                    org.junit.jupiter.api.Assertions.assertArrayEquals(java.util.Arrays.copyOf(single, packed),
                            java.util.Arrays.copyOfRange(batch, t * rows, t * rows + packed), 0f, type + " " + rows + "x" + cols + ", token " + t + " of " + nTokens);
                    double[][] ref = MatMulTest.reference(w, x, t * cols, cols, 1);
                    for (int r = packed; r < rows; r++) {
                        assertEquals(ref[0][r], batch[t * rows + r], MatMulTest.ACCUMULATION_TOLERANCE * ref[1][r] + 1e-30, type + " tail row " + r);
                    }
                }
            }
        }
    }

    /**
     * One-token calls take four row groups per pass ({@code InterleavedQ8_0.groupQuad},
     * {@code InterleavedQ4_0.groupQuad}), calls with more tokens one group at a time: the
     * same products in the same order, so a token gives the same bits either way, with whole
     * multiples, remainders and a row tail.
     */
    @org.junit.jupiter.params.ParameterizedTest(name = "{0}")
    @org.junit.jupiter.params.provider.EnumSource(value = GgmlType.class, names = {"Q4_0", "Q8_0"})
    void oneTokenDecodeEqualsTheManyTokenPath(GgmlType type) {
        int groupRows = type == GgmlType.Q4_0 ? InterleavedQ4_0.ROWS : InterleavedQ8_0.ROWS;
        long seed = 1300;
        // {groups, tail rows, columns}
        for (int[] s : new int[][]{{1, 0, 32}, {2, 0, 64}, {3, 0, 96}, {4, 0, 64}, {5, 0, 2048}, {6, 5, 160}, {8, 0, 96}}) {
            int rows = s[0] * groupRows + s[1], cols = s[2];
            WeightMatrix w = MatMulTest.matrix(type, rows, cols, ++seed).repacked(arena);
            float[] x = MatMulTest.activations(cols, seed * 7);
            float[] two = new float[2 * cols];
            System.arraycopy(x, 0, two, 0, cols);
            System.arraycopy(x, 0, two, cols, cols);
            for (ComputePool pool : new ComputePool[]{pool1, pool2, pool3}) {
                float[] single = new float[rows], pair = new float[2 * rows];
                MatMul.matmul(KernelMode.VECTOR, pool, w, x, 0, cols, 1, single, 0, rows);
                MatMul.matmul(KernelMode.VECTOR, pool, w, two, 0, cols, 2, pair, 0, rows);
                org.junit.jupiter.api.Assertions.assertArrayEquals(java.util.Arrays.copyOf(pair, rows), single, 0f, type + " " + rows + "x" + cols);
            }
        }
        // a NaN scale reaches its row only (such a matrix is read in place: the copy's scale codes cannot hold it)
        int rows = 4 * groupRows, bad = groupRows + 5;
        WeightMatrix plain = MatMulTest.matrix(type, rows, 96, 1400);
        plain.tensor().data().set(ValueLayout.JAVA_SHORT_UNALIGNED, bad * plain.rowBytes() + type.bytesFor(64), (short) 0x7E00);
        WeightMatrix w = plain.repacked(arena);
        assertFalse(w.isRepacked());
        float[] out = new float[rows];
        MatMul.matmul(KernelMode.VECTOR, pool1, w, MatMulTest.activations(96, 1401), 0, 96, 1, out, 0, rows);
        for (int r = 0; r < rows; r++) assertEquals(r == bad, Float.isNaN(out[r]), type + " row " + r);
        // a NaN activation reaches every row of the one-token kernel
        WeightMatrix good = MatMulTest.matrix(type, rows, 96, 1402).repacked(arena);
        assertTrue(good.isRepacked());
        float[] x = MatMulTest.activations(96, 1403);
        x[70] = Float.NaN;
        MatMul.matmul(KernelMode.VECTOR, pool2, good, x, 0, 96, 1, out, 0, rows);
        for (int r = 0; r < rows; r++) assertTrue(Float.isNaN(out[r]), type + " row " + r);
    }

    /**
     * The vector gather of the Q4_0 kernel's multipliers against the definition, written out per
     * nibble: {@code y_0 = x_0}, {@code y_k = x_k - 16·x_(k-1)}, {@code x_k = q[column(s, k)]}, over
     * blocks of random and extreme quants (±127, -128 and zeros).
     */
    @Test
    void q4MultipliersMatchTheirDefinition() {
        java.util.Random random = new java.util.Random(77);
        for (int round = 0; round < 200; round++) {
            float[] q = new float[40];
            for (int i = 0; i < q.length; i++) {
                q[i] = switch (round % 4) {
                    case 0 -> random.nextInt(255) - 127;
                    case 1 -> random.nextBoolean() ? 127 : -127;
                    case 2 -> random.nextBoolean() ? -128 : 0;
                    default -> random.nextInt(3) - 1;
                };
            }
            int j0 = round % 9;
            int[] y = new int[20];
            int neg8 = InterleavedQ4_0.multipliers(q, j0, y, 3);
            int sum = 0;
            for (int i = j0; i < j0 + 32; i++) sum += (int) q[i];
            assertEquals((-8 * sum) & 0xFFFF, neg8, "round " + round);
            for (int s = 0; s < 4; s++) {
                for (int j = 0; j < 4; j++) {
                    int lo = (int) q[j0 + InterleavedQ4_0.column(s, j)] - (j == 0 ? 0 : 16 * (int) q[j0 + InterleavedQ4_0.column(s, j - 1)]);
                    int hi = (int) q[j0 + InterleavedQ4_0.column(s, j + 4)] - 16 * (int) q[j0 + InterleavedQ4_0.column(s, j + 3)];
                    assertEquals((lo & 0xFFFF) | hi << 16, y[3 + 4 * s + j], "round " + round + " line " + s + " view " + j);
                }
            }
        }
    }

    /**
     * The Q4_0 and Q8_0 copies hold their block scales as {@link RebiasedF16} codes, which the
     * one-token kernels decode to {@code d · 2^-102} and multiply by the activation scale times
     * {@code 2^102}, and the few-token path decodes to exact floats: scales at the edges of the
     * code (signed zeros, the smallest and largest subnormal halves, the smallest normal, ±127.94)
     * give the same bits both ways and the float64 reference, with activation scales from
     * subnormal halves to infinite (activations of 1e-9 to 2e7), for an even and an odd number of
     * blocks (Q8_0 keeps two blocks' scales per line); a scale outside the code leaves the matrix in place.
     */
    @org.junit.jupiter.params.ParameterizedTest(name = "{0}")
    @org.junit.jupiter.params.provider.EnumSource(value = GgmlType.class, names = {"Q4_0", "Q8_0"})
    void scaleCodesAreExact(GgmlType type) {
        int groupRows = type == GgmlType.Q4_0 ? InterleavedQ4_0.ROWS : InterleavedQ8_0.ROWS;
        for (int cols : new int[]{160, 192}) {
            scaleCodesAreExact(type, 5 * groupRows + 3, cols);
        }
        for (short bad : new short[]{Float.floatToFloat16(128f), Float.floatToFloat16(-60000f), (short) 0x7C00, (short) 0xFE00}) {
            WeightMatrix m = MatMulTest.matrix(type, 2 * groupRows, 64, 1510);
            m.tensor().data().set(ValueLayout.JAVA_SHORT_UNALIGNED, (2L * groupRows - 1) * m.rowBytes() + type.bytesFor(32), bad); // the very last scale
            assertTrue(m.canRepack());
            assertSame(m, m.repacked(arena), "half 0x" + Integer.toHexString(bad & 0xFFFF));
            assertSame(m, m.repacked(arena, pool3));
        }
    }

    private void scaleCodesAreExact(GgmlType type, int rows, int cols) {
        int nb = cols / 32;
        short[] edges = {0x0000, (short) 0x8000, 0x0001, (short) 0x8001, 0x03FF, 0x0400, 0x57FF, (short) 0xD7FF, 0x3C00, (short) 0xB555};
        WeightMatrix plain = MatMulTest.matrix(type, rows, cols, 1500 + cols);
        MemorySegment data = plain.tensor().data();
        for (int r = 0; r < rows; r++) {
            for (int b = 0; b < nb; b++) {
                if ((r + b) % 3 == 0) data.set(ValueLayout.JAVA_SHORT_UNALIGNED, r * plain.rowBytes() + type.bytesFor(32L * b), edges[(7 * r + b) % edges.length]);
            }
        }
        WeightMatrix w = plain.repacked(arena, pool2);
        assertTrue(w.isRepacked());
        long seed = 1501;
        for (float amplitude : new float[]{1f, 1e-9f, 1e-5f, 3e3f, 2e7f}) {
            float[] x = MatMulTest.activations(2 * cols, ++seed);
            for (int i = 0; i < x.length; i++) x[i] *= amplitude;
            System.arraycopy(x, 0, x, cols, cols); // two equal tokens: the second call takes the few-token path
            float[] one = new float[rows], two = new float[2 * rows];
            MatMul.matmul(KernelMode.VECTOR, pool2, w, x, 0, cols, 1, one, 0, rows);
            MatMul.matmul(KernelMode.VECTOR, pool3, w, x, 0, cols, 2, two, 0, rows);
            String where = type + " " + rows + "x" + cols + " amplitude " + amplitude;
            org.junit.jupiter.api.Assertions.assertArrayEquals(java.util.Arrays.copyOf(two, rows), one, 0f, where);
            if (amplitude > 1e6f) {
                // the activation scale rounds to an infinite half, as in ggml: no finite result
                for (int r = 0; r < rows; r++) assertFalse(Float.isFinite(one[r]), where + " row " + r);
                continue;
            }
            double[][] ref = MatMulTest.reference(plain, x, 0, cols, 1);
            for (int r = 0; r < rows; r++) {
                assertEquals(ref[0][r], one[r], MatMulTest.ACCUMULATION_TOLERANCE * ref[1][r] + 1e-40, where + " row " + r);
            }
        }
    }

    /*
     * F16 has its own allocation test (RebiasedF16Test, a JVM of its own): run first in this JVM, it
     * made the Q4_0 one-token kernel compile to boxed vectors now and then (seen once in eight
     * runs; with -XX:-TieredCompilation every time), an interaction between kernels that is still
     * open (docs/PERFORMANCE.md, "Where the time goes").
     */
    @org.junit.jupiter.api.Tag("allocation") // run in a JVM of its own (see the parent pom)
    @org.junit.jupiter.params.ParameterizedTest(name = "{0}")
    @org.junit.jupiter.params.provider.EnumSource(value = GgmlType.class, names = {"Q4_0", "Q8_0"})
    void steadyStateCallsDoNotAllocate(GgmlType type) throws ReflectiveOperationException {
        Object bean = Class.forName("java.lang.management.ManagementFactory").getMethod("getThreadMXBean").invoke(null);
        java.lang.reflect.Method allocatedBytes = Class.forName("com.sun.management.ThreadMXBean").getMethod("getCurrentThreadAllocatedBytes");
        // a model-sized row (long loops are compiled differently from short ones); two four-group passes of either type and a tail
        int rows = 268, cols = 2048;
        WeightMatrix w = MatMulTest.matrix(type, rows, cols, 2).repacked(arena);
        for (int nTokens : new int[]{1, 4, 8, 20}) { // decode kernels (one token, a few), then the prefill GEMM over panels decoded from the copy
            float[] x = MatMulTest.activations(nTokens * cols, 3), out = new float[rows * nTokens];
            long allocated = Long.MAX_VALUE;
            long deadline = System.nanoTime() + 60_000_000_000L; // C2 compiles late on a loaded 2-core machine
            while (allocated >= 1024 && System.nanoTime() < deadline) {
                long before = (Long) allocatedBytes.invoke(bean);
                for (int i = 0; i < 50; i++) MatMul.matmul(KernelMode.VECTOR, pool2, w, x, 0, cols, nTokens, out, 0, rows);
                allocated = (Long) allocatedBytes.invoke(bean) - before;
            }
            assertTrue(allocated < 1024, type + " " + nTokens + " tokens: " + allocated + " bytes allocated by 50 calls");
        }
    }

}
