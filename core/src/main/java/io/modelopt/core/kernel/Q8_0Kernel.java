package io.modelopt.core.kernel;

import java.lang.foreign.MemorySegment;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;

/**
 * Q8_0 weights × Q8_0 activations ({@code ggml_vec_dot_q8_0_q8_0}): per block the integer
 * {@code sumi = Σ qw·qx}, then {@code sum += sumi · (dw·dx)} in float.
 */
final class Q8_0Kernel {
    private Q8_0Kernel() {}

    static final int BLOCK_BYTES = io.modelopt.core.quant.Q8_0.BLOCK_BYTES;

    static final class Scalar implements FormatKernel {
        static final Scalar INSTANCE = new Scalar();

        @Override public Activations.Kind activations() { return Activations.Kind.Q8_0; }

        @Override public void compute(WeightMatrix w, Activations a, int rowStart, int rowEnd, float[] out, int outOff, int outStride) {
            MemorySegment m = w.data();
            int nb = w.cols() / 32;
            for (int r = rowStart; r < rowEnd; r++) {
                long row = r * w.rowBytes();
                for (int t = 0; t < a.nTokens; t++) {
                    int qx = t * a.cols, dx = t * a.blocks;
                    float sum = 0;
                    for (int b = 0; b < nb; b++) {
                        long blk = row + (long) b * BLOCK_BYTES;
                        int sumi = 0;
                        for (int j = 0; j < 32; j++) sumi += WeightData.s8(m, blk + 2 + j) * (int) a.q[qx + b * 32 + j];
                        sum += sumi * (WeightData.half(m, blk) * a.d[dx + b]);
                    }
                    out[outOff + t * outStride + r] = sum;
                }
            }
        }
    }

    /**
     * Vector API path. Per block: the 32 signed bytes widened to {@link Simd#PER_BLOCK} float
     * vectors {@code w_j} (two at 512 bits); the lanes of {@code Σ_j w_j·x_j} are exact integers
     * (ggml's per-block {@code sumi}, split over lanes as its AVX2 code splits it), scaled by
     * {@code dw·dx} into a float accumulator. One token alternates two accumulators; a tile of
     * four tokens decodes each block once. (All vector work stays inside each method: a vector
     * passed to or returned from a call that the JIT does not inline would be boxed.)
     *
     * <p>Vector {@code j} of a block is bytes {@code [jL, jL + L)}: a {@link Simd#BL} load at
     * {@code (j / BL_PARTS)·|BL|} widened in part {@code j % BL_PARTS} (at 128 bits a 64-bit load
     * holds two vectors' bytes).
     */
    static final class Vectorized implements FormatKernel {
        static final Vectorized INSTANCE = new Vectorized();

        private static final int L = Simd.L, PER_BLOCK = Simd.PER_BLOCK, PARTS = Simd.BL_PARTS, BL_BYTES = Simd.BL.length();

        /** Each block: 32 bytes widened to floats times the block scale (same floats as the reference). */
        @Override public void dequantizeRows(WeightMatrix w, int row, int n, float[] dst) {
            MemorySegment m = w.data();
            long base = row * w.rowBytes();
            int blocks = n * (w.cols() / 32);
            for (int b = 0; b < blocks; b++) {
                long blk = base + (long) b * BLOCK_BYTES;
                float dw = WeightData.half(m, blk);
                for (int j = 0; j < PER_BLOCK; j++) {
                    ((FloatVector) ByteVector.fromMemorySegment(Simd.BL, m, blk + 2 + (j / PARTS) * BL_BYTES, Simd.LE).convertShape(VectorOperators.B2F, Simd.F, PARTS == 1 ? 0 : j % PARTS))
                            .mul(dw).intoArray(dst, 32 * b + L * j);
                }
            }
        }

        @Override public Activations.Kind activations() { return Activations.Kind.Q8_0; }

