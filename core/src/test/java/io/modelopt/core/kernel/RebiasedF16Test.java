package io.modelopt.core.kernel;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.modelopt.core.tensor.GgmlType;
import io.modelopt.core.tensor.TensorData;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The re-encoded F16 layout ({@link RebiasedF16}): every half either round-trips exactly or is
 * refused, and matrices full of the awkward values (subnormals, signed zeros, the largest
 * representable magnitudes) give the float64 reference's products through {@link MatMul}, on the
 * scaled one-token path and on its unscaled fallback.
 */
class RebiasedF16Test {
    static ComputePool pool1, pool2;
    Arena arena;

    @BeforeAll
    static void pools() {
        pool1 = new ComputePool(1);
        pool2 = new ComputePool(2);
    }

    @AfterAll
    static void closePools() {
        pool1.close();
        pool2.close();
    }

    @BeforeEach
    void open() {
        arena = Arena.ofShared();
    }

    @AfterEach
    void close() {
        arena.close();
    }

    @Test
    void everyHalfRoundTripsExactlyOrIsRefused() {
        int refused = 0;
        for (int i = 0; i < 65536; i++) {
            int bits = i;
            short h = (short) bits;
            float v = Float.float16ToFloat(h);
            int code = RebiasedF16.encode(h);
            boolean representable = Float.isFinite(v) && Math.abs(v) < 128f;
            assertEquals(representable, code >= 0, () -> "half 0x" + Integer.toHexString(bits) + " = " + v);
            if (code < 0) {
                refused++;
                continue;
            }
            float back = RebiasedF16.decode((short) code);
            assertEquals(Float.floatToRawIntBits(v), Float.floatToRawIntBits(back), () -> "half 0x" + Integer.toHexString(bits) + " = " + v);
            // the in-register decoding (before the scale) is never a denormal
            float raw = Float.intBitsToFloat((((short) code) << 13) & 0x8FFFE000);
            assertTrue(raw == 0f || Math.abs(raw) >= Float.MIN_NORMAL, () -> "half " + v + " decodes to a denormal " + raw);
        }
        // per sign: exponents 22..30 (1024 halves each) and 31 (inf/NaN)
        assertEquals(2 * 10 * 1024, refused);
    }

    @Test
    void vectorDecodingGivesTheReferenceFloats() {
        assumeTrue(KernelMode.vectorApiAvailable());
        int rows = 3, cols = 96;
        WeightMatrix plain = awkward(rows, cols, 3);
        WeightMatrix w = plain.repacked(arena);
        assertTrue(w.isRepacked());
        float[] fromCodes = new float[rows * cols], reference = new float[rows * cols];
        F16Kernel.Vectorized.INSTANCE.dequantizeRows(w, 0, rows, fromCodes);
        for (int r = 0; r < rows; r++) plain.dequantizeRow(r, reference, r * cols);
        assertArrayEquals(reference, fromCodes, 0f);
        // a count that is not a multiple of 32 ends in the scalar tail
        float[] partial = new float[rows * cols - 5];
        RebiasedF16.decodeRows(w.packed(), 0, partial, 0, partial.length);
        assertArrayEquals(java.util.Arrays.copyOf(reference, partial.length), partial, 0f);
    }

    @Test
    void oneTokenMatchesTheFloat64ReferenceScaledOrNot() {
        assumeTrue(KernelMode.vectorApiAvailable());
        long seed = 40;
        for (int[] s : new int[][]{{4, 32}, {7, 64}, {45, 160}, {64, 2048}, {13, 5632}}) {
            int rows = s[0], cols = s[1];
            WeightMatrix plain = awkward(rows, cols, ++seed);
            WeightMatrix w = plain.repacked(arena);
            assertTrue(w.isRepacked());
            assertEquals(2L * rows * cols, w.residentBytes());
            float[] x = MatMulTest.activations(cols, seed);
            x[cols / 2] = 1e-41f; // a denormal activation scales exactly too
            for (boolean huge : new boolean[]{false, true}) {
                if (huge) x[cols - 1] = 5e7f; // ≥ 2^25: the call takes the unscaled fallback
                for (ComputePool pool : new ComputePool[]{pool1, pool2}) {
                    float[] out = new float[rows], inPlace = new float[rows];
                    MatMul.matmul(KernelMode.VECTOR, pool, w, x, 0, cols, 1, out, 0, rows);
                    MatMul.matmul(KernelMode.VECTOR, pool, plain, x, 0, cols, 1, inPlace, 0, rows);
                    double[][] ref = MatMulTest.reference(plain, x, 0, cols, 1);
                    for (int r = 0; r < rows; r++) {
                        String where = rows + "x" + cols + (huge ? " huge x" : "") + " row " + r;
                        assertEquals(ref[0][r], out[r], MatMulTest.ACCUMULATION_TOLERANCE * ref[1][r] + 1e-30, where);
                        assertEquals(inPlace[r], out[r], 2 * MatMulTest.ACCUMULATION_TOLERANCE * ref[1][r] + 1e-30, where);
                    }
                }
            }
        }
    }

