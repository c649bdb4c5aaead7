package io.modelopt.core.kernel;

import java.lang.foreign.MemorySegment;
import java.nio.ByteOrder;
import jdk.incubator.vector.FloatVector;

/**
 * The affine terms of a transcoded matrix ({@link Transcoding}) added to its kernel's outputs:
 * {@code out = rowScale·out + Σ_g offset[r][g]·groupSum[t][g]}. The offset sums are dot products
 * over a row's groups, vectorized because a prefill call does {@code rows × tokens × groups} of
 * them (tiny1b, 128 tokens, g128: about a billion multiply-adds per prefill, a second with the
 * scalar loop). Its own class so that {@link MatMul} loads no Vector API class in scalar mode.
 */
final class AffineTerms {
    private AffineTerms() {}

    private static final ByteOrder NATIVE = ByteOrder.nativeOrder();

    /**
     * Rows {@code [r0, r1)} of every token; {@code sums[t·groups + g]} are the activations' group sums,
     * {@code offsets} group-major ({@code [g][row]}, {@code rows} per group), so that a vector holds L
     * adjacent rows of one group: per token, {@code groups} broadcast multiply-adds per L rows, no
     * reductions.
     */
    static void apply(MemorySegment scales, MemorySegment offsets, int groups, int rows, float[] sums, int tokens,
                      float[] out, int outOffset, int outStride, int r0, int r1) {
        int L = Simd.L, vEnd = r0 + (r1 - r0) / L * L;
        for (int t = 0; t < tokens; t++) {
            int o = outOffset + t * outStride, sOff = t * groups;
            for (int r = r0; r < vEnd; r += L) {
                FloatVector v = FloatVector.fromArray(Simd.F, out, o + r);
                if (scales != null) v = v.mul(FloatVector.fromMemorySegment(Simd.F, scales, 4L * r, NATIVE));
                if (offsets != null) {
                    for (int j = 0; j < groups; j++) {
                        v = FloatVector.fromMemorySegment(Simd.F, offsets, 4L * ((long) j * rows + r), NATIVE).fma(FloatVector.broadcast(Simd.F, sums[sOff + j]), v);
                    }
                }
                v.intoArray(out, o + r);
            }
            for (int r = vEnd; r < r1; r++) {
                float v = out[o + r];
                if (scales != null) v *= scales.get(TranscodedCopy.F32, 4L * r);
                if (offsets != null) for (int j = 0; j < groups; j++) v = Math.fma(offsets.get(TranscodedCopy.F32, 4L * ((long) j * rows + r)), sums[sOff + j], v);
                out[o + r] = v;
            }
        }
    }
}
