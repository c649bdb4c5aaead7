package io.modelopt.core.kernel;

import io.modelopt.core.quant.Q4_K;
import java.lang.foreign.MemorySegment;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorOperators;

/**
 * Q4_K weights × Q8_K activations ({@code ggml_vec_dot_q4_K_q8_K}): per super-block
 * {@code sum += dx·dw · Σ_j sc_j·(Σ q·qx) − dx·dminw · Σ_j m_j·(bsum_{2j} + bsum_{2j+1})},
 * the inner sums in integers.
 */
final class Q4_KKernel {
    private Q4_KKernel() {}

    static final int BLOCK_BYTES = Q4_K.BLOCK_BYTES;

    static final class Scalar implements FormatKernel {
        static final Scalar INSTANCE = new Scalar();

        @Override public Activations.Kind activations() { return Activations.Kind.Q8_K; }

        @Override public void compute(WeightMatrix w, Activations a, int rowStart, int rowEnd, float[] out, int outOff, int outStride) {
            MemorySegment m = w.data();
            int nb = w.cols() / 256;
            for (int r = rowStart; r < rowEnd; r++) {
                long row = r * w.rowBytes();
                for (int t = 0; t < a.nTokens; t++) {
                    int qx = t * a.cols, dx = t * a.blocks, bs = t * (a.cols / 16);
                    float sum = 0;
                    for (int b = 0; b < nb; b++) {
                        long blk = row + (long) b * BLOCK_BYTES;
                        int x = qx + b * 256;
                        int sumi = 0, summ = 0;
                        for (int j = 0; j < 8; j++) {
                            int sm = Q4_K.scaleMin(m, blk, j);
                            long qs = blk + Q4_K.QS + (j / 2) * 32L;
                            int shift = (j & 1) * 4;
                            int dot = 0;
                            for (int l = 0; l < 32; l++) dot += ((WeightData.u8(m, qs + l) >>> shift) & 0xF) * (int) a.q[x + 32 * j + l];
                            sumi += (sm & 0xFF) * dot;
                            summ += (sm >>> 8) * (a.bsums[bs + b * 16 + 2 * j] + a.bsums[bs + b * 16 + 2 * j + 1]);
                        }
                        float dxb = a.d[dx + b];
                        sum += dxb * WeightData.half(m, blk + Q4_K.D) * sumi - dxb * WeightData.half(m, blk + Q4_K.DMIN) * summ;
                    }
                    out[outOff + t * outStride + r] = sum;
                }
            }
        }
    }

    /**
     * Vector API path, at any width ({@link Simd#L} lanes). Per 32-byte quarter of a super-block:
     * {@link Simd#PER_BLOCK} loads of {@code L} bytes zero-extended to int lanes ({@link Simd#BL},
     * in two parts at 128 bits), low nibbles (sub-block {@code 2p}) and high nibbles ({@code 2p+1})
     * made floats and multiplied by the activations (the first product an FMA onto zero, the
     * same float as the multiplication); each sub-block's lane sums (exact integers) are
     * weighted by its 6-bit scale into a per-super-block accumulator (still exact: at most
     * 8·63·(32/L)·15·128 per lane, below 2^24 at every width), which is scaled by {@code dx·d}
     * once. The minimums go through Q8_K's {@code bsums} in scalar integers, as in ggml. At
     * 512 bits these are the operations, in the order, of the kernel written for 16 lanes.
     */
    static final class Vectorized implements FormatKernel {
        static final Vectorized INSTANCE = new Vectorized();

