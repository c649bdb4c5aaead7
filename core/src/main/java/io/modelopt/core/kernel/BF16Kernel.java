package io.modelopt.core.kernel;

import io.modelopt.core.quant.BF16;
import java.lang.foreign.MemorySegment;

/** BF16 weights × F32 activations, the weights widened to float (exact) as they are read. */
final class BF16Kernel {
    private BF16Kernel() {}

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
                    for (int k = 0; k < cols; k++) sum += BF16.toFloat(m.get(WeightData.SHORT, row + 2L * k)) * a.x[xo + k];
                    out[outOff + t * outStride + r] = sum;
                }
            }
        }
    }
}
