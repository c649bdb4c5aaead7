package io.modelopt.core.kernel;

import io.modelopt.core.quant.Q6_K;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorOperators;

/**
 * Q6_K weights repacked at load so that one 32-bit vector lane is one weight row, for the
 * decode-sized matmuls: integer dot products on 16-bit lanes with the nibble multipliers of
 * {@link InterleavedQ4_K} (the same {@link Activations#q4kMultipliers}), no float per weight.
 *
 * <p><b>Why.</b> The in-place kernel ({@link Q6_KKernel.Vectorized}) turns every weight into a
 * float and multiplies it by a float activation (tiny1b decode 0.30× llama.cpp AVX2, whose
 * {@code ggml_vec_dot_q6_K_q8_K} multiplies bytes with {@code maddubs}). A 6-bit quant is split
 * as the file splits it, {@code q = lo + 16·hi} (a nibble and two bits), and both parts are
 * multiplied as nibbles: {@code Σ q·x = Σ lo·x + 16·Σ hi·x}.
 *
 * <p><b>Layout.</b> Rows are taken in groups of {@link #ROWS} = 2L ({@code L} = float lanes of
 * the process's width). Each group is a sequence of one {@link #record} per super-block (256
 * columns), {@code 212·2L} bytes (as many bits per weight as the file: 6.6):
 * <ul>
 *   <li>bytes {@code [0, 32L)}: the int8 scales, {@code sc[j][r]} at {@code 2L·j + r}
 *       (sub-block {@code j} = 0..15 of 16 elements, row {@code r} of the group);
 *   <li>{@code [32L, 40L)}: {@code d} of each row as a float;
 *   <li>{@code [40L, 424L)}: per sub-block {@code j}, six lines of {@code L} ints (lane {@code i}
 *       of line {@code ·+h} belongs to row {@code hL + i}): lines {@code 2s + h} ({@code s} = 0, 1)
 *       hold the low nibbles of elements {@code 16j+8s .. 16j+8s+7}, element {@code 16j+8s+k} in
 *       bits {@code 4k .. 4k+3}; lines {@code 4 + h} the two-bit highs of all sixteen, element
 *       {@code 16j+k} in bits {@code 4k, 4k+1} and element {@code 16j+8+k} in bits {@code 4k+2, 4k+3}
 *       (so {@code w & 0x33333333} and {@code (w >>> 2) & 0x33333333} are two nibble lanes).
 * </ul>
 * Rows past the last whole group are not repacked ({@link Q6_KKernel} computes them in place).
 *
 * <p><b>Arithmetic.</b> A nibble lane times the multipliers ({@link InterleavedQ4_K}, "Arithmetic")
 * gives its eight products' sum modulo 2^16 once its two 16-bit halves are added. Per sub-block
 * and row: the low nibbles' accumulator (two lines) holds {@code Σ lo·x}, in {@code [-30720, 30480]}
 * ({@code lo ≤ 15}, {@code |x| ≤ 127}); the highs' accumulator starts at {@code -2·Σx} (Q8_K's
 * {@code bsums}) and holds {@code Σ (hi - 2)·x}, in {@code [-4064, 4064]}: both exact as
 * sign-extended shorts (the sixteen {@code (q-32)·x} together would need 17 bits). Then
 * {@code Σ (q-32)·x = Σ lo·x + 16·Σ (hi-2)·x}, {@code sumi = Σ_j sc_j·Σ(q-32)·x} in int lanes
 * (exact: below 2^27), and per super-block {@code out += (dx·d)·sumi} in floats: ggml's integers.
 *
 * <p>Per 128 weights at 256 bits (16 elements of one line of 8 rows): three line loads, two masks,
 * seven shifts, eight multiplies, eight adds (plus, shared by two lines, eight broadcasts), and
 * ~12 instructions at the sub-block's end.
 */
final class InterleavedQ6_K {
    private InterleavedQ6_K() {}

    /** Rows per group: twice the float lanes (0 without vector kernels). */
    static final int ROWS = VectorWidth.BITS / 16;
    /** Bytes per (group, super-block) record: {@code ROWS · 212}. */
    static final int RECORD = ROWS * 212;