        /** Each sub-block: {@code (d·sc)·q − dmin·m} with one rounding (an FMA), as the reference's single rounding. */
        @Override public void dequantizeRows(WeightMatrix w, int row, int n, float[] dst) {
            MemorySegment m = w.data();
            long base = row * w.rowBytes();
            int blocks = n * (w.cols() / 256);
            for (int b = 0; b < blocks; b++) {
                long blk = base + (long) b * BLOCK_BYTES;
                float dw = WeightData.half(m, blk + Q4_K.D), dmin = WeightData.half(m, blk + Q4_K.DMIN);
                int s0 = m.get(WeightData.INT, blk + Q4_K.SCALES), s1 = m.get(WeightData.INT, blk + Q4_K.SCALES + 4), s2 = m.get(WeightData.INT, blk + Q4_K.SCALES + 8);
                for (int p = 0; p < 4; p++) {
                    int sm0 = scaleMin(s0, s1, s2, 2 * p), sm1 = scaleMin(s0, s1, s2, 2 * p + 1);
                    FloatVector d0 = FloatVector.broadcast(Simd.F, dw * (sm0 & 0xFF)), m0 = FloatVector.broadcast(Simd.F, -(dmin * (sm0 >>> 8)));
                    FloatVector d1 = FloatVector.broadcast(Simd.F, dw * (sm1 & 0xFF)), m1 = FloatVector.broadcast(Simd.F, -(dmin * (sm1 >>> 8)));
                    long qs = blk + Q4_K.QS + 32L * p;
                    int y = 256 * b + 64 * p;
                    for (int h = 0; h < Simd.PER_BLOCK; h++) {
                        IntVector v = (IntVector) ByteVector.fromMemorySegment(Simd.BL, m, qs + (long) Simd.BL.length() * (h / Simd.BL_PARTS), Simd.LE)
                                .convertShape(VectorOperators.ZERO_EXTEND_B2I, Simd.I, h % Simd.BL_PARTS);
                        ((FloatVector) v.and(0xF).convert(VectorOperators.I2F, 0)).fma(d0, m0).intoArray(dst, y + Simd.L * h);
                        ((FloatVector) v.lanewise(VectorOperators.LSHR, 4).convert(VectorOperators.I2F, 0)).fma(d1, m1).intoArray(dst, y + 32 + Simd.L * h);
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

        /** Four tokens: each quarter is decoded once and used by all four. */
        private static void dot4(MemorySegment m, long row, int nb, Activations a, int t, float[] out, int o, int os) {
            float[] q = a.q, d = a.d;
            int[] bs = a.bsums;
            int cols = a.cols, blocks = a.blocks, bstride = cols / 16;
            int q0 = t * cols, q1 = q0 + cols, q2 = q1 + cols, q3 = q2 + cols;
            FloatVector acc0 = FloatVector.zero(Simd.F), acc1 = acc0, acc2 = acc0, acc3 = acc0;
            float mins0 = 0, mins1 = 0, mins2 = 0, mins3 = 0;
            for (int b = 0; b < nb; b++) {
                long blk = row + (long) b * BLOCK_BYTES;
                FloatVector sb0 = FloatVector.zero(Simd.F), sb1 = sb0, sb2 = sb0, sb3 = sb0;
                int summ0 = 0, summ1 = 0, summ2 = 0, summ3 = 0;
                int s0 = m.get(WeightData.INT, blk + Q4_K.SCALES), s1 = m.get(WeightData.INT, blk + Q4_K.SCALES + 4), s2 = m.get(WeightData.INT, blk + Q4_K.SCALES + 8);
                for (int p = 0; p < 4; p++) {
                    int sm0 = scaleMin(s0, s1, s2, 2 * p), sm1 = scaleMin(s0, s1, s2, 2 * p + 1);
                    long qs = blk + Q4_K.QS + 32L * p;
                    int xo = 256 * b + 64 * p;
                    FloatVector zero = FloatVector.zero(Simd.F);
                    FloatVector l0 = zero, l1 = zero, l2 = zero, l3 = zero, h0 = zero, h1 = zero, h2 = zero, h3 = zero;
                    for (int i = 0; i < Simd.PER_BLOCK; i++) {
                        IntVector v = (IntVector) ByteVector.fromMemorySegment(Simd.BL, m, qs + (long) Simd.BL.length() * (i / Simd.BL_PARTS), Simd.LE)
                                .convertShape(VectorOperators.ZERO_EXTEND_B2I, Simd.I, i % Simd.BL_PARTS);
                        FloatVector lo = (FloatVector) v.and(0xF).convert(VectorOperators.I2F, 0);
                        FloatVector hi = (FloatVector) v.lanewise(VectorOperators.LSHR, 4).convert(VectorOperators.I2F, 0);
                        int xl = xo + Simd.L * i, xh = xl + 32;
                        l0 = lo.fma(FloatVector.fromArray(Simd.F, q, q0 + xl), l0);
                        h0 = hi.fma(FloatVector.fromArray(Simd.F, q, q0 + xh), h0);
                        l1 = lo.fma(FloatVector.fromArray(Simd.F, q, q1 + xl), l1);
                        h1 = hi.fma(FloatVector.fromArray(Simd.F, q, q1 + xh), h1);
                        l2 = lo.fma(FloatVector.fromArray(Simd.F, q, q2 + xl), l2);
                        h2 = hi.fma(FloatVector.fromArray(Simd.F, q, q2 + xh), h2);
                        l3 = lo.fma(FloatVector.fromArray(Simd.F, q, q3 + xl), l3);
                        h3 = hi.fma(FloatVector.fromArray(Simd.F, q, q3 + xh), h3);
                    }
                    FloatVector sc0 = FloatVector.broadcast(Simd.F, (float) (sm0 & 0xFF)), sc1 = FloatVector.broadcast(Simd.F, (float) (sm1 & 0xFF));
                    sb0 = h0.fma(sc1, l0.fma(sc0, sb0));
                    sb1 = h1.fma(sc1, l1.fma(sc0, sb1));
                    sb2 = h2.fma(sc1, l2.fma(sc0, sb2));
                    sb3 = h3.fma(sc1, l3.fma(sc0, sb3));
                    int m0 = sm0 >>> 8, m1 = sm1 >>> 8;
                    int bj = t * bstride + 16 * b + 4 * p;
                    summ0 += m0 * (bs[bj] + bs[bj + 1]) + m1 * (bs[bj + 2] + bs[bj + 3]);
                    bj += bstride;
                    summ1 += m0 * (bs[bj] + bs[bj + 1]) + m1 * (bs[bj + 2] + bs[bj + 3]);
                    bj += bstride;
                    summ2 += m0 * (bs[bj] + bs[bj + 1]) + m1 * (bs[bj + 2] + bs[bj + 3]);
                    bj += bstride;
                    summ3 += m0 * (bs[bj] + bs[bj + 1]) + m1 * (bs[bj + 2] + bs[bj + 3]);
                }
                float dw = WeightData.half(m, blk + Q4_K.D), dmin = WeightData.half(m, blk + Q4_K.DMIN);
                int db = t * blocks + b;
                float dx0 = d[db], dx1 = d[db + blocks], dx2 = d[db + 2 * blocks], dx3 = d[db + 3 * blocks];
                acc0 = sb0.fma(FloatVector.broadcast(Simd.F, dx0 * dw), acc0);
                acc1 = sb1.fma(FloatVector.broadcast(Simd.F, dx1 * dw), acc1);
                acc2 = sb2.fma(FloatVector.broadcast(Simd.F, dx2 * dw), acc2);
                acc3 = sb3.fma(FloatVector.broadcast(Simd.F, dx3 * dw), acc3);
                mins0 += dx0 * dmin * summ0;
                mins1 += dx1 * dmin * summ1;
                mins2 += dx2 * dmin * summ2;
                mins3 += dx3 * dmin * summ3;
            }
            if (Simd.L > 8) acc0 = acc0.add(acc0.rearrange(Simd.SWAP8));
            if (Simd.L > 4) acc0 = acc0.add(acc0.rearrange(Simd.SWAP4));
            acc0 = acc0.add(acc0.rearrange(Simd.SWAP2));
            acc0 = acc0.add(acc0.rearrange(Simd.SWAP1));
            out[o] = acc0.lane(0) - mins0;
            if (Simd.L > 8) acc1 = acc1.add(acc1.rearrange(Simd.SWAP8));
            if (Simd.L > 4) acc1 = acc1.add(acc1.rearrange(Simd.SWAP4));
            acc1 = acc1.add(acc1.rearrange(Simd.SWAP2));
            acc1 = acc1.add(acc1.rearrange(Simd.SWAP1));
            out[o + os] = acc1.lane(0) - mins1;
            if (Simd.L > 8) acc2 = acc2.add(acc2.rearrange(Simd.SWAP8));
            if (Simd.L > 4) acc2 = acc2.add(acc2.rearrange(Simd.SWAP4));
            acc2 = acc2.add(acc2.rearrange(Simd.SWAP2));
            acc2 = acc2.add(acc2.rearrange(Simd.SWAP1));
            out[o + 2 * os] = acc2.lane(0) - mins2;
            if (Simd.L > 8) acc3 = acc3.add(acc3.rearrange(Simd.SWAP8));
            if (Simd.L > 4) acc3 = acc3.add(acc3.rearrange(Simd.SWAP4));
            acc3 = acc3.add(acc3.rearrange(Simd.SWAP2));
            acc3 = acc3.add(acc3.rearrange(Simd.SWAP1));
            out[o + 3 * os] = acc3.lane(0) - mins3;
        }

        private static float dot1(MemorySegment m, long row, int nb, Activations a, int t) {
            float[] q = a.q;
            int[] bs = a.bsums;
            int qo = t * a.cols, dof = t * a.blocks, bo = t * (a.cols / 16);
            FloatVector acc = FloatVector.zero(Simd.F);
            float mins = 0;
            for (int b = 0; b < nb; b++) {
                long blk = row + (long) b * BLOCK_BYTES;
                float dx = a.d[dof + b];
                FloatVector sb = FloatVector.zero(Simd.F);
                int summ = 0;
                // the 12 scale bytes as three little-endian ints: bytes 0-3, 4-7, 8-11
                int s0 = m.get(WeightData.INT, blk + Q4_K.SCALES), s1 = m.get(WeightData.INT, blk + Q4_K.SCALES + 4), s2 = m.get(WeightData.INT, blk + Q4_K.SCALES + 8);
                for (int p = 0; p < 4; p++) {
                    int sm0 = scaleMin(s0, s1, s2, 2 * p), sm1 = scaleMin(s0, s1, s2, 2 * p + 1);
                    long qs = blk + Q4_K.QS + 32L * p;
                    int xo = qo + 256 * b + 64 * p;
                    FloatVector lo = FloatVector.zero(Simd.F), hi = lo;
                    for (int i = 0; i < Simd.PER_BLOCK; i++) {
                        IntVector v = (IntVector) ByteVector.fromMemorySegment(Simd.BL, m, qs + (long) Simd.BL.length() * (i / Simd.BL_PARTS), Simd.LE)
                                .convertShape(VectorOperators.ZERO_EXTEND_B2I, Simd.I, i % Simd.BL_PARTS);
                        lo = ((FloatVector) v.and(0xF).convert(VectorOperators.I2F, 0)).fma(FloatVector.fromArray(Simd.F, q, xo + Simd.L * i), lo);
                        hi = ((FloatVector) v.lanewise(VectorOperators.LSHR, 4).convert(VectorOperators.I2F, 0)).fma(FloatVector.fromArray(Simd.F, q, xo + 32 + Simd.L * i), hi);
                    }
                    sb = lo.fma(FloatVector.broadcast(Simd.F, (float) (sm0 & 0xFF)), sb);
                    sb = hi.fma(FloatVector.broadcast(Simd.F, (float) (sm1 & 0xFF)), sb);
                    int bj = bo + 16 * b + 4 * p;
                    summ += (sm0 >>> 8) * (bs[bj] + bs[bj + 1]) + (sm1 >>> 8) * (bs[bj + 2] + bs[bj + 3]);
                }
                acc = sb.fma(FloatVector.broadcast(Simd.F, dx * WeightData.half(m, blk + Q4_K.D)), acc);
                mins += dx * WeightData.half(m, blk + Q4_K.DMIN) * summ;
            }
            if (Simd.L > 8) acc = acc.add(acc.rearrange(Simd.SWAP8));
            if (Simd.L > 4) acc = acc.add(acc.rearrange(Simd.SWAP4));
            acc = acc.add(acc.rearrange(Simd.SWAP2));
            acc = acc.add(acc.rearrange(Simd.SWAP1));
            return acc.lane(0) - mins;
        }

        /** {@code get_scale_min_k4} on the scale bytes held in three ints: {@code scale | min << 8} of sub-block {@code j}. */
        private static int scaleMin(int s0, int s1, int s2, int j) {
            if (j < 4) return ((s0 >>> (8 * j)) & 63) | (((s1 >>> (8 * j)) & 63) << 8);
            int k = 8 * (j - 4);
            int low = (s2 >>> k) & 0xFF;
            int sc = (low & 0xF) | (((s0 >>> k) & 0xC0) >>> 2);
            int mn = (low >>> 4) | (((s1 >>> k) & 0xC0) >>> 2);
            return sc | (mn << 8);
        }
    }
}
