package io.modelopt.core.kernel;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorOperators;

/**
 * Q8_0 weights repacked at load so that one float lane is one weight row, for the decode-sized
 * matmuls and, through {@link #decodeGroup}, the prefill GEMM's panels (the counterpart of
 * {@link InterleavedQ4_0}).
 *
 * <p><b>Layout.</b> Rows in groups of {@link #ROWS} = 16. A group starts with its scales, the file's
 * halves, 16 per 32-column block {@code b} (row order), followed by one 512-byte record per block:
 * 32 × 16 bytes of quants, column after column (byte {@code 16k + r} is row {@code r}'s quant of
 * column {@code 32b + k}). The kernels widen a group's scales once into a float array
 * ({@link #scales}) and read them from there. Read from the stream at the end of each block, as
 * floats, they made the record a ninth cache line and put a load from the stream into the row
 * accumulators' chain (tiny1b decode 12.1–12.6 t/s then, 16.9–17.0 now: more than the 11% fewer
 * bytes alone would give). Rows after the last whole group are computed in place by {@link Q8_0Kernel}.
 *
 * <p><b>Arithmetic.</b> Per block, four float accumulators collect {@code q_w·q_x} over the
 * columns (every product and partial sum is an integer below 2^24, so exact: ggml's
 * {@code sumi}); their sum is scaled by {@code dw·dx} into the row's accumulator, block after
 * block. One column of 16 rows costs a widening load, a conversion and an FMA with the broadcast
 * activation, and no horizontal sum is left at the end.
 */
final class InterleavedQ8_0 {
    private InterleavedQ8_0() {}

    static final int ROWS = 16;
    /** Row groups per pass of a one-token call ({@link #groupQuad}). */
    static final int DECODE_GROUPS = 4;
    /** Bytes of one block's quants in a group (32 columns × 16 rows). */
    private static final int QUANTS = 512;
    /** Bytes of one block's scales in a group (16 halves). */
    private static final int SCALES = 2 * ROWS;
    /** Bytes per (group, block): {@link #packedBytes} is groups × blocks × RECORD. */
    static final int RECORD = QUANTS + SCALES;

    /** Where group {@code g}'s quants start: after its {@code nb} blocks of scales. */
    private static long quants(long base, int nb) {
        return base + (long) nb * SCALES;
    }

    static long packedBytes(int rows, int cols) {
        return (long) (rows / ROWS) * (cols / 32) * RECORD;
    }

    /** Writes groups {@code [g0, g1)} of {@code w}'s packed copy into {@code dst} ({@link #packedBytes} long in all). */
    static void packGroups(WeightMatrix w, MemorySegment dst, int g0, int g1) {
        int nb = w.cols() / 32;
        MemorySegment src = w.data();
        long rowBytes = w.rowBytes();
        for (int g = g0; g < g1; g++) {
            long base = (long) g * nb * RECORD, q = quants(base, nb);
            for (int b = 0; b < nb; b++) {
                long rec = q + (long) b * QUANTS;
                for (int r = 0; r < ROWS; r++) {
                    long blk = (long) (g * ROWS + r) * rowBytes + (long) b * Q8_0Kernel.BLOCK_BYTES;
                    dst.set(WeightData.SHORT, base + (long) b * SCALES + 2L * r, src.get(WeightData.SHORT, blk));
                    for (int k = 0; k < 32; k++) dst.set(ValueLayout.JAVA_BYTE, rec + 16L * k + r, src.get(ValueLayout.JAVA_BYTE, blk + 2 + k));
                }
            }
        }
    }

    /** Group {@code g}'s scales as floats: row {@code r} of block {@code b} at {@code scales[16b + r]} ({@code nb · 16} of them). */
    static void scales(MemorySegment m, int g, int nb, float[] scales) {
        scales(m, g, nb, scales, 0);
    }

    /** The same, into the {@code slot}-th group's place of a pass: {@code scales[slot·nb·ROWS ..]}. */
    private static void scales(MemorySegment m, int g, int nb, float[] scales, int slot) {
        WeightData.halves(m, (long) g * nb * RECORD, scales, slot * nb * ROWS, nb * ROWS);
    }

