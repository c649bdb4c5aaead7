package io.modelopt.core.quant;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.modelopt.core.tensor.GgmlType;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.nio.ByteOrder;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The quantizers: C rounding helpers, round-trip error bounds of every {@code quantizeReference},
 * and the activation quantizers against scalar transcriptions of llama.cpp's code on edge values.
 */
class QuantizersTest {
    private static final ValueLayout.OfShort S = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfFloat F = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    @Test
    void cRoundingHelpers() {
        assertEquals(3f, GgmlRounding.roundf(2.5f));
        assertEquals(-3f, GgmlRounding.roundf(-2.5f));
        assertEquals(1f, GgmlRounding.roundf(0.5f));
        assertEquals(0f, GgmlRounding.roundf(0.49999997f)); // |x| + 0.5f in float would give 1
        assertEquals(-0f, GgmlRounding.roundf(-0.4f));
        assertEquals(2, GgmlRounding.nearestInt(2.5f));
        assertEquals(4, GgmlRounding.nearestInt(3.5f));
        assertEquals(-2, GgmlRounding.nearestInt(-2.5f));
        assertEquals(-127, GgmlRounding.nearestInt(-127.0f));
        Random r = new Random(7);
        for (int i = 0; i < 100_000; i++) {
            float x = (float) ((r.nextDouble() - 0.5) * 1000);
            if (i % 3 == 0) x = Math.round(x) + 0.5f;
            int even = new BigDecimal(x).setScale(0, RoundingMode.HALF_EVEN).intValueExact();
            int away = new BigDecimal(x).setScale(0, RoundingMode.HALF_UP).intValueExact(); // HALF_UP is away from zero
            assertEquals(even, GgmlRounding.nearestInt(x), "nearest_int " + x);
            assertEquals(away, (int) GgmlRounding.roundf(x), "roundf " + x);
        }
    }

    static float[] gaussian(int n, long seed, double scale) {
        Random r = new Random(seed);
        float[] x = new float[n];
        for (int i = 0; i < n; i++) x[i] = (float) (r.nextGaussian() * scale * (1 + (i / 32) % 5));
        return x;
    }

    interface Quantizer {
        void quantize(float[] src, int off, int n, MemorySegment dst, long dstOff);
    }

    static float[] roundTrip(GgmlType t, Quantizer q, float[] x, int off, int n) {
        MemorySegment m = Arena.ofAuto().allocate(t.bytesFor(n));
        q.quantize(x, off, n, m, 0);
        double[] deq = RefDecode.decode(t, m, 0, n);
        float[] out = new float[n];
        for (int i = 0; i < n; i++) out[i] = (float) deq[i];
        return out;
    }

    /** Per-element bound: {@code |x - deq| <= factor·|d| + slack·blockMax} with d the block's stored scale. */
    static void assertBlockBound(GgmlType t, Quantizer q, double factor, double slack) {
        int n = 32 * 40;
        float[] x = gaussian(n + 5, 11 + t.ordinal(), 0.02);
        MemorySegment m = Arena.ofAuto().allocate(t.bytesFor(n));
        q.quantize(x, 5, n, m, 0);
        double[] deq = RefDecode.decode(t, m, 0, n);
        for (int b = 0; b < n / t.blockSize(); b++) {
            long blk = (long) b * t.typeSize();
            double d = Math.abs(t == GgmlType.Q8_K ? m.get(F, blk) : RefDecode.half(m.get(S, blk)));
            double blockMax = 0;
            for (int j = 0; j < t.blockSize(); j++) blockMax = Math.max(blockMax, Math.abs(x[5 + b * t.blockSize() + j]));
            for (int j = 0; j < t.blockSize(); j++) {
                int i = b * t.blockSize() + j;
                double err = Math.abs(deq[i] - x[5 + i]);
                assertTrue(err <= factor * d + slack * blockMax, t + " element " + i + ": error " + err + " > " + factor + "·" + d);
            }
        }
    }

    @Test
    void q8_0RoundTripWithinHalfAStep() {
        // half a step, plus the half-precision rounding of d (≤ 2^-11 relative) times up to 127 steps
        assertBlockBound(GgmlType.Q8_0, Q8_0::quantizeReference, 0.5, 127 * 0x1p-11 / 127 * 1.01);
    }

    @Test
    void q4_0RoundTripWithinOneStep() {
        // the most negative level is -8·d; +max maps to level 16, clamped to 15: one full step
        assertBlockBound(GgmlType.Q4_0, Q4_0::quantizeReference, 1.0, 8 * 0x1p-11 / 8 * 1.01);
    }

    @Test
    void q5_0RoundTripWithinOneStep() {
        assertBlockBound(GgmlType.Q5_0, Q5_0::quantizeReference, 1.0, 0x1p-11 * 1.01);
    }

