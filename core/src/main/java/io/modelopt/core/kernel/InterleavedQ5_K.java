package io.modelopt.core.kernel;

import io.modelopt.core.quant.Q5_K;
import java.lang.foreign.MemorySegment;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorOperators;

/**
 * Q5_K weights repacked at load as {@link InterleavedQ4_K} repacks Q4_K (one row per 32-bit
 * lane, the 16-bit nibble products with {@link Activations#q4kMultipliers}), plus one line of
 * fifth bits per sub-block: {@code q = lo + 16·hi}, {@code Σ q·x = Σ lo·x + 16·Σ hi·x}, both
 * sums as nibble products.
 *
 * <p><b>Layout.</b> Groups of {@link #ROWS} = 2L rows, one {@link #record} per (group,
 * super-block) of {@code 184·2L} bytes: bytes {@code [0, 304L)} exactly as {@link InterleavedQ4_K}'s
 * record (scales, mins, {@code d}, {@code dmin}, the low nibbles), then
 * {@code [304L, 368L)}: per sub-block {@code j} (32 elements) two lines of {@code L} ints, line
 * {@code 2j + h} lane {@code i} (row {@code hL + i}) holding the fifth bit of element
 * {@code 32j + 8m + k} in bit {@code 4k + m} ({@code m} = 0..3, {@code k} = 0..7), so that
 * {@code (w >>> m) & 0x11111111} is the nibble lane of elements {@code 32j+8m .. 32j+8m+7}.
 * Rows past the last whole group are not repacked ({@link Q5_KKernel} computes them in place).
 *
 * <p><b>Arithmetic.</b> The low nibbles' accumulator as {@link InterleavedQ4_K}'s
 * ({@code Σ(lo-8)·x - 256}, exact as a short); the fifth bits' from zero, {@code Σ hi·x} in
 * {@code [-4064, 4064]}. {@code Σ q·x} = the first, plus {@code 8·Σx + 256}, plus 16 times the
 * second, in int lanes; then scales, mins and {@code d}, {@code dmin} as for Q4_K (ggml's
 * integers, float rounding only at the super-block's end).
 */
final class InterleavedQ5_K {
    private InterleavedQ5_K() {}

    /** Rows per group: twice the float lanes (0 without vector kernels). */
    static final int ROWS = VectorWidth.BITS / 16;
    /** Bytes per (group, super-block) record: {@code ROWS · 184}. */
    static final int RECORD = ROWS * 184;

    private static final int SCALES = 0, MINS = 8 * ROWS, D = 16 * ROWS, DMIN = D + 4 * ROWS, QUANTS = DMIN + 4 * ROWS, HIGHS = QUANTS + 128 * ROWS;
    private static final int HI_MASK = 0x11111111;

    /** Groups per pass of a one-token call ({@link #groupQuad}), as {@link InterleavedQ4_K#DECODE_GROUPS}. */
    static final int DECODE_GROUPS = InterleavedQ4_K.DECODE_GROUPS;

    /** Whether a {@code rows × cols} Q5_K matrix has a whole group to repack (vector kernels only). */
    static boolean canRepack(int rows, int cols) {
        return KQuantGroups.canRepack(ROWS, rows, cols);
    }

    /** Bytes of the copy: whole groups only. */
    static long packedBytes(int rows, int cols) {
        return KQuantGroups.packedBytes(ROWS, RECORD, rows, cols);
    }

    /** Rows of the copy (whole groups). */
    static int packedRows(int rows) {
        return KQuantGroups.packedRows(ROWS, rows);
    }

    /** Where group {@code g}'s record of super-block {@code b} starts. */
    static long record(int g, int nb, int b) {
        return ((long) g * nb + b) * RECORD;
    }