    /**
     * Group {@code g} decoded for the prefill GEMM as two 8-row slices ({@link Gemm}): row {@code r},
     * column {@code k} at {@code panel[(r / 8)·8·cols + 8k + r % 8] = q·d} (the reference decoder's floats).
     */
    static void decodeGroup(MemorySegment m, int g, int nb, float[] panel, float[] scales) {
        long q = quants((long) g * nb * RECORD, nb);
        int slice = 8 * 32 * nb; // floats per 8-row slice
        scales(m, g, nb, scales);
        for (int b = 0; b < nb; b++) {
            long rec = q + (long) b * QUANTS;
            // 8-lane halves, one per slice: plain 32-byte stores (two masked 64-byte stores per
            // column, half of them straddling cache lines, took twice as long)
            FloatVector d0 = FloatVector.fromArray(Simd.F8, scales, 16 * b);
            FloatVector d1 = FloatVector.fromArray(Simd.F8, scales, 16 * b + 8);
            for (int k = 0; k < 32; k++) {
                long at = rec + 16L * k;
                FloatVector lo = (FloatVector) ((IntVector) ByteVector.fromMemorySegment(Simd.B8, m, at, Simd.LE).convertShape(VectorOperators.B2I, Simd.I8, 0)).convert(VectorOperators.I2F, 0);
                FloatVector hi = (FloatVector) ((IntVector) ByteVector.fromMemorySegment(Simd.B8, m, at + 8, Simd.LE).convertShape(VectorOperators.B2I, Simd.I8, 0)).convert(VectorOperators.I2F, 0);
                int col = 32 * b + k;
                lo.mul(d0).intoArray(panel, 8 * col);
                hi.mul(d1).intoArray(panel, slice + 8 * col);
            }
        }
    }

    /** Groups {@code [g0, g1)} for every token of {@code a} (Q8_0 activations). */
    static void compute(MemorySegment m, int nb, Activations a, int g0, int g1, float[] out, int outOff, int outStride, float[] scales) {
        int g = g0;
        if (a.nTokens == 1) {
            for (; g + DECODE_GROUPS <= g1; g += DECODE_GROUPS) {
                for (int j = 0; j < DECODE_GROUPS; j++) scales(m, g + j, nb, scales, j);
                groupQuad(m, quants((long) g * nb * RECORD, nb), nb, a, out, outOff + g * ROWS, scales);
            }
        }
        for (; g < g1; g++) {
            long q = quants((long) g * nb * RECORD, nb);
            scales(m, g, nb, scales);
            for (int t = 0; t < a.nTokens; t++) group(m, q, nb, a, t, out, outOff + t * outStride + g * ROWS, scales);
        }
    }

