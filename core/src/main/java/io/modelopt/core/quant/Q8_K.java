package io.modelopt.core.quant;

import io.modelopt.core.tensor.GgmlType;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;

/**
 * {@code block_q8_K}, the activation format of the k-quant dot products: 256 elements,
 * {@code float d; int8 qs[256]; int16 bsums[16]} where {@code bsums[j]} is the sum of
 * {@code qs[16j..16j+16)}; {@code x = d * q}. llama.cpp's x86 backend quantizes activations with
 * the reference function itself, so {@link #quantizeReference} and {@link #quantizeActivations}
 * share their arithmetic.
 */
public final class Q8_K {
    private Q8_K() {}

    public static final int BLOCK_ELEMENTS = GgmlType.Q8_K.blockSize();
    public static final int BLOCK_BYTES = GgmlType.Q8_K.typeSize();
    public static final int D = 0, QS = 4, BSUMS = 260;
    public static final StructLayout LAYOUT = MemoryLayout.structLayout(
            LittleEndian.FLOAT.withName("d"),
            MemoryLayout.sequenceLayout(256, ValueLayout.JAVA_BYTE).withName("qs"),
            MemoryLayout.sequenceLayout(16, LittleEndian.SHORT).withName("bsums"));

    /** As {@code dequantize_row_q8_K}. */
    public static void dequantize(MemorySegment src, long byteOffset, float[] dst, int dstOffset, int n) {
        LittleEndian.checkBlocks("Q8_K", n, BLOCK_ELEMENTS);
        for (int b = 0; b < n / BLOCK_ELEMENTS; b++) {
            long blk = byteOffset + (long) b * BLOCK_BYTES;
            float d = src.get(LittleEndian.FLOAT, blk + D);
            for (int j = 0; j < 256; j++) dst[dstOffset + b * 256 + j] = d * src.get(ValueLayout.JAVA_BYTE, blk + QS + j);
        }
    }

    /** As {@code quantize_row_q8_K_ref}: {@code iscale = -127/max}, {@code nearest_int}, quants capped at 127. */
    public static void quantizeReference(float[] src, int off, int n, MemorySegment dst, long dstOff) {
        LittleEndian.checkBlocks("Q8_K", n, BLOCK_ELEMENTS);
        for (int b = 0; b < n / BLOCK_ELEMENTS; b++) {
            int x = off + b * 256;
            long blk = dstOff + (long) b * BLOCK_BYTES;
            float max = 0, amax = 0;
            for (int j = 0; j < 256; ++j) {
                float ax = Math.abs(src[x + j]);
                if (ax > amax) {
                    amax = ax;
                    max = src[x + j];
                }
            }
            if (amax == 0) {
                dst.asSlice(blk, BLOCK_BYTES).fill((byte) 0);
                continue;
            }
            float iscale = -127.f / max;
            for (int j = 0; j < 256; ++j) {
                dst.set(ValueLayout.JAVA_BYTE, blk + QS + j, (byte) Math.min(127, GgmlRounding.nearestInt(iscale * src[x + j])));
            }
            for (int j = 0; j < 16; ++j) {
                int sum = 0;
                for (int ii = 0; ii < 16; ++ii) sum += dst.get(ValueLayout.JAVA_BYTE, blk + QS + j * 16 + ii);
                dst.set(LittleEndian.SHORT, blk + BSUMS + 2L * j, (short) sum);
            }
            dst.set(LittleEndian.FLOAT, blk + D, 1 / iscale);
        }
    }

    /**
     * The activation quantizer of the k-quant kernels: the arithmetic of {@link #quantizeReference},
     * written unpacked: quants as exact integer floats in {@code q[qOff..qOff+n)}, one scale per
     * block in {@code d[dOff + block]} and 16 sums of 16 quants per block in
     * {@code bsums[bOff + 16*block ..]}.
     *
     * <p>Deviation on purpose: a block holding a NaN or an infinity gets {@code d = NaN} (the
     * reference would skip a NaN when looking for the maximum and then quantize it to 0).
     */
    public static void quantizeActivations(float[] src, int off, int n, float[] q, int qOff, float[] d, int dOff, int[] bsums, int bOff) {
        LittleEndian.checkBlocks("Q8_K", n, BLOCK_ELEMENTS);
        for (int b = 0; b < n / BLOCK_ELEMENTS; b++) {
            int x = off + b * 256, qo = qOff + b * 256, bo = bOff + b * 16;
            float max = 0, amax = 0;
            boolean finite = true;
            for (int j = 0; j < 256; ++j) {
                float v = src[x + j];
                finite &= Float.isFinite(v);
                float ax = Math.abs(v);
                if (ax > amax) {
                    amax = ax;
                    max = v;
                }
            }
            if (!finite || amax == 0) {
                d[dOff + b] = finite ? 0 : Float.NaN;
                for (int j = 0; j < 256; ++j) q[qo + j] = 0;
                for (int j = 0; j < 16; ++j) bsums[bo + j] = 0;
                continue;
            }
            float iscale = -127.f / max;
            for (int j = 0; j < 16; ++j) {
                int sum = 0;
                for (int ii = 0; ii < 16; ++ii) {
                    int v = Math.min(127, GgmlRounding.nearestInt(iscale * src[x + 16 * j + ii]));
                    q[qo + 16 * j + ii] = v;
                    sum += v;
                }
                bsums[bo + j] = sum;
            }
            d[dOff + b] = 1 / iscale;
        }
    }
}
