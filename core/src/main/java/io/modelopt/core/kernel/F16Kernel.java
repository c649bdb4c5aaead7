package io.modelopt.core.kernel;

import java.lang.foreign.MemorySegment;

/**
 * F16 weights × F32 activations, the weights widened to float as they are read (llama.cpp rounds
 * the activations to F16 instead; these results are the more exact of the two).
 */
final class F16Kernel {
    private F16Kernel() {}

    static final class Scalar implements FormatKernel {
        static final Scalar INSTANCE = new Scalar();

        @Override public Activations.Kind activations() { return Activations.Kind.F32; }

        @Override public void compute(WeightMatrix w, Activations a, int rowStart, int rowEnd, float[] out, int outOff, int outStride) {
            MemorySegment m = w.data();
            int cols = w.cols();
            for (int r = rowStart; r < rowEnd; r++) {
                long row = r * w.rowBytes();
                for (int t = 0; t < a.nTokens; t++) {
                    int xo = a.xOff + t * a.xStride;
                    float sum = 0;
                    for (int k = 0; k < cols; k++) sum += Float.float16ToFloat(m.get(WeightData.SHORT, row + 2L * k)) * a.x[xo + k];
                    out[outOff + t * outStride + r] = sum;
                }
            }
        }
    }
}
