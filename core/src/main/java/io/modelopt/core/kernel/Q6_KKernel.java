package io.modelopt.core.kernel;

import io.modelopt.core.quant.Q6_K;
import java.lang.foreign.MemorySegment;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorOperators;

/**
 * Q6_K weights × Q8_K activations ({@code ggml_vec_dot_q6_K_q8_K}): per super-block
 * {@code sum += dw·dx · Σ_j sc_j · Σ (q-32)·qx} over 16 sub-blocks of 16, the inner sums in integers.
 */
final class Q6_KKernel {
    private Q6_KKernel() {}

    static final int BLOCK_BYTES = Q6_K.BLOCK_BYTES;

    /** The 6-bit quant (0..63) of element {@code e} (0..255) of the block at {@code blk}. */
    static int quant(MemorySegment m, long blk, int e) {
        int half = e / 128, i = e % 128, quarter = i / 32, l = i % 32;
        long ql = blk + Q6_K.QL + half * 64L + l + (quarter & 1) * 32L;
        long qh = blk + Q6_K.QH + half * 32L + l;
        int low = (WeightData.u8(m, ql) >>> ((quarter >>> 1) * 4)) & 0xF;
        int high = (WeightData.u8(m, qh) >>> (2 * quarter)) & 3;
        return low | (high << 4);
    }

    static final class Scalar implements FormatKernel {
        static final Scalar INSTANCE = new Scalar();

        @Override public Activations.Kind activations() { return Activations.Kind.Q8_K; }

        @Override public void compute(WeightMatrix w, Activations a, int rowStart, int rowEnd, float[] out, int outOff, int outStride) {
            MemorySegment m = w.data();
            int nb = w.cols() / 256;
            for (int r = rowStart; r < rowEnd; r++) {
                long row = r * w.rowBytes();
                for (int t = 0; t < a.nTokens; t++) {
                    int qx = t * a.cols, dx = t * a.blocks;
                    float sum = 0;
                    for (int b = 0; b < nb; b++) {
                        long blk = row + (long) b * BLOCK_BYTES;
                        int x = qx + b * 256;
                        int sumi = 0;
                        for (int j = 0; j < 16; j++) {
                            int dot = 0;
                            for (int l = 0; l < 16; l++) dot += (quant(m, blk, 16 * j + l) - 32) * (int) a.q[x + 16 * j + l];
                            sumi += WeightData.s8(m, blk + Q6_K.SCALES + j) * dot;
                        }
                        sum += WeightData.half(m, blk + Q6_K.D) * a.d[dx + b] * sumi;
                    }
                    out[outOff + t * outStride + r] = sum;
                }
            }
        }
    }

    /**
     * Vector API path. Per 16 columns {@code l} of a 128-element half: {@code ql[l]},
     * {@code ql[l+32]} and {@code qh[l]} zero-extended to int lanes give the four 16-element
     * sub-blocks at {@code l, l+32, l+64, l+96}; each 6-bit quant minus 32 becomes a float (magic
     * number), is multiplied by its activation and weighted by the sub-block's int8 scale into a
     * per-super-block accumulator (exact: at most 16·128·32·127 per lane), scaled by
     * {@code dx·d} once.
     */
    static final class Vectorized implements FormatKernel {
        static final Vectorized INSTANCE = new Vectorized();

        @Override public Activations.Kind activations() { return Activations.Kind.Q8_K; }

        @Override public void compute(WeightMatrix w, Activations a, int rowStart, int rowEnd, float[] out, int outOff, int outStride) {
            MemorySegment m = w.data();
            int nb = w.cols() / 256;
            for (int r = rowStart; r < rowEnd; r++) {
                long row = r * w.rowBytes();
                for (int t = 0; t < a.nTokens; t++) out[outOff + t * outStride + r] = dot1(m, row, nb, a, t);
            }
        }

        private static float dot1(MemorySegment m, long row, int nb, Activations a, int t) {
            float[] q = a.q;
            int qo = t * a.cols, dof = t * a.blocks;
            FloatVector acc = FloatVector.zero(Simd.F);
            for (int b = 0; b < nb; b++) {
                long blk = row + (long) b * BLOCK_BYTES;
                FloatVector sb = FloatVector.zero(Simd.F);
                for (int half = 0; half < 2; half++) {
                    long ql = blk + Q6_K.QL + 64L * half, qh = blk + Q6_K.QH + 32L * half, sc = blk + Q6_K.SCALES + 8L * half;
                    for (int l = 0; l < 32; l += 16) {
                        int xo = qo + 256 * b + 128 * half + l;
                        IntVector va = (IntVector) ByteVector.fromMemorySegment(Simd.B16, m, ql + l, Simd.LE).convertShape(VectorOperators.ZERO_EXTEND_B2I, Simd.I, 0);
                        IntVector vb = (IntVector) ByteVector.fromMemorySegment(Simd.B16, m, ql + 32 + l, Simd.LE).convertShape(VectorOperators.ZERO_EXTEND_B2I, Simd.I, 0);
                        IntVector vh = (IntVector) ByteVector.fromMemorySegment(Simd.B16, m, qh + l, Simd.LE).convertShape(VectorOperators.ZERO_EXTEND_B2I, Simd.I, 0);
                        FloatVector q1 = va.and(0xF).or(vh.and(3).lanewise(VectorOperators.LSHL, 4)).or(Simd.MAGIC_BITS).reinterpretAsFloats().sub(Simd.MAGIC + 32);
                        FloatVector q2 = vb.and(0xF).or(vh.and(0xC).lanewise(VectorOperators.LSHL, 2)).or(Simd.MAGIC_BITS).reinterpretAsFloats().sub(Simd.MAGIC + 32);
                        FloatVector q3 = va.lanewise(VectorOperators.LSHR, 4).or(vh.and(0x30)).or(Simd.MAGIC_BITS).reinterpretAsFloats().sub(Simd.MAGIC + 32);
                        FloatVector q4 = vb.lanewise(VectorOperators.LSHR, 4).or(vh.lanewise(VectorOperators.LSHR, 2).and(0x30)).or(Simd.MAGIC_BITS).reinterpretAsFloats().sub(Simd.MAGIC + 32);
                        int is = l / 16;
                        sb = q1.mul(FloatVector.fromArray(Simd.F, q, xo)).fma(FloatVector.broadcast(Simd.F, (float) WeightData.s8(m, sc + is)), sb);
                        sb = q2.mul(FloatVector.fromArray(Simd.F, q, xo + 32)).fma(FloatVector.broadcast(Simd.F, (float) WeightData.s8(m, sc + is + 2)), sb);
                        sb = q3.mul(FloatVector.fromArray(Simd.F, q, xo + 64)).fma(FloatVector.broadcast(Simd.F, (float) WeightData.s8(m, sc + is + 4)), sb);
                        sb = q4.mul(FloatVector.fromArray(Simd.F, q, xo + 96)).fma(FloatVector.broadcast(Simd.F, (float) WeightData.s8(m, sc + is + 6)), sb);
                    }
                }
                acc = sb.fma(FloatVector.broadcast(Simd.F, a.d[dof + b] * WeightData.half(m, blk + Q6_K.D)), acc);
            }
            return acc.reduceLanes(VectorOperators.ADD);
        }
    }
}
