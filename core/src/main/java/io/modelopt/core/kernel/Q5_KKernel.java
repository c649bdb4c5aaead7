package io.modelopt.core.kernel;

import io.modelopt.core.quant.Q5_K;
import java.lang.foreign.MemorySegment;

/** Q5_K weights × Q8_K activations ({@code ggml_vec_dot_q5_K_q8_K}): as {@link Q4_KKernel} with 5-bit quants. */
final class Q5_KKernel {
    private Q5_KKernel() {}

    static final int BLOCK_BYTES = Q5_K.BLOCK_BYTES;

    static final class Scalar implements FormatKernel {
        static final Scalar INSTANCE = new Scalar();

        @Override public Activations.Kind activations() { return Activations.Kind.Q8_K; }

        @Override public void compute(WeightMatrix w, Activations a, int rowStart, int rowEnd, float[] out, int outOff, int outStride) {
            MemorySegment m = w.data();
            int nb = w.cols() / 256;
            for (int r = rowStart; r < rowEnd; r++) {
                long row = r * w.rowBytes();
                for (int t = 0; t < a.nTokens; t++) {
                    int qx = t * a.cols, dx = t * a.blocks, bs = t * (a.cols / 16);
                    float sum = 0;
                    for (int b = 0; b < nb; b++) {
                        long blk = row + (long) b * BLOCK_BYTES;
                        int x = qx + b * 256;
                        int sumi = 0, summ = 0;
                        for (int j = 0; j < 8; j++) {
                            int sm = Q5_K.scaleMin(m, blk, j);
                            long qs = blk + Q5_K.QS + (j / 2) * 32L;
                            int shift = (j & 1) * 4;
                            int dot = 0;
                            for (int l = 0; l < 32; l++) {
                                int q = ((WeightData.u8(m, qs + l) >>> shift) & 0xF) | (((WeightData.u8(m, blk + Q5_K.QH + l) >>> j) & 1) << 4);
                                dot += q * (int) a.q[x + 32 * j + l];
                            }
                            sumi += (sm & 0xFF) * dot;
                            summ += (sm >>> 8) * (a.bsums[bs + b * 16 + 2 * j] + a.bsums[bs + b * 16 + 2 * j + 1]);
                        }
                        float dxb = a.d[dx + b];
                        sum += dxb * WeightData.half(m, blk + Q5_K.D) * sumi - dxb * WeightData.half(m, blk + Q5_K.DMIN) * summ;
                    }
                    out[outOff + t * outStride + r] = sum;
                }
            }
        }
    }
}
