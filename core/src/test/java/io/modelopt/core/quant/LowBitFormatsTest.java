package io.modelopt.core.quant;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.modelopt.core.tensor.GgmlType;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Q2_K, Q3_K, Q5_1 and Q8_1 against ggml's definitions (ggml-common.h block structs,
 * {@code dequantize_row_*} arithmetic): each element is located by formula from the struct
 * layout, independently of the decoders' loops, and computed with ggml's float operations in
 * ggml's order, so the comparison is exact.
 */
class LowBitFormatsTest {
    private static final ValueLayout.OfShort S = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfInt I = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private static int u8(MemorySegment m, long o) { return m.get(ValueLayout.JAVA_BYTE, o) & 0xFF; }

    private static float h(MemorySegment m, long o) { return Float.float16ToFloat(m.get(S, o)); }

    /** Random bytes with finite, moderate half scales at the given offsets. */
    private static MemorySegment randomBlocks(GgmlType t, int blocks, long seed, int... halfOffsets) {
        Random r = new Random(seed);
        byte[] raw = new byte[blocks * t.typeSize()];
        r.nextBytes(raw);
        MemorySegment m = MemorySegment.ofArray(raw);
        for (int b = 0; b < blocks; b++) {
            for (int off : halfOffsets) {
                float v = (float) ((0.001 + r.nextDouble()) * (r.nextBoolean() ? 1 : -1));
                m.set(S, (long) b * t.typeSize() + off, Float.floatToFloat16(v));
            }
        }
        return m;
    }

    /** Element e (0..255) of a Q2_K block: sub-block e/16; in half e/128, 2-bit group (e%128)/32 of byte qs[32*half + e%32]. */
    static float q2k(MemorySegment m, long blk, int e) {
        int sc = u8(m, blk + e / 16);
        int half = e / 128, group = (e % 128) / 32, l = e % 32;
        int q = (u8(m, blk + 16 + 32 * half + l) >> (2 * group)) & 3;
        float dl = h(m, blk + 80) * (sc & 0xF), ml = h(m, blk + 82) * (sc >> 4);
        return dl * q - ml;
    }

    /** Element e of a Q3_K block: low bits as Q2_K (qs at 32), high bit (set = no -4) bit 4*half+group of hmask[e%32]. */
    static float q3k(MemorySegment m, long blk, int e) {
        int j = e / 16;
        int low4 = j < 8 ? u8(m, blk + 96 + j) & 0xF : u8(m, blk + 96 + j - 8) >> 4;
        int high2 = (u8(m, blk + 96 + 8 + j % 4) >> (2 * (j / 4))) & 3;
        int sc = (low4 | (high2 << 4)) - 32;
        int half = e / 128, group = (e % 128) / 32, l = e % 32;
        int q = (u8(m, blk + 32 + 32 * half + l) >> (2 * group)) & 3;
        boolean hi = (u8(m, blk + l) & (1 << (4 * half + group))) != 0;
        float dl = h(m, blk + 108) * sc;
        return dl * (q - (hi ? 0 : 4));
    }

    /** Element e (0..31) of a Q5_1 block: nibble e%16 of qs (low for e &lt; 16), fifth bit = bit e of qh. */
    static float q51(MemorySegment m, long blk, int e) {
        int nib = e < 16 ? u8(m, blk + 8 + e) & 0xF : u8(m, blk + 8 + e - 16) >> 4;
        int bit = (m.get(I, blk + 4) >>> e) & 1;
        return (nib | (bit << 4)) * h(m, blk) + h(m, blk + 2);
    }

    @Test
    void geometryMatchesGgml() {
        assertEquals(GgmlType.Q2_K.typeSize(), Q2_K.BLOCK_BYTES);
        assertEquals(GgmlType.Q2_K.typeSize(), Q2_K.LAYOUT.byteSize());
        assertEquals(GgmlType.Q3_K.typeSize(), Q3_K.BLOCK_BYTES);
        assertEquals(GgmlType.Q3_K.typeSize(), Q3_K.LAYOUT.byteSize());
        assertEquals(GgmlType.Q5_1.typeSize(), Q5_1.BLOCK_BYTES);
        assertEquals(GgmlType.Q5_1.typeSize(), Q5_1.LAYOUT.byteSize());
        assertEquals(GgmlType.Q8_1.typeSize(), Q8_1.BLOCK_BYTES);
        assertEquals(GgmlType.Q8_1.typeSize(), Q8_1.LAYOUT.byteSize());
        assertEquals(256, Q2_K.BLOCK_ELEMENTS);
        assertEquals(256, Q3_K.BLOCK_ELEMENTS);
        assertEquals(32, Q5_1.BLOCK_ELEMENTS);
        assertEquals(32, Q8_1.BLOCK_ELEMENTS);
    }

    @Test
    void q2kDecodesAsDefined() {
        int blocks = 5;
        MemorySegment m = randomBlocks(GgmlType.Q2_K, blocks, 7, 80, 82);
        float[] out = new float[blocks * 256 + 1];
        Q2_K.dequantize(m, 0, out, 1, blocks * 256);
        for (int b = 0; b < blocks; b++) {
            for (int e = 0; e < 256; e++) assertEquals(q2k(m, b * 84L, e), out[1 + b * 256 + e], 0f, "block " + b + " element " + e);
        }
    }

