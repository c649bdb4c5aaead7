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

        /** Each 16-element sub-block: {@code (q − 32)·(d·sc)} (same floats as the reference). */
        @Override public void dequantizeRows(WeightMatrix w, int row, int n, float[] dst) {
            MemorySegment m = w.data();
            long base = row * w.rowBytes();
            int blocks = n * (w.cols() / 256);
            for (int b = 0; b < blocks; b++) {
                long blk = base + (long) b * BLOCK_BYTES;
                float dw = WeightData.half(m, blk + Q6_K.D);
                for (int half = 0; half < 2; half++) {
                    long ql = blk + Q6_K.QL + 64L * half, qh = blk + Q6_K.QH + 32L * half;
                    long sc = m.get(WeightData.LONG, blk + Q6_K.SCALES + 8L * half); // the half's 8 int8 scales
                    for (int l = 0; l < 32; l += Simd.L) {
                        // at 128 bits one 8-byte load holds two vectors' bytes: lp bytes into it, widened part `part`
                        int lp = Simd.BL_PARTS == 1 ? 0 : l & 4, part = Simd.BL_PARTS == 1 ? 0 : lp / 4;
                        int y = 256 * b + 128 * half + l, is = l / 16;
                        IntVector va = (IntVector) ByteVector.fromMemorySegment(Simd.BL, m, ql + l - lp, Simd.LE).convertShape(VectorOperators.ZERO_EXTEND_B2I, Simd.I, part);
                        IntVector vb = (IntVector) ByteVector.fromMemorySegment(Simd.BL, m, ql + 32 + l - lp, Simd.LE).convertShape(VectorOperators.ZERO_EXTEND_B2I, Simd.I, part);
                        IntVector vh = (IntVector) ByteVector.fromMemorySegment(Simd.BL, m, qh + l - lp, Simd.LE).convertShape(VectorOperators.ZERO_EXTEND_B2I, Simd.I, part);
                        va.and(0xF).or(vh.and(3).lanewise(VectorOperators.LSHL, 4)).or(Simd.MAGIC_BITS).reinterpretAsFloats().sub(Simd.MAGIC + 32)
                                .mul(dw * (byte) (sc >>> (8 * is))).intoArray(dst, y);
                        vb.and(0xF).or(vh.and(0xC).lanewise(VectorOperators.LSHL, 2)).or(Simd.MAGIC_BITS).reinterpretAsFloats().sub(Simd.MAGIC + 32)
                                .mul(dw * (byte) (sc >>> (8 * (is + 2)))).intoArray(dst, y + 32);
                        va.lanewise(VectorOperators.LSHR, 4).or(vh.and(0x30)).or(Simd.MAGIC_BITS).reinterpretAsFloats().sub(Simd.MAGIC + 32)
                                .mul(dw * (byte) (sc >>> (8 * (is + 4)))).intoArray(dst, y + 64);
                        vb.lanewise(VectorOperators.LSHR, 4).or(vh.lanewise(VectorOperators.LSHR, 2).and(0x30)).or(Simd.MAGIC_BITS).reinterpretAsFloats()
                                .sub(Simd.MAGIC + 32).mul(dw * (byte) (sc >>> (8 * (is + 6)))).intoArray(dst, y + 96);
                    }
                }
            }
        }

        @Override public Activations.Kind activations() { return Activations.Kind.Q8_K; }

        @Override public void compute(WeightMatrix w, Activations a, int rowStart, int rowEnd, float[] out, int outOff, int outStride) {
            MemorySegment m = w.data();
            int nb = w.cols() / 256;
            for (int r = rowStart; r < rowEnd; r++) {
                long row = r * w.rowBytes();
                if (r + 1 < rowEnd) Prefetch.touch(m, row + w.rowBytes(), w.rowBytes());
                int t = 0;
                for (; t + 4 <= a.nTokens; t += 4) dot4(m, row, nb, a, t, out, outOff + t * outStride + r, outStride);
                for (; t < a.nTokens; t++) out[outOff + t * outStride + r] = dot1(m, row, nb, a, t);
            }
        }

        /** Four tokens: each group of four sub-blocks is decoded once and used by all four. */
        private static void dot4(MemorySegment m, long row, int nb, Activations a, int t, float[] out, int o, int os) {
            float[] q = a.q, d = a.d;
            int cols = a.cols, blocks = a.blocks;
            int q0 = t * cols, q1 = q0 + cols, q2 = q1 + cols, q3 = q2 + cols;
            FloatVector acc0 = FloatVector.zero(Simd.F), acc1 = acc0, acc2 = acc0, acc3 = acc0;
            for (int b = 0; b < nb; b++) {
                long blk = row + (long) b * BLOCK_BYTES;
                FloatVector sb0 = FloatVector.zero(Simd.F), sb1 = sb0, sb2 = sb0, sb3 = sb0;
                for (int half = 0; half < 2; half++) {
                    long ql = blk + Q6_K.QL + 64L * half, qh = blk + Q6_K.QH + 32L * half;
                    long sc = m.get(WeightData.LONG, blk + Q6_K.SCALES + 8L * half); // the half's 8 int8 scales
                    for (int l = 0; l < 32; l += Simd.L) {
                        // at 128 bits one 8-byte load holds two vectors' bytes: lp bytes into it, widened part `part`
                        int lp = Simd.BL_PARTS == 1 ? 0 : l & 4, part = Simd.BL_PARTS == 1 ? 0 : lp / 4;
                        int xo = 256 * b + 128 * half + l;
                        IntVector va = (IntVector) ByteVector.fromMemorySegment(Simd.BL, m, ql + l - lp, Simd.LE).convertShape(VectorOperators.ZERO_EXTEND_B2I, Simd.I, part);
                        IntVector vb = (IntVector) ByteVector.fromMemorySegment(Simd.BL, m, ql + 32 + l - lp, Simd.LE).convertShape(VectorOperators.ZERO_EXTEND_B2I, Simd.I, part);
                        IntVector vh = (IntVector) ByteVector.fromMemorySegment(Simd.BL, m, qh + l - lp, Simd.LE).convertShape(VectorOperators.ZERO_EXTEND_B2I, Simd.I, part);
                        int is = l / 16;
                        FloatVector w1 = va.and(0xF).or(vh.and(3).lanewise(VectorOperators.LSHL, 4)).or(Simd.MAGIC_BITS).reinterpretAsFloats().sub(Simd.MAGIC + 32)
                                .mul((float) (byte) (sc >>> (8 * is)));
                        FloatVector w2 = vb.and(0xF).or(vh.and(0xC).lanewise(VectorOperators.LSHL, 2)).or(Simd.MAGIC_BITS).reinterpretAsFloats().sub(Simd.MAGIC + 32)
                                .mul((float) (byte) (sc >>> (8 * (is + 2))));
                        FloatVector w3 = va.lanewise(VectorOperators.LSHR, 4).or(vh.and(0x30)).or(Simd.MAGIC_BITS).reinterpretAsFloats().sub(Simd.MAGIC + 32)
                                .mul((float) (byte) (sc >>> (8 * (is + 4))));
                        FloatVector w4 = vb.lanewise(VectorOperators.LSHR, 4).or(vh.lanewise(VectorOperators.LSHR, 2).and(0x30)).or(Simd.MAGIC_BITS).reinterpretAsFloats()
                                .sub(Simd.MAGIC + 32).mul((float) (byte) (sc >>> (8 * (is + 6))));
                        // w = (q - 32)·scale is an exact integer (|w| <= 4096), so w·x stays exact as in dot1
                        sb0 = w4.fma(FloatVector.fromArray(Simd.F, q, q0 + xo + 96), w3.fma(FloatVector.fromArray(Simd.F, q, q0 + xo + 64),
                                w2.fma(FloatVector.fromArray(Simd.F, q, q0 + xo + 32), w1.fma(FloatVector.fromArray(Simd.F, q, q0 + xo), sb0))));
                        sb1 = w4.fma(FloatVector.fromArray(Simd.F, q, q1 + xo + 96), w3.fma(FloatVector.fromArray(Simd.F, q, q1 + xo + 64),
                                w2.fma(FloatVector.fromArray(Simd.F, q, q1 + xo + 32), w1.fma(FloatVector.fromArray(Simd.F, q, q1 + xo), sb1))));
                        sb2 = w4.fma(FloatVector.fromArray(Simd.F, q, q2 + xo + 96), w3.fma(FloatVector.fromArray(Simd.F, q, q2 + xo + 64),
                                w2.fma(FloatVector.fromArray(Simd.F, q, q2 + xo + 32), w1.fma(FloatVector.fromArray(Simd.F, q, q2 + xo), sb2))));
                        sb3 = w4.fma(FloatVector.fromArray(Simd.F, q, q3 + xo + 96), w3.fma(FloatVector.fromArray(Simd.F, q, q3 + xo + 64),
                                w2.fma(FloatVector.fromArray(Simd.F, q, q3 + xo + 32), w1.fma(FloatVector.fromArray(Simd.F, q, q3 + xo), sb3))));
                    }
                }
                float dw = WeightData.half(m, blk + Q6_K.D);
                int db = t * blocks + b;
                acc0 = sb0.fma(FloatVector.broadcast(Simd.F, d[db] * dw), acc0);
                acc1 = sb1.fma(FloatVector.broadcast(Simd.F, d[db + blocks] * dw), acc1);
                acc2 = sb2.fma(FloatVector.broadcast(Simd.F, d[db + 2 * blocks] * dw), acc2);
                acc3 = sb3.fma(FloatVector.broadcast(Simd.F, d[db + 3 * blocks] * dw), acc3);
            }
            if (Simd.L > 8) acc0 = acc0.add(acc0.rearrange(Simd.SWAP8));
            if (Simd.L > 4) acc0 = acc0.add(acc0.rearrange(Simd.SWAP4));
            acc0 = acc0.add(acc0.rearrange(Simd.SWAP2));
            acc0 = acc0.add(acc0.rearrange(Simd.SWAP1));
            out[o] = acc0.lane(0);
            if (Simd.L > 8) acc1 = acc1.add(acc1.rearrange(Simd.SWAP8));
            if (Simd.L > 4) acc1 = acc1.add(acc1.rearrange(Simd.SWAP4));
            acc1 = acc1.add(acc1.rearrange(Simd.SWAP2));
            acc1 = acc1.add(acc1.rearrange(Simd.SWAP1));
            out[o + os] = acc1.lane(0);
            if (Simd.L > 8) acc2 = acc2.add(acc2.rearrange(Simd.SWAP8));
            if (Simd.L > 4) acc2 = acc2.add(acc2.rearrange(Simd.SWAP4));
            acc2 = acc2.add(acc2.rearrange(Simd.SWAP2));
            acc2 = acc2.add(acc2.rearrange(Simd.SWAP1));
            out[o + 2 * os] = acc2.lane(0);
            if (Simd.L > 8) acc3 = acc3.add(acc3.rearrange(Simd.SWAP8));
            if (Simd.L > 4) acc3 = acc3.add(acc3.rearrange(Simd.SWAP4));
            acc3 = acc3.add(acc3.rearrange(Simd.SWAP2));
            acc3 = acc3.add(acc3.rearrange(Simd.SWAP1));
            out[o + 3 * os] = acc3.lane(0);
        }

        private static float dot1(MemorySegment m, long row, int nb, Activations a, int t) {
            float[] q = a.q;
            int qo = t * a.cols, dof = t * a.blocks;
            FloatVector acc = FloatVector.zero(Simd.F);
            for (int b = 0; b < nb; b++) {
                long blk = row + (long) b * BLOCK_BYTES;
                FloatVector sb = FloatVector.zero(Simd.F);
                for (int half = 0; half < 2; half++) {
                    long ql = blk + Q6_K.QL + 64L * half, qh = blk + Q6_K.QH + 32L * half;
                    long sc = m.get(WeightData.LONG, blk + Q6_K.SCALES + 8L * half); // the half's 8 int8 scales
                    for (int l = 0; l < 32; l += Simd.L) {
                        // at 128 bits one 8-byte load holds two vectors' bytes: lp bytes into it, widened part `part`
                        int lp = Simd.BL_PARTS == 1 ? 0 : l & 4, part = Simd.BL_PARTS == 1 ? 0 : lp / 4;
                        int xo = qo + 256 * b + 128 * half + l;
                        IntVector va = (IntVector) ByteVector.fromMemorySegment(Simd.BL, m, ql + l - lp, Simd.LE).convertShape(VectorOperators.ZERO_EXTEND_B2I, Simd.I, part);
                        IntVector vb = (IntVector) ByteVector.fromMemorySegment(Simd.BL, m, ql + 32 + l - lp, Simd.LE).convertShape(VectorOperators.ZERO_EXTEND_B2I, Simd.I, part);
                        IntVector vh = (IntVector) ByteVector.fromMemorySegment(Simd.BL, m, qh + l - lp, Simd.LE).convertShape(VectorOperators.ZERO_EXTEND_B2I, Simd.I, part);
                        FloatVector q1 = va.and(0xF).or(vh.and(3).lanewise(VectorOperators.LSHL, 4)).or(Simd.MAGIC_BITS).reinterpretAsFloats().sub(Simd.MAGIC + 32);
                        FloatVector q2 = vb.and(0xF).or(vh.and(0xC).lanewise(VectorOperators.LSHL, 2)).or(Simd.MAGIC_BITS).reinterpretAsFloats().sub(Simd.MAGIC + 32);
                        FloatVector q3 = va.lanewise(VectorOperators.LSHR, 4).or(vh.and(0x30)).or(Simd.MAGIC_BITS).reinterpretAsFloats().sub(Simd.MAGIC + 32);
                        FloatVector q4 = vb.lanewise(VectorOperators.LSHR, 4).or(vh.lanewise(VectorOperators.LSHR, 2).and(0x30)).or(Simd.MAGIC_BITS).reinterpretAsFloats().sub(Simd.MAGIC + 32);
                        int is = l / 16;
                        sb = q1.mul(FloatVector.fromArray(Simd.F, q, xo)).fma(FloatVector.broadcast(Simd.F, (float) (byte) (sc >>> (8 * is))), sb);
                        sb = q2.mul(FloatVector.fromArray(Simd.F, q, xo + 32)).fma(FloatVector.broadcast(Simd.F, (float) (byte) (sc >>> (8 * (is + 2)))), sb);
                        sb = q3.mul(FloatVector.fromArray(Simd.F, q, xo + 64)).fma(FloatVector.broadcast(Simd.F, (float) (byte) (sc >>> (8 * (is + 4)))), sb);
                        sb = q4.mul(FloatVector.fromArray(Simd.F, q, xo + 96)).fma(FloatVector.broadcast(Simd.F, (float) (byte) (sc >>> (8 * (is + 6)))), sb);
                    }
                }
                acc = sb.fma(FloatVector.broadcast(Simd.F, a.d[dof + b] * WeightData.half(m, blk + Q6_K.D)), acc);
            }
            if (Simd.L > 8) acc = acc.add(acc.rearrange(Simd.SWAP8));
            if (Simd.L > 4) acc = acc.add(acc.rearrange(Simd.SWAP4));
            acc = acc.add(acc.rearrange(Simd.SWAP2));
            acc = acc.add(acc.rearrange(Simd.SWAP1));
            return acc.lane(0);
        }
    }
}
