package io.modelopt.core.kernel;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.modelopt.core.quant.ActivationRef;
import io.modelopt.core.quant.RefDecode;
import io.modelopt.core.quant.TestBlocks;
import io.modelopt.core.tensor.GgmlType;
import io.modelopt.core.tensor.TensorData;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every weight format × {scalar, vector} kernel against a float64 reference: the weights decoded
 * independently ({@link RefDecode}), the activations quantized by test-side transcriptions of
 * llama.cpp's quantizers ({@link ActivationRef}) and the dot products formed in double. Shapes are
 * awkward on purpose (row counts that are not multiples of the row grain, column counts that are
 * whole blocks but odd multiples of the vector width, 1/2/5/9 tokens).
 */
class MatMulTest {
    static final GgmlType[] TYPES = {GgmlType.F32, GgmlType.F16, GgmlType.BF16, GgmlType.Q8_0, GgmlType.Q4_0,
            GgmlType.Q4_1, GgmlType.Q5_0, GgmlType.Q4_K, GgmlType.Q5_K, GgmlType.Q6_K};

    static ComputePool pool1, pool2, pool3;

    @BeforeAll
    static void pools() {
        pool1 = new ComputePool(1);
        pool2 = new ComputePool(2);
        pool3 = new ComputePool(3);
    }

    @AfterAll
    static void close() {
        pool1.close();
        pool2.close();
        pool3.close();
    }

    static KernelMode[] modes() {
        return KernelMode.vectorApiAvailable() ? KernelMode.values() : new KernelMode[]{KernelMode.SCALAR};
    }

    static Stream<Arguments> typesAndModes() {
        List<Arguments> a = new ArrayList<>();
        for (GgmlType t : TYPES) for (KernelMode m : modes()) a.add(Arguments.of(t, m));
        return a.stream();
    }

    /**
     * Error allowed against the float64 reference with identically quantized activations, as a
     * fraction of {@code Σ|w·x|}: only float rounding of the accumulation remains.
     */
    static final double ACCUMULATION_TOLERANCE = 2e-6;

    /**
     * Error allowed against the float64 product with the raw F32 activations, as a fraction of
     * {@code Σ|w·x|}: the activation quantization error (8-bit: about 2^-8 of the block maximum).
     */
    static double activationTolerance(GgmlType t) {
        return switch (t) {
            case F32, F16, BF16 -> 2e-6;
            case Q8_0, Q4_0, Q4_1, Q5_0 -> 1.5e-2; // Q8_0 activations, 32-element blocks
            case Q4_K, Q5_K, Q6_K -> 2.5e-2;        // Q8_K activations, 256-element blocks
            default -> throw new IllegalArgumentException();
        };
    }

    static int[] colsFor(GgmlType t) {
        return switch (t.blockSize()) {
            case 1 -> new int[]{1, 7, 33, 100, 515};
            case 32 -> new int[]{32, 96, 160, 480};
            default -> new int[]{256, 768, 1280};
        };
    }

    static WeightMatrix matrix(GgmlType t, int rows, int cols, long seed) {
        MemorySegment m = TestBlocks.random(t, rows, cols, seed);
        return WeightMatrix.of(new TensorData("w", t, new long[]{cols, rows}, m));
    }

    static float[] activations(int n, long seed) {
        Random r = new Random(seed);
        float[] x = new float[n];
        for (int i = 0; i < n; i++) x[i] = (float) (r.nextGaussian() * (1 + (i / 40) % 3));
        return x;
    }