    /** Writes groups {@code [g0, g1)} of {@code w}'s copy into {@code dst} ({@link #packedBytes} long in all). */
    static void pack(WeightMatrix w, MemorySegment dst, int g0, int g1) {
        MemorySegment src = w.data();
        int nb = w.cols() / Q5_K.BLOCK_ELEMENTS;
        long rowBytes = w.rowBytes();
        int half = ROWS / 2;
        for (int g = g0; g < g1; g++) {
            for (int b = 0; b < nb; b++) {
                long rec = record(g, nb, b);
                for (int r = 0; r < ROWS; r++) {
                    long blk = (long) (g * ROWS + r) * rowBytes + (long) b * Q5_K.BLOCK_BYTES;
                    dst.set(WeightData.FLOAT, rec + D + 4L * r, WeightData.half(src, blk + Q5_K.D));
                    dst.set(WeightData.FLOAT, rec + DMIN + 4L * r, WeightData.half(src, blk + Q5_K.DMIN));
                    int h = r / half, i = r % half;
                    for (int j = 0; j < 8; j++) {
                        int sm = Q5_K.scaleMin(src, blk, j);
                        dst.set(java.lang.foreign.ValueLayout.JAVA_BYTE, rec + SCALES + (long) ROWS * j + r, (byte) (sm & 0xFF));
                        dst.set(java.lang.foreign.ValueLayout.JAVA_BYTE, rec + MINS + (long) ROWS * j + r, (byte) (sm >>> 8));
                        long qs = blk + Q5_K.QS + (j / 2) * 32L;
                        int shift = (j & 1) * 4;
                        int hi = 0;
                        for (int s = 0; s < 4; s++) {
                            int lane = 0;
                            for (int k = 0; k < 8; k++) {
                                lane |= ((WeightData.u8(src, qs + 8 * s + k) >>> shift) & 0xF) << (4 * k);
                                hi |= ((WeightData.u8(src, blk + Q5_K.QH + 8 * s + k) >>> j) & 1) << (4 * k + s);
                            }
                            long line = rec + QUANTS + (long) (8 * j + 2 * s + h) * 2 * ROWS;
                            dst.set(WeightData.INT, line + 4L * i, lane);
                        }
                        dst.set(WeightData.INT, rec + HIGHS + (long) (2 * j + h) * 2 * ROWS + 4L * i, hi);
                    }
                }
            }
        }
    }

    /**
     * Groups {@code [g0, g1)} of the copy {@code m} for every token of {@code a} (Q8_K), with
     * {@code y} the tokens' {@link InterleavedQ4_K#multipliers} ({@code cols / 2} ints per token, token {@code t}
     * at {@code t · cols / 2}): {@code out[outOff + t·outStride + r]} for the groups' rows.
     */
    static void compute(MemorySegment m, int nb, Activations a, int[] y, int g0, int g1, float[] out, int outOff, int outStride) {
        int g = g0;
        if (a.nTokens == 1) {
            int[] scratch = InterleavedQ4_K.SCRATCH.get(); // per thread: the pool's workers share the call's Activations
            for (; g + DECODE_GROUPS <= g1; g += DECODE_GROUPS) groupQuad(m, record(g, nb, 0), nb, a, y, out, outOff + g * ROWS, scratch);
        }
        for (; g < g1; g++) {
            // the first token reads the group from memory, the others from cache
            for (int t = 0; t < a.nTokens; t++) group(m, record(g, nb, 0), nb, a, y, t, out, outOff + t * outStride + g * ROWS);
        }
    }

