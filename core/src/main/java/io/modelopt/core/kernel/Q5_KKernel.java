package io.modelopt.core.kernel;

import io.modelopt.core.quant.Q5_K;
import java.lang.foreign.MemorySegment;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorOperators;

/** Q5_K weights × Q8_K activations ({@code ggml_vec_dot_q5_K_q8_K}): as {@link Q4_KKernel} with 5-bit quants. */
final class Q5_KKernel {
    private Q5_KKernel() {}

    static final int BLOCK_BYTES = Q5_K.BLOCK_BYTES;

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
                            int sm = Q5_K.scaleMin(m, blk, j);
                            long qs = blk + Q5_K.QS + (j / 2) * 32L;
                            int shift = (j & 1) * 4;
                            int dot = 0;
                            for (int l = 0; l < 32; l++) {
                                int q = ((WeightData.u8(m, qs + l) >>> shift) & 0xF) | (((WeightData.u8(m, blk + Q5_K.QH + l) >>> j) & 1) << 4);
                                dot += q * (int) a.q[x + 32 * j + l];
                            }
                            sumi += (sm & 0xFF) * dot;
                            summ += (sm >>> 8) * (a.bsums[bs + b * 16 + 2 * j] + a.bsums[bs + b * 16 + 2 * j + 1]);
                        }
                        float dxb = a.d[dx + b];
                        sum += dxb * WeightData.half(m, blk + Q5_K.D) * sumi - dxb * WeightData.half(m, blk + Q5_K.DMIN) * summ;
                    }
                    out[outOff + t * outStride + r] = sum;
                }
            }
        }
    }

    /**
     * Vector API path, at any width: as {@link Q4_KKernel.Vectorized}, with the fifth bits of a
     * quarter taken from {@code qh} (bits {@code 2p} and {@code 2p+1} of each of its 32 bytes,
     * read as {@link Simd#PER_BLOCK} vectors beside the quants) and OR-ed in.
     */
    static final class Vectorized implements FormatKernel {
        static final Vectorized INSTANCE = new Vectorized();

        @Override public Activations.Kind activations() { return Activations.Kind.Q8_K; }

        @Override public void compute(WeightMatrix w, Activations a, int rowStart, int rowEnd, float[] out, int outOff, int outStride) {
            MemorySegment m = w.data();
            int nb = w.cols() / 256;
            for (int r = rowStart; r < rowEnd; r++) {
                long row = r * w.rowBytes();
                if (r + 1 < rowEnd) Prefetch.touch(m, row + w.rowBytes(), w.rowBytes());
                for (int t = 0; t < a.nTokens; t++) out[outOff + t * outStride + r] = dot1(m, row, nb, a, t);
            }
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
                int s0 = m.get(WeightData.INT, blk + Q5_K.SCALES), s1 = m.get(WeightData.INT, blk + Q5_K.SCALES + 4), s2 = m.get(WeightData.INT, blk + Q5_K.SCALES + 8);
                for (int p = 0; p < 4; p++) {
                    int sm0 = scaleMin(s0, s1, s2, 2 * p), sm1 = scaleMin(s0, s1, s2, 2 * p + 1);
                    long qs = blk + Q5_K.QS + 32L * p;
                    int xo = qo + 256 * b + 64 * p;
                    FloatVector lo = FloatVector.zero(Simd.F), hi = lo;
                    for (int i = 0; i < Simd.PER_BLOCK; i++) {
                        long at = (long) Simd.BL.length() * (i / Simd.BL_PARTS);
                        int part = i % Simd.BL_PARTS;
                        IntVector v = (IntVector) ByteVector.fromMemorySegment(Simd.BL, m, qs + at, Simd.LE).convertShape(VectorOperators.ZERO_EXTEND_B2I, Simd.I, part);
                        IntVector h = (IntVector) ByteVector.fromMemorySegment(Simd.BL, m, blk + Q5_K.QH + at, Simd.LE).convertShape(VectorOperators.ZERO_EXTEND_B2I, Simd.I, part);
                        // bit 2p of qh[l] → bit 4 of the low-nibble quant, bit 2p+1 → of the high one
                        IntVector b0 = h.lanewise(VectorOperators.LSHR, 2 * p).and(1).lanewise(VectorOperators.LSHL, 4);
                        IntVector b1 = h.lanewise(VectorOperators.LSHR, 2 * p + 1).and(1).lanewise(VectorOperators.LSHL, 4);
                        lo = ((FloatVector) v.and(0xF).or(b0).convert(VectorOperators.I2F, 0)).fma(FloatVector.fromArray(Simd.F, q, xo + Simd.L * i), lo);
                        hi = ((FloatVector) v.lanewise(VectorOperators.LSHR, 4).or(b1).convert(VectorOperators.I2F, 0)).fma(FloatVector.fromArray(Simd.F, q, xo + 32 + Simd.L * i), hi);
                    }
                    sb = lo.fma(FloatVector.broadcast(Simd.F, (float) (sm0 & 0xFF)), sb);
                    sb = hi.fma(FloatVector.broadcast(Simd.F, (float) (sm1 & 0xFF)), sb);
                    int bj = bo + 16 * b + 4 * p;
                    summ += (sm0 >>> 8) * (bs[bj] + bs[bj + 1]) + (sm1 >>> 8) * (bs[bj + 2] + bs[bj + 3]);
                }
                acc = sb.fma(FloatVector.broadcast(Simd.F, dx * WeightData.half(m, blk + Q5_K.D)), acc);
                mins += dx * WeightData.half(m, blk + Q5_K.DMIN) * summ;
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
