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

    /** Rows {@code [r0, r1)} of every token; {@code sums[t·groups + g]} are the activations' group sums. */
    static void apply(MemorySegment scales, MemorySegment offsets, int groups, float[] sums, int tokens,
                      float[] out, int outOffset, int outStride, int r0, int r1) {
        int L = Simd.L, vg = groups / L * L;
        for (int r = r0; r < r1; r++) {
            float scale = scales == null ? 1f : scales.get(TranscodedCopy.F32, 4L * r);
            long base = 4L * r * groups;
            for (int t = 0; t < tokens; t++) {
                int o = outOffset + t * outStride + r, sOff = t * groups;
                float v = out[o];
                if (scales != null) v *= scale;
                if (offsets != null) {
                    float c = 0;
                    if (vg > 0) {
                        FloatVector acc = FloatVector.zero(Simd.F);
                        for (int j = 0; j < vg; j += L) {
                            acc = FloatVector.fromMemorySegment(Simd.F, offsets, base + 4L * j, NATIVE)
                                    .fma(FloatVector.fromArray(Simd.F, sums, sOff + j), acc);
                        }
                        c = acc.reduceLanes(jdk.incubator.vector.VectorOperators.ADD);
                    }
                    for (int j = vg; j < groups; j++) c += offsets.get(TranscodedCopy.F32, base + 4L * j) * sums[sOff + j];
                    v += c;
                }
                out[o] = v;
            }
        }
    }
}