    /**
     * One group for token {@code t}. The float sums go through {@code out} rather than vector
     * variables carried around the super-block loop (see {@link InterleavedQ4_0}'s groupQuad:
     * such a phi can make the JIT box every vector of the method).
     */
    private static void group(MemorySegment m, long base, int nb, Activations a, int[] y, int t, float[] out, int o) {
        float[] d = a.d;
        int[] bs = a.bsums;
        int yt = t * a.cols / 2, dt = t * a.blocks, bt = t * (a.cols / 16);
        int lineBytes = 4 * Simd.L;
        // the byte loads of scales and mins: one BL load per half (two halves per load at 128 bits)
        int bl = Simd.BL.length();
        java.util.Arrays.fill(out, o, o + 2 * Simd.L, 0f);
        for (int b = 0; b < nb; b++) {
            long rec = base + (long) b * RECORD;
            IntVector si0 = IntVector.zero(Simd.I), si1 = si0, sm0 = si0, sm1 = si0;
            for (int j = 0; j < 8; j++) {
                int bsj = bs[bt + 16 * b + 2 * j] + bs[bt + 16 * b + 2 * j + 1];
                ShortVector a0 = IntVector.broadcast(Simd.I, (-8 * bsj - 256) & 0xFFFF).reinterpretAsShorts(), a1 = a0;
                ShortVector e0 = ShortVector.zero(Simd.S), e1 = e0;
                long lines = rec + QUANTS + 8L * j * lineBytes, highs = rec + HIGHS + 2L * j * lineBytes;
                IntVector w0 = IntVector.fromMemorySegment(Simd.I, m, highs, Simd.LE);
                IntVector w1 = IntVector.fromMemorySegment(Simd.I, m, highs + lineBytes, Simd.LE);
                int c = yt + 128 * b + 16 * j;
                for (int s = 0; s < 4; s++) {
                    IntVector v0 = IntVector.fromMemorySegment(Simd.I, m, lines + 2L * s * lineBytes, Simd.LE);
                    IntVector v1 = IntVector.fromMemorySegment(Simd.I, m, lines + (2L * s + 1) * lineBytes, Simd.LE);
                    // the fifth bits of elements 32j+8s .. 32j+8s+7 as a nibble lane (a shift by s: no vector phi)
                    IntVector x0 = w0.lanewise(VectorOperators.LSHR, s).and(HI_MASK);
                    IntVector x1 = w1.lanewise(VectorOperators.LSHR, s).and(HI_MASK);
                    int cs = c + 4 * s;
                    ShortVector y0 = IntVector.broadcast(Simd.I, y[cs]).reinterpretAsShorts();
                    a0 = a0.add(v0.reinterpretAsShorts().mul(y0));
                    a1 = a1.add(v1.reinterpretAsShorts().mul(y0));
                    e0 = e0.add(x0.reinterpretAsShorts().mul(y0));
                    e1 = e1.add(x1.reinterpretAsShorts().mul(y0));
                    ShortVector y1 = IntVector.broadcast(Simd.I, y[cs + 1]).reinterpretAsShorts();
                    a0 = a0.add(v0.lanewise(VectorOperators.LSHR, 4).reinterpretAsShorts().mul(y1));
                    a1 = a1.add(v1.lanewise(VectorOperators.LSHR, 4).reinterpretAsShorts().mul(y1));
                    e0 = e0.add(x0.lanewise(VectorOperators.LSHR, 4).reinterpretAsShorts().mul(y1));
                    e1 = e1.add(x1.lanewise(VectorOperators.LSHR, 4).reinterpretAsShorts().mul(y1));
                    ShortVector y2 = IntVector.broadcast(Simd.I, y[cs + 2]).reinterpretAsShorts();
                    a0 = a0.add(v0.lanewise(VectorOperators.LSHR, 8).reinterpretAsShorts().mul(y2));
                    a1 = a1.add(v1.lanewise(VectorOperators.LSHR, 8).reinterpretAsShorts().mul(y2));
                    e0 = e0.add(x0.lanewise(VectorOperators.LSHR, 8).reinterpretAsShorts().mul(y2));
                    e1 = e1.add(x1.lanewise(VectorOperators.LSHR, 8).reinterpretAsShorts().mul(y2));
                    ShortVector y3 = IntVector.broadcast(Simd.I, y[cs + 3]).reinterpretAsShorts();
                    a0 = a0.add(v0.lanewise(VectorOperators.LSHR, 12).reinterpretAsShorts().mul(y3));
                    a1 = a1.add(v1.lanewise(VectorOperators.LSHR, 12).reinterpretAsShorts().mul(y3));
                    e0 = e0.add(x0.lanewise(VectorOperators.LSHR, 12).reinterpretAsShorts().mul(y3));
                    e1 = e1.add(x1.lanewise(VectorOperators.LSHR, 12).reinterpretAsShorts().mul(y3));
                }
                int back = 8 * bsj + 256;
                long sc = rec + SCALES + (long) ROWS * j, mn = rec + MINS + (long) ROWS * j;
                IntVector u0 = a0.reinterpretAsInts(), u1 = a1.reinterpretAsInts();
                IntVector f0 = e0.reinterpretAsInts(), f1 = e1.reinterpretAsInts();
                f0 = f0.add(f0.lanewise(VectorOperators.LSHL, 16)).lanewise(VectorOperators.ASHR, 16);
                f1 = f1.add(f1.lanewise(VectorOperators.LSHL, 16)).lanewise(VectorOperators.ASHR, 16);
                u0 = u0.add(u0.lanewise(VectorOperators.LSHL, 16)).lanewise(VectorOperators.ASHR, 16).add(back).add(f0.lanewise(VectorOperators.LSHL, 4));
                u1 = u1.add(u1.lanewise(VectorOperators.LSHL, 16)).lanewise(VectorOperators.ASHR, 16).add(back).add(f1.lanewise(VectorOperators.LSHL, 4));
                IntVector sc0 = (IntVector) ByteVector.fromMemorySegment(Simd.BL, m, sc, Simd.LE).convertShape(VectorOperators.ZERO_EXTEND_B2I, Simd.I, 0);
                IntVector sc1 = (IntVector) ByteVector.fromMemorySegment(Simd.BL, m, sc + (Simd.BL_PARTS == 1 ? bl : 0), Simd.LE)
                        .convertShape(VectorOperators.ZERO_EXTEND_B2I, Simd.I, Simd.BL_PARTS == 1 ? 0 : 1);
                si0 = u0.mul(sc0).add(si0);
                si1 = u1.mul(sc1).add(si1);
                IntVector mn0 = (IntVector) ByteVector.fromMemorySegment(Simd.BL, m, mn, Simd.LE).convertShape(VectorOperators.ZERO_EXTEND_B2I, Simd.I, 0);
                IntVector mn1 = (IntVector) ByteVector.fromMemorySegment(Simd.BL, m, mn + (Simd.BL_PARTS == 1 ? bl : 0), Simd.LE)
                        .convertShape(VectorOperators.ZERO_EXTEND_B2I, Simd.I, Simd.BL_PARTS == 1 ? 0 : 1);
                sm0 = mn0.mul(bsj).add(sm0);
                sm1 = mn1.mul(bsj).add(sm1);
            }
            float dx = d[dt + b];
            FloatVector dw0 = FloatVector.fromMemorySegment(Simd.F, m, rec + D, Simd.LE).mul(dx);
            FloatVector dw1 = FloatVector.fromMemorySegment(Simd.F, m, rec + D + lineBytes, Simd.LE).mul(dx);
            FloatVector dm0 = FloatVector.fromMemorySegment(Simd.F, m, rec + DMIN, Simd.LE).mul(-dx);
            FloatVector dm1 = FloatVector.fromMemorySegment(Simd.F, m, rec + DMIN + lineBytes, Simd.LE).mul(-dx);
            ((FloatVector) sm0.convert(VectorOperators.I2F, 0)).fma(dm0, ((FloatVector) si0.convert(VectorOperators.I2F, 0)).fma(dw0, FloatVector.fromArray(Simd.F, out, o)))
                    .intoArray(out, o);
            ((FloatVector) sm1.convert(VectorOperators.I2F, 0)).fma(dm1, ((FloatVector) si1.convert(VectorOperators.I2F, 0)).fma(dw1, FloatVector.fromArray(Simd.F, out, o + Simd.L)))
                    .intoArray(out, o + Simd.L);
        }
    }