    @Test
    void q3kDecodesAsDefined() {
        int blocks = 5;
        MemorySegment m = randomBlocks(GgmlType.Q3_K, blocks, 8, 108);
        float[] out = new float[blocks * 256];
        Q3_K.dequantize(m, 0, out, 0, blocks * 256);
        for (int b = 0; b < blocks; b++) {
            for (int j = 0; j < 16; j++) {
                int low4 = j < 8 ? u8(m, b * 110L + 96 + j) & 0xF : u8(m, b * 110L + 96 + j - 8) >> 4;
                assertEquals(low4 | (((u8(m, b * 110L + 104 + j % 4) >> (2 * (j / 4))) & 3) << 4), Q3_K.scale(m, b * 110L, j));
            }
            for (int e = 0; e < 256; e++) assertEquals(q3k(m, b * 110L, e), out[b * 256 + e], 0f, "block " + b + " element " + e);
        }
    }

    @Test
    void q51DecodesAsDefined() {
        int blocks = 24;
        MemorySegment m = randomBlocks(GgmlType.Q5_1, blocks, 9, 0, 2);
        float[] out = new float[blocks * 32];
        Q5_1.dequantize(m, 0, out, 0, blocks * 32);
        for (int b = 0; b < blocks; b++) {
            for (int e = 0; e < 32; e++) assertEquals(q51(m, b * 24L, e), out[b * 32 + e], 0f, "block " + b + " element " + e);
        }
    }

    @Test
    void q8_1DecodesAsDefined() {
        int blocks = 8;
        MemorySegment m = randomBlocks(GgmlType.Q8_1, blocks, 10, 0, 2);
        float[] out = new float[blocks * 32];
        Q8_1.dequantize(m, 0, out, 0, blocks * 32);
        for (int b = 0; b < blocks; b++) {
            for (int e = 0; e < 32; e++) {
                assertEquals(m.get(ValueLayout.JAVA_BYTE, b * 36L + 4 + e) * h(m, b * 36L), out[b * 32 + e], 0f);
            }
        }
    }

    private static float[] gaussian(int n, long seed) {
        Random r = new Random(seed);
        float[] x = new float[n];
        for (int i = 0; i < n; i++) x[i] = (float) (r.nextGaussian() * 0.02);
        return x;
    }

    @Test
    void q5_1ReferenceQuantizerRoundTrips() {
        int n = 32 * 64;
        float[] x = gaussian(n, 3);
        MemorySegment m = MemorySegment.ofArray(new byte[(int) GgmlType.Q5_1.bytesFor(n)]);
        Q5_1.quantizeReference(x, 0, n, m, 0);
        float[] y = new float[n];
        Q5_1.dequantize(m, 0, y, 0, n);
        for (int b = 0; b < n / 32; b++) {
            float min = Float.MAX_VALUE, max = -Float.MAX_VALUE;
            for (int j = 0; j < 32; j++) {
                min = Math.min(min, x[b * 32 + j]);
                max = Math.max(max, x[b * 32 + j]);
            }
            float step = (max - min) / 31;
            // half a step of rounding plus the half-precision rounding of d and m
            for (int j = 0; j < 32; j++) {
                float err = Math.abs(x[b * 32 + j] - y[b * 32 + j]);
                assertTrue(err <= 0.5f * step + 32 * step * 1e-3f + Math.abs(min) * 1e-3f, "block " + b + " element " + j + " error " + err);
            }
        }
    }

    @Test
    void q8_1ReferenceQuantizerRoundTripsAndStoresTheSum() {
        int n = 32 * 16;
        float[] x = gaussian(n, 4);
        MemorySegment m = MemorySegment.ofArray(new byte[(int) GgmlType.Q8_1.bytesFor(n)]);
        Q8_1.quantizeReference(x, 0, n, m, 0);
        float[] y = new float[n];
        Q8_1.dequantize(m, 0, y, 0, n);
        for (int b = 0; b < n / 32; b++) {
            float amax = 0;
            int sum = 0;
            for (int j = 0; j < 32; j++) {
                amax = Math.max(amax, Math.abs(x[b * 32 + j]));
                sum += m.get(ValueLayout.JAVA_BYTE, b * 36L + 4 + j);
            }
            float d = amax / 127;
            for (int j = 0; j < 32; j++) assertEquals(x[b * 32 + j], y[b * 32 + j], 0.5f * d + amax * 1e-3f);
            assertEquals(Float.floatToFloat16(sum * d), m.get(S, b * 36L + 2));
        }
    }

    @Test
    void partialBlocksAreRejected() {
        MemorySegment m = MemorySegment.ofArray(new byte[1024]);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Q2_K.dequantize(m, 0, new float[300], 0, 300));
        assertTrue(e.getMessage().contains("Q2_K") && e.getMessage().contains("256"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> Q3_K.dequantize(m, 0, new float[128], 0, 128));
        assertThrows(IllegalArgumentException.class, () -> Q5_1.dequantize(m, 0, new float[40], 0, 40));
        assertThrows(IllegalArgumentException.class, () -> Q8_1.quantizeReference(new float[40], 0, 40, m, 0));
    }
}