    /** [0] reference with quantized activations, [1] Σ|w·x| with them, [2] reference with raw activations, [3] Σ|w·x| raw. */
    static double[][] reference(WeightMatrix w, float[] x, int xOff, int xStride, int nTokens) {
        int rows = w.rows(), cols = w.cols();
        GgmlType t = w.type();
        MemorySegment data = w.tensor().data();
        double[][] wr = new double[rows][];
        for (int row = 0; row < rows; row++) wr[row] = RefDecode.decode(t, data, row * w.rowBytes(), cols);
        double[][] r = new double[4][rows * nTokens];
        for (int tok = 0; tok < nTokens; tok++) {
            int xo = xOff + tok * xStride;
            double[] xq;
            double[][] q8 = null;
            switch (t) {
                case Q8_0, Q4_0, Q5_0, Q4_1 -> { q8 = ActivationRef.q8_0(x, xo, cols); xq = q8[0]; }
                case Q4_K, Q5_K, Q6_K -> xq = ActivationRef.q8_K(x, xo, cols);
                default -> {
                    xq = new double[cols];
                    for (int k = 0; k < cols; k++) xq[k] = x[xo + k];
                }
            }
            for (int row = 0; row < rows; row++) {
                double[] wrow = wr[row];
                double s = 0, a = 0, sr = 0, ar = 0;
                for (int k = 0; k < cols; k++) {
                    s += wrow[k] * xq[k];
                    a += Math.abs(wrow[k] * xq[k]);
                    sr += wrow[k] * x[xo + k];
                    ar += Math.abs(wrow[k] * x[xo + k]);
                }
                if (t == GgmlType.Q4_1) {
                    // block_q8_1: the min term uses s = half(d_unrounded·Σq), not d·Σq
                    s = 0;
                    for (int b = 0; b < cols / 32; b++) {
                        double m = RefDecode.half(data.get(ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN), row * w.rowBytes() + b * 20L + 2));
                        for (int j = 0; j < 32; j++) s += (wrow[b * 32 + j] - m) * xq[b * 32 + j];
                        s += m * q8[2][b];
                    }
                }
                r[0][tok * rows + row] = s;
                r[1][tok * rows + row] = a;
                r[2][tok * rows + row] = sr;
                r[3][tok * rows + row] = ar;
            }
        }
        return r;
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("typesAndModes")
    void matchesFloat64Reference(GgmlType t, KernelMode mode) {
        int[] rowCounts = {1, 3, 17, 37};
        int[] tokenCounts = {1, 2, 5, 9};
        long seed = 100;
        for (int cols : colsFor(t)) {
            for (int rows : rowCounts) {
                int nTokens = tokenCounts[(int) (seed % tokenCounts.length)];
                seed++;
                WeightMatrix w = matrix(t, rows, cols, seed);
                float[] x = activations(nTokens * cols, seed * 7);
                float[] out = new float[nTokens * rows];
                MatMul.matmul(mode, pool2, w, x, 0, cols, nTokens, out, 0, rows);
                double[][] ref = reference(w, x, 0, cols, nTokens);
                for (int i = 0; i < out.length; i++) {
                    String where = t + " " + mode + " " + rows + "x" + cols + " tokens " + nTokens + " out[" + i + "]";
                    assertEquals(ref[0][i], out[i], ACCUMULATION_TOLERANCE * ref[1][i] + 1e-30, where);
                    assertEquals(ref[2][i], out[i], activationTolerance(t) * ref[3][i] + 1e-30, where + " vs raw activations");
                }
            }
        }
    }

    /** Prefill-sized calls (the vector mode's GEMM path from 16 tokens): same references, same tolerances. */
    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("typesAndModes")
    void prefillSizedCallsMatchFloat64Reference(GgmlType t, KernelMode mode) {
        int[][] shapes = {{8, 16}, {19, 17}, {33, 40}};
        long seed = 300;
        for (int[] shape : shapes) {
            int rows = shape[0], nTokens = shape[1], cols = colsFor(t)[1];
            WeightMatrix w = matrix(t, rows, cols, seed++);
            float[] x = activations(nTokens * cols, seed * 3);
            float[] out = new float[nTokens * rows];
            MatMul.matmul(mode, pool2, w, x, 0, cols, nTokens, out, 0, rows);
            double[][] ref = reference(w, x, 0, cols, nTokens);
            for (int i = 0; i < out.length; i++) {
                String where = t + " " + mode + " " + rows + "x" + cols + " tokens " + nTokens + " out[" + i + "]";
                assertEquals(ref[0][i], out[i], ACCUMULATION_TOLERANCE * ref[1][i] + 1e-30, where);
            }
            // identical for 1 and 3 threads, NaN in one token stays in that token
            float[] o1 = new float[out.length], o3 = new float[out.length];
            MatMul.matmul(mode, pool1, w, x, 0, cols, nTokens, o1, 0, rows);
            MatMul.matmul(mode, pool3, w, x, 0, cols, nTokens, o3, 0, rows);
            assertArrayEquals(o1, o3);
            x[5 * cols + 3] = Float.NaN;
            MatMul.matmul(mode, pool2, w, x, 0, cols, nTokens, out, 0, rows);
            for (int r = 0; r < rows; r++) {
                assertTrue(Float.isNaN(out[5 * rows + r]), where(t, mode) + " NaN token, row " + r);
                assertTrue(Float.isFinite(out[4 * rows + r]), where(t, mode) + " clean token, row " + r);
            }
        }
    }

