package io.modelopt.core.kernel;

import java.lang.foreign.MemorySegment;

/** F32 weights × F32 activations. */
final class F32Kernel {
    private F32Kernel() {}

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
                    for (int k = 0; k < cols; k++) sum += m.get(WeightData.FLOAT, row + 4L * k) * a.x[xo + k];
                    out[outOff + t * outStride + r] = sum;
                }
            }
        }
    }

}
