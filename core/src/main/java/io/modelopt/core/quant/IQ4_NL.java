package io.modelopt.core.quant;

import io.modelopt.core.tensor.GgmlType;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;

/**
 * {@code block_iq4_nl}: 32 elements, {@code half d; uint8 qs[16]}, nibbles laid out as in
 * {@link Q4_0}; each nibble indexes the non-linear table {@link #VALUES}: {@code x = d * VALUES[q]}.
 * (llama-quantize's fallback for Q2_K/Q3_K tensors whose rows are not a multiple of 256.)
 */
public final class IQ4_NL {
    private IQ4_NL() {}

    public static final int BLOCK_ELEMENTS = GgmlType.IQ4_NL.blockSize();
    public static final int BLOCK_BYTES = GgmlType.IQ4_NL.typeSize();
    public static final StructLayout LAYOUT = MemoryLayout.structLayout(
            LittleEndian.SHORT.withName("d"),
            MemoryLayout.sequenceLayout(16, ValueLayout.JAVA_BYTE).withName("qs"));

    /** ggml's {@code kvalues_iq4nl}. */
    private static final byte[] VALUES = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

    /** Level {@code i} (0..15) of the table. */
    public static int value(int i) { return VALUES[i]; }

    /** As {@code dequantize_row_iq4_nl}. */
    public static void dequantize(MemorySegment src, long byteOffset, float[] dst, int dstOffset, int n) {
        LittleEndian.checkBlocks("IQ4_NL", n, BLOCK_ELEMENTS);
        for (int b = 0; b < n / BLOCK_ELEMENTS; b++) {
            long blk = byteOffset + (long) b * BLOCK_BYTES;
            float d = LittleEndian.half(src, blk);
            int y = dstOffset + b * 32;
            for (int j = 0; j < 16; j++) {
                int q = LittleEndian.u8(src, blk + 2 + j);
                dst[y + j] = d * VALUES[q & 0xF];
                dst[y + j + 16] = d * VALUES[q >>> 4];
            }
        }
    }
}
