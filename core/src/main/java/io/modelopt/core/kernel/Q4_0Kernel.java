package io.modelopt.core.kernel;

import java.lang.foreign.MemorySegment;

/**
 * Q4_0 weights × Q8_0 activations ({@code ggml_vec_dot_q4_0_q8_0}): per block the integer
 * {@code sumi = Σ (q-8)·qx}, then {@code sum += sumi · (dw·dx)} in float.
 */
final class Q4_0Kernel {
    private Q4_0Kernel() {}

    static final int BLOCK_BYTES = 18;

    static final class Scalar implements FormatKernel {
        static final Scalar INSTANCE = new Scalar();

        @Override public Activations.Kind activations() { return Activations.Kind.Q8_0; }

        @Override public void compute(WeightMatrix w, Activations a, int rowStart, int rowEnd, float[] out, int outOff, int outStride) {
            MemorySegment m = w.data();
            int nb = w.cols() / 32;
            for (int r = rowStart; r < rowEnd; r++) {
                long row = r * w.rowBytes();
                for (int t = 0; t < a.nTokens; t++) {
                    int qx = t * a.cols, dx = t * a.blocks;
                    float sum = 0;
                    for (int b = 0; b < nb; b++) {
                        long blk = row + (long) b * BLOCK_BYTES;
                        int x = qx + b * 32;
                        int sumi = 0;
                        for (int j = 0; j < 16; j++) {
                            int q = WeightData.u8(m, blk + 2 + j);
                            sumi += ((q & 0xF) - 8) * (int) a.q[x + j] + ((q >>> 4) - 8) * (int) a.q[x + j + 16];
                        }
                        sum += sumi * (WeightData.half(m, blk) * a.d[dx + b]);
                    }
                    out[outOff + t * outStride + r] = sum;
                }
            }
        }
    }
}
