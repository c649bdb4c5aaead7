package io.modelopt.core.kernel;

import java.lang.foreign.MemorySegment;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;

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

    /**
     * Vector API path: {@link Simd#L} weights per vector, loaded as they are; one token uses two accumulators, a
     * tile of four tokens shares each weight vector among four accumulators. Columns past the
     * last whole vector are done in scalar. (All vector work stays inside each method: a vector
     * passed to or returned from a call that the JIT does not inline would be boxed.)
     */
    static final class Vectorized implements FormatKernel {
        static final Vectorized INSTANCE = new Vectorized();

        @Override public void dequantizeRows(WeightMatrix w, int row, int n, float[] dst) {
            MemorySegment.copy(w.data(), WeightData.FLOAT, row * w.rowBytes(), dst, 0, n * w.cols());
        }

        @Override public Activations.Kind activations() { return Activations.Kind.F32; }

        @Override public void compute(WeightMatrix w, Activations a, int rowStart, int rowEnd, float[] out, int outOff, int outStride) {
            MemorySegment m = w.data();
            int cols = w.cols();
            for (int r = rowStart; r < rowEnd; r++) {
                long row = r * w.rowBytes();
                if (r + 1 < rowEnd) Prefetch.touch(m, row + w.rowBytes(), w.rowBytes());
                int t = 0;
                for (; t + 4 <= a.nTokens; t += 4) {
                    dot4(m, row, cols, a.x, a.xOff + t * a.xStride, a.xStride, out, outOff + t * outStride + r, outStride);
                }
                for (; t < a.nTokens; t++) out[outOff + t * outStride + r] = dot1(m, row, cols, a.x, a.xOff + t * a.xStride);
            }
        }

        private static float scalar(MemorySegment m, long off) {
            return m.get(WeightData.FLOAT, off);
        }

        private static float dot1(MemorySegment m, long row, int cols, float[] x, int xo) {
            FloatVector a0 = FloatVector.zero(Simd.F), a1 = a0;
            int k = 0;
            for (; k + 2 * Simd.L <= cols; k += 2 * Simd.L) {
                long off = row + 4L * k;
                FloatVector w0 = FloatVector.fromMemorySegment(Simd.F, m, off, Simd.LE);
                FloatVector w1 = FloatVector.fromMemorySegment(Simd.F, m, off + 4 * Simd.L, Simd.LE);
                a0 = w0.fma(FloatVector.fromArray(Simd.F, x, xo + k), a0);
                a1 = w1.fma(FloatVector.fromArray(Simd.F, x, xo + k + Simd.L), a1);
            }
            for (; k + Simd.L <= cols; k += Simd.L) {
                long off = row + 4L * k;
                FloatVector w0 = FloatVector.fromMemorySegment(Simd.F, m, off, Simd.LE);
                a0 = w0.fma(FloatVector.fromArray(Simd.F, x, xo + k), a0);
            }
            a0 = a0.add(a1);
            if (Simd.L > 8) a0 = a0.add(a0.rearrange(Simd.SWAP8));
            if (Simd.L > 4) a0 = a0.add(a0.rearrange(Simd.SWAP4));
            a0 = a0.add(a0.rearrange(Simd.SWAP2));
            a0 = a0.add(a0.rearrange(Simd.SWAP1));
            float s = a0.lane(0);
            for (; k < cols; k++) s += scalar(m, row + 4L * k) * x[xo + k];
            return s;
        }

        private static void dot4(MemorySegment m, long row, int cols, float[] x, int xo, int xs, float[] out, int o, int os) {
            FloatVector a0 = FloatVector.zero(Simd.F), a1 = a0, a2 = a0, a3 = a0;
            int k = 0;
            for (; k + Simd.L <= cols; k += Simd.L) {
                long off = row + 4L * k;
                FloatVector wv = FloatVector.fromMemorySegment(Simd.F, m, off, Simd.LE);
                a0 = wv.fma(FloatVector.fromArray(Simd.F, x, xo + k), a0);
                a1 = wv.fma(FloatVector.fromArray(Simd.F, x, xo + xs + k), a1);
                a2 = wv.fma(FloatVector.fromArray(Simd.F, x, xo + 2 * xs + k), a2);
                a3 = wv.fma(FloatVector.fromArray(Simd.F, x, xo + 3 * xs + k), a3);
            }
            if (Simd.L > 8) a0 = a0.add(a0.rearrange(Simd.SWAP8));
            if (Simd.L > 4) a0 = a0.add(a0.rearrange(Simd.SWAP4));
            a0 = a0.add(a0.rearrange(Simd.SWAP2));
            a0 = a0.add(a0.rearrange(Simd.SWAP1));
            if (Simd.L > 8) a1 = a1.add(a1.rearrange(Simd.SWAP8));
            if (Simd.L > 4) a1 = a1.add(a1.rearrange(Simd.SWAP4));
            a1 = a1.add(a1.rearrange(Simd.SWAP2));
            a1 = a1.add(a1.rearrange(Simd.SWAP1));
            float s0 = a0.lane(0), s1 = a1.lane(0);
            if (Simd.L > 8) a2 = a2.add(a2.rearrange(Simd.SWAP8));
            if (Simd.L > 4) a2 = a2.add(a2.rearrange(Simd.SWAP4));
            a2 = a2.add(a2.rearrange(Simd.SWAP2));
            a2 = a2.add(a2.rearrange(Simd.SWAP1));
            if (Simd.L > 8) a3 = a3.add(a3.rearrange(Simd.SWAP8));
            if (Simd.L > 4) a3 = a3.add(a3.rearrange(Simd.SWAP4));
            a3 = a3.add(a3.rearrange(Simd.SWAP2));
            a3 = a3.add(a3.rearrange(Simd.SWAP1));
            float s2 = a2.lane(0), s3 = a3.lane(0);
            for (; k < cols; k++) {
                float wk = scalar(m, row + 4L * k);
                s0 += wk * x[xo + k];
                s1 += wk * x[xo + xs + k];
                s2 += wk * x[xo + 2 * xs + k];
                s3 += wk * x[xo + 3 * xs + k];
            }
            out[o] = s0;
            out[o + os] = s1;
            out[o + 2 * os] = s2;
            out[o + 3 * os] = s3;
        }
    }
}