    /**
     * Four adjacent groups ({@code q0} and the three after it) for a one-token call: each
     * activation is loaded, bounds-checked and broadcast once for 64 rows instead of 16, a sixth
     * of {@link #group}'s instructions per line of weights (see its comment for why that decides
     * the speed). JMH 5632×2048 and 2048×5632, one token, two threads, 1 GiB: 18.5–20.7 GB/s with
     * one group per pass, 21.3–22.9 with two, 24.2–25.2 with four. Four columns per iteration:
     * four groups × 16 columns would be as large as the 32-column version C1 rejects. The same
     * products in the same order per row as {@link #group}: the same bits.
     *
     * <p>The row sums go through {@code out} (a load and a store per 16 rows per block), not
     * through vectors carried around the block loop: with them there, about one small125m
     * {@code bench} run in two or three compiled this method with the sums boxed (JFR: every
     * allocation at the block end's FMA; 5–10 MB per decoded token), as the Q4_0 kernel did
     * before ({@link InterleavedQ4_0}).
     */
    private static void groupQuad(MemorySegment m, long q0, int nb, Activations a, float[] out, int o, float[] scales) {
        float[] x = a.q, d = a.d;
        long stride = (long) nb * RECORD; // from one group's quants to the next's
        // the row sums go through out, not through vectors carried around the block loop (see the method comment)
        java.util.Arrays.fill(out, o, o + 4 * ROWS, 0f);
        for (int b = 0; b < nb; b++) {
            long r0 = q0 + (long) b * QUANTS;
            int xo = 32 * b;
            FloatVector a0 = FloatVector.zero(Simd.F), a1 = a0, a2 = a0, a3 = a0, b0 = a0, b1 = a0, b2 = a0, b3 = a0, c0 = a0, c1 = a0, c2 = a0, c3 = a0, e0 = a0, e1 = a0, e2 = a0, e3 = a0;
            for (int k = 0; k < 32; k += 4) {
                long at = r0 + 16L * k;
                int xk = xo + k;
                FloatVector w, xb;
                xb = FloatVector.broadcast(Simd.F, x[xk]);
                w = (FloatVector) ((IntVector) ByteVector.fromMemorySegment(Simd.B16, m, at, Simd.LE).convertShape(VectorOperators.B2I, Simd.I, 0)).convert(VectorOperators.I2F, 0);
                a0 = w.fma(xb, a0);
                w = (FloatVector) ((IntVector) ByteVector.fromMemorySegment(Simd.B16, m, at + stride, Simd.LE).convertShape(VectorOperators.B2I, Simd.I, 0)).convert(VectorOperators.I2F, 0);
                b0 = w.fma(xb, b0);
                w = (FloatVector) ((IntVector) ByteVector.fromMemorySegment(Simd.B16, m, at + 2 * stride, Simd.LE).convertShape(VectorOperators.B2I, Simd.I, 0)).convert(VectorOperators.I2F, 0);
                c0 = w.fma(xb, c0);
                w = (FloatVector) ((IntVector) ByteVector.fromMemorySegment(Simd.B16, m, at + 3 * stride, Simd.LE).convertShape(VectorOperators.B2I, Simd.I, 0)).convert(VectorOperators.I2F, 0);
                e0 = w.fma(xb, e0);
                xb = FloatVector.broadcast(Simd.F, x[xk + 1]);
                w = (FloatVector) ((IntVector) ByteVector.fromMemorySegment(Simd.B16, m, at + 16, Simd.LE).convertShape(VectorOperators.B2I, Simd.I, 0)).convert(VectorOperators.I2F, 0);
                a1 = w.fma(xb, a1);
                w = (FloatVector) ((IntVector) ByteVector.fromMemorySegment(Simd.B16, m, at + stride + 16, Simd.LE).convertShape(VectorOperators.B2I, Simd.I, 0)).convert(VectorOperators.I2F, 0);
                b1 = w.fma(xb, b1);
                w = (FloatVector) ((IntVector) ByteVector.fromMemorySegment(Simd.B16, m, at + 2 * stride + 16, Simd.LE).convertShape(VectorOperators.B2I, Simd.I, 0)).convert(VectorOperators.I2F, 0);
                c1 = w.fma(xb, c1);
                w = (FloatVector) ((IntVector) ByteVector.fromMemorySegment(Simd.B16, m, at + 3 * stride + 16, Simd.LE).convertShape(VectorOperators.B2I, Simd.I, 0)).convert(VectorOperators.I2F, 0);
                e1 = w.fma(xb, e1);
                xb = FloatVector.broadcast(Simd.F, x[xk + 2]);
                w = (FloatVector) ((IntVector) ByteVector.fromMemorySegment(Simd.B16, m, at + 32, Simd.LE).convertShape(VectorOperators.B2I, Simd.I, 0)).convert(VectorOperators.I2F, 0);
                a2 = w.fma(xb, a2);
                w = (FloatVector) ((IntVector) ByteVector.fromMemorySegment(Simd.B16, m, at + stride + 32, Simd.LE).convertShape(VectorOperators.B2I, Simd.I, 0)).convert(VectorOperators.I2F, 0);
                b2 = w.fma(xb, b2);
                w = (FloatVector) ((IntVector) ByteVector.fromMemorySegment(Simd.B16, m, at + 2 * stride + 32, Simd.LE).convertShape(VectorOperators.B2I, Simd.I, 0)).convert(VectorOperators.I2F, 0);
                c2 = w.fma(xb, c2);
                w = (FloatVector) ((IntVector) ByteVector.fromMemorySegment(Simd.B16, m, at + 3 * stride + 32, Simd.LE).convertShape(VectorOperators.B2I, Simd.I, 0)).convert(VectorOperators.I2F, 0);
                e2 = w.fma(xb, e2);
                xb = FloatVector.broadcast(Simd.F, x[xk + 3]);
                w = (FloatVector) ((IntVector) ByteVector.fromMemorySegment(Simd.B16, m, at + 48, Simd.LE).convertShape(VectorOperators.B2I, Simd.I, 0)).convert(VectorOperators.I2F, 0);
                a3 = w.fma(xb, a3);
                w = (FloatVector) ((IntVector) ByteVector.fromMemorySegment(Simd.B16, m, at + stride + 48, Simd.LE).convertShape(VectorOperators.B2I, Simd.I, 0)).convert(VectorOperators.I2F, 0);
                b3 = w.fma(xb, b3);
                w = (FloatVector) ((IntVector) ByteVector.fromMemorySegment(Simd.B16, m, at + 2 * stride + 48, Simd.LE).convertShape(VectorOperators.B2I, Simd.I, 0)).convert(VectorOperators.I2F, 0);
                c3 = w.fma(xb, c3);
                w = (FloatVector) ((IntVector) ByteVector.fromMemorySegment(Simd.B16, m, at + 3 * stride + 48, Simd.LE).convertShape(VectorOperators.B2I, Simd.I, 0)).convert(VectorOperators.I2F, 0);
                e3 = w.fma(xb, e3);
            }
            FloatVector dx = FloatVector.broadcast(Simd.F, d[b]);
            a0.add(a1).add(a2.add(a3)).fma(FloatVector.fromArray(Simd.F, scales, 16 * b).mul(dx), FloatVector.fromArray(Simd.F, out, o)).intoArray(out, o);
            b0.add(b1).add(b2.add(b3)).fma(FloatVector.fromArray(Simd.F, scales, 16 * (nb + b)).mul(dx), FloatVector.fromArray(Simd.F, out, o + ROWS))
                    .intoArray(out, o + ROWS);
            c0.add(c1).add(c2.add(c3)).fma(FloatVector.fromArray(Simd.F, scales, 16 * (2 * nb + b)).mul(dx), FloatVector.fromArray(Simd.F, out, o + 2 * ROWS))
                    .intoArray(out, o + 2 * ROWS);
            e0.add(e1).add(e2.add(e3)).fma(FloatVector.fromArray(Simd.F, scales, 16 * (3 * nb + b)).mul(dx), FloatVector.fromArray(Simd.F, out, o + 3 * ROWS))
                    .intoArray(out, o + 3 * ROWS);
        }
    }

