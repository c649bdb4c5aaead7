package io.modelopt.core.kernel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.modelopt.core.quant.Q6_K;
import io.modelopt.core.tensor.GgmlType;
import io.modelopt.core.tensor.TensorData;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The repacked Q6_K decode kernel ({@link InterleavedQ6_K}): called directly and through
 * {@link MatMul}, against the float64 reference of {@link MatMulTest} and the scalar kernel, for 1
 * to 9 tokens, odd super-block counts, row counts with a tail after the last group, and the
 * extreme sub-block sums at the edges of its 16-bit lanes.
 */
class InterleavedQ6_KTest {
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
        assumeTrue(KernelMode.vectorApiAvailable() && KernelMode.DEFAULT == KernelMode.VECTOR, "the repacked kernel is Vector API only");
        arena = Arena.ofShared(); // the pool's threads read it
    }

    @AfterEach
    void free() {
        if (arena != null) arena.close();
    }

    /** The Q6_K multipliers of {@code a}'s tokens. */
    static int[] multipliers(Activations a, int cols, int nTokens) {
        int per = InterleavedQ6_K.MULTIPLIERS.perToken(cols);
        int[] y = new int[per * nTokens];
        for (int t = 0; t < nTokens; t++) InterleavedQ6_K.multipliers(a.q, t * cols, cols, y, t * per);
        return y;
    }

    /** The repacked kernel's outputs for the whole groups of {@code w} (rows past them are left 0). */
    float[] compute(WeightMatrix w, float[] x, int nTokens) {
        int rows = w.rows(), cols = w.cols(), nb = cols / 256;
        assertTrue(InterleavedQ6_K.canRepack(rows, cols));
        MemorySegment packed = arena.allocate(InterleavedQ6_K.packedBytes(rows, cols), 64);
        int groups = rows / InterleavedQ6_K.ROWS;
        InterleavedQ6_K.pack(w, packed, 0, groups);
        Activations a = new Activations();
        a.prepare(Activations.Kind.Q8_K, x, 0, cols, nTokens, cols, false);
        a.quantize(0, nTokens);
        int[] y = multipliers(a, cols, nTokens);
        float[] out = new float[nTokens * rows];
        // two calls over split group ranges, as the pool's pieces are
        int split = groups / 2;
        InterleavedQ6_K.compute(packed, nb, a, y, 0, split, out, 0, rows);
        InterleavedQ6_K.compute(packed, nb, a, y, split, groups, out, 0, rows);
        return out;
    }

    @Test
    void matchesFloat64ReferenceAndTheScalarKernel() {
        int g = InterleavedQ6_K.ROWS;
        // 8g and 11g + 3 rows: each of the two calls holds a whole four-group pass (groupQuad) and, for 11g, groups after it
        int[][] shapes = {{g, 256}, {2 * g, 768}, {3 * g + 5, 512}, {g + 1, 1280}, {4 * g, 2048}, {8 * g, 512}, {11 * g + 3, 768}};
        long seed = 60;
        for (int[] s : shapes) {
            for (int nTokens : new int[]{1, 2, 5}) {
                seed++;
                int rows = s[0], cols = s[1];
                WeightMatrix w = MatMulTest.matrix(GgmlType.Q6_K, rows, cols, seed);
                float[] x = MatMulTest.activations(nTokens * cols, seed * 3);
                float[] out = compute(w, x, nTokens);
                float[] scalar = new float[nTokens * rows];
                MatMul.matmul(KernelMode.SCALAR, pool1, w, x, 0, cols, nTokens, scalar, 0, rows);
                double[][] ref = MatMulTest.reference(w, x, 0, cols, nTokens);
                int packedRows = InterleavedQ6_K.packedRows(rows);
                for (int t = 0; t < nTokens; t++) {
                    for (int r = 0; r < packedRows; r++) {
                        int i = t * rows + r;
                        String where = rows + "x" + cols + " tokens " + nTokens + " out[" + i + "]";
                        assertEquals(ref[0][i], out[i], MatMulTest.ACCUMULATION_TOLERANCE * ref[1][i] + 1e-30, where);
                        // the same integer sums as ggml's: differs from the scalar kernel only in float rounding
                        assertEquals(scalar[i], out[i], 1e-5 * ref[1][i] + 1e-30, where + " vs scalar");
                    }
                }
            }
        }
    }

    /** Through {@link MatMul}: the copy for the whole groups, the file for the rows after them, any thread count. */
    @Test
    void repackedMatrixThroughMatMul() {
        int g = InterleavedQ6_K.ROWS;
        int[][] shapes = {{g, 256}, {2 * g + 3, 768}, {3 * g + g / 2 + 1, 1280}, {g - 1, 256}, {9 * g + 5, 512}};
        ComputePool[] pools = {pool1, pool2, pool3};
        long seed = 700;
        for (int[] s : shapes) {
            for (int nTokens : new int[]{1, 3, 9}) {
                seed++;
                int rows = s[0], cols = s[1];
                WeightMatrix plain = MatMulTest.matrix(GgmlType.Q6_K, rows, cols, seed);
                WeightMatrix w = plain.repacked(arena);
                assertEquals(rows >= g, w.isRepacked(), rows + " rows");
                if (w.isRepacked()) assertEquals(InterleavedQ6_K.packedBytes(rows, cols), w.residentBytes());
                float[] x = MatMulTest.activations(nTokens * cols, seed * 5);
                float[] out = new float[nTokens * rows];
                MatMul.matmul(KernelMode.VECTOR, pools[(int) (seed % 3)], w, x, 0, cols, nTokens, out, 0, rows);
                double[][] ref = MatMulTest.reference(plain, x, 0, cols, nTokens);
                for (int i = 0; i < out.length; i++) {
                    String where = rows + "x" + cols + " tokens " + nTokens + " out[" + i + "]";
                    assertEquals(ref[0][i], out[i], MatMulTest.ACCUMULATION_TOLERANCE * ref[1][i] + 1e-30, where);
                }
            }
        }
    }

    /** One-token calls: the four-group pass gives the bits of one-group calls (the same integer sums and float steps). */
    @Test
    void fourGroupPassGivesTheBitsOfOneGroupCalls() {
        KQuantPasses.assertPassGivesTheBitsOfOneGroupCalls(arena, GgmlType.Q6_K, new KQuantPasses.Layout() {
            @Override public int groupRows() { return InterleavedQ6_K.ROWS; }
            @Override public long packedBytes(int rows, int cols) { return InterleavedQ6_K.packedBytes(rows, cols); }
            @Override public int[] multipliers(Activations a, int cols) { return InterleavedQ6_KTest.multipliers(a, cols, 1); }
            @Override public void pack(WeightMatrix w, MemorySegment dst, int g0, int g1) { InterleavedQ6_K.pack(w, dst, g0, g1); }
            @Override public void compute(MemorySegment m, int nb, Activations a, int[] y, int g0, int g1, float[] out, int outOff, int outStride) {
                InterleavedQ6_K.compute(m, nb, a, y, g0, g1, out, outOff, outStride);
            }
        });
    }

    /**
     * Sub-block sums at the ends of the 16-bit lanes: quants all 0 (q - 32 = -32), all 63, all 15
     * (the largest low nibble with no high bits), all 48 (highs only), with activations all equal,
     * which Q8_K quantizes to -127 (its largest magnitude) or 127, and extreme int8 scales.
     */
    @Test
    void extremeSubBlockSums() {
        int rows = 8 * InterleavedQ6_K.ROWS, cols = 512; // each of compute's two calls is one four-group pass
        MemorySegment m = arena.allocate(GgmlType.Q6_K.bytesFor((long) rows * cols));
        long rowBytes = GgmlType.Q6_K.bytesFor(cols);
        int[] quants = {0, 63, 15, 48, 31, 32};
        for (int r = 0; r < rows; r++) {
            int q = quants[r % quants.length];
            for (int b = 0; b < cols / 256; b++) {
                long blk = r * rowBytes + (long) b * Q6_K.BLOCK_BYTES;
                m.set(WeightData.SHORT, blk + Q6_K.D, Float.floatToFloat16(0.01f * (1 + r % 5)));
                for (int j = 0; j < 16; j++) m.set(ValueLayout.JAVA_BYTE, blk + Q6_K.SCALES + j, (byte) (r % 2 == 0 ? -128 : 127 - j));
                int lo = q & 0xF, hi = q >>> 4;
                for (int i = 0; i < 128; i++) m.set(ValueLayout.JAVA_BYTE, blk + Q6_K.QL + i, (byte) (lo | lo << 4));
                for (int i = 0; i < 64; i++) m.set(ValueLayout.JAVA_BYTE, blk + Q6_K.QH + i, (byte) (hi | hi << 2 | hi << 4 | hi << 6));
            }
        }
        WeightMatrix w = WeightMatrix.of(new TensorData("w", GgmlType.Q6_K, new long[]{cols, rows}, m));
        for (float v : new float[]{2.5f, -2.5f}) {
            float[] x = new float[cols];
            java.util.Arrays.fill(x, v); // every quant is -127 (the block's max maps to -127)
            for (int k = 300; k < 340; k++) x[k] = -v * 0.999f; // and 127-ish in a second block
            float[] out = compute(w, x, 1);
            double[][] ref = MatMulTest.reference(w, x, 0, cols, 1);
            for (int r = 0; r < rows; r++) assertEquals(ref[0][r], out[r], 1e-6 * ref[1][r] + 1e-30, "row " + r + " x " + v);
        }
    }

    /** A steady-state call of the kernel allocates nothing (no vector is boxed). */
    @org.junit.jupiter.api.Tag("allocation") // run in a JVM of its own (see the parent pom)
    @Test
    void steadyStateCallsDoNotAllocate() throws ReflectiveOperationException {
        Object bean = Class.forName("java.lang.management.ManagementFactory").getMethod("getThreadMXBean").invoke(null);
        java.lang.reflect.Method allocatedBytes = Class.forName("com.sun.management.ThreadMXBean").getMethod("getCurrentThreadAllocatedBytes");
        int rows = 4 * InterleavedQ6_K.ROWS, cols = 768, nb = cols / 256, groups = rows / InterleavedQ6_K.ROWS;
        WeightMatrix w = MatMulTest.matrix(GgmlType.Q6_K, rows, cols, 3);
        MemorySegment packed = arena.allocate(InterleavedQ6_K.packedBytes(rows, cols), 64);
        InterleavedQ6_K.pack(w, packed, 0, groups);
        for (int nTokens : new int[]{1, 3}) {
            float[] x = MatMulTest.activations(nTokens * cols, 4), out = new float[nTokens * rows];
            Activations a = new Activations();
            a.prepare(Activations.Kind.Q8_K, x, 0, cols, nTokens, cols, false);
            a.quantize(0, nTokens);
            int[] y = multipliers(a, cols, nTokens);
            long allocated = Long.MAX_VALUE;
            long deadline = System.nanoTime() + 30_000_000_000L;
            while (allocated >= 1024 && System.nanoTime() < deadline) {
                long before = (Long) allocatedBytes.invoke(bean);
                for (int i = 0; i < 200; i++) InterleavedQ6_K.compute(packed, nb, a, y, 0, groups, out, 0, rows);
                allocated = (Long) allocatedBytes.invoke(bean) - before;
            }
            assertTrue(allocated < 1024, nTokens + " tokens: " + allocated + " bytes allocated by 200 calls");
        }
    }

    @Test
    void canRepackNeedsAWholeGroupOfWholeSuperBlocks() {
        int g = InterleavedQ6_K.ROWS;
        assertTrue(InterleavedQ6_K.canRepack(g, 256));
        assertFalse(InterleavedQ6_K.canRepack(g - 1, 256));
        assertFalse(InterleavedQ6_K.canRepack(g, 255));
        assertEquals((long) 2 * 3 * InterleavedQ6_K.RECORD, InterleavedQ6_K.packedBytes(2 * g + 3, 768));
        // as many bytes per weight as the file's 210 per 256, plus two for d as a float
        assertEquals(212L * g, InterleavedQ6_K.RECORD);
    }
}