    static String where(GgmlType t, KernelMode m) { return t + " " + m; }

    /** The GEMM path's vector row decoders give exactly the reference decoder's floats. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("vectorTypes")
    void vectorRowDecodeEqualsReference(GgmlType t) {
        int cols = colsFor(t)[2 % colsFor(t).length];
        WeightMatrix w = matrix(t, 10, cols, 77);
        float[] v = new float[8 * cols], ref = new float[8 * cols];
        WeightFormats.forFileType(t).orElseThrow().kernel(KernelMode.VECTOR).dequantizeRows(w, 1, 8, v);
        for (int i = 0; i < 8; i++) w.dequantizeRow(1 + i, ref, i * cols);
        assertArrayEquals(ref, v, t.toString());
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("vectorTypes")
    void vectorAndScalarAgree(GgmlType t) {
        int cols = colsFor(t)[colsFor(t).length - 1];
        for (int nTokens : new int[]{1, 4, 6}) {
            WeightMatrix w = matrix(t, 29, cols, 5 + nTokens);
            float[] x = activations(nTokens * cols, 77);
            float[] s = new float[nTokens * 29], v = new float[nTokens * 29];
            MatMul.matmul(KernelMode.SCALAR, pool1, w, x, 0, cols, nTokens, s, 0, 29);
            MatMul.matmul(KernelMode.VECTOR, pool1, w, x, 0, cols, nTokens, v, 0, 29);
            double[][] ref = reference(w, x, 0, cols, nTokens);
            for (int i = 0; i < s.length; i++) assertEquals(s[i], v[i], 2 * ACCUMULATION_TOLERANCE * ref[1][i] + 1e-30, t + " out[" + i + "]");
        }
    }

    static Stream<GgmlType> vectorTypes() {
        return KernelMode.vectorApiAvailable() ? Stream.of(TYPES) : Stream.empty();
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("typesAndModes")
    void threadCountsGiveIdenticalResults(GgmlType t, KernelMode mode) {
        int cols = colsFor(t)[1], rows = 45, nTokens = 7;
        WeightMatrix w = matrix(t, rows, cols, 9);
        float[] x = activations(nTokens * cols, 10);
        float[] o1 = new float[rows * nTokens], o2 = new float[rows * nTokens], o3 = new float[rows * nTokens];
        MatMul.matmul(mode, pool1, w, x, 0, cols, nTokens, o1, 0, rows);
        MatMul.matmul(mode, pool2, w, x, 0, cols, nTokens, o2, 0, rows);
        MatMul.matmul(mode, pool3, w, x, 0, cols, nTokens, o3, 0, rows);
        assertArrayEquals(o1, o2);
        assertArrayEquals(o1, o3);
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("typesAndModes")
    void nanInActivationsPropagates(GgmlType t, KernelMode mode) {
        int cols = colsFor(t)[1], rows = 9, nTokens = 3;
        WeightMatrix w = matrix(t, rows, cols, 3);
        for (float bad : new float[]{Float.NaN, Float.POSITIVE_INFINITY}) {
            float[] x = activations(nTokens * cols, 4);
            x[cols + cols / 2] = bad; // token 1 only
            float[] out = new float[rows * nTokens];
            MatMul.matmul(mode, pool2, w, x, 0, cols, nTokens, out, 0, rows);
            for (int r = 0; r < rows; r++) {
                assertFalse(Float.isFinite(out[rows + r]), t + " " + mode + " " + bad + ": token 1 row " + r + " is " + out[rows + r]);
                assertTrue(Float.isFinite(out[r]) && Float.isFinite(out[2 * rows + r]), "other tokens stay finite");
            }
        }
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("typesAndModes")
    void nanInWeightsPropagates(GgmlType t, KernelMode mode) {
        int cols = colsFor(t)[1], rows = 6;
        WeightMatrix w = matrix(t, rows, cols, 8);
        MemorySegment m = w.tensor().data();
        // a NaN scale (or element for the float formats) in row 2
        long at = 2 * w.rowBytes() + switch (t) {
            case Q6_K -> 208;
            default -> 0;
        };
        if (t == GgmlType.F32) m.set(ValueLayout.JAVA_FLOAT_UNALIGNED, at, Float.NaN);
        else if (t == GgmlType.BF16) m.set(ValueLayout.JAVA_SHORT_UNALIGNED, at, (short) 0x7FC0);
        else m.set(ValueLayout.JAVA_SHORT_UNALIGNED, at, (short) 0x7E00);
        float[] x = activations(cols, 1);
        float[] out = new float[rows];
        MatMul.matmul(mode, pool1, w, x, 0, cols, 1, out, 0, rows);
        assertTrue(Float.isNaN(out[2]), t + " " + mode + ": " + out[2]);
        assertTrue(Float.isFinite(out[1]) && Float.isFinite(out[3]));
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("typesAndModes")
    void stridedFormReadsAndWritesSlices(GgmlType t, KernelMode mode) {
        int cols = colsFor(t)[0], rows = 11, nTokens = 3, xOff = 5, xStride = cols + 3, outOff = 2, outStride = rows + 4;
        WeightMatrix w = matrix(t, rows, cols, 21);
        float[] x = activations(xOff + nTokens * xStride, 22);
        float[] out = new float[outOff + nTokens * outStride];
        java.util.Arrays.fill(out, -7f);
        MatMul.matmul(mode, pool2, w, x, xOff, xStride, nTokens, out, outOff, outStride);
        float[] dense = new float[nTokens * cols];
        for (int tok = 0; tok < nTokens; tok++) System.arraycopy(x, xOff + tok * xStride, dense, tok * cols, cols);
        float[] expect = new float[nTokens * rows];
        MatMul.matmul(mode, pool2, w, dense, 0, cols, nTokens, expect, 0, rows);
        for (int i = 0; i < out.length; i++) {
            int rel = i - outOff;
            boolean inside = rel >= 0 && rel % outStride < rows && rel / outStride < nTokens;
            if (inside) assertEquals(expect[rel / outStride * rows + rel % outStride], out[i], 0f);
            else assertEquals(-7f, out[i], 0f, "untouched at " + i);
        }
    }

    @Test
    void badArgumentsAreRejectedWithMessages() {
        WeightMatrix w = matrix(GgmlType.Q4_0, 4, 64, 1);
        assertThrows(IllegalArgumentException.class, () -> MatMul.matmul(pool1, w, new float[63], 1, new float[4]));
        assertThrows(IllegalArgumentException.class, () -> MatMul.matmul(pool1, w, new float[64], 1, new float[3]));
        assertThrows(IllegalArgumentException.class, () -> MatMul.matmul(pool1, w, new float[128], 0, 32, 2, new float[8], 0, 4));
        assertThrows(IllegalArgumentException.class, () -> w.dequantizeRow(4, new float[64], 0));
        assertThrows(UnsupportedOperationException.class, () -> WeightMatrix.of(
                new TensorData("iq", GgmlType.IQ2_XXS, new long[]{256, 1}, MemorySegment.ofArray(new byte[66])))); // (IQ4_NL has a kernel now)
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("types")
    void dequantizeRowMatchesReferenceDecode(GgmlType t) {
        int cols = colsFor(t)[1];
        WeightMatrix w = matrix(t, 3, cols, 31);
        float[] row = new float[cols + 1];
        w.dequantizeRow(2, row, 1);
        double[] ref = RefDecode.decode(t, w.tensor().data(), 2 * w.rowBytes(), cols);
        for (int k = 0; k < cols; k++) assertEquals((float) ref[k], row[1 + k], 0f);
    }

    static Stream<GgmlType> types() { return Stream.of(TYPES); }

    /** A steady-state call allocates nothing on the calling thread (scratch and tasks are reused). */
    @org.junit.jupiter.api.Tag("allocation") // run in a JVM of its own (see the parent pom)
    @ParameterizedTest(name = "{0}")
    @MethodSource("types")
    void steadyStateCallsDoNotAllocate(GgmlType t) throws ReflectiveOperationException {
        // through reflection: the test sources compile inside the core module, which does not read java.management
        Object bean = Class.forName("java.lang.management.ManagementFactory").getMethod("getThreadMXBean").invoke(null);
        java.lang.reflect.Method allocatedBytes = Class.forName("com.sun.management.ThreadMXBean").getMethod("getCurrentThreadAllocatedBytes");
        for (int nTokens : new int[]{4, 20}) { // per-token kernels, then the prefill GEMM
            int cols = colsFor(t)[1], rows = 20;
            WeightMatrix w = matrix(t, rows, cols, 2);
            float[] x = activations(nTokens * cols, 3), out = new float[rows * nTokens];
            long allocated = Long.MAX_VALUE;
            long deadline = System.nanoTime() + 30_000_000_000L;
            while (allocated >= 1024 && System.nanoTime() < deadline) {
                long before = (Long) allocatedBytes.invoke(bean);
                for (int i = 0; i < 50; i++) MatMul.matmul(pool2, w, x, nTokens, out);
                allocated = (Long) allocatedBytes.invoke(bean) - before;
            }
            assertTrue(allocated < 1024, t + " " + nTokens + " tokens: " + allocated + " bytes allocated by 50 calls");
        }
    }

