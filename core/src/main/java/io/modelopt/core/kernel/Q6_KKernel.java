package io.modelopt.core.kernel;

import io.modelopt.core.quant.Q6_K;
import java.lang.foreign.MemorySegment;

/**
 * Q6_K weights × Q8_K activations ({@code ggml_vec_dot_q6_K_q8_K}): per super-block
 * {@code sum += dw·dx · Σ_j sc_j · Σ (q-32)·qx} over 16 sub-blocks of 16, the inner sums in integers.
 */
final class Q6_KKernel {
    private Q6_KKernel() {}

    static final int BLOCK_BYTES = Q6_K.BLOCK_BYTES;

    /** The 6-bit quant (0..63) of element {@code e} (0..255) of the block at {@code blk}. */
    static int quant(MemorySegment m, long blk, int e) {
        int half = e / 128, i = e % 128, quarter = i / 32, l = i % 32;
        long ql = blk + Q6_K.QL + half * 64L + l + (quarter & 1) * 32L;
        long qh = blk + Q6_K.QH + half * 32L + l;
        int low = (WeightData.u8(m, ql) >>> ((quarter >>> 1) * 4)) & 0xF;
        int high = (WeightData.u8(m, qh) >>> (2 * quarter)) & 3;
        return low | (high << 4);
    }

    static final class Scalar implements FormatKernel {
        static final Scalar INSTANCE = new Scalar();

        @Override public Activations.Kind activations() { return Activations.Kind.Q8_K; }

        @Override public void compute(WeightMatrix w, Activations a, int rowStart, int rowEnd, float[] out, int outOff, int outStride) {
            MemorySegment m = w.data();
            int nb = w.cols() / 256;
            for (int r = rowStart; r < rowEnd; r++) {
                long row = r * w.rowBytes();
                for (int t = 0; t < a.nTokens; t++) {
                    int qx = t * a.cols, dx = t * a.blocks;
                    float sum = 0;
                    for (int b = 0; b < nb; b++) {
                        long blk = row + (long) b * BLOCK_BYTES;
                        int x = qx + b * 256;
                        int sumi = 0;
                        for (int j = 0; j < 16; j++) {
                            int dot = 0;
                            for (int l = 0; l < 16; l++) dot += (quant(m, blk, 16 * j + l) - 32) * (int) a.q[x + 16 * j + l];
                            sumi += WeightData.s8(m, blk + Q6_K.SCALES + j) * dot;
                        }
                        sum += WeightData.half(m, blk + Q6_K.D) * a.d[dx + b] * sumi;
                    }
                    out[outOff + t * outStride + r] = sum;
                }
            }
        }
    }
}
