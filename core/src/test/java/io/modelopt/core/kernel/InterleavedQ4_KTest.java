package io.modelopt.core.kernel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.modelopt.core.quant.Q4_K;
import io.modelopt.core.tensor.GgmlType;
import io.modelopt.core.tensor.TensorData;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The repacked Q4_K decode kernel ({@link InterleavedQ4_K}) called directly (MatMul reaches it through
 * its {@link Repacking}: the model tests): against the float64 reference of {@link MatMulTest} and against
 * the in-place kernels, for 1 to 5 tokens, group counts, and the extreme sub-block sums at the edge
 * of its 16-bit lanes.
 */
class InterleavedQ4_KTest {
    Arena arena;

    @BeforeEach
    void vectorApi() {
        assumeTrue(KernelMode.vectorApiAvailable() && KernelMode.DEFAULT == KernelMode.VECTOR, "the repacked kernel is Vector API only");
        arena = Arena.ofConfined();
    }

    @AfterEach
    void free() {
        if (arena != null) arena.close();
    }

    /** The repacked kernel's outputs for the whole groups of {@code w} (rows past them are left 0). */
    float[] compute(WeightMatrix w, float[] x, int nTokens) {
        int rows = w.rows(), cols = w.cols(), nb = cols / 256;
        assertTrue(InterleavedQ4_K.canRepack(rows, cols));
        MemorySegment packed = arena.allocate(InterleavedQ4_K.packedBytes(rows, cols), 64);
        int groups = rows / InterleavedQ4_K.ROWS;
        InterleavedQ4_K.pack(w, packed, 0, groups);
        Activations a = new Activations();
        a.prepare(Activations.Kind.Q8_K, x, 0, cols, nTokens, cols, false);
        a.quantize(0, nTokens);
        int[] y = new int[nTokens * cols / 2];
        for (int t = 0; t < nTokens; t++) InterleavedQ4_K.multipliers(a.q, t * cols, cols, y, t * cols / 2);
        float[] out = new float[nTokens * rows];
        // two calls over split group ranges, as the pool's pieces are
        int split = groups / 2;
        InterleavedQ4_K.compute(packed, nb, a, y, 0, split, out, 0, rows);
        InterleavedQ4_K.compute(packed, nb, a, y, split, groups, out, 0, rows);
        return out;
    }

    @Test
    void matchesFloat64ReferenceAndTheInPlaceKernel() {
        int L = InterleavedQ4_K.ROWS;
        // 8L and 11L + 3 rows: each of the two calls holds a whole four-group pass (groupQuad) and, for 11L, groups after it
        int[][] shapes = {{L, 256}, {2 * L, 768}, {3 * L + 5, 512}, {4 * L, 2048}, {8 * L, 512}, {11 * L + 3, 768}};
        long seed = 40;
        for (int[] s : shapes) {
            for (int nTokens : new int[]{1, 2, 5}) {
                seed++;
                int rows = s[0], cols = s[1];
                WeightMatrix w = MatMulTest.matrix(GgmlType.Q4_K, rows, cols, seed);
                float[] x = MatMulTest.activations(nTokens * cols, seed * 3);
                float[] out = compute(w, x, nTokens);
                float[] inPlace = new float[nTokens * rows];
                MatMul.matmul(KernelMode.SCALAR, pool, w, x, 0, cols, nTokens, inPlace, 0, rows);
                double[][] ref = MatMulTest.reference(w, x, 0, cols, nTokens);
                int packedRows = InterleavedQ4_K.packedRows(rows);
                for (int t = 0; t < nTokens; t++) {
                    for (int r = 0; r < packedRows; r++) {
                        int i = t * rows + r;
                        String where = rows + "x" + cols + " tokens " + nTokens + " out[" + i + "]";
                        assertEquals(ref[0][i], out[i], MatMulTest.ACCUMULATION_TOLERANCE * ref[1][i] + 1e-30, where);
                        // the same integer sums as ggml's: differs from the scalar kernel only in float rounding
                        assertEquals(inPlace[i], out[i], 1e-5 * ref[1][i] + 1e-30, where + " vs scalar");
                    }
                }
            }
        }
    }

    /** One-token calls: the four-group pass gives the bits of one-group calls (the same integer sums and float steps). */
    @Test
    void fourGroupPassGivesTheBitsOfOneGroupCalls() {
        KQuantPasses.assertPassGivesTheBitsOfOneGroupCalls(arena, GgmlType.Q4_K, new KQuantPasses.Layout() {
            @Override public int groupRows() { return InterleavedQ4_K.ROWS; }
            @Override public long packedBytes(int rows, int cols) { return InterleavedQ4_K.packedBytes(rows, cols); }
            @Override public void pack(WeightMatrix w, MemorySegment dst, int g0, int g1) { InterleavedQ4_K.pack(w, dst, g0, g1); }
            @Override public void compute(MemorySegment m, int nb, Activations a, int[] y, int g0, int g1, float[] out, int outOff, int outStride) {
                InterleavedQ4_K.compute(m, nb, a, y, g0, g1, out, outOff, outStride);
            }
        });
    }