    /** The fused form (one activation quantization, one pool call) gives the same floats as separate calls. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("types")
    void sharedInputEqualsSeparateCalls(GgmlType t) {
        int cols = colsFor(t)[1];
        try (java.lang.foreign.Arena arena = java.lang.foreign.Arena.ofShared()) {
            for (int nTokens : new int[]{1, 3, 20}) {
                WeightMatrix a = matrix(t, 64, cols, 1).repacked(arena), b = matrix(t, 40, cols, 2).repacked(arena), c = matrix(t, 7, cols, 3);
                float[] x = activations(nTokens * cols, 4);
                float[] oa = new float[nTokens * 64], ob = new float[nTokens * 40], oc = new float[nTokens * 7];
                float[] ea = new float[nTokens * 64], eb = new float[nTokens * 40], ec = new float[nTokens * 7];
                MatMul.matmul(pool3, a, x, nTokens, ea);
                MatMul.matmul(pool3, b, x, nTokens, eb);
                MatMul.matmul(pool3, c, x, nTokens, ec);
                MatMul.matmulSharedInput(pool3, x, nTokens, a, oa, b, ob, c, oc);
                String where = t + " " + nTokens + " tokens";
                assertArrayEquals(ea, oa, 0f, where);
                assertArrayEquals(eb, ob, 0f, where);
                assertArrayEquals(ec, oc, 0f, where);
                java.util.Arrays.fill(oa, 0f);
                java.util.Arrays.fill(ob, 0f);
                MatMul.matmulSharedInput(pool2, x, nTokens, a, oa, b, ob, null, null);
                assertArrayEquals(ea, oa, 0f, where + " (two matrices)");
                assertArrayEquals(eb, ob, 0f, where + " (two matrices)");
            }
        }
    }
}