    /**
     * {@link #DECODE_GROUPS} adjacent groups from {@code base} for a one-token call, as
     * {@link InterleavedQ4_K#groupQuad} (eight streams, eight accumulators of {@code L} rows), whose
     * low-nibble loop, sub-block end and super-block end it shares (the record starts as Q4_K's);
     * the fifth bits' sums come from {@link #fifthBits}. The bits of one-group calls.
     */
    private static void groupQuad(MemorySegment m, long base, int nb, Activations a, int[] y, float[] out, int o, int[] scratch) {
        float[] d = a.d;
        int[] bs = a.bsums;
        long stride = (long) nb * RECORD; // from one group to the next
        long lb = 4L * Simd.L;
        java.util.Arrays.fill(out, o, o + DECODE_GROUPS * ROWS, 0f);
        java.util.Arrays.fill(scratch, InterleavedQ4_K.SUMI * Simd.L, InterleavedQ4_K.SCRATCH_VECTORS * Simd.L, 0);
        for (int b = 0; b < nb; b++) {
            long rec = base + (long) b * RECORD;
            for (int j = 0; j < 8; j++) {
                int bsj = bs[16 * b + 2 * j] + bs[16 * b + 2 * j + 1];
                int c = 128 * b + 16 * j;
                InterleavedQ4_K.lowNibbles(m, rec + QUANTS + 8L * j * lb, stride, y, c, -8 * bsj - 256, 4, scratch);
                fifthBits(m, rec + HIGHS + 2L * j * lb, stride, y, c, scratch);
                InterleavedQ4_K.finishSubBlock(m, rec, stride, j, bsj, true, scratch);
            }
            InterleavedQ4_K.finishSuperBlock(m, rec, stride, d[b], scratch, out, o);
        }
    }