    /**
     * Sub-block sums at both ends of the 16-bit lanes: weights all 0 (q - 8 = -8) or all 15 and
     * activations all equal, which Q8_K quantizes to -128 (its largest magnitude) or 127:
     * {@code Σ(q-8)·x} = 32768 (one past a short's range), -32512, and the rest.
     */
    @Test
    void extremeSubBlockSums() {
        int rows = 8 * InterleavedQ4_K.ROWS, cols = 512; // each of compute's two calls is one four-group pass
        MemorySegment m = arena.allocate(GgmlType.Q4_K.bytesFor((long) rows * cols));
        long rowBytes = GgmlType.Q4_K.bytesFor(cols);
        for (int r = 0; r < rows; r++) {
            for (int b = 0; b < cols / 256; b++) {
                long blk = r * rowBytes + (long) b * Q4_K.BLOCK_BYTES;
                m.set(WeightData.SHORT, blk + Q4_K.D, Float.floatToFloat16(0.01f * (1 + r % 5)));
                m.set(WeightData.SHORT, blk + Q4_K.DMIN, Float.floatToFloat16(0.003f * (1 + r % 3)));
                for (int i = 0; i < 12; i++) m.set(java.lang.foreign.ValueLayout.JAVA_BYTE, blk + Q4_K.SCALES + i, (byte) (r % 2 == 0 ? 0xFF : 0x3F + i));
                byte q = (byte) (r % 4 == 0 ? 0x00 : r % 4 == 1 ? 0xFF : r % 4 == 2 ? 0x0F : 0x5A);
                for (int i = 0; i < 128; i++) m.set(java.lang.foreign.ValueLayout.JAVA_BYTE, blk + Q4_K.QS + i, q);
            }
        }
        WeightMatrix w = WeightMatrix.of(new TensorData("w", GgmlType.Q4_K, new long[]{cols, rows}, m));
        for (float v : new float[]{2.5f, -2.5f}) {
            float[] x = new float[cols];
            java.util.Arrays.fill(x, v); // every quant is -128 (the block's max maps to -128)
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
        int rows = 4 * InterleavedQ4_K.ROWS, cols = 768, nb = cols / 256, groups = rows / InterleavedQ4_K.ROWS;
        WeightMatrix w = MatMulTest.matrix(GgmlType.Q4_K, rows, cols, 3);
        MemorySegment packed = arena.allocate(InterleavedQ4_K.packedBytes(rows, cols), 64);
        InterleavedQ4_K.pack(w, packed, 0, groups);
        for (int nTokens : new int[]{1, 3}) {
            float[] x = MatMulTest.activations(nTokens * cols, 4), out = new float[nTokens * rows];
            Activations a = new Activations();
            a.prepare(Activations.Kind.Q8_K, x, 0, cols, nTokens, cols, false);
            a.quantize(0, nTokens);
            int[] y = new int[nTokens * cols / 2];
            long allocated = Long.MAX_VALUE;
            long deadline = System.nanoTime() + 30_000_000_000L;
            while (allocated >= 1024 && System.nanoTime() < deadline) {
                long before = (Long) allocatedBytes.invoke(bean);
                for (int i = 0; i < 200; i++) {
                    for (int t = 0; t < nTokens; t++) InterleavedQ4_K.multipliers(a.q, t * cols, cols, y, t * cols / 2);
                    InterleavedQ4_K.compute(packed, nb, a, y, 0, groups, out, 0, rows);
                }
                allocated = (Long) allocatedBytes.invoke(bean) - before;
            }
            assertTrue(allocated < 1024, nTokens + " tokens: " + allocated + " bytes allocated by 200 calls");
        }
    }

    @Test
    void canRepackNeedsAWholeGroupOfWholeSuperBlocks() {
        int g = InterleavedQ4_K.ROWS;
        assertTrue(InterleavedQ4_K.canRepack(g, 256));
        assertFalse(InterleavedQ4_K.canRepack(g - 1, 256));
        assertFalse(InterleavedQ4_K.canRepack(g, 255));
        assertEquals((long) 2 * 3 * InterleavedQ4_K.RECORD, InterleavedQ4_K.packedBytes(2 * g + 3, 768));
        assertEquals(0, InterleavedQ4_K.RECORD % 64);
    }

    static ComputePool pool;

    @org.junit.jupiter.api.BeforeAll
    static void startPool() { pool = new ComputePool(1); }

    @org.junit.jupiter.api.AfterAll
    static void closePool() { pool.close(); }
}
