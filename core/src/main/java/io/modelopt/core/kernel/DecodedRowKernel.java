package io.modelopt.core.kernel;

import jdk.incubator.vector.FloatVector;

/**
 * The kernel of formats that have a reference decoder but no kernel of their own yet (Q2_K,
 * Q3_K, Q5_1, IQ4_NL, and formats registered from outside core): each weight row is decoded to floats once per call, into per-thread
 * scratch, and every token's F32 activations are multiplied with it. Exact to the decoder's
 * values (no activation quantization, so a little closer to the float model than llama.cpp's
 * Q8_K dot products); about as fast as the decoder, i.e. far slower than a format's own kernel,
 * which is why the formats that matter have one.
 */
public final class DecodedRowKernel {
    private DecodedRowKernel() {}

    /** The scalar kernel (any format with a reference decoder). */
    public static FormatKernel scalar() { return Scalar.INSTANCE; }

    /** The Vector API kernel; only call it in {@link KernelMode#VECTOR}. */
    public static FormatKernel vector() { return Vectorized.INSTANCE; }

    private static final ThreadLocal<float[][]> ROW = ThreadLocal.withInitial(() -> new float[1][]);

    private static float[] row(int cols) {
        float[][] holder = ROW.get();
        float[] r = holder[0];
        if (r == null || r.length < cols) r = holder[0] = new float[cols];
        return r;
    }

    static final class Scalar implements FormatKernel {
        static final Scalar INSTANCE = new Scalar();

        @Override public Activations.Kind activations() { return Activations.Kind.F32; }

        @Override public void compute(WeightMatrix w, Activations a, int rowStart, int rowEnd, float[] out, int outOff, int outStride) {
            int cols = w.cols();
            float[] row = row(cols), x = a.x;
            for (int r = rowStart; r < rowEnd; r++) {
                w.dequantizeRow(r, row, 0);
                for (int t = 0; t < a.nTokens; t++) {
                    int xo = a.xOff + t * a.xStride;
                    float sum = 0;
                    for (int k = 0; k < cols; k++) sum += row[k] * x[xo + k];
                    out[outOff + t * outStride + r] = sum;
                }
            }
        }
    }

    /** The same with a Vector API dot product over the decoded row (loaded only in vector mode). */
    static final class Vectorized implements FormatKernel {
        static final Vectorized INSTANCE = new Vectorized();

        @Override public Activations.Kind activations() { return Activations.Kind.F32; }

        @Override public void compute(WeightMatrix w, Activations a, int rowStart, int rowEnd, float[] out, int outOff, int outStride) {
            int cols = w.cols(), bound = Simd.F.loopBound(cols);
            float[] row = row(cols), x = a.x;
            for (int r = rowStart; r < rowEnd; r++) {
                w.dequantizeRow(r, row, 0);
                for (int t = 0; t < a.nTokens; t++) {
                    int xo = a.xOff + t * a.xStride;
                    FloatVector acc = FloatVector.zero(Simd.F);
                    int k = 0;
                    for (; k < bound; k += Simd.L) acc = FloatVector.fromArray(Simd.F, row, k).fma(FloatVector.fromArray(Simd.F, x, xo + k), acc);
                    if (Simd.L > 8) acc = acc.add(acc.rearrange(Simd.SWAP8));
                    if (Simd.L > 4) acc = acc.add(acc.rearrange(Simd.SWAP4));
                    acc = acc.add(acc.rearrange(Simd.SWAP2));
                    acc = acc.add(acc.rearrange(Simd.SWAP1));
                    float sum = acc.lane(0);
                    for (; k < cols; k++) sum += row[k] * x[xo + k];
                    out[outOff + t * outStride + r] = sum;
                }
            }
        }
    }
}
