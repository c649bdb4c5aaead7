package io.modelopt.core.kernel;

import java.lang.foreign.MemorySegment;

/**
 * Q8_0 weights × Q8_0 activations ({@code ggml_vec_dot_q8_0_q8_0}): per block the integer
 * {@code sumi = Σ qw·qx}, then {@code sum += sumi · (dw·dx)} in float.
 */
final class Q8_0Kernel {
    private Q8_0Kernel() {}

    static final int BLOCK_BYTES = 34;

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
                        int sumi = 0;
                        for (int j = 0; j < 32; j++) sumi += WeightData.s8(m, blk + 2 + j) * (int) a.q[qx + b * 32 + j];
                        sum += sumi * (WeightData.half(m, blk) * a.d[dx + b]);
                    }
                    out[outOff + t * outStride + r] = sum;
                }
            }
        }
    }
}