        @Override public void compute(WeightMatrix w, Activations a, int rowStart, int rowEnd, float[] out, int outOff, int outStride) {
            MemorySegment m = w.data();
            int nb = w.cols() / 32;
            for (int r = rowStart; r < rowEnd; r++) {
                long row = r * w.rowBytes();
                if (r + 1 < rowEnd) Prefetch.touch(m, row + w.rowBytes(), w.rowBytes());
                int t = 0;
                for (; t + 4 <= a.nTokens; t += 4) dot4(m, row, nb, a, t, out, outOff + t * outStride + r, outStride);
                for (; t < a.nTokens; t++) out[outOff + t * outStride + r] = dot1(m, row, nb, a, t);
            }
        }

        private static float dot1(MemorySegment m, long row, int nb, Activations a, int t) {
            float[] q = a.q, d = a.d;
            int qo = t * a.cols, dof = t * a.blocks;
            FloatVector acc0 = FloatVector.zero(Simd.F), acc1 = acc0;
            int b = 0;
            for (; b + 2 <= nb; b += 2) {
                long blk = row + (long) b * BLOCK_BYTES;
                int xo = qo + 32 * b;
                // p = w_0·x_0, then p = w_j·x_j + p: at 512 bits hi.fma(x_hi, lo.mul(x_lo))
                FloatVector p = ((FloatVector) ByteVector.fromMemorySegment(Simd.BL, m, blk + 2, Simd.LE).convertShape(VectorOperators.B2F, Simd.F, 0))
                        .mul(FloatVector.fromArray(Simd.F, q, xo));
                for (int j = 1; j < PER_BLOCK; j++) {
                    p = ((FloatVector) ByteVector.fromMemorySegment(Simd.BL, m, blk + 2 + (j / PARTS) * BL_BYTES, Simd.LE).convertShape(VectorOperators.B2F, Simd.F, PARTS == 1 ? 0 : j % PARTS))
                            .fma(FloatVector.fromArray(Simd.F, q, xo + L * j), p);
                }
                acc0 = p.fma(FloatVector.broadcast(Simd.F, WeightData.half(m, blk) * d[dof + b]), acc0);
                blk += BLOCK_BYTES;
                xo += 32;
                p = ((FloatVector) ByteVector.fromMemorySegment(Simd.BL, m, blk + 2, Simd.LE).convertShape(VectorOperators.B2F, Simd.F, 0))
                        .mul(FloatVector.fromArray(Simd.F, q, xo));
                for (int j = 1; j < PER_BLOCK; j++) {
                    p = ((FloatVector) ByteVector.fromMemorySegment(Simd.BL, m, blk + 2 + (j / PARTS) * BL_BYTES, Simd.LE).convertShape(VectorOperators.B2F, Simd.F, PARTS == 1 ? 0 : j % PARTS))
                            .fma(FloatVector.fromArray(Simd.F, q, xo + L * j), p);
                }
                acc1 = p.fma(FloatVector.broadcast(Simd.F, WeightData.half(m, blk) * d[dof + b + 1]), acc1);
            }
            if (b < nb) {
                long blk = row + (long) b * BLOCK_BYTES;
                int xo = qo + 32 * b;
                FloatVector p = ((FloatVector) ByteVector.fromMemorySegment(Simd.BL, m, blk + 2, Simd.LE).convertShape(VectorOperators.B2F, Simd.F, 0))
                        .mul(FloatVector.fromArray(Simd.F, q, xo));
                for (int j = 1; j < PER_BLOCK; j++) {
                    p = ((FloatVector) ByteVector.fromMemorySegment(Simd.BL, m, blk + 2 + (j / PARTS) * BL_BYTES, Simd.LE).convertShape(VectorOperators.B2F, Simd.F, PARTS == 1 ? 0 : j % PARTS))
                            .fma(FloatVector.fromArray(Simd.F, q, xo + L * j), p);
                }
                acc0 = p.fma(FloatVector.broadcast(Simd.F, WeightData.half(m, blk) * d[dof + b]), acc0);
            }
            acc0 = acc0.add(acc1);
            if (Simd.L > 8) acc0 = acc0.add(acc0.rearrange(Simd.SWAP8));
            if (Simd.L > 4) acc0 = acc0.add(acc0.rearrange(Simd.SWAP4));
            acc0 = acc0.add(acc0.rearrange(Simd.SWAP2));
            acc0 = acc0.add(acc0.rearrange(Simd.SWAP1));
            return acc0.lane(0);
        }