    @Test
    void q4_1RoundTripWithinHalfAStep() {
        // d and the minimum are both rounded to half precision
        assertBlockBound(GgmlType.Q4_1, Q4_1::quantizeReference, 0.5 + 15 * 0x1p-11, 2 * 0x1p-11 * 1.01);
    }

    @Test
    void q8_KRoundTripWithinHalfAStep() {
        assertBlockBound(GgmlType.Q8_K, Q8_K::quantizeReference, 0.5 * (1 + 1e-6), 0);
    }

    /** k-quants search their scales, so bound the relative RMS error instead (gaussian data). */
    @Test
    void kQuantRoundTripRelativeRms() {
        int n = 256 * 16;
        float[] x = gaussian(n, 3, 0.02);
        assertTrue(relRms(x, roundTrip(GgmlType.Q4_K, Q4_K::quantizeReference, x, 0, n)) < 0.09);
        assertTrue(relRms(x, roundTrip(GgmlType.Q6_K, Q6_K::quantizeReference, x, 0, n)) < 0.025);
        assertTrue(relRms(x, roundTrip(GgmlType.F16, F16::quantizeReference, x, 0, n)) < 0x1p-11);
        assertTrue(relRms(x, roundTrip(GgmlType.BF16, BF16::quantizeReference, x, 0, n)) < 0x1p-8);
    }

    static double relRms(float[] x, float[] y) {
        double e = 0, s = 0;
        for (int i = 0; i < x.length; i++) {
            e += (x[i] - (double) y[i]) * (x[i] - (double) y[i]);
            s += (double) x[i] * x[i];
        }
        return Math.sqrt(e / s);
    }

    @Test
    void allZeroBlocksQuantizeToZero() {
        float[] z = new float[256];
        for (GgmlType t : new GgmlType[]{GgmlType.Q8_0, GgmlType.Q4_0, GgmlType.Q5_0, GgmlType.Q4_1, GgmlType.Q8_K, GgmlType.Q4_K, GgmlType.Q6_K}) {
            Quantizer q = switch (t) {
                case Q8_0 -> Q8_0::quantizeReference;
                case Q4_0 -> Q4_0::quantizeReference;
                case Q5_0 -> Q5_0::quantizeReference;
                case Q4_1 -> Q4_1::quantizeReference;
                case Q8_K -> Q8_K::quantizeReference;
                case Q4_K -> Q4_K::quantizeReference;
                default -> Q6_K::quantizeReference;
            };
            for (float v : roundTrip(t, q, z, 0, 256)) assertEquals(0f, v, 0f, t.toString());
        }
    }

    // ---- activation quantizers ------------------------------------------------------------

    /**
     * Scalar transcription of llama.cpp's x86 {@code quantize_row_q8_0} (AVX path): max of |x|,
     * {@code d = max/127} stored as half, {@code id = 127/max}, {@code _mm256_round_ps} to nearest
     * even (done here with BigDecimal), saturating pack to int8.
     */
    static void x86Q8_0(float[] x, float[] q, float[] d) {
        for (int b = 0; b < x.length / 32; b++) {
            float max = 0;
            for (int j = 0; j < 32; j++) max = Math.max(max, Math.abs(x[b * 32 + j]));
            d[b] = Float.float16ToFloat(Float.floatToFloat16(max / 127.f));
            float id = max != 0.0f ? 127.f / max : 0.0f;
            for (int j = 0; j < 32; j++) {
                int v = new BigDecimal(x[b * 32 + j] * id).setScale(0, RoundingMode.HALF_EVEN).intValueExact();
                q[b * 32 + j] = Math.max(-128, Math.min(127, v));
            }
        }
    }

    static float[][] q8_0EdgeBlocks() {
        float[] halves = new float[32];
        float[] tail = {2.5f, 3.5f, -2.5f, -3.5f, 0.5f, -0.5f, 1.5f, -1.5f, 126.5f, -126.5f, 127f};
        System.arraycopy(tail, 0, halves, 0, tail.length); // max 127 → id = 1 exactly: the products are exact halves
        float[] zeros = new float[32];
        float[] equal = new float[32];
        java.util.Arrays.fill(equal, 0.3f);
        float[] negMax = new float[32];
        for (int j = 0; j < 32; j++) negMax[j] = (j - 16) * 0.01f;
        negMax[7] = -5f;
        float[] tiny = new float[32];
        java.util.Arrays.fill(tiny, 1e-30f); // denormal-range products
        tiny[3] = -3e-30f;
        return new float[][]{halves, zeros, equal, negMax, tiny};
    }