    /** A sub-block's {@code Σ hi·x} (lines {@code 2j + h} from {@code highs}) of the pass's eight accumulators, from zero, into {@code scratch[8L, 16L)}. */
    private static void fifthBits(MemorySegment m, long highs, long stride, int[] y, int c, int[] scratch) {
        long lb = 4L * Simd.L;
        long k1 = lb, k2 = stride, k3 = stride + lb, k4 = 2 * stride, k5 = 2 * stride + lb, k6 = 3 * stride, k7 = 3 * stride + lb;
        IntVector w0 = IntVector.fromMemorySegment(Simd.I, m, highs, Simd.LE);
        IntVector w1 = IntVector.fromMemorySegment(Simd.I, m, highs + k1, Simd.LE);
        IntVector w2 = IntVector.fromMemorySegment(Simd.I, m, highs + k2, Simd.LE);
        IntVector w3 = IntVector.fromMemorySegment(Simd.I, m, highs + k3, Simd.LE);
        IntVector w4 = IntVector.fromMemorySegment(Simd.I, m, highs + k4, Simd.LE);
        IntVector w5 = IntVector.fromMemorySegment(Simd.I, m, highs + k5, Simd.LE);
        IntVector w6 = IntVector.fromMemorySegment(Simd.I, m, highs + k6, Simd.LE);
        IntVector w7 = IntVector.fromMemorySegment(Simd.I, m, highs + k7, Simd.LE);
        ShortVector e0 = ShortVector.zero(Simd.S), e1 = e0, e2 = e0, e3 = e0, e4 = e0, e5 = e0, e6 = e0, e7 = e0;
        for (int s = 0; s < 4; s++) {
            // the fifth bits of elements 32j+8s .. 32j+8s+7 as a nibble lane (a shift by s: no vector phi)
            IntVector x0 = w0.lanewise(VectorOperators.LSHR, s).and(HI_MASK);
            IntVector x1 = w1.lanewise(VectorOperators.LSHR, s).and(HI_MASK);
            IntVector x2 = w2.lanewise(VectorOperators.LSHR, s).and(HI_MASK);
            IntVector x3 = w3.lanewise(VectorOperators.LSHR, s).and(HI_MASK);
            IntVector x4 = w4.lanewise(VectorOperators.LSHR, s).and(HI_MASK);
            IntVector x5 = w5.lanewise(VectorOperators.LSHR, s).and(HI_MASK);
            IntVector x6 = w6.lanewise(VectorOperators.LSHR, s).and(HI_MASK);
            IntVector x7 = w7.lanewise(VectorOperators.LSHR, s).and(HI_MASK);
            int cs = c + 4 * s;
            ShortVector y0 = IntVector.broadcast(Simd.I, y[cs]).reinterpretAsShorts();
            e0 = e0.add(x0.reinterpretAsShorts().mul(y0));
            e1 = e1.add(x1.reinterpretAsShorts().mul(y0));
            e2 = e2.add(x2.reinterpretAsShorts().mul(y0));
            e3 = e3.add(x3.reinterpretAsShorts().mul(y0));
            e4 = e4.add(x4.reinterpretAsShorts().mul(y0));
            e5 = e5.add(x5.reinterpretAsShorts().mul(y0));
            e6 = e6.add(x6.reinterpretAsShorts().mul(y0));
            e7 = e7.add(x7.reinterpretAsShorts().mul(y0));
            ShortVector y1 = IntVector.broadcast(Simd.I, y[cs + 1]).reinterpretAsShorts();
            e0 = e0.add(x0.lanewise(VectorOperators.LSHR, 4).reinterpretAsShorts().mul(y1));
            e1 = e1.add(x1.lanewise(VectorOperators.LSHR, 4).reinterpretAsShorts().mul(y1));
            e2 = e2.add(x2.lanewise(VectorOperators.LSHR, 4).reinterpretAsShorts().mul(y1));
            e3 = e3.add(x3.lanewise(VectorOperators.LSHR, 4).reinterpretAsShorts().mul(y1));
            e4 = e4.add(x4.lanewise(VectorOperators.LSHR, 4).reinterpretAsShorts().mul(y1));
            e5 = e5.add(x5.lanewise(VectorOperators.LSHR, 4).reinterpretAsShorts().mul(y1));
            e6 = e6.add(x6.lanewise(VectorOperators.LSHR, 4).reinterpretAsShorts().mul(y1));
            e7 = e7.add(x7.lanewise(VectorOperators.LSHR, 4).reinterpretAsShorts().mul(y1));
            ShortVector y2 = IntVector.broadcast(Simd.I, y[cs + 2]).reinterpretAsShorts();
            e0 = e0.add(x0.lanewise(VectorOperators.LSHR, 8).reinterpretAsShorts().mul(y2));
            e1 = e1.add(x1.lanewise(VectorOperators.LSHR, 8).reinterpretAsShorts().mul(y2));
            e2 = e2.add(x2.lanewise(VectorOperators.LSHR, 8).reinterpretAsShorts().mul(y2));
            e3 = e3.add(x3.lanewise(VectorOperators.LSHR, 8).reinterpretAsShorts().mul(y2));
            e4 = e4.add(x4.lanewise(VectorOperators.LSHR, 8).reinterpretAsShorts().mul(y2));
            e5 = e5.add(x5.lanewise(VectorOperators.LSHR, 8).reinterpretAsShorts().mul(y2));
            e6 = e6.add(x6.lanewise(VectorOperators.LSHR, 8).reinterpretAsShorts().mul(y2));
            e7 = e7.add(x7.lanewise(VectorOperators.LSHR, 8).reinterpretAsShorts().mul(y2));
            ShortVector y3 = IntVector.broadcast(Simd.I, y[cs + 3]).reinterpretAsShorts();
            e0 = e0.add(x0.lanewise(VectorOperators.LSHR, 12).reinterpretAsShorts().mul(y3));
            e1 = e1.add(x1.lanewise(VectorOperators.LSHR, 12).reinterpretAsShorts().mul(y3));
            e2 = e2.add(x2.lanewise(VectorOperators.LSHR, 12).reinterpretAsShorts().mul(y3));
            e3 = e3.add(x3.lanewise(VectorOperators.LSHR, 12).reinterpretAsShorts().mul(y3));
            e4 = e4.add(x4.lanewise(VectorOperators.LSHR, 12).reinterpretAsShorts().mul(y3));
            e5 = e5.add(x5.lanewise(VectorOperators.LSHR, 12).reinterpretAsShorts().mul(y3));
            e6 = e6.add(x6.lanewise(VectorOperators.LSHR, 12).reinterpretAsShorts().mul(y3));
            e7 = e7.add(x7.lanewise(VectorOperators.LSHR, 12).reinterpretAsShorts().mul(y3));
        }
        e0.reinterpretAsInts().intoArray(scratch, 8 * Simd.L);
        e1.reinterpretAsInts().intoArray(scratch, 9 * Simd.L);
        e2.reinterpretAsInts().intoArray(scratch, 10 * Simd.L);
        e3.reinterpretAsInts().intoArray(scratch, 11 * Simd.L);
        e4.reinterpretAsInts().intoArray(scratch, 12 * Simd.L);
        e5.reinterpretAsInts().intoArray(scratch, 13 * Simd.L);
        e6.reinterpretAsInts().intoArray(scratch, 14 * Simd.L);
        e7.reinterpretAsInts().intoArray(scratch, 15 * Simd.L);
    }
}