        private static void dot4(MemorySegment m, long row, int nb, Activations a, int t, float[] out, int o, int os) {
            float[] q = a.q, d = a.d;
            int cols = a.cols, blocks = a.blocks;
            int q0 = t * cols, q1 = q0 + cols, q2 = q1 + cols, q3 = q2 + cols;
            int d0 = t * blocks, d1 = d0 + blocks, d2 = d1 + blocks, d3 = d2 + blocks;
            FloatVector a0 = FloatVector.zero(Simd.F), a1 = a0, a2 = a0, a3 = a0;
            for (int b = 0; b < nb; b++) {
                long blk = row + (long) b * BLOCK_BYTES;
                int xo = 32 * b;
                // each of the block's vectors is widened once for the four tokens
                FloatVector w = (FloatVector) ByteVector.fromMemorySegment(Simd.BL, m, blk + 2, Simd.LE).convertShape(VectorOperators.B2F, Simd.F, 0);
                FloatVector p0 = w.mul(FloatVector.fromArray(Simd.F, q, q0 + xo));
                FloatVector p1 = w.mul(FloatVector.fromArray(Simd.F, q, q1 + xo));
                FloatVector p2 = w.mul(FloatVector.fromArray(Simd.F, q, q2 + xo));
                FloatVector p3 = w.mul(FloatVector.fromArray(Simd.F, q, q3 + xo));
                for (int j = 1; j < PER_BLOCK; j++) {
                    w = (FloatVector) ByteVector.fromMemorySegment(Simd.BL, m, blk + 2 + (j / PARTS) * BL_BYTES, Simd.LE).convertShape(VectorOperators.B2F, Simd.F, PARTS == 1 ? 0 : j % PARTS);
                    int xj = xo + L * j;
                    p0 = w.fma(FloatVector.fromArray(Simd.F, q, q0 + xj), p0);
                    p1 = w.fma(FloatVector.fromArray(Simd.F, q, q1 + xj), p1);
                    p2 = w.fma(FloatVector.fromArray(Simd.F, q, q2 + xj), p2);
                    p3 = w.fma(FloatVector.fromArray(Simd.F, q, q3 + xj), p3);
                }
                float dw = WeightData.half(m, blk);
                a0 = p0.fma(FloatVector.broadcast(Simd.F, dw * d[d0 + b]), a0);
                a1 = p1.fma(FloatVector.broadcast(Simd.F, dw * d[d1 + b]), a1);
                a2 = p2.fma(FloatVector.broadcast(Simd.F, dw * d[d2 + b]), a2);
                a3 = p3.fma(FloatVector.broadcast(Simd.F, dw * d[d3 + b]), a3);
            }
            if (Simd.L > 8) a0 = a0.add(a0.rearrange(Simd.SWAP8));
            if (Simd.L > 4) a0 = a0.add(a0.rearrange(Simd.SWAP4));
            a0 = a0.add(a0.rearrange(Simd.SWAP2));
            a0 = a0.add(a0.rearrange(Simd.SWAP1));
            out[o] = a0.lane(0);
            if (Simd.L > 8) a1 = a1.add(a1.rearrange(Simd.SWAP8));
            if (Simd.L > 4) a1 = a1.add(a1.rearrange(Simd.SWAP4));
            a1 = a1.add(a1.rearrange(Simd.SWAP2));
            a1 = a1.add(a1.rearrange(Simd.SWAP1));
            out[o + os] = a1.lane(0);
            if (Simd.L > 8) a2 = a2.add(a2.rearrange(Simd.SWAP8));
            if (Simd.L > 4) a2 = a2.add(a2.rearrange(Simd.SWAP4));
            a2 = a2.add(a2.rearrange(Simd.SWAP2));
            a2 = a2.add(a2.rearrange(Simd.SWAP1));
            out[o + 2 * os] = a2.lane(0);
            if (Simd.L > 8) a3 = a3.add(a3.rearrange(Simd.SWAP8));
            if (Simd.L > 4) a3 = a3.add(a3.rearrange(Simd.SWAP4));
            a3 = a3.add(a3.rearrange(Simd.SWAP2));
            a3 = a3.add(a3.rearrange(Simd.SWAP1));
            out[o + 3 * os] = a3.lane(0);
        }
    }
}
