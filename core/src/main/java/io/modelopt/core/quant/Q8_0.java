package io.modelopt.core.quant;

import io.modelopt.core.tensor.GgmlType;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;

/**
 * {@code block_q8_0}: 32 elements, {@code half d; int8 qs[32]}; {@code x = d * q}.
 *
 * <p>Two quantizers: {@link #quantizeReference} is ggml's {@code quantize_row_q8_0_ref} (how
 * model files are written: {@code id = 1/d}, C {@code roundf}); {@link #quantizeActivations} is
 * what llama.cpp's x86 CPU backend ({@code quantize_row_q8_0}, AVX/AVX2/AVX-512 builds) does to
 * the activations of a Q4_0/Q5_0/Q8_0 matmul: {@code id = 127/amax} and round-half-even. The two
 * differ in the last bit of some quants; the engine uses the second to reproduce llama.cpp.
 */
public final class Q8_0 {
    private Q8_0() {}

    public static final int BLOCK_ELEMENTS = GgmlType.Q8_0.blockSize();
    public static final int BLOCK_BYTES = GgmlType.Q8_0.typeSize();
    public static final StructLayout LAYOUT = MemoryLayout.structLayout(
            LittleEndian.SHORT.withName("d"),
            MemoryLayout.sequenceLayout(32, ValueLayout.JAVA_BYTE).withName("qs"));

    /** As {@code dequantize_row_q8_0}. */
    public static void dequantize(MemorySegment src, long byteOffset, float[] dst, int dstOffset, int n) {
        LittleEndian.checkBlocks("Q8_0", n, BLOCK_ELEMENTS);
        for (int b = 0; b < n / BLOCK_ELEMENTS; b++) {
            long blk = byteOffset + (long) b * BLOCK_BYTES;
            float d = LittleEndian.half(src, blk);
            for (int j = 0; j < 32; j++) {
                dst[dstOffset + b * 32 + j] = src.get(ValueLayout.JAVA_BYTE, blk + 2 + j) * d;
            }
        }
    }

    /** As {@code quantize_row_q8_0_ref}. */
    public static void quantizeReference(float[] src, int off, int n, MemorySegment dst, long dstOff) {
        LittleEndian.checkBlocks("Q8_0", n, BLOCK_ELEMENTS);
        for (int b = 0; b < n / BLOCK_ELEMENTS; b++) {
            int x = off + b * 32;
            long blk = dstOff + (long) b * BLOCK_BYTES;
            float amax = 0.0f;
            for (int j = 0; j < 32; j++) {
                float a = Math.abs(src[x + j]);
                amax = amax > a ? amax : a; // C MAX(amax, fabsf(v)), NaN behaviour included
            }
            float d = amax / 127;
            float id = d != 0 ? 1.0f / d : 0.0f;
            LittleEndian.putHalf(dst, blk, d);
            for (int j = 0; j < 32; j++) {
                dst.set(ValueLayout.JAVA_BYTE, blk + 2 + j, (byte) (int) GgmlRounding.roundf(src[x + j] * id));
            }
        }
    }

    /**
     * Quantizes {@code n} activations as llama.cpp's x86 {@code quantize_row_q8_0} does, into the
     * unpacked form the kernels read: the quants as exact small-integer floats in
     * {@code q[qOff..qOff+n)} and each block's scale, already rounded through half precision as
     * the dot product reads it back, in {@code d[dOff + block]}.
     *
     * <p>Deviation on purpose: a block holding a NaN or an infinity gets {@code d = NaN} (ggml's
     * max/round sequence would silently turn the NaN into some finite value), so a bad activation
     * always shows in the result.
     */
    public static void quantizeActivations(float[] src, int off, int n, float[] q, int qOff, float[] d, int dOff) {
        LittleEndian.checkBlocks("Q8_0", n, BLOCK_ELEMENTS);
        for (int b = 0; b < n / BLOCK_ELEMENTS; b++) {
            int x = off + b * 32;
            float amax = 0.0f;
            boolean finite = true;
            for (int j = 0; j < 32; j++) {
                float v = src[x + j];
                finite &= Float.isFinite(v);
                amax = Math.max(amax, Math.abs(v));
            }
            int qo = qOff + b * 32;
            if (!finite) {
                d[dOff + b] = Float.NaN;
                for (int j = 0; j < 32; j++) q[qo + j] = 0;
                continue;
            }
            d[dOff + b] = Float.float16ToFloat(Float.floatToFloat16(amax / 127.f));
            float id = amax != 0.0f ? 127.f / amax : 0.0f;
            for (int j = 0; j < 32; j++) {
                // _mm256_round_ps(_MM_ROUND_NEAREST) then the saturating int8 pack; + 0f turns -0 into the integer 0
                q[qo + j] = Math.clamp((float) Math.rint(src[x + j] * id), -128f, 127f) + 0f;
            }
        }
    }
}
