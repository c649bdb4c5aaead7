package io.modelopt.core.kernel;

import java.lang.foreign.MemorySegment;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorOperators;

/**
 * Q5_0 weights × Q8_0 activations ({@code ggml_vec_dot_q5_0_q8_0}): per block the integer
 * {@code sumi = Σ (q-16)·qx}, then {@code sum += sumi · (dw·dx)} in float.
 */
final class Q5_0Kernel {
    private Q5_0Kernel() {}

    static final int BLOCK_BYTES = io.modelopt.core.quant.Q5_0.BLOCK_BYTES;

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
                        int qh = m.get(WeightData.INT, blk + 2);
                        int x = qx + b * 32;
                        int sumi = 0;
                        for (int j = 0; j < 16; j++) {
                            int q = WeightData.u8(m, blk + 6 + j);
                            int q0 = ((q & 0xF) | (((qh >>> j) << 4) & 0x10)) - 16;
                            int q1 = ((q >>> 4) | ((qh >>> (j + 12)) & 0x10)) - 16;
                            sumi += q0 * (int) a.q[x + j] + q1 * (int) a.q[x + j + 16];
                        }
                        sum += sumi * (WeightData.half(m, blk) * a.d[dx + b]);
                    }
                    out[outOff + t * outStride + r] = sum;
                }
            }
        }
    }

    /**
     * Vector API path. Per block: nibbles as in Q4_0 ({@link Q4_0Kernel.Vectorized}: {@code 16 / L}
     * int vectors per block half) with bit {@code j} of {@code qh} OR-ed in as bit 4 of element
     * {@code j} (a per-lane variable shift), minus 16 as floats; the lanes of
     * {@code lo·x[0..16) + hi·x[16..32)}, summed over the block's vectors, are exact integers
     * (ggml's per-block {@code sumi}, split over lanes as its AVX2 code splits it), scaled by
     * {@code dw·dx} into a float accumulator with one FMA per block. One token alternates two
     * accumulators; a tile of four tokens decodes each block once. (All vector work stays inside
     * each method: a vector passed to or returned from a call that the JIT does not inline would be
     * boxed.)
     */
    static final class Vectorized implements FormatKernel {
        static final Vectorized INSTANCE = new Vectorized();

        /** Int vectors per 16 quant bytes: 1, 2 or 4. */
        private static final int HALF = Q4_0Kernel.Vectorized.HALF;
        /** Lane indices plus 12: lane {@code j} of a block half's first vector shifts {@code qh} right by {@code j + 12} (bit {@code 16 + j} to bit 4). */
        private static final IntVector IOTA_PLUS_12 = Simd.IOTA.add(12);

        @Override public Activations.Kind activations() { return Activations.Kind.Q8_0; }

        @Override public void compute(WeightMatrix w, Activations a, int rowStart, int rowEnd, float[] out, int outOff, int outStride) {
            MemorySegment m = w.data();
            int nb = w.cols() / 32;
            for (int r = rowStart; r < rowEnd; r++) {
                long row = r * w.rowBytes();
                if (r + 1 < rowEnd) Prefetch.touch(m, row + w.rowBytes(), w.rowBytes());
                int t = 0;
                // the four-token tile only at 512 bits: below it the JIT boxed its vectors (MatMulTest's
                // allocation check, 692 B per 4-token call at 256 bits); one token at a time there
                if (TILE4) for (; t + 4 <= a.nTokens; t += 4) dot4(m, row, nb, a, t, out, outOff + t * outStride + r, outStride);
                for (; t < a.nTokens; t++) out[outOff + t * outStride + r] = dot1(m, row, nb, a, t);
            }
        }

        /* Vector i of a block half (elements L·i ..): qh shifted right by L·i first, so the lane shifts are those of vector 0. */

        /** Whether the four-token tile runs (see {@link #compute}). */
        private static final boolean TILE4 = Simd.L == 16;

        private static float dot1(MemorySegment m, long row, int nb, Activations a, int t) {
            float[] q = a.q, d = a.d;
            int qo = t * a.cols, dof = t * a.blocks;
            FloatVector acc0 = FloatVector.zero(Simd.F), acc1 = acc0;
            int b = 0;
            for (; b + 2 <= nb; b += 2) {
                long blk = row + (long) b * BLOCK_BYTES;
                int xo = qo + 32 * b;
                int qh = m.get(WeightData.INT, blk + 2);
                IntVector v = (IntVector) ByteVector.fromMemorySegment(Simd.BL, m, blk + 6, Simd.LE).convertShape(VectorOperators.ZERO_EXTEND_B2I, Simd.I, 0);
                IntVector h0 = IntVector.broadcast(Simd.I, qh << 4).lanewise(VectorOperators.LSHR, Simd.IOTA).and(0x10);
                IntVector h1 = IntVector.broadcast(Simd.I, qh).lanewise(VectorOperators.LSHR, IOTA_PLUS_12).and(0x10);
                FloatVector lo = v.and(0xF).or(h0).or(Simd.MAGIC_BITS).reinterpretAsFloats().sub(Simd.MAGIC + 16);
                FloatVector hi = v.lanewise(VectorOperators.LSHR, 4).or(h1).or(Simd.MAGIC_BITS).reinterpretAsFloats().sub(Simd.MAGIC + 16);
                FloatVector p = hi.fma(FloatVector.fromArray(Simd.F, q, xo + 16), lo.mul(FloatVector.fromArray(Simd.F, q, xo)));
                for (int i = 1; i < HALF; i++) {
                    IntVector vi = (IntVector) ByteVector.fromMemorySegment(Simd.BL, m, blk + 6 + Q4_0Kernel.Vectorized.loadAt(i), Simd.LE)
                            .convertShape(VectorOperators.ZERO_EXTEND_B2I, Simd.I, i % Simd.BL_PARTS);
                    IntVector g0 = IntVector.broadcast(Simd.I, (qh << 4) >>> (Simd.L * i)).lanewise(VectorOperators.LSHR, Simd.IOTA).and(0x10);
                    IntVector g1 = IntVector.broadcast(Simd.I, qh >>> (Simd.L * i)).lanewise(VectorOperators.LSHR, IOTA_PLUS_12).and(0x10);
                    FloatVector li = vi.and(0xF).or(g0).or(Simd.MAGIC_BITS).reinterpretAsFloats().sub(Simd.MAGIC + 16);
                    FloatVector hv = vi.lanewise(VectorOperators.LSHR, 4).or(g1).or(Simd.MAGIC_BITS).reinterpretAsFloats().sub(Simd.MAGIC + 16);
                    int x = xo + Simd.L * i;
                    p = hv.fma(FloatVector.fromArray(Simd.F, q, x + 16), li.fma(FloatVector.fromArray(Simd.F, q, x), p));
                }
                acc0 = p.fma(FloatVector.broadcast(Simd.F, WeightData.half(m, blk) * d[dof + b]), acc0);
                blk += BLOCK_BYTES;
                xo += 32;
                qh = m.get(WeightData.INT, blk + 2);
                v = (IntVector) ByteVector.fromMemorySegment(Simd.BL, m, blk + 6, Simd.LE).convertShape(VectorOperators.ZERO_EXTEND_B2I, Simd.I, 0);
                h0 = IntVector.broadcast(Simd.I, qh << 4).lanewise(VectorOperators.LSHR, Simd.IOTA).and(0x10);
                h1 = IntVector.broadcast(Simd.I, qh).lanewise(VectorOperators.LSHR, IOTA_PLUS_12).and(0x10);
                lo = v.and(0xF).or(h0).or(Simd.MAGIC_BITS).reinterpretAsFloats().sub(Simd.MAGIC + 16);
                hi = v.lanewise(VectorOperators.LSHR, 4).or(h1).or(Simd.MAGIC_BITS).reinterpretAsFloats().sub(Simd.MAGIC + 16);
                p = hi.fma(FloatVector.fromArray(Simd.F, q, xo + 16), lo.mul(FloatVector.fromArray(Simd.F, q, xo)));
                for (int i = 1; i < HALF; i++) {
                    IntVector vi = (IntVector) ByteVector.fromMemorySegment(Simd.BL, m, blk + 6 + Q4_0Kernel.Vectorized.loadAt(i), Simd.LE)
                            .convertShape(VectorOperators.ZERO_EXTEND_B2I, Simd.I, i % Simd.BL_PARTS);
                    IntVector g0 = IntVector.broadcast(Simd.I, (qh << 4) >>> (Simd.L * i)).lanewise(VectorOperators.LSHR, Simd.IOTA).and(0x10);
                    IntVector g1 = IntVector.broadcast(Simd.I, qh >>> (Simd.L * i)).lanewise(VectorOperators.LSHR, IOTA_PLUS_12).and(0x10);
                    FloatVector li = vi.and(0xF).or(g0).or(Simd.MAGIC_BITS).reinterpretAsFloats().sub(Simd.MAGIC + 16);
                    FloatVector hv = vi.lanewise(VectorOperators.LSHR, 4).or(g1).or(Simd.MAGIC_BITS).reinterpretAsFloats().sub(Simd.MAGIC + 16);
                    int x = xo + Simd.L * i;
                    p = hv.fma(FloatVector.fromArray(Simd.F, q, x + 16), li.fma(FloatVector.fromArray(Simd.F, q, x), p));
                }
                acc1 = p.fma(FloatVector.broadcast(Simd.F, WeightData.half(m, blk) * d[dof + b + 1]), acc1);
            }
            if (b < nb) {
                long blk = row + (long) b * BLOCK_BYTES;
                int xo = qo + 32 * b;
                int qh = m.get(WeightData.INT, blk + 2);
                IntVector v = (IntVector) ByteVector.fromMemorySegment(Simd.BL, m, blk + 6, Simd.LE).convertShape(VectorOperators.ZERO_EXTEND_B2I, Simd.I, 0);
                IntVector h0 = IntVector.broadcast(Simd.I, qh << 4).lanewise(VectorOperators.LSHR, Simd.IOTA).and(0x10);
                IntVector h1 = IntVector.broadcast(Simd.I, qh).lanewise(VectorOperators.LSHR, IOTA_PLUS_12).and(0x10);
                FloatVector lo = v.and(0xF).or(h0).or(Simd.MAGIC_BITS).reinterpretAsFloats().sub(Simd.MAGIC + 16);
                FloatVector hi = v.lanewise(VectorOperators.LSHR, 4).or(h1).or(Simd.MAGIC_BITS).reinterpretAsFloats().sub(Simd.MAGIC + 16);
                FloatVector p = hi.fma(FloatVector.fromArray(Simd.F, q, xo + 16), lo.mul(FloatVector.fromArray(Simd.F, q, xo)));
                for (int i = 1; i < HALF; i++) {
                    IntVector vi = (IntVector) ByteVector.fromMemorySegment(Simd.BL, m, blk + 6 + Q4_0Kernel.Vectorized.loadAt(i), Simd.LE)
                            .convertShape(VectorOperators.ZERO_EXTEND_B2I, Simd.I, i % Simd.BL_PARTS);
                    IntVector g0 = IntVector.broadcast(Simd.I, (qh << 4) >>> (Simd.L * i)).lanewise(VectorOperators.LSHR, Simd.IOTA).and(0x10);
                    IntVector g1 = IntVector.broadcast(Simd.I, qh >>> (Simd.L * i)).lanewise(VectorOperators.LSHR, IOTA_PLUS_12).and(0x10);
                    FloatVector li = vi.and(0xF).or(g0).or(Simd.MAGIC_BITS).reinterpretAsFloats().sub(Simd.MAGIC + 16);
                    FloatVector hv = vi.lanewise(VectorOperators.LSHR, 4).or(g1).or(Simd.MAGIC_BITS).reinterpretAsFloats().sub(Simd.MAGIC + 16);
                    int x = xo + Simd.L * i;
                    p = hv.fma(FloatVector.fromArray(Simd.F, q, x + 16), li.fma(FloatVector.fromArray(Simd.F, q, x), p));
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
                int qh = m.get(WeightData.INT, blk + 2);
                IntVector v = (IntVector) ByteVector.fromMemorySegment(Simd.BL, m, blk + 6, Simd.LE).convertShape(VectorOperators.ZERO_EXTEND_B2I, Simd.I, 0);
                IntVector h0 = IntVector.broadcast(Simd.I, qh << 4).lanewise(VectorOperators.LSHR, Simd.IOTA).and(0x10);
                IntVector h1 = IntVector.broadcast(Simd.I, qh).lanewise(VectorOperators.LSHR, IOTA_PLUS_12).and(0x10);
                FloatVector lo = v.and(0xF).or(h0).or(Simd.MAGIC_BITS).reinterpretAsFloats().sub(Simd.MAGIC + 16);
                FloatVector hi = v.lanewise(VectorOperators.LSHR, 4).or(h1).or(Simd.MAGIC_BITS).reinterpretAsFloats().sub(Simd.MAGIC + 16);
                float dw = WeightData.half(m, blk);
                int xo = 32 * b;
                FloatVector p0 = hi.fma(FloatVector.fromArray(Simd.F, q, q0 + xo + 16), lo.mul(FloatVector.fromArray(Simd.F, q, q0 + xo)));
                FloatVector p1 = hi.fma(FloatVector.fromArray(Simd.F, q, q1 + xo + 16), lo.mul(FloatVector.fromArray(Simd.F, q, q1 + xo)));
                FloatVector p2 = hi.fma(FloatVector.fromArray(Simd.F, q, q2 + xo + 16), lo.mul(FloatVector.fromArray(Simd.F, q, q2 + xo)));
                FloatVector p3 = hi.fma(FloatVector.fromArray(Simd.F, q, q3 + xo + 16), lo.mul(FloatVector.fromArray(Simd.F, q, q3 + xo)));
                for (int i = 1; i < HALF; i++) {
                    IntVector vi = (IntVector) ByteVector.fromMemorySegment(Simd.BL, m, blk + 6 + Q4_0Kernel.Vectorized.loadAt(i), Simd.LE)
                            .convertShape(VectorOperators.ZERO_EXTEND_B2I, Simd.I, i % Simd.BL_PARTS);
                    IntVector g0 = IntVector.broadcast(Simd.I, (qh << 4) >>> (Simd.L * i)).lanewise(VectorOperators.LSHR, Simd.IOTA).and(0x10);
                    IntVector g1 = IntVector.broadcast(Simd.I, qh >>> (Simd.L * i)).lanewise(VectorOperators.LSHR, IOTA_PLUS_12).and(0x10);
                    FloatVector li = vi.and(0xF).or(g0).or(Simd.MAGIC_BITS).reinterpretAsFloats().sub(Simd.MAGIC + 16);
                    FloatVector hv = vi.lanewise(VectorOperators.LSHR, 4).or(g1).or(Simd.MAGIC_BITS).reinterpretAsFloats().sub(Simd.MAGIC + 16);
                    int x = xo + Simd.L * i;
                    p0 = hv.fma(FloatVector.fromArray(Simd.F, q, q0 + x + 16), li.fma(FloatVector.fromArray(Simd.F, q, q0 + x), p0));
                    p1 = hv.fma(FloatVector.fromArray(Simd.F, q, q1 + x + 16), li.fma(FloatVector.fromArray(Simd.F, q, q1 + x), p1));
                    p2 = hv.fma(FloatVector.fromArray(Simd.F, q, q2 + x + 16), li.fma(FloatVector.fromArray(Simd.F, q, q2 + x), p2));
                    p3 = hv.fma(FloatVector.fromArray(Simd.F, q, q3 + x + 16), li.fma(FloatVector.fromArray(Simd.F, q, q3 + x), p3));
                }
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