    private static final int SCALES = 0, D = 16 * ROWS, QUANTS = D + 4 * ROWS;
    /** Bytes of one sub-block's six lines. */
    private static final int SUB = 12 * ROWS;
    private static final int HI_MASK = 0x33333333;

    /** Groups per pass of a one-token call ({@link #groupQuad}): four, eight line streams of {@code L} rows. */
    static final int DECODE_GROUPS = 4;

    /**
     * Per thread, {@link #groupQuad}'s scratch: {@code [0, 8L)} a sub-block's eight low-nibble pair
     * sums, {@code [8L, 16L)} its eight high-bit pair sums, {@code [16L, 24L)} the super-block's {@code sumi}.
     */
    private static final ThreadLocal<int[]> SCRATCH = ThreadLocal.withInitial(() -> new int[24 * 16]);

    /** Whether a {@code rows × cols} Q6_K matrix has a whole group to repack (vector kernels only). */
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
        int nb = w.cols() / Q6_K.BLOCK_ELEMENTS;
        long rowBytes = w.rowBytes();
        int half = ROWS / 2;
        int[] q = new int[Q6_K.BLOCK_ELEMENTS];
        for (int g = g0; g < g1; g++) {
            for (int b = 0; b < nb; b++) {
                long rec = record(g, nb, b);
                for (int r = 0; r < ROWS; r++) {
                    long blk = (long) (g * ROWS + r) * rowBytes + (long) b * Q6_K.BLOCK_BYTES;
                    quants(src, blk, q);
                    dst.set(WeightData.FLOAT, rec + D + 4L * r, WeightData.half(src, blk + Q6_K.D));
                    int h = r / half, i = r % half;
                    for (int j = 0; j < 16; j++) {
                        dst.set(ValueLayout.JAVA_BYTE, rec + SCALES + (long) ROWS * j + r, (byte) WeightData.s8(src, blk + Q6_K.SCALES + j));
                        long lines = rec + QUANTS + (long) SUB * j;
                        int hi = 0;
                        for (int s = 0; s < 2; s++) {
                            int lo = 0;
                            for (int k = 0; k < 8; k++) {
                                int e = 16 * j + 8 * s + k;
                                lo |= (q[e] & 0xF) << (4 * k);
                                hi |= (q[e] >>> 4) << (4 * k + 2 * s);
                            }
                            dst.set(WeightData.INT, lines + (2L * s + h) * 2 * ROWS + 4L * i, lo);
                        }
                        dst.set(WeightData.INT, lines + (4L + h) * 2 * ROWS + 4L * i, hi);
                    }
                }
            }
        }
    }

    /** The 256 six-bit quants (0..63) of the block at {@code blk}, in element order. */
    private static void quants(MemorySegment m, long blk, int[] q) {
        for (int half = 0; half < 2; half++) {
            long ql = blk + Q6_K.QL + 64L * half, qh = blk + Q6_K.QH + 32L * half;
            int y = 128 * half;
            for (int l = 0; l < 32; l++) {
                int h = WeightData.u8(m, qh + l), lo = WeightData.u8(m, ql + l), hi = WeightData.u8(m, ql + l + 32);
                q[y + l] = (lo & 0xF) | ((h & 3) << 4);
                q[y + l + 32] = (hi & 0xF) | (((h >>> 2) & 3) << 4);
                q[y + l + 64] = (lo >>> 4) | (((h >>> 4) & 3) << 4);
                q[y + l + 96] = (hi >>> 4) | (((h >>> 6) & 3) << 4);
            }
        }
    }

    /**
     * Groups {@code [g0, g1)} of the copy {@code m} for every token of {@code a} (Q8_K), with
     * {@code y} the tokens' {@link InterleavedQ4_K#multipliers} ({@code cols / 2} ints per token,
     * token {@code t} at {@code t · cols / 2}): {@code out[outOff + t·outStride + r]} for the groups' rows.
     */
    static void compute(MemorySegment m, int nb, Activations a, int[] y, int g0, int g1, float[] out, int outOff, int outStride) {
        int g = g0;
        if (a.nTokens == 1) {
            int[] scratch = SCRATCH.get(); // per thread: the pool's workers share the call's Activations
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
        // the byte loads of the scales: one BL load per half (two halves per load at 128 bits)
        int bl = Simd.BL.length();
        java.util.Arrays.fill(out, o, o + 2 * Simd.L, 0f);
        for (int b = 0; b < nb; b++) {
            long rec = base + (long) b * RECORD;
            IntVector si0 = IntVector.zero(Simd.I), si1 = si0;
            for (int j = 0; j < 16; j++) {
                long lines = rec + QUANTS + (long) SUB * j;
                int c = yt + 128 * b + 8 * j;
                IntVector w0 = IntVector.fromMemorySegment(Simd.I, m, lines + 4L * lineBytes, Simd.LE);
                IntVector w1 = IntVector.fromMemorySegment(Simd.I, m, lines + 5L * lineBytes, Simd.LE);
                // Σ(hi - 2)·x: the offset -2·Σx in the low half (the halves are added at the end)
                ShortVector h0 = IntVector.broadcast(Simd.I, (-2 * bs[bt + 16 * b + j]) & 0xFFFF).reinterpretAsShorts(), h1 = h0;
                ShortVector l0 = ShortVector.zero(Simd.S), l1 = l0;
                for (int s = 0; s < 2; s++) {
                    IntVector v0 = IntVector.fromMemorySegment(Simd.I, m, lines + 2L * s * lineBytes, Simd.LE);
                    IntVector v1 = IntVector.fromMemorySegment(Simd.I, m, lines + (2L * s + 1) * lineBytes, Simd.LE);
                    // the highs of elements 16j+8s .. 16j+8s+7 as a nibble lane (no vector phi: a shift by 2s)
                    IntVector x0 = w0.lanewise(VectorOperators.LSHR, 2 * s).and(HI_MASK);
                    IntVector x1 = w1.lanewise(VectorOperators.LSHR, 2 * s).and(HI_MASK);
                    int cs = c + 4 * s;
                    ShortVector y0 = IntVector.broadcast(Simd.I, y[cs]).reinterpretAsShorts();
                    l0 = l0.add(v0.reinterpretAsShorts().mul(y0));
                    l1 = l1.add(v1.reinterpretAsShorts().mul(y0));
                    h0 = h0.add(x0.reinterpretAsShorts().mul(y0));
                    h1 = h1.add(x1.reinterpretAsShorts().mul(y0));
                    ShortVector y1 = IntVector.broadcast(Simd.I, y[cs + 1]).reinterpretAsShorts();
                    l0 = l0.add(v0.lanewise(VectorOperators.LSHR, 4).reinterpretAsShorts().mul(y1));
                    l1 = l1.add(v1.lanewise(VectorOperators.LSHR, 4).reinterpretAsShorts().mul(y1));
                    h0 = h0.add(x0.lanewise(VectorOperators.LSHR, 4).reinterpretAsShorts().mul(y1));
                    h1 = h1.add(x1.lanewise(VectorOperators.LSHR, 4).reinterpretAsShorts().mul(y1));
                    ShortVector y2 = IntVector.broadcast(Simd.I, y[cs + 2]).reinterpretAsShorts();
                    l0 = l0.add(v0.lanewise(VectorOperators.LSHR, 8).reinterpretAsShorts().mul(y2));
                    l1 = l1.add(v1.lanewise(VectorOperators.LSHR, 8).reinterpretAsShorts().mul(y2));
                    h0 = h0.add(x0.lanewise(VectorOperators.LSHR, 8).reinterpretAsShorts().mul(y2));
                    h1 = h1.add(x1.lanewise(VectorOperators.LSHR, 8).reinterpretAsShorts().mul(y2));
                    ShortVector y3 = IntVector.broadcast(Simd.I, y[cs + 3]).reinterpretAsShorts();
                    l0 = l0.add(v0.lanewise(VectorOperators.LSHR, 12).reinterpretAsShorts().mul(y3));
                    l1 = l1.add(v1.lanewise(VectorOperators.LSHR, 12).reinterpretAsShorts().mul(y3));
                    h0 = h0.add(x0.lanewise(VectorOperators.LSHR, 12).reinterpretAsShorts().mul(y3));
                    h1 = h1.add(x1.lanewise(VectorOperators.LSHR, 12).reinterpretAsShorts().mul(y3));
                }
                // each accumulator's two halves added in the high half, sign-extended: Σlo·x + 16·Σ(hi-2)·x = Σ(q-32)·x
                IntVector u0 = l0.reinterpretAsInts(), u1 = l1.reinterpretAsInts(), z0 = h0.reinterpretAsInts(), z1 = h1.reinterpretAsInts();
                u0 = u0.add(u0.lanewise(VectorOperators.LSHL, 16)).lanewise(VectorOperators.ASHR, 16);
                u1 = u1.add(u1.lanewise(VectorOperators.LSHL, 16)).lanewise(VectorOperators.ASHR, 16);
                z0 = z0.add(z0.lanewise(VectorOperators.LSHL, 16)).lanewise(VectorOperators.ASHR, 16);
                z1 = z1.add(z1.lanewise(VectorOperators.LSHL, 16)).lanewise(VectorOperators.ASHR, 16);
                long sc = rec + SCALES + (long) ROWS * j;
                IntVector sc0 = (IntVector) ByteVector.fromMemorySegment(Simd.BL, m, sc, Simd.LE).convertShape(VectorOperators.B2I, Simd.I, 0);
                IntVector sc1 = (IntVector) ByteVector.fromMemorySegment(Simd.BL, m, sc + (Simd.BL_PARTS == 1 ? bl : 0), Simd.LE)
                        .convertShape(VectorOperators.B2I, Simd.I, Simd.BL_PARTS == 1 ? 0 : 1);
                si0 = u0.add(z0.lanewise(VectorOperators.LSHL, 4)).mul(sc0).add(si0);
                si1 = u1.add(z1.lanewise(VectorOperators.LSHL, 4)).mul(sc1).add(si1);
            }
            float dx = d[dt + b];
            FloatVector dw0 = FloatVector.fromMemorySegment(Simd.F, m, rec + D, Simd.LE).mul(dx);
            FloatVector dw1 = FloatVector.fromMemorySegment(Simd.F, m, rec + D + lineBytes, Simd.LE).mul(dx);
            ((FloatVector) si0.convert(VectorOperators.I2F, 0)).fma(dw0, FloatVector.fromArray(Simd.F, out, o)).intoArray(out, o);
            ((FloatVector) si1.convert(VectorOperators.I2F, 0)).fma(dw1, FloatVector.fromArray(Simd.F, out, o + Simd.L)).intoArray(out, o + Simd.L);
        }
    }

    /**
     * {@link #DECODE_GROUPS} adjacent groups from {@code base} (group {@code g}'s first record) for a
     * one-token call, as {@link InterleavedQ4_K#groupQuad}: eight accumulators of {@code L} rows
     * (accumulator {@code k}: group {@code k/2}, half {@code k%2}), eight streams read at once
     * (one group per pass, {@link #group}: 7.9 GB/s from memory against 15.4 from cache, JMH
     * 5632×2048, one thread, Zen 4 VM). Sixteen 16-bit accumulators (low nibbles and highs of four
     * groups) would not fit the registers, so each sub-block takes the low nibbles' four lines per
     * group first, then the highs' line. Exact integer sums and {@link #group}'s float steps: the
     * bits of one-group calls.
     */
    private static void groupQuad(MemorySegment m, long base, int nb, Activations a, int[] y, float[] out, int o, int[] scratch) {
        float[] d = a.d;
        int[] bs = a.bsums;
        long stride = (long) nb * RECORD; // from one group to the next
        java.util.Arrays.fill(out, o, o + DECODE_GROUPS * ROWS, 0f);
        java.util.Arrays.fill(scratch, 16 * Simd.L, 24 * Simd.L, 0);
        for (int b = 0; b < nb; b++) {
            long rec = base + (long) b * RECORD;
            for (int j = 0; j < 16; j++) {
                long lines = rec + QUANTS + (long) SUB * j;
                int c = 128 * b + 8 * j;
                InterleavedQ4_K.lowNibbles(m, lines, stride, y, c, 0, 2, scratch); // Σ lo·x: lines 2s + h, s < 2
                highBits(m, lines, stride, y, c, -2 * bs[16 * b + j], scratch);
                finishSubBlock(m, rec, stride, j, scratch);
            }
            finishSuperBlock(m, rec, stride, d[b], scratch, out, o);
        }
    }

    /**
     * A sub-block's {@code Σ(hi - 2)·x} (lines {@code 4 + h}), starting from {@code offset} =
     * {@code -2·Σx}, into {@code scratch[8L, 16L)}. A method of its own, as the low nibbles'
     * ({@link InterleavedQ4_K#lowNibbles}): with both parts in {@code groupQuad} the method outgrew
     * what C2 compiles with unboxed vectors (tiny1b Q4_K_M decode 9 t/s, 1.2 GB allocated per token,
     * JFR in {@code groupQuad}'s lines).
     */
    private static void highBits(MemorySegment m, long lines, long stride, int[] y, int c, int offset, int[] scratch) {
        long lb = 4L * Simd.L;
        long k1 = lb, k2 = stride, k3 = stride + lb, k4 = 2 * stride, k5 = 2 * stride + lb, k6 = 3 * stride, k7 = 3 * stride + lb;
        // the offset in the low half (the halves are added at the end)
        long hl = lines + 4L * lb;
        IntVector w0 = IntVector.fromMemorySegment(Simd.I, m, hl, Simd.LE);
        IntVector w1 = IntVector.fromMemorySegment(Simd.I, m, hl + k1, Simd.LE);
        IntVector w2 = IntVector.fromMemorySegment(Simd.I, m, hl + k2, Simd.LE);
        IntVector w3 = IntVector.fromMemorySegment(Simd.I, m, hl + k3, Simd.LE);
        IntVector w4 = IntVector.fromMemorySegment(Simd.I, m, hl + k4, Simd.LE);
        IntVector w5 = IntVector.fromMemorySegment(Simd.I, m, hl + k5, Simd.LE);
        IntVector w6 = IntVector.fromMemorySegment(Simd.I, m, hl + k6, Simd.LE);
        IntVector w7 = IntVector.fromMemorySegment(Simd.I, m, hl + k7, Simd.LE);
        ShortVector h0 = IntVector.broadcast(Simd.I, offset & 0xFFFF).reinterpretAsShorts(), h1 = h0, h2 = h0, h3 = h0, h4 = h0, h5 = h0, h6 = h0, h7 = h0;
        for (int s = 0; s < 2; s++) {
            // the highs of elements 16j+8s .. 16j+8s+7 as a nibble lane (no vector phi: a shift by 2s)
            IntVector x0 = w0.lanewise(VectorOperators.LSHR, 2 * s).and(HI_MASK);
            IntVector x1 = w1.lanewise(VectorOperators.LSHR, 2 * s).and(HI_MASK);
            IntVector x2 = w2.lanewise(VectorOperators.LSHR, 2 * s).and(HI_MASK);
            IntVector x3 = w3.lanewise(VectorOperators.LSHR, 2 * s).and(HI_MASK);
            IntVector x4 = w4.lanewise(VectorOperators.LSHR, 2 * s).and(HI_MASK);
            IntVector x5 = w5.lanewise(VectorOperators.LSHR, 2 * s).and(HI_MASK);
            IntVector x6 = w6.lanewise(VectorOperators.LSHR, 2 * s).and(HI_MASK);
            IntVector x7 = w7.lanewise(VectorOperators.LSHR, 2 * s).and(HI_MASK);
            int cs = c + 4 * s;
            ShortVector y0 = IntVector.broadcast(Simd.I, y[cs]).reinterpretAsShorts();
            h0 = h0.add(x0.reinterpretAsShorts().mul(y0));
            h1 = h1.add(x1.reinterpretAsShorts().mul(y0));
            h2 = h2.add(x2.reinterpretAsShorts().mul(y0));
            h3 = h3.add(x3.reinterpretAsShorts().mul(y0));
            h4 = h4.add(x4.reinterpretAsShorts().mul(y0));
            h5 = h5.add(x5.reinterpretAsShorts().mul(y0));
            h6 = h6.add(x6.reinterpretAsShorts().mul(y0));
            h7 = h7.add(x7.reinterpretAsShorts().mul(y0));
            ShortVector y1 = IntVector.broadcast(Simd.I, y[cs + 1]).reinterpretAsShorts();
            h0 = h0.add(x0.lanewise(VectorOperators.LSHR, 4).reinterpretAsShorts().mul(y1));
            h1 = h1.add(x1.lanewise(VectorOperators.LSHR, 4).reinterpretAsShorts().mul(y1));
            h2 = h2.add(x2.lanewise(VectorOperators.LSHR, 4).reinterpretAsShorts().mul(y1));
            h3 = h3.add(x3.lanewise(VectorOperators.LSHR, 4).reinterpretAsShorts().mul(y1));
            h4 = h4.add(x4.lanewise(VectorOperators.LSHR, 4).reinterpretAsShorts().mul(y1));
            h5 = h5.add(x5.lanewise(VectorOperators.LSHR, 4).reinterpretAsShorts().mul(y1));
            h6 = h6.add(x6.lanewise(VectorOperators.LSHR, 4).reinterpretAsShorts().mul(y1));
            h7 = h7.add(x7.lanewise(VectorOperators.LSHR, 4).reinterpretAsShorts().mul(y1));
            ShortVector y2 = IntVector.broadcast(Simd.I, y[cs + 2]).reinterpretAsShorts();
            h0 = h0.add(x0.lanewise(VectorOperators.LSHR, 8).reinterpretAsShorts().mul(y2));
            h1 = h1.add(x1.lanewise(VectorOperators.LSHR, 8).reinterpretAsShorts().mul(y2));
            h2 = h2.add(x2.lanewise(VectorOperators.LSHR, 8).reinterpretAsShorts().mul(y2));
            h3 = h3.add(x3.lanewise(VectorOperators.LSHR, 8).reinterpretAsShorts().mul(y2));
            h4 = h4.add(x4.lanewise(VectorOperators.LSHR, 8).reinterpretAsShorts().mul(y2));
            h5 = h5.add(x5.lanewise(VectorOperators.LSHR, 8).reinterpretAsShorts().mul(y2));
            h6 = h6.add(x6.lanewise(VectorOperators.LSHR, 8).reinterpretAsShorts().mul(y2));
            h7 = h7.add(x7.lanewise(VectorOperators.LSHR, 8).reinterpretAsShorts().mul(y2));
            ShortVector y3 = IntVector.broadcast(Simd.I, y[cs + 3]).reinterpretAsShorts();
            h0 = h0.add(x0.lanewise(VectorOperators.LSHR, 12).reinterpretAsShorts().mul(y3));
            h1 = h1.add(x1.lanewise(VectorOperators.LSHR, 12).reinterpretAsShorts().mul(y3));
            h2 = h2.add(x2.lanewise(VectorOperators.LSHR, 12).reinterpretAsShorts().mul(y3));
            h3 = h3.add(x3.lanewise(VectorOperators.LSHR, 12).reinterpretAsShorts().mul(y3));
            h4 = h4.add(x4.lanewise(VectorOperators.LSHR, 12).reinterpretAsShorts().mul(y3));
            h5 = h5.add(x5.lanewise(VectorOperators.LSHR, 12).reinterpretAsShorts().mul(y3));
            h6 = h6.add(x6.lanewise(VectorOperators.LSHR, 12).reinterpretAsShorts().mul(y3));
            h7 = h7.add(x7.lanewise(VectorOperators.LSHR, 12).reinterpretAsShorts().mul(y3));
        }
        h0.reinterpretAsInts().intoArray(scratch, 8 * Simd.L);
        h1.reinterpretAsInts().intoArray(scratch, 9 * Simd.L);
        h2.reinterpretAsInts().intoArray(scratch, 10 * Simd.L);
        h3.reinterpretAsInts().intoArray(scratch, 11 * Simd.L);
        h4.reinterpretAsInts().intoArray(scratch, 12 * Simd.L);
        h5.reinterpretAsInts().intoArray(scratch, 13 * Simd.L);
        h6.reinterpretAsInts().intoArray(scratch, 14 * Simd.L);
        h7.reinterpretAsInts().intoArray(scratch, 15 * Simd.L);
    }

    /** Sub-block {@code j}'s end for the pass's eight accumulators: {@code sumi += sc_j·(Σlo·x + 16·Σ(hi-2)·x)}, exact, as {@link #group}. */
    private static void finishSubBlock(MemorySegment m, long rec, long stride, int j, int[] scratch) {
        int bl = Simd.BL.length(), lanes = Simd.L;
        for (int gi = 0; gi < DECODE_GROUPS; gi++) {
            long sc = rec + gi * stride + SCALES + (long) ROWS * j;
            int k0 = 2 * gi * lanes, k1 = k0 + lanes, hi = 8 * lanes, si = 16 * lanes;
            IntVector u0 = IntVector.fromArray(Simd.I, scratch, k0), u1 = IntVector.fromArray(Simd.I, scratch, k1);
            IntVector z0 = IntVector.fromArray(Simd.I, scratch, hi + k0), z1 = IntVector.fromArray(Simd.I, scratch, hi + k1);
            u0 = u0.add(u0.lanewise(VectorOperators.LSHL, 16)).lanewise(VectorOperators.ASHR, 16);
            u1 = u1.add(u1.lanewise(VectorOperators.LSHL, 16)).lanewise(VectorOperators.ASHR, 16);
            z0 = z0.add(z0.lanewise(VectorOperators.LSHL, 16)).lanewise(VectorOperators.ASHR, 16);
            z1 = z1.add(z1.lanewise(VectorOperators.LSHL, 16)).lanewise(VectorOperators.ASHR, 16);
            IntVector sc0 = (IntVector) ByteVector.fromMemorySegment(Simd.BL, m, sc, Simd.LE).convertShape(VectorOperators.B2I, Simd.I, 0);
            IntVector sc1 = (IntVector) ByteVector.fromMemorySegment(Simd.BL, m, sc + (Simd.BL_PARTS == 1 ? bl : 0), Simd.LE)
                    .convertShape(VectorOperators.B2I, Simd.I, Simd.BL_PARTS == 1 ? 0 : 1);
            u0.add(z0.lanewise(VectorOperators.LSHL, 4)).mul(sc0).add(IntVector.fromArray(Simd.I, scratch, si + k0)).intoArray(scratch, si + k0);
            u1.add(z1.lanewise(VectorOperators.LSHL, 4)).mul(sc1).add(IntVector.fromArray(Simd.I, scratch, si + k1)).intoArray(scratch, si + k1);
        }
    }

    /** A super-block's end: {@code out += (dx·d)·sumi} per row, as {@link #group}; the sums reset. */
    private static void finishSuperBlock(MemorySegment m, long rec, long stride, float dx, int[] scratch, float[] out, int o) {
        int lanes = Simd.L, lineBytes = 4 * lanes;
        for (int gi = 0; gi < DECODE_GROUPS; gi++) {
            long r = rec + gi * stride;
            for (int h = 0; h < 2; h++) {
                int k = (2 * gi + h) * lanes, at = o + gi * ROWS + h * lanes;
                FloatVector dw = FloatVector.fromMemorySegment(Simd.F, m, r + D + (long) h * lineBytes, Simd.LE).mul(dx);
                FloatVector si = (FloatVector) IntVector.fromArray(Simd.I, scratch, 16 * lanes + k).convert(VectorOperators.I2F, 0);
                si.fma(dw, FloatVector.fromArray(Simd.F, out, at)).intoArray(out, at);
            }
        }
        java.util.Arrays.fill(scratch, 16 * lanes, 24 * lanes, 0);
    }
}