    @Test
    void nonFiniteActivationsReachEveryRow() {
        assumeTrue(KernelMode.vectorApiAvailable());
        int rows = 9, cols = 96;
        WeightMatrix w = awkward(rows, cols, 7).repacked(arena);
        for (float bad : new float[]{Float.NaN, Float.POSITIVE_INFINITY}) {
            float[] x = MatMulTest.activations(cols, 8);
            x[33] = bad;
            float[] out = new float[rows];
            MatMul.matmul(KernelMode.VECTOR, pool2, w, x, 0, cols, 1, out, 0, rows);
            for (int r = 0; r < rows; r++) assertFalse(Float.isFinite(out[r]), bad + " row " + r);
        }
    }

    @Test
    void matricesWithAnUnrepresentableValueStayInPlace() {
        for (short bad : new short[]{Float.floatToFloat16(128f), Float.floatToFloat16(-60000f), (short) 0x7C00, (short) 0x7E00}) {
            WeightMatrix plain = awkward(6, 64, 9);
            plain.tensor().data().set(WeightData.SHORT, 2L * (5 * 64 + 63), bad); // the very last weight
            assertTrue(plain.canRepack());
            assertSame(plain, plain.repacked(arena), "half 0x" + Integer.toHexString(bad & 0xFFFF));
            assertSame(plain, plain.repacked(arena, pool2));
        }
        WeightMatrix odd = awkward(4, 48, 1); // columns not a multiple of 32
        assertFalse(odd.canRepack());
    }

    @org.junit.jupiter.api.Tag("allocation") // run in a JVM of its own (see the parent pom)
    @Test
    void steadyStateCallsDoNotAllocate() throws ReflectiveOperationException {
        assumeTrue(KernelMode.vectorApiAvailable());
        Object bean = Class.forName("java.lang.management.ManagementFactory").getMethod("getThreadMXBean").invoke(null);
        java.lang.reflect.Method allocatedBytes = Class.forName("com.sun.management.ThreadMXBean").getMethod("getCurrentThreadAllocatedBytes");
        int rows = 268, cols = 2048;
        WeightMatrix w = awkward(rows, cols, 2).repacked(arena);
        for (int nTokens : new int[]{1, 4, 20}) { // the one-token kernel, the decoded rows' dot products, the prefill GEMM
            float[] x = MatMulTest.activations(nTokens * cols, 3), out = new float[rows * nTokens];
            long allocated = Long.MAX_VALUE;
            long deadline = System.nanoTime() + 30_000_000_000L;
            while (allocated >= 1024 && System.nanoTime() < deadline) {
                long before = (Long) allocatedBytes.invoke(bean);
                for (int i = 0; i < 50; i++) MatMul.matmul(KernelMode.VECTOR, pool2, w, x, 0, cols, nTokens, out, 0, rows);
                allocated = (Long) allocatedBytes.invoke(bean) - before;
            }
            assertTrue(allocated < 1024, "F16 " + nTokens + " tokens: " + allocated + " bytes allocated by 50 calls");
        }
    }

    /**
     * An F16 matrix of mostly N(0, 0.02) weights (0.2% of them subnormal) with, at random places,
     * ±0, the smallest subnormal, the largest subnormal, the smallest normal and ±127.9.
     */
    private WeightMatrix awkward(int rows, int cols, long seed) {
        MemorySegment m = arena.allocate(2L * rows * cols);
        Random r = new Random(seed);
        short[] specials = {0, (short) 0x8000, 0x0001, (short) 0x8001, 0x03FF, 0x0400, Float.floatToFloat16(127.9f), Float.floatToFloat16(-127.9f)};
        for (long i = 0; i < (long) rows * cols; i++) {
            short h = r.nextInt(50) == 0 ? specials[r.nextInt(specials.length)] : Float.floatToFloat16((float) (r.nextGaussian() * 0.02));
            m.set(WeightData.SHORT, 2 * i, h);
        }
        return WeightMatrix.of(new TensorData("w", GgmlType.F16, new long[]{cols, rows}, m));
    }
}
