package io.modelopt.core.quant;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.modelopt.core.tensor.GgmlType;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.api.Test;

/** Block geometry and the scalar reference decoders of every format against an independent float64 decode. */
class QuantFormatsTest {

    /** The production format class's constants and decoder for a type. */
    record Format(int elements, int bytes, MemoryLayout layout, Decoder decoder) {}

    interface Decoder {
        void dequantize(MemorySegment src, long byteOffset, float[] dst, int dstOffset, int n);
    }

    static Format format(GgmlType t) {
        return switch (t) {
            case F16 -> new Format(F16.BLOCK_ELEMENTS, F16.BLOCK_BYTES, F16.LAYOUT, F16::dequantize);
            case BF16 -> new Format(BF16.BLOCK_ELEMENTS, BF16.BLOCK_BYTES, BF16.LAYOUT, BF16::dequantize);
            case Q8_0 -> new Format(Q8_0.BLOCK_ELEMENTS, Q8_0.BLOCK_BYTES, Q8_0.LAYOUT, Q8_0::dequantize);
            case Q4_0 -> new Format(Q4_0.BLOCK_ELEMENTS, Q4_0.BLOCK_BYTES, Q4_0.LAYOUT, Q4_0::dequantize);
            case Q4_1 -> new Format(Q4_1.BLOCK_ELEMENTS, Q4_1.BLOCK_BYTES, Q4_1.LAYOUT, Q4_1::dequantize);
            case Q5_0 -> new Format(Q5_0.BLOCK_ELEMENTS, Q5_0.BLOCK_BYTES, Q5_0.LAYOUT, Q5_0::dequantize);
            case Q4_K -> new Format(Q4_K.BLOCK_ELEMENTS, Q4_K.BLOCK_BYTES, Q4_K.LAYOUT, Q4_K::dequantize);
            case Q5_K -> new Format(Q5_K.BLOCK_ELEMENTS, Q5_K.BLOCK_BYTES, Q5_K.LAYOUT, Q5_K::dequantize);
            case Q6_K -> new Format(Q6_K.BLOCK_ELEMENTS, Q6_K.BLOCK_BYTES, Q6_K.LAYOUT, Q6_K::dequantize);
            case Q8_K -> new Format(Q8_K.BLOCK_ELEMENTS, Q8_K.BLOCK_BYTES, Q8_K.LAYOUT, Q8_K::dequantize);
            default -> throw new IllegalArgumentException(t.toString());
        };
    }

    @ParameterizedTest
    @EnumSource(value = GgmlType.class, names = {"F16", "BF16", "Q8_0", "Q4_0", "Q4_1", "Q5_0", "Q4_K", "Q5_K", "Q6_K", "Q8_K"})
    void geometryMatchesGgml(GgmlType t) {
        Format f = format(t);
        assertEquals(t.blockSize(), f.elements(), "BLOCK_ELEMENTS");
        assertEquals(t.typeSize(), f.bytes(), "BLOCK_BYTES");
        assertEquals(f.bytes(), f.layout().byteSize(), "struct layout size");
    }

    /**
     * Every format's decoder does at most one rounding of an exactly representable product or
     * sum, so the float result must equal the float64 value rounded once: the comparison is exact.
     */
    @ParameterizedTest
    @EnumSource(value = GgmlType.class, names = {"F16", "BF16", "Q8_0", "Q4_0", "Q4_1", "Q5_0", "Q4_K", "Q5_K", "Q6_K", "Q8_K"})
    void dequantizeEqualsFloat64Decode(GgmlType t) {
        int n = 256 * 6;
        MemorySegment m = TestBlocks.random(t, 1, n, 42 + t.ordinal());
        double[] ref = RefDecode.decode(t, m, 0, n);
        float[] out = new float[n + 3];
        format(t).decoder().dequantize(m, 0, out, 3, n);
        for (int i = 0; i < n; i++) {
            assertEquals((float) ref[i], out[3 + i], 0.0f, t + " element " + i);
        }
        // a second row at a byte offset decodes the same way
        int half = n / 2;
        long off = t.bytesFor(half);
        float[] out2 = new float[half];
        format(t).decoder().dequantize(m, off, out2, 0, half);
        for (int i = 0; i < half; i++) assertEquals(out[3 + half + i], out2[i], 0.0f);
    }

    @Test
    void partialBlocksAreRejected() {
        MemorySegment m = TestBlocks.random(GgmlType.Q4_0, 1, 64, 1);
        assertThrows(IllegalArgumentException.class, () -> Q4_0.dequantize(m, 0, new float[64], 0, 40));
        assertThrows(IllegalArgumentException.class, () -> Q4_K.dequantize(m, 0, new float[64], 0, 64));
    }

}
