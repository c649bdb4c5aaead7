package io.modelopt.core.kernel;

import java.lang.foreign.MemorySegment;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorOperators;

/**
 * Q4_0 weights × Q8_0 activations ({@code ggml_vec_dot_q4_0_q8_0}): per block the integer
 * {@code sumi = Σ (q-8)·qx}, then {@code sum += sumi · (dw·dx)} in float.
 */
final class Q4_0Kernel {
    private Q4_0Kernel() {}

    static final int BLOCK_BYTES = io.modelopt.core.quant.Q4_0.BLOCK_BYTES;

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
                        int x = qx + b * 32;
                        int sumi = 0;
                        for (int j = 0; j < 16; j++) {
                            int q = WeightData.u8(m, blk + 2 + j);
                            sumi += ((q & 0xF) - 8) * (int) a.q[x + j] + ((q >>> 4) - 8) * (int) a.q[x + j + 16];
                        }
                        sum += sumi * (WeightData.half(m, blk) * a.d[dx + b]);
                    }
                    out[outOff + t * outStride + r] = sum;
                }
            }
        }
    }

    /**
     * Vector API path. Per block: the 16 quant bytes zero-extended to int lanes, {@link #HALF}
     * vectors of them ({@code 16 / L}: one at 512 bits, two at 256, four at 128; {@link Simd#BL}
     * loads, widened in {@link Simd#BL_PARTS} parts); low nibbles (elements 0..15) and high
     * nibbles (16..31) minus 8 made floats with the magic-number trick ({@link Simd#MAGIC_BITS});
     * the lanes of {@code lo·x[0..16) + hi·x[16..32)}, summed over the block's vectors, are exact
     * integers (ggml's per-block {@code sumi}, split over lanes as its AVX2 code splits it), scaled
     * by {@code dw·dx} into a float accumulator with one FMA per block at every width. One token
     * alternates two accumulators; a tile of four tokens decodes each block once. (All vector work
     * stays inside each method: a vector passed to or returned from a call that the JIT does not
     * inline would be boxed.)
     */
    static final class Vectorized implements FormatKernel {
        static final Vectorized INSTANCE = new Vectorized();

        /** Int vectors per 16 quant bytes (one nibble half of a block): 1, 2 or 4. */
        static final int HALF = 16 / Simd.L;
        /** Bytes per {@link Simd#BL} load: 16 at 512 bits, 8 narrower (at 128 widened in two parts). */
        private static final int STEP = Simd.BL.length();

        /** Byte offset, in the block's quants, of the {@link Simd#BL} load holding int vector {@code i}. */
        static int loadAt(int i) {
            return i / Simd.BL_PARTS * STEP;
        }

        /** Each block: nibbles minus 8 times the block scale (same floats as the reference). */
        @Override public void dequantizeRows(WeightMatrix w, int row, int n, float[] dst) {
            MemorySegment m = w.data();
            long base = row * w.rowBytes();
            int blocks = n * (w.cols() / 32);
            for (int b = 0; b < blocks; b++) {
                long blk = base + (long) b * BLOCK_BYTES;
                float dw = WeightData.half(m, blk);
                for (int i = 0; i < HALF; i++) {
                    IntVector v = (IntVector) ByteVector.fromMemorySegment(Simd.BL, m, blk + 2 + loadAt(i), Simd.LE)
                            .convertShape(VectorOperators.ZERO_EXTEND_B2I, Simd.I, i % Simd.BL_PARTS);
                    int c = 32 * b + Simd.L * i;
                    v.and(0xF).or(Simd.MAGIC_BITS).reinterpretAsFloats().sub(Simd.MAGIC + 8).mul(dw).intoArray(dst, c);
                    v.lanewise(VectorOperators.LSHR, 4).or(Simd.MAGIC_BITS).reinterpretAsFloats().sub(Simd.MAGIC + 8).mul(dw).intoArray(dst, c + 16);
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

        /*
         * Each block: its first vector's products start the block sum p, the other HALF - 1 (none at
         * 512 bits) are added to it exactly, then one FMA scales p into the accumulator.
         */

        private static float dot1(MemorySegment m, long row, int nb, Activations a, int t) {
            float[] q = a.q, d = a.d;
            int qo = t * a.cols, dof = t * a.blocks;
            FloatVector acc0 = FloatVector.zero(Simd.F), acc1 = acc0;
            int b = 0;
            for (; b + 2 <= nb; b += 2) {
                long blk = row + (long) b * BLOCK_BYTES;
                int xo = qo + 32 * b;
                IntVector v = (IntVector) ByteVector.fromMemorySegment(Simd.BL, m, blk + 2, Simd.LE).convertShape(VectorOperators.ZERO_EXTEND_B2I, Simd.I, 0);
                FloatVector lo = v.and(0xF).or(Simd.MAGIC_BITS).reinterpretAsFloats().sub(Simd.MAGIC + 8);
                FloatVector hi = v.lanewise(VectorOperators.LSHR, 4).or(Simd.MAGIC_BITS).reinterpretAsFloats().sub(Simd.MAGIC + 8);
                FloatVector p = hi.fma(FloatVector.fromArray(Simd.F, q, xo + 16), lo.mul(FloatVector.fromArray(Simd.F, q, xo)));
                for (int i = 1; i < HALF; i++) {
                    IntVector vi = (IntVector) ByteVector.fromMemorySegment(Simd.BL, m, blk + 2 + loadAt(i), Simd.LE)
                            .convertShape(VectorOperators.ZERO_EXTEND_B2I, Simd.I, i % Simd.BL_PARTS);
                    FloatVector li = vi.and(0xF).or(Simd.MAGIC_BITS).reinterpretAsFloats().sub(Simd.MAGIC + 8);
                    FloatVector hv = vi.lanewise(VectorOperators.LSHR, 4).or(Simd.MAGIC_BITS).reinterpretAsFloats().sub(Simd.MAGIC + 8);
                    int x = xo + Simd.L * i;
                    p = hv.fma(FloatVector.fromArray(Simd.F, q, x + 16), li.fma(FloatVector.fromArray(Simd.F, q, x), p));
                }
                acc0 = p.fma(FloatVector.broadcast(Simd.F, WeightData.half(m, blk) * d[dof + b]), acc0);
                blk += BLOCK_BYTES;
                xo += 32;
                v = (IntVector) ByteVector.fromMemorySegment(Simd.BL, m, blk + 2, Simd.LE).convertShape(VectorOperators.ZERO_EXTEND_B2I, Simd.I, 0);
                lo = v.and(0xF).or(Simd.MAGIC_BITS).reinterpretAsFloats().sub(Simd.MAGIC + 8);
                hi = v.lanewise(VectorOperators.LSHR, 4).or(Simd.MAGIC_BITS).reinterpretAsFloats().sub(Simd.MAGIC + 8);
                p = hi.fma(FloatVector.fromArray(Simd.F, q, xo + 16), lo.mul(FloatVector.fromArray(Simd.F, q, xo)));
                for (int i = 1; i < HALF; i++) {
                    IntVector vi = (IntVector) ByteVector.fromMemorySegment(Simd.BL, m, blk + 2 + loadAt(i), Simd.LE)
                            .convertShape(VectorOperators.ZERO_EXTEND_B2I, Simd.I, i % Simd.BL_PARTS);
                    FloatVector li = vi.and(0xF).or(Simd.MAGIC_BITS).reinterpretAsFloats().sub(Simd.MAGIC + 8);
                    FloatVector hv = vi.lanewise(VectorOperators.LSHR, 4).or(Simd.MAGIC_BITS).reinterpretAsFloats().sub(Simd.MAGIC + 8);
                    int x = xo + Simd.L * i;
                    p = hv.fma(FloatVector.fromArray(Simd.F, q, x + 16), li.fma(FloatVector.fromArray(Simd.F, q, x), p));
                }
                acc1 = p.fma(FloatVector.broadcast(Simd.F, WeightData.half(m, blk) * d[dof + b + 1]), acc1);
            }
            if (b < nb) {
                long blk = row + (long) b * BLOCK_BYTES;
                int xo = qo + 32 * b;
                IntVector v = (IntVector) ByteVector.fromMemorySegment(Simd.BL, m, blk + 2, Simd.LE).convertShape(VectorOperators.ZERO_EXTEND_B2I, Simd.I, 0);
                FloatVector lo = v.and(0xF).or(Simd.MAGIC_BITS).reinterpretAsFloats().sub(Simd.MAGIC + 8);
                FloatVector hi = v.lanewise(VectorOperators.LSHR, 4).or(Simd.MAGIC_BITS).reinterpretAsFloats().sub(Simd.MAGIC + 8);
                FloatVector p = hi.fma(FloatVector.fromArray(Simd.F, q, xo + 16), lo.mul(FloatVector.fromArray(Simd.F, q, xo)));
                for (int i = 1; i < HALF; i++) {
                    IntVector vi = (IntVector) ByteVector.fromMemorySegment(Simd.BL, m, blk + 2 + loadAt(i), Simd.LE)
                            .convertShape(VectorOperators.ZERO_EXTEND_B2I, Simd.I, i % Simd.BL_PARTS);
                    FloatVector li = vi.and(0xF).or(Simd.MAGIC_BITS).reinterpretAsFloats().sub(Simd.MAGIC + 8);
                    FloatVector hv = vi.lanewise(VectorOperators.LSHR, 4).or(Simd.MAGIC_BITS).reinterpretAsFloats().sub(Simd.MAGIC + 8);
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
                IntVector v = (IntVector) ByteVector.fromMemorySegment(Simd.BL, m, blk + 2, Simd.LE).convertShape(VectorOperators.ZERO_EXTEND_B2I, Simd.I, 0);
                FloatVector lo = v.and(0xF).or(Simd.MAGIC_BITS).reinterpretAsFloats().sub(Simd.MAGIC + 8);
                FloatVector hi = v.lanewise(VectorOperators.LSHR, 4).or(Simd.MAGIC_BITS).reinterpretAsFloats().sub(Simd.MAGIC + 8);
                float dw = WeightData.half(m, blk);
                int xo = 32 * b;
                FloatVector p0 = hi.fma(FloatVector.fromArray(Simd.F, q, q0 + xo + 16), lo.mul(FloatVector.fromArray(Simd.F, q, q0 + xo)));
                FloatVector p1 = hi.fma(FloatVector.fromArray(Simd.F, q, q1 + xo + 16), lo.mul(FloatVector.fromArray(Simd.F, q, q1 + xo)));
                FloatVector p2 = hi.fma(FloatVector.fromArray(Simd.F, q, q2 + xo + 16), lo.mul(FloatVector.fromArray(Simd.F, q, q2 + xo)));
                FloatVector p3 = hi.fma(FloatVector.fromArray(Simd.F, q, q3 + xo + 16), lo.mul(FloatVector.fromArray(Simd.F, q, q3 + xo)));
                for (int i = 1; i < HALF; i++) {
                    IntVector vi = (IntVector) ByteVector.fromMemorySegment(Simd.BL, m, blk + 2 + loadAt(i), Simd.LE)
                            .convertShape(VectorOperators.ZERO_EXTEND_B2I, Simd.I, i % Simd.BL_PARTS);
                    FloatVector li = vi.and(0xF).or(Simd.MAGIC_BITS).reinterpretAsFloats().sub(Simd.MAGIC + 8);
                    FloatVector hv = vi.lanewise(VectorOperators.LSHR, 4).or(Simd.MAGIC_BITS).reinterpretAsFloats().sub(Simd.MAGIC + 8);
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