    private static void group(MemorySegment m, long base, int nb, Activations a, int t, float[] out, int o, float[] scales) {
        float[] x = a.q, d = a.d;
        int xt = t * a.cols, dt = t * a.blocks;
        java.util.Arrays.fill(out, o, o + ROWS, 0f); // the row sums go through out (see groupQuad)
        for (int b = 0; b < nb; b++) {
            long rec = base + (long) b * QUANTS;
            int xo = xt + 32 * b;
            FloatVector p0 = FloatVector.zero(Simd.F), p1 = p0, p2 = p0, p3 = p0;
            // 16 columns (four cache lines) written out per iteration: the JIT then unrolls the
            // block's two iterations into straight code with constant offsets, where a loop of 4
            // columns spent ~20 of its ~33 instructions per line on indices, counters and moving
            // the broadcast activations. On this VM every instruction per streamed line costs
            // bandwidth (docs/PERFORMANCE.md, "Closing session"): +30% from memory. Same products,
            // same order. (All 32 columns written out is too large for C1, which then leaves the
            // method in tier 2 with boxed vectors.)
            for (int k = 0; k < 32; k += 16) {
                long at = rec + 16L * k;
                int xk = xo + k;
                FloatVector w;
                w = (FloatVector) ((IntVector) ByteVector.fromMemorySegment(Simd.B16, m, at, Simd.LE).convertShape(VectorOperators.B2I, Simd.I, 0)).convert(VectorOperators.I2F, 0);
                p0 = w.fma(FloatVector.broadcast(Simd.F, x[xk]), p0);
                w = (FloatVector) ((IntVector) ByteVector.fromMemorySegment(Simd.B16, m, at + 16, Simd.LE).convertShape(VectorOperators.B2I, Simd.I, 0)).convert(VectorOperators.I2F, 0);
                p1 = w.fma(FloatVector.broadcast(Simd.F, x[xk + 1]), p1);
                w = (FloatVector) ((IntVector) ByteVector.fromMemorySegment(Simd.B16, m, at + 32, Simd.LE).convertShape(VectorOperators.B2I, Simd.I, 0)).convert(VectorOperators.I2F, 0);
                p2 = w.fma(FloatVector.broadcast(Simd.F, x[xk + 2]), p2);
                w = (FloatVector) ((IntVector) ByteVector.fromMemorySegment(Simd.B16, m, at + 48, Simd.LE).convertShape(VectorOperators.B2I, Simd.I, 0)).convert(VectorOperators.I2F, 0);
                p3 = w.fma(FloatVector.broadcast(Simd.F, x[xk + 3]), p3);
                w = (FloatVector) ((IntVector) ByteVector.fromMemorySegment(Simd.B16, m, at + 64, Simd.LE).convertShape(VectorOperators.B2I, Simd.I, 0)).convert(VectorOperators.I2F, 0);
                p0 = w.fma(FloatVector.broadcast(Simd.F, x[xk + 4]), p0);
                w = (FloatVector) ((IntVector) ByteVector.fromMemorySegment(Simd.B16, m, at + 80, Simd.LE).convertShape(VectorOperators.B2I, Simd.I, 0)).convert(VectorOperators.I2F, 0);
                p1 = w.fma(FloatVector.broadcast(Simd.F, x[xk + 5]), p1);
                w = (FloatVector) ((IntVector) ByteVector.fromMemorySegment(Simd.B16, m, at + 96, Simd.LE).convertShape(VectorOperators.B2I, Simd.I, 0)).convert(VectorOperators.I2F, 0);
                p2 = w.fma(FloatVector.broadcast(Simd.F, x[xk + 6]), p2);
                w = (FloatVector) ((IntVector) ByteVector.fromMemorySegment(Simd.B16, m, at + 112, Simd.LE).convertShape(VectorOperators.B2I, Simd.I, 0)).convert(VectorOperators.I2F, 0);
                p3 = w.fma(FloatVector.broadcast(Simd.F, x[xk + 7]), p3);
                w = (FloatVector) ((IntVector) ByteVector.fromMemorySegment(Simd.B16, m, at + 128, Simd.LE).convertShape(VectorOperators.B2I, Simd.I, 0)).convert(VectorOperators.I2F, 0);
                p0 = w.fma(FloatVector.broadcast(Simd.F, x[xk + 8]), p0);
                w = (FloatVector) ((IntVector) ByteVector.fromMemorySegment(Simd.B16, m, at + 144, Simd.LE).convertShape(VectorOperators.B2I, Simd.I, 0)).convert(VectorOperators.I2F, 0);
                p1 = w.fma(FloatVector.broadcast(Simd.F, x[xk + 9]), p1);
                w = (FloatVector) ((IntVector) ByteVector.fromMemorySegment(Simd.B16, m, at + 160, Simd.LE).convertShape(VectorOperators.B2I, Simd.I, 0)).convert(VectorOperators.I2F, 0);
                p2 = w.fma(FloatVector.broadcast(Simd.F, x[xk + 10]), p2);
                w = (FloatVector) ((IntVector) ByteVector.fromMemorySegment(Simd.B16, m, at + 176, Simd.LE).convertShape(VectorOperators.B2I, Simd.I, 0)).convert(VectorOperators.I2F, 0);
                p3 = w.fma(FloatVector.broadcast(Simd.F, x[xk + 11]), p3);
                w = (FloatVector) ((IntVector) ByteVector.fromMemorySegment(Simd.B16, m, at + 192, Simd.LE).convertShape(VectorOperators.B2I, Simd.I, 0)).convert(VectorOperators.I2F, 0);
                p0 = w.fma(FloatVector.broadcast(Simd.F, x[xk + 12]), p0);
                w = (FloatVector) ((IntVector) ByteVector.fromMemorySegment(Simd.B16, m, at + 208, Simd.LE).convertShape(VectorOperators.B2I, Simd.I, 0)).convert(VectorOperators.I2F, 0);
                p1 = w.fma(FloatVector.broadcast(Simd.F, x[xk + 13]), p1);
                w = (FloatVector) ((IntVector) ByteVector.fromMemorySegment(Simd.B16, m, at + 224, Simd.LE).convertShape(VectorOperators.B2I, Simd.I, 0)).convert(VectorOperators.I2F, 0);
                p2 = w.fma(FloatVector.broadcast(Simd.F, x[xk + 14]), p2);
                w = (FloatVector) ((IntVector) ByteVector.fromMemorySegment(Simd.B16, m, at + 240, Simd.LE).convertShape(VectorOperators.B2I, Simd.I, 0)).convert(VectorOperators.I2F, 0);
                p3 = w.fma(FloatVector.broadcast(Simd.F, x[xk + 15]), p3);
            }
            FloatVector sumi = p0.add(p1).add(p2.add(p3));
            sumi.fma(FloatVector.fromArray(Simd.F, scales, 16 * b).mul(d[dt + b]), FloatVector.fromArray(Simd.F, out, o)).intoArray(out, o);
        }
    }
}
