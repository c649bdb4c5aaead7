package io.modelopt.core.kernel;

import java.lang.foreign.MemorySegment;
import jdk.incubator.vector.FloatVector;

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

    /**
     * Vector API path. A matrix re-encoded at load ({@link RebiasedF16}) is computed by that
     * class's kernel for one token; otherwise each weight row is first widened into a per-thread float buffer by a plain
     * {@link Float#float16ToFloat} loop ({@link #widen}), which the JIT compiles to
     * {@code vcvtph2ps} (16 halves per instruction; the Vector API has no half-float conversion,
     * and doing it with integer bit operations took ten vector operations per 16 weights); the dot products then read the row
     * from L1. One token uses two accumulators, a tile of four tokens one accumulator each, in the
     * order of the earlier in-register kernel (same floats). Columns past the last whole vector are
     * done in scalar. (All vector work stays inside each method: a vector passed to or returned
     * from a call that the JIT does not inline would be boxed.)
     */
    static final class Vectorized implements FormatKernel {
        /** The one-token kernel on the re-encoded copy reads the activations pre-scaled ({@link RebiasedF16}). */
        @Override public boolean wantsScaledF16Activations() { return true; }

        static final Vectorized INSTANCE = new Vectorized();

        /** One widened row per thread, grown to the widest matrix seen. */
        private static final ThreadLocal<float[]> ROW = ThreadLocal.withInitial(() -> new float[0]);

        /**
         * {@link WeightData#halves}, repeated: the decode matmul's copy is compiled with a profile
         * of its own, not one shared with the attention's short runs (tiny1b F16 decode measured
         * 8.1-8.3 t/s with the shared method, 9.0-9.1 with its own, runs alternating).
         */
        static void widen(MemorySegment m, long off, float[] dst, int dstOff, int n) {
            for (int i = 0; i < n; i++) dst[dstOff + i] = Float.float16ToFloat(m.get(WeightData.SHORT, off + 2L * i));
        }

        @Override public void dequantizeRows(WeightMatrix w, int row, int n, float[] dst) {
            if (w.isRepacked()) RebiasedF16.decodeRows(w.packed(), row * w.rowBytes(), dst, 0, n * w.cols());
            else WeightData.halves(w.data(), row * w.rowBytes(), dst, 0, n * w.cols());
        }

        @Override public Activations.Kind activations() { return Activations.Kind.F32; }

        @Override public void compute(WeightMatrix w, Activations a, int rowStart, int rowEnd, float[] out, int outOff, int outStride) {
            int cols = w.cols();
            boolean codes = w.isRepacked();
            if (codes && a.scaleForF16 && a.f16ScaledExact) {
                RebiasedF16.computeOneToken(w.packed(), cols, a.f16Scaled, rowStart, rowEnd, out, outOff);
                return;
            }
            MemorySegment m = codes ? w.packed() : w.data();
            float[] buf = ROW.get();
            if (buf.length < cols) ROW.set(buf = new float[cols]);
            for (int r = rowStart; r < rowEnd; r++) {
                if (codes) RebiasedF16.decodeRows(m, r * w.rowBytes(), buf, 0, cols);
                else widen(m, r * w.rowBytes(), buf, 0, cols);
                int t = 0;
                for (; t + 4 <= a.nTokens; t += 4) {
                    dot4(buf, cols, a.x, a.xOff + t * a.xStride, a.xStride, out, outOff + t * outStride + r, outStride);
                }
                for (; t < a.nTokens; t++) out[outOff + t * outStride + r] = dot1(buf, cols, a.x, a.xOff + t * a.xStride);
            }
        }

        private static float dot1(float[] wr, int cols, float[] x, int xo) {
            // four independent FMA chains: with two, the loop waited on the FMA latency (4 cycles)
            FloatVector a0 = FloatVector.zero(Simd.F), a1 = a0, a2 = a0, a3 = a0;
            int k = 0;
            // 8 vectors (128 columns at 512 bits) per iteration, the same four chains: half the loop's index arithmetic
            // per FMA (JMH 5632×2048 from memory, two threads: 17.3–17.5 → 18.3–18.8 GB/s)
            final int L = Simd.L;
            for (; k + 8 * L <= cols; k += 8 * L) {
                a0 = FloatVector.fromArray(Simd.F, wr, k).fma(FloatVector.fromArray(Simd.F, x, xo + k), a0);
                a1 = FloatVector.fromArray(Simd.F, wr, k + L).fma(FloatVector.fromArray(Simd.F, x, xo + k + L), a1);
                a2 = FloatVector.fromArray(Simd.F, wr, k + 2 * L).fma(FloatVector.fromArray(Simd.F, x, xo + k + 2 * L), a2);
                a3 = FloatVector.fromArray(Simd.F, wr, k + 3 * L).fma(FloatVector.fromArray(Simd.F, x, xo + k + 3 * L), a3);
                a0 = FloatVector.fromArray(Simd.F, wr, k + 4 * L).fma(FloatVector.fromArray(Simd.F, x, xo + k + 4 * L), a0);
                a1 = FloatVector.fromArray(Simd.F, wr, k + 5 * L).fma(FloatVector.fromArray(Simd.F, x, xo + k + 5 * L), a1);
                a2 = FloatVector.fromArray(Simd.F, wr, k + 6 * L).fma(FloatVector.fromArray(Simd.F, x, xo + k + 6 * L), a2);
                a3 = FloatVector.fromArray(Simd.F, wr, k + 7 * L).fma(FloatVector.fromArray(Simd.F, x, xo + k + 7 * L), a3);
            }
            for (; k + 4 * L <= cols; k += 4 * L) {
                a0 = FloatVector.fromArray(Simd.F, wr, k).fma(FloatVector.fromArray(Simd.F, x, xo + k), a0);
                a1 = FloatVector.fromArray(Simd.F, wr, k + L).fma(FloatVector.fromArray(Simd.F, x, xo + k + L), a1);
                a2 = FloatVector.fromArray(Simd.F, wr, k + 2 * L).fma(FloatVector.fromArray(Simd.F, x, xo + k + 2 * L), a2);
                a3 = FloatVector.fromArray(Simd.F, wr, k + 3 * L).fma(FloatVector.fromArray(Simd.F, x, xo + k + 3 * L), a3);
            }
            for (; k + L <= cols; k += L) a0 = FloatVector.fromArray(Simd.F, wr, k).fma(FloatVector.fromArray(Simd.F, x, xo + k), a0);
            a0 = a0.add(a1).add(a2.add(a3));
            if (Simd.L > 8) a0 = a0.add(a0.rearrange(Simd.SWAP8));
            if (Simd.L > 4) a0 = a0.add(a0.rearrange(Simd.SWAP4));
            a0 = a0.add(a0.rearrange(Simd.SWAP2));
            a0 = a0.add(a0.rearrange(Simd.SWAP1));
            float s = a0.lane(0);
            for (; k < cols; k++) s += wr[k] * x[xo + k];
            return s;
        }

        private static void dot4(float[] wr, int cols, float[] x, int xo, int xs, float[] out, int o, int os) {
            FloatVector a0 = FloatVector.zero(Simd.F), a1 = a0, a2 = a0, a3 = a0;
            int k = 0;
            for (; k + Simd.L <= cols; k += Simd.L) {
                FloatVector wv = FloatVector.fromArray(Simd.F, wr, k);
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
                float wk = wr[k];
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