    @Test
    void q8_0ActivationsMatchX86Transcription() {
        float[][] blocks = q8_0EdgeBlocks();
        float[] x = new float[32 * (blocks.length + 20)];
        for (int i = 0; i < blocks.length; i++) System.arraycopy(blocks[i], 0, x, 32 * i, 32);
        float[] g = gaussian(32 * 20, 5, 1.0);
        System.arraycopy(g, 0, x, 32 * blocks.length, g.length);
        float[] q = new float[x.length + 7], d = new float[x.length / 32 + 2];
        Q8_0.quantizeActivations(x, 0, x.length, q, 7, d, 2);
        float[] eq = new float[x.length], ed = new float[x.length / 32];
        x86Q8_0(x, eq, ed);
        assertArrayEquals(eq, java.util.Arrays.copyOfRange(q, 7, 7 + x.length));
        assertArrayEquals(ed, java.util.Arrays.copyOfRange(d, 2, 2 + ed.length));
        // the halves block: ties go to even, unlike the file quantizer's roundf
        assertArrayEquals(new float[]{2, 4, -2, -4, 0, 0, 2, -2, 126, -126, 127}, java.util.Arrays.copyOfRange(q, 7, 7 + 11));
        assertEquals(1.0f, d[2]);
        assertEquals(0f, d[3]); // zeros
        assertEquals(127f, q[7 + 64]); // all-equal block: every quant is 127
        assertEquals(-127f, q[7 + 96 + 7]); // negative max
    }

    @Test
    void q8_0ActivationsMarkNonFiniteBlocks() {
        float[] x = gaussian(96, 9, 1.0);
        x[40] = Float.NaN;
        x[70] = Float.POSITIVE_INFINITY;
        float[] q = new float[96], d = new float[3];
        Q8_0.quantizeActivations(x, 0, 96, q, 0, d, 0);
        assertTrue(Float.isFinite(d[0]));
        assertTrue(Float.isNaN(d[1]));
        assertTrue(Float.isNaN(d[2]));
    }

    /** Scalar transcription of {@code quantize_row_q8_K_ref} with nearest_int done by BigDecimal. */
    @Test
    void q8_KActivationsMatchReferenceTranscriptionAndFileQuantizer() {
        float[] x = gaussian(256 * 4, 13, 1.0);
        // block 1: halves with max = -127 → iscale = 1; block 2: zeros; block 3: +a and -a, the negative first
        for (int j = 0; j < 256; j++) x[256 + j] = (j % 5) - 2 + 0.5f;
        x[256 + 100] = -127f;
        java.util.Arrays.fill(x, 512, 768, 0f);
        for (int j = 0; j < 256; j++) x[768 + j] = (j - 128) * 0.001f;
        x[768 + 10] = -0.5f;
        x[768 + 20] = 0.5f;

        float[] q = new float[x.length], d = new float[4];
        int[] bs = new int[x.length / 16];
        Q8_K.quantizeActivations(x, 0, x.length, q, 0, d, 0, bs, 0);

        MemorySegment file = Arena.ofAuto().allocate(4L * Q8_K.BLOCK_BYTES);
        Q8_K.quantizeReference(x, 0, x.length, file, 0);
        for (int b = 0; b < 4; b++) {
            long blk = (long) b * Q8_K.BLOCK_BYTES;
            float max = 0, amax = 0;
            for (int j = 0; j < 256; j++) {
                float ax = Math.abs(x[b * 256 + j]);
                if (ax > amax) { amax = ax; max = x[b * 256 + j]; }
            }
            float iscale = amax == 0 ? 0 : -127.f / max;
            float expectD = amax == 0 ? 0 : 1 / iscale;
            assertEquals(expectD, d[b], 0f, "d of block " + b);
            assertEquals(expectD, file.get(F, blk), 0f);
            for (int j = 0; j < 256; j++) {
                int e = amax == 0 ? 0 : Math.min(127, new BigDecimal(iscale * x[b * 256 + j]).setScale(0, RoundingMode.HALF_EVEN).intValueExact());
                assertEquals(e, (int) q[b * 256 + j], "block " + b + " element " + j);
                assertEquals(e, file.get(ValueLayout.JAVA_BYTE, blk + 4 + j));
            }
            for (int j = 0; j < 16; j++) {
                int sum = 0;
                for (int l = 0; l < 16; l++) sum += (int) q[b * 256 + 16 * j + l];
                assertEquals(sum, bs[b * 16 + j]);
                assertEquals(sum, file.get(S, blk + 260 + 2L * j));
            }
        }
        assertEquals(-127, (int) q[768 + 10]); // -a is found first: the max always maps to -127
        assertEquals(127, (int) q[768 + 20]);
        assertEquals(2, (int) q[256 + 4 * 5 - 5 + 4]); // 2.5·1 → 2 (ties to even)
    }
}
