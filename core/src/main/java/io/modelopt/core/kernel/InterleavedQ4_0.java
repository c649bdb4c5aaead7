package io.modelopt.core.kernel;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorOperators;

/**
 * Q4_0 weights repacked at load so that one vector lane is one weight row (as llama.cpp repacks
 * Q4_0 into {@code block_q4_0x8} for its x86 GEMV), for the decode-sized matmuls; the prefill
 * GEMM decodes its panels from the same copy ({@link #decodeGroup}), so the file's pages of the
 * copied rows can be released.
 *
 * <p><b>Layout.</b> Rows are taken in groups of {@link #ROWS} = 32. A group starts with its
 * scales, one 64-byte line per 32-column block: the file's halves re-encoded as {@link RebiasedF16}
 * codes, 32-bit lane {@code i} holding row {@code i}'s in its low and row {@code 16 + i}'s in its
 * high half, so that the one-token kernel decodes them in registers, two operations per 16 rows
 * (see "Scales" below). The scales are followed by one 512-byte record of
 * quants per block: 8 lines of 64 bytes. Line {@code 2s + h} ({@code s} = 0..3, {@code h} = 0..1)
 * holds quant bytes {@code 4s .. 4s+3} of rows {@code 16h .. 16h+15} of the group, one row per
 * 32-bit lane, copied as they are: nibble {@code k} (bits {@code 4k .. 4k+3}) of a lane is column
 * {@link #column}{@code (s, k)} = {@code 4s + k/2 + 16·(k mod 2)} of its block (ggml's nibble
 * order). Rows past the last whole group (e.g. 172 = 5·32 + 12) are not repacked; {@link MatMul}
 * computes them in place with {@link Q4_0Kernel}.
 *
 * <p><b>Arithmetic.</b> Per block and row the integer {@code Σ_k (q_k - 8)·x_k} is summed exactly
 * modulo 2^16; its true value lies in {@code [-32512, 32512]} (|q-8| ≤ 8, |x| ≤ 127, 32 terms), so
 * the 16-bit result is it. That is ggml's {@code sumi}; it is then scaled by {@code dw·dx} into a
 * float accumulator, block after block, as the scalar {@code ggml_vec_dot_q4_0_q8_0} does except
 * that the two scales are multiplied first. The nibbles are never masked out: for a lane
 * {@code w} holding nibbles {@code n_0 .. n_7}, let {@code L_j} be the low 16 bits of
 * {@code w >>> 4j} (nibbles {@code j .. j+3}, the others shifted out). Then
 * {@code L_j - 16·L_(j+1) ≡ n_j (mod 2^16)} for every {@code j} (with {@code L_8 = 0}), so
 * {@code Σ_k x_k·n_k ≡ Σ_j y_j·L_j} with {@code y_0 = x_0}, {@code y_j = x_j - 16·x_(j-1)}: one
 * 16-bit multiply per view and no mask. And the high 16 bits of {@code w >>> 4j} are exactly
 * {@code L_(j+4)}, so one 32-bit shift (an immediate shift; 16-bit vector shifts compile to the
 * slower shift by a register) makes two views, multiplied in one go by a broadcast int holding
 * {@code y_j} and {@code y_(j+4)} ({@link Activations#q4Multipliers}). Four views per line, summed
 * into one 16-bit accumulator per row half; at the end of a block the two halves of each 32-bit
 * lane are added and the sum converted to float ({@code I2F}, exact). (It used to leave through
 * the magic-number trick, an add, a reinterpretation as floats and a subtraction; in about one
 * run in three the JIT compiled that reinterpretation, whose target species it looks up at run
 * time, as a boxed fallback, and every block end allocated: docs/PERFORMANCE.md, "Second morning
 * session".) Per 64-byte line of 128 weights: one load, three shifts,
 * four multiplies, four adds. (JMH one token, two threads, 5632×2048 and 2048×5632: the previous
 * layout, 16-bit lanes with masks, ran 33–35 GB/s in cache and 16.7–19.1 from 1 GiB.)
 *
 * <p><b>Scales.</b> The one-token kernel reads each block's scale line beside its quants and
 * decodes it as {@link RebiasedF16} does, to {@code dw · 2^-102}, which it multiplies by the
 * activation scale times {@code 2^102}: the same float as {@code dw · dx}, exactly, because
 * {@code dx} is a half (at most 65504), so {@code dx · 2^102} is a finite, exact float, and
 * {@code (dw · 2^-102) · (dx · 2^102)} rounds the same real number as {@code dw · dx} (an infinite
 * or NaN {@code dx} stays so). It used to widen a whole group's scales into a float array before its
 * blocks (the file's halves, a plain {@code float16ToFloat} loop): a separate pass whose reads of
 * the scales did not overlap any arithmetic, 15% of a decode step's samples (JMH one token, two
 * threads, 1 GiB: reading the lines in the loop measured 3–7% faster, docs/PERFORMANCE.md).
 * The format holds every scale with {@code |d| < 128} ({@link RebiasedF16#scalesRepresentable}); a matrix with a
 * larger, infinite or NaN scale is not repacked. The prefill GEMM and the few-token path decode a
 * group's scales into floats ({@link #scales}).
 *
 * <p>The kernel is memory bound on a long matrix; Java has no prefetch instruction. A load of one
 * byte per cache line {@link #TOUCH_AHEAD} bytes ahead ({@code -Dmodelopt.q4touch=true}) started
 * the misses early while the copy was on small pages and the scales were read from the stream
 * (5632×2048 from memory, 2 threads: 15.6 GB/s without, 18.6 GB/s with); on huge pages with the
 * scales in L1 it measures slightly slower (JMH 2056–2098 vs 2168–2223 calls/s; tiny1b decode
 * 25.6–26.1 vs 26.0–26.2 t/s), so it is off by default.
 */
final class InterleavedQ4_0 {
    private InterleavedQ4_0() {}

    /** Rows per group (the lanes of a 512-bit vector of shorts). */
    static final int ROWS = 32;
    /** Row groups per pass of a one-token call ({@link #groupQuad}). */
    static final int DECODE_GROUPS = 4;
    /** Bytes of one block's quants in a group (32 columns × 32 rows, 4 bits each). */
    private static final int QUANTS = 512;
    /** Bytes of one block's scales in a group (32 halves). */
    private static final int SCALES = 2 * ROWS;
    /** Bytes per (group, block): {@link #packedBytes} is groups × blocks × RECORD. */
    static final int RECORD = QUANTS + SCALES;

    /** Where group {@code g}'s quants start: after its {@code nb} blocks of scales. */
    private static long quants(long base, int nb) {
        return base + (long) nb * SCALES;
    }

    static final long TOUCH_AHEAD = Long.getLong("modelopt.q4touchAhead", 16 << 10);
    /** {@code -Dmodelopt.q4touch=true} turns the touches on (off by default, see above; the Q8_0 kernel never gained from them). */
    static final boolean TOUCH = Boolean.parseBoolean(System.getProperty("modelopt.q4touch", "false"));


    static long packedBytes(int rows, int cols) {
        return (long) (rows / ROWS) * (cols / 32) * RECORD;
    }

    /** Column, within its block, of nibble {@code k} (0..7) of a lane of line pair {@code s} (0..3). */
    static int column(int s, int k) {
        return 4 * s + k / 2 + 16 * (k % 2);
    }

    /** Where row {@code r} (0..31) of a group keeps its scale code in a block's scale line. */
    private static long scaleAt(int r) {
        return 4L * (r % 16) + 2 * (r / 16);
    }

    /**
     * The multipliers and {@code -8·Σq} of one block of Q8_0 activations ({@code q[j0 .. j0+32)},
     * exact integer floats), as {@link Activations#q4Multipliers} and {@link Activations#q4Neg8}
     * hold them: {@code y[yOff + 4s + j]} = {@code y_j} of line {@code s} in the low and
     * {@code y_(j+4)} in the high 16 bits, {@code y_k = x_k - 16·x_(k-1)} over the lane's nibbles
     * ({@code x_k} = {@code q[j0 + column(s, k)]}); returns {@code -8·Σq} in the low 16 bits. The
     * sixteen lanes {@code 4s + j} are gathered from the block with four two-vector selects: a
     * scalar loop over {@link #column} took ~10 µs per 2048-column token, 4% of a tiny1b decode
     * step, all of it on the calling thread while the others waited.
     */
    static int multipliers(float[] q, int j0, int[] y, int yOff) {
        FloatVector lo = FloatVector.fromArray(Simd.F, q, j0), hi = FloatVector.fromArray(Simd.F, q, j0 + 16);
        int sum = (int) lo.add(hi).reduceLanes(VectorOperators.ADD); // exact: |Σq| ≤ 32·128
        FloatVector low = MUL_LOW_X.selectFrom(lo, hi).sub(MUL_LOW_PREV.selectFrom(lo, hi).mul(MUL_LOW_16));
        FloatVector high = MUL_HIGH_X.selectFrom(lo, hi).sub(MUL_HIGH_PREV.selectFrom(lo, hi).mul(16f));
        IntVector l = (IntVector) low.convert(VectorOperators.F2I, 0), h = (IntVector) high.convert(VectorOperators.F2I, 0);
        l.and(0xFFFF).or(h.lanewise(VectorOperators.LSHL, 16)).intoArray(y, yOff);
        return (-8 * sum) & 0xFFFF;
    }

    /** Block indexes (0..31, of {@code selectFrom(lo, hi)}) of {@code x_k} for lane {@code 4s + j}, and of {@code x_(k-1)}. */
    private static float[] multiplierIndexes(int k0, boolean previous) {
        float[] idx = new float[16];
        for (int lane = 0; lane < 16; lane++) {
            int s = lane / 4, k = k0 + lane % 4;
            idx[lane] = column(s, previous ? Math.max(0, k - 1) : k);
        }
        return idx;
    }

    private static final FloatVector MUL_LOW_X = FloatVector.fromArray(Simd.F, multiplierIndexes(0, false), 0);
    private static final FloatVector MUL_LOW_PREV = FloatVector.fromArray(Simd.F, multiplierIndexes(0, true), 0);
    private static final FloatVector MUL_HIGH_X = FloatVector.fromArray(Simd.F, multiplierIndexes(4, false), 0);
    private static final FloatVector MUL_HIGH_PREV = FloatVector.fromArray(Simd.F, multiplierIndexes(4, true), 0);
    /** 16 for every lane but {@code j = 0} of the low halves ({@code y_0 = x_0} has no previous nibble). */
    private static final FloatVector MUL_LOW_16 = FloatVector.fromArray(Simd.F, new float[]{0, 16, 16, 16, 0, 16, 16, 16, 0, 16, 16, 16, 0, 16, 16, 16}, 0);

    /**
     * Writes groups {@code [g0, g1)} of {@code w}'s packed copy into {@code dst} ({@link #packedBytes}
     * long in all); their scales must be {@link RebiasedF16#scalesRepresentable}.
     */
    static void packGroups(WeightMatrix w, MemorySegment dst, int g0, int g1) {
        int nb = w.cols() / 32;
        MemorySegment src = w.data();
        long rowBytes = w.rowBytes();
        for (int g = g0; g < g1; g++) {
            long base = (long) g * nb * RECORD, q = quants(base, nb);
            for (int b = 0; b < nb; b++) {
                long rec = q + (long) b * QUANTS;
                for (int r = 0; r < ROWS; r++) {
                    long blk = (long) (g * ROWS + r) * rowBytes + (long) b * Q4_0Kernel.BLOCK_BYTES;
                    dst.set(WeightData.SHORT, base + (long) b * SCALES + scaleAt(r), RebiasedF16.scaleCode(w, src.get(WeightData.SHORT, blk)));
                    for (int s = 0; s < 4; s++) {
                        long line = rec + 64L * (2 * s + r / 16);
                        dst.set(WeightData.INT, line + 4L * (r % 16), src.get(WeightData.INT, blk + 2 + 4 * s));
                    }
                }
            }
        }
    }

    /**
     * Group {@code g} decoded for the prefill GEMM as four 8-row slices ({@link Gemm}): row {@code r},
     * column {@code k} at {@code panel[(r / 8)·8·cols + 8k + r % 8] = (q - 8)·d} (the reference
     * decoder's floats).
     */
    static void decodeGroup(MemorySegment m, int g, int nb, float[] panel, float[] scales) {
        long quants = quants((long) g * nb * RECORD, nb);
        int slice = 8 * 32 * nb; // floats per 8-row slice
        scales(m, g, nb, scales);
        for (int b = 0; b < nb; b++) {
            long rec = quants + (long) b * QUANTS;
            for (int h = 0; h < 2; h++) {
                FloatVector d = FloatVector.fromArray(Simd.F, scales, 32 * b + 16 * h);
                // lanes 0..7 (rows 16h..16h+7) to slice 2h, lanes 8..15 to slice 2h+1: the masked
                // store writes lane j at offset + j, hence the - 8
                int lo = 2 * h * slice, hi = lo + slice - 8;
                for (int s = 0; s < 4; s++) {
                    IntVector w = IntVector.fromMemorySegment(Simd.I, m, rec + 64L * (2 * s + h), Simd.LE);
                    for (int k = 0; k < 8; k++) {
                        FloatVector v = w.lanewise(VectorOperators.LSHR, 4 * k).and(0xF).or(Simd.MAGIC_BITS)
                                .reinterpretAsFloats().sub(Simd.MAGIC + 8).mul(d);
                        int col = 8 * (32 * b + column(s, k));
                        v.intoArray(panel, lo + col, Simd.LOW8);
                        v.intoArray(panel, hi + col, Simd.HIGH8);
                    }
                }
            }
        }
    }

    /** Groups {@code [g0, g1)} for every token of {@code a} ({@link Activations#packedQ4} filled). */
    static void compute(MemorySegment m, int nb, Activations a, int g0, int g1, float[] out, int outOff, int outStride, float[] scales) {
        int g = g0;
        if (a.nTokens == 1) {
            for (; g + DECODE_GROUPS <= g1; g += DECODE_GROUPS) groupQuad(m, (long) g * nb * RECORD, nb, a, out, outOff + g * ROWS);
        }
        for (; g < g1; g++) {
            long q = quants((long) g * nb * RECORD, nb);
            scales(m, g, nb, scales);
            // the first token reads the group from memory; the others find it in L1 (36 KB at 2048 columns)
            for (int t = 0; t < a.nTokens; t++) group(m, q, nb, a, t, out, outOff + t * outStride + g * ROWS, scales);
        }
    }

    /** Group {@code g}'s scales as floats: row {@code r} of block {@code b} at {@code scales[32b + r]} ({@code nb · 32} of them). */
    static void scales(MemorySegment m, int g, int nb, float[] scales) {
        long base = (long) g * nb * RECORD;
        for (int b = 0; b < nb; b++) {
            IntVector v = IntVector.fromMemorySegment(Simd.I, m, base + (long) b * SCALES, Simd.LE);
            v.lanewise(VectorOperators.LSHL, 16).lanewise(VectorOperators.ASHR, 3).and(RebiasedF16.DECODE_MASK).reinterpretAsFloats()
                    .mul(RebiasedF16.ACTIVATION_SCALE).intoArray(scales, 32 * b);
            v.lanewise(VectorOperators.ASHR, 3).and(RebiasedF16.DECODE_MASK).reinterpretAsFloats()
                    .mul(RebiasedF16.ACTIVATION_SCALE).intoArray(scales, 32 * b + 16);
        }
    }

    /**
     * Four adjacent groups ({@code q0} and the next three) for a one-token call: each multiplier is
     * loaded and broadcast once for 128 rows, the loop's own instructions count once per 16 lines of
     * weights (on this machine every instruction per line costs bandwidth, docs/PERFORMANCE.md,
     * "Closing session"), and four streams are read at once (JMH, 1 GiB: one group 13.5–14.0 GB/s,
     * two 16.7–17.8, four 20.0–21.4; 16-row groups, four per pass, ran the same). Integer sums are
     * exact, the float steps those of {@link #group}: the same bits.
     *
     * <p>The float sums go through {@code out} rather than vector variables carried around the
     * block loop: such a variable is a phi whose exact class the JIT must guess from profiles, and
     * after enough class-check traps in the shared Vector API methods (from any kernel) it stops
     * guessing and calls, boxing every vector of the method. With the sums in registers that was
     * seen in about one run in eight (50–350 MB allocated per token, decode 20 instead of 32 t/s;
     * the compile log showed the virtual calls on {@code Float512Vector}). Spelling the block's
     * lines out instead made the method too large for C2.
     */
    private static void groupQuad(MemorySegment m, long base, int nb, Activations a, float[] out, int o) {
        int[] y = a.q4Multipliers, neg8 = a.q4Neg8;
        float[] d = a.d;
        long stride = (long) nb * RECORD; // from one group to the next
        long q0 = quants(base, nb);
        java.util.Arrays.fill(out, o, o + 4 * ROWS, 0f);
        for (int b = 0; b < nb; b++) {
            long r0 = q0 + (long) b * QUANTS, r1 = r0 + stride, r2 = r1 + stride, r3 = r2 + stride;
            // the scale lines are loaded first: their misses overlap the quants' arithmetic
            long sl = base + (long) b * SCALES;
            IntVector s0 = IntVector.fromMemorySegment(Simd.I, m, sl, Simd.LE);
            IntVector s1 = IntVector.fromMemorySegment(Simd.I, m, sl + stride, Simd.LE);
            IntVector s2 = IntVector.fromMemorySegment(Simd.I, m, sl + 2 * stride, Simd.LE);
            IntVector s3 = IntVector.fromMemorySegment(Simd.I, m, sl + 3 * stride, Simd.LE);
            ShortVector a0 = IntVector.broadcast(Simd.I, neg8[b]).reinterpretAsShorts(), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;
            for (int s = 0; s < 4; s++) {
                long l = 128L * s;
                IntVector v0 = IntVector.fromMemorySegment(Simd.I, m, r0 + l, Simd.LE);
                IntVector v1 = IntVector.fromMemorySegment(Simd.I, m, r0 + l + 64, Simd.LE);
                IntVector v2 = IntVector.fromMemorySegment(Simd.I, m, r1 + l, Simd.LE);
                IntVector v3 = IntVector.fromMemorySegment(Simd.I, m, r1 + l + 64, Simd.LE);
                IntVector v4 = IntVector.fromMemorySegment(Simd.I, m, r2 + l, Simd.LE);
                IntVector v5 = IntVector.fromMemorySegment(Simd.I, m, r2 + l + 64, Simd.LE);
                IntVector v6 = IntVector.fromMemorySegment(Simd.I, m, r3 + l, Simd.LE);
                IntVector v7 = IntVector.fromMemorySegment(Simd.I, m, r3 + l + 64, Simd.LE);
                int c = 16 * b + 4 * s;
                ShortVector y0 = IntVector.broadcast(Simd.I, y[c]).reinterpretAsShorts();
                a0 = a0.add(v0.reinterpretAsShorts().mul(y0));
                a1 = a1.add(v1.reinterpretAsShorts().mul(y0));
                a2 = a2.add(v2.reinterpretAsShorts().mul(y0));
                a3 = a3.add(v3.reinterpretAsShorts().mul(y0));
                a4 = a4.add(v4.reinterpretAsShorts().mul(y0));
                a5 = a5.add(v5.reinterpretAsShorts().mul(y0));
                a6 = a6.add(v6.reinterpretAsShorts().mul(y0));
                a7 = a7.add(v7.reinterpretAsShorts().mul(y0));
                ShortVector y1 = IntVector.broadcast(Simd.I, y[c + 1]).reinterpretAsShorts();
                a0 = a0.add(v0.lanewise(VectorOperators.LSHR, 4).reinterpretAsShorts().mul(y1));
                a1 = a1.add(v1.lanewise(VectorOperators.LSHR, 4).reinterpretAsShorts().mul(y1));
                a2 = a2.add(v2.lanewise(VectorOperators.LSHR, 4).reinterpretAsShorts().mul(y1));
                a3 = a3.add(v3.lanewise(VectorOperators.LSHR, 4).reinterpretAsShorts().mul(y1));
                a4 = a4.add(v4.lanewise(VectorOperators.LSHR, 4).reinterpretAsShorts().mul(y1));
                a5 = a5.add(v5.lanewise(VectorOperators.LSHR, 4).reinterpretAsShorts().mul(y1));
                a6 = a6.add(v6.lanewise(VectorOperators.LSHR, 4).reinterpretAsShorts().mul(y1));
                a7 = a7.add(v7.lanewise(VectorOperators.LSHR, 4).reinterpretAsShorts().mul(y1));
                ShortVector y2 = IntVector.broadcast(Simd.I, y[c + 2]).reinterpretAsShorts();
                a0 = a0.add(v0.lanewise(VectorOperators.LSHR, 8).reinterpretAsShorts().mul(y2));
                a1 = a1.add(v1.lanewise(VectorOperators.LSHR, 8).reinterpretAsShorts().mul(y2));
                a2 = a2.add(v2.lanewise(VectorOperators.LSHR, 8).reinterpretAsShorts().mul(y2));
                a3 = a3.add(v3.lanewise(VectorOperators.LSHR, 8).reinterpretAsShorts().mul(y2));
                a4 = a4.add(v4.lanewise(VectorOperators.LSHR, 8).reinterpretAsShorts().mul(y2));
                a5 = a5.add(v5.lanewise(VectorOperators.LSHR, 8).reinterpretAsShorts().mul(y2));
                a6 = a6.add(v6.lanewise(VectorOperators.LSHR, 8).reinterpretAsShorts().mul(y2));
                a7 = a7.add(v7.lanewise(VectorOperators.LSHR, 8).reinterpretAsShorts().mul(y2));
                ShortVector y3 = IntVector.broadcast(Simd.I, y[c + 3]).reinterpretAsShorts();
                a0 = a0.add(v0.lanewise(VectorOperators.LSHR, 12).reinterpretAsShorts().mul(y3));
                a1 = a1.add(v1.lanewise(VectorOperators.LSHR, 12).reinterpretAsShorts().mul(y3));
                a2 = a2.add(v2.lanewise(VectorOperators.LSHR, 12).reinterpretAsShorts().mul(y3));
                a3 = a3.add(v3.lanewise(VectorOperators.LSHR, 12).reinterpretAsShorts().mul(y3));
                a4 = a4.add(v4.lanewise(VectorOperators.LSHR, 12).reinterpretAsShorts().mul(y3));
                a5 = a5.add(v5.lanewise(VectorOperators.LSHR, 12).reinterpretAsShorts().mul(y3));
                a6 = a6.add(v6.lanewise(VectorOperators.LSHR, 12).reinterpretAsShorts().mul(y3));
                a7 = a7.add(v7.lanewise(VectorOperators.LSHR, 12).reinterpretAsShorts().mul(y3));
            }
            FloatVector dx = FloatVector.broadcast(Simd.F, d[b] * RebiasedF16.ACTIVATION_SCALE); // see "Scales"
            IntVector t = a0.reinterpretAsInts();
            FloatVector r = (FloatVector) t.add(t.lanewise(VectorOperators.LSHL, 16)).lanewise(VectorOperators.ASHR, 16).convert(VectorOperators.I2F, 0);
            r.fma(s0.lanewise(VectorOperators.LSHL, 16).lanewise(VectorOperators.ASHR, 3).and(RebiasedF16.DECODE_MASK).reinterpretAsFloats().mul(dx), FloatVector.fromArray(Simd.F, out, o)).intoArray(out, o);
            t = a1.reinterpretAsInts();
            r = (FloatVector) t.add(t.lanewise(VectorOperators.LSHL, 16)).lanewise(VectorOperators.ASHR, 16).convert(VectorOperators.I2F, 0);
            r.fma(s0.lanewise(VectorOperators.ASHR, 3).and(RebiasedF16.DECODE_MASK).reinterpretAsFloats().mul(dx), FloatVector.fromArray(Simd.F, out, o + 16)).intoArray(out, o + 16);
            t = a2.reinterpretAsInts();
            r = (FloatVector) t.add(t.lanewise(VectorOperators.LSHL, 16)).lanewise(VectorOperators.ASHR, 16).convert(VectorOperators.I2F, 0);
            r.fma(s1.lanewise(VectorOperators.LSHL, 16).lanewise(VectorOperators.ASHR, 3).and(RebiasedF16.DECODE_MASK).reinterpretAsFloats().mul(dx), FloatVector.fromArray(Simd.F, out, o + ROWS)).intoArray(out, o + ROWS);
            t = a3.reinterpretAsInts();
            r = (FloatVector) t.add(t.lanewise(VectorOperators.LSHL, 16)).lanewise(VectorOperators.ASHR, 16).convert(VectorOperators.I2F, 0);
            r.fma(s1.lanewise(VectorOperators.ASHR, 3).and(RebiasedF16.DECODE_MASK).reinterpretAsFloats().mul(dx), FloatVector.fromArray(Simd.F, out, o + ROWS + 16)).intoArray(out, o + ROWS + 16);
            t = a4.reinterpretAsInts();
            r = (FloatVector) t.add(t.lanewise(VectorOperators.LSHL, 16)).lanewise(VectorOperators.ASHR, 16).convert(VectorOperators.I2F, 0);
            r.fma(s2.lanewise(VectorOperators.LSHL, 16).lanewise(VectorOperators.ASHR, 3).and(RebiasedF16.DECODE_MASK).reinterpretAsFloats().mul(dx), FloatVector.fromArray(Simd.F, out, o + 2 * ROWS)).intoArray(out, o + 2 * ROWS);
            t = a5.reinterpretAsInts();
            r = (FloatVector) t.add(t.lanewise(VectorOperators.LSHL, 16)).lanewise(VectorOperators.ASHR, 16).convert(VectorOperators.I2F, 0);
            r.fma(s2.lanewise(VectorOperators.ASHR, 3).and(RebiasedF16.DECODE_MASK).reinterpretAsFloats().mul(dx), FloatVector.fromArray(Simd.F, out, o + 2 * ROWS + 16)).intoArray(out, o + 2 * ROWS + 16);
            t = a6.reinterpretAsInts();
            r = (FloatVector) t.add(t.lanewise(VectorOperators.LSHL, 16)).lanewise(VectorOperators.ASHR, 16).convert(VectorOperators.I2F, 0);
            r.fma(s3.lanewise(VectorOperators.LSHL, 16).lanewise(VectorOperators.ASHR, 3).and(RebiasedF16.DECODE_MASK).reinterpretAsFloats().mul(dx), FloatVector.fromArray(Simd.F, out, o + 3 * ROWS)).intoArray(out, o + 3 * ROWS);
            t = a7.reinterpretAsInts();
            r = (FloatVector) t.add(t.lanewise(VectorOperators.LSHL, 16)).lanewise(VectorOperators.ASHR, 16).convert(VectorOperators.I2F, 0);
            r.fma(s3.lanewise(VectorOperators.ASHR, 3).and(RebiasedF16.DECODE_MASK).reinterpretAsFloats().mul(dx), FloatVector.fromArray(Simd.F, out, o + 3 * ROWS + 16)).intoArray(out, o + 3 * ROWS + 16);
        }
    }

    /** One group for token {@code t}; the float sums through {@code out}, as in {@link #groupQuad}. */
    private static void group(MemorySegment m, long base, int nb, Activations a, int t, float[] out, int o, float[] scales) {
        int[] y = a.q4Multipliers, neg8 = a.q4Neg8;
        float[] d = a.d;
        int yt = t * a.cols / 2, dt = t * a.blocks;
        long touchLimit = m.byteSize() - RECORD;
        int sink = 0;
        java.util.Arrays.fill(out, o, o + ROWS, 0f);
        for (int b = 0; b < nb; b++) {
            long rec = base + (long) b * QUANTS;
            if (TOUCH) {
                long ahead = Math.min(rec + TOUCH_AHEAD, touchLimit);
                sink += m.get(ValueLayout.JAVA_BYTE, ahead) + m.get(ValueLayout.JAVA_BYTE, ahead + 64) + m.get(ValueLayout.JAVA_BYTE, ahead + 128)
                        + m.get(ValueLayout.JAVA_BYTE, ahead + 192) + m.get(ValueLayout.JAVA_BYTE, ahead + 256) + m.get(ValueLayout.JAVA_BYTE, ahead + 320)
                        + m.get(ValueLayout.JAVA_BYTE, ahead + 384) + m.get(ValueLayout.JAVA_BYTE, ahead + 448);
            }
            ShortVector a0 = IntVector.broadcast(Simd.I, neg8[dt + b]).reinterpretAsShorts(), a1 = a0;
            for (int s = 0; s < 4; s++) {
                IntVector v0 = IntVector.fromMemorySegment(Simd.I, m, rec + 128L * s, Simd.LE);
                IntVector v1 = IntVector.fromMemorySegment(Simd.I, m, rec + 128L * s + 64, Simd.LE);
                int c = yt + 16 * b + 4 * s;
                ShortVector y0 = IntVector.broadcast(Simd.I, y[c]).reinterpretAsShorts();
                a0 = a0.add(v0.reinterpretAsShorts().mul(y0));
                a1 = a1.add(v1.reinterpretAsShorts().mul(y0));
                ShortVector y1 = IntVector.broadcast(Simd.I, y[c + 1]).reinterpretAsShorts();
                a0 = a0.add(v0.lanewise(VectorOperators.LSHR, 4).reinterpretAsShorts().mul(y1));
                a1 = a1.add(v1.lanewise(VectorOperators.LSHR, 4).reinterpretAsShorts().mul(y1));
                ShortVector y2 = IntVector.broadcast(Simd.I, y[c + 2]).reinterpretAsShorts();
                a0 = a0.add(v0.lanewise(VectorOperators.LSHR, 8).reinterpretAsShorts().mul(y2));
                a1 = a1.add(v1.lanewise(VectorOperators.LSHR, 8).reinterpretAsShorts().mul(y2));
                ShortVector y3 = IntVector.broadcast(Simd.I, y[c + 3]).reinterpretAsShorts();
                a0 = a0.add(v0.lanewise(VectorOperators.LSHR, 12).reinterpretAsShorts().mul(y3));
                a1 = a1.add(v1.lanewise(VectorOperators.LSHR, 12).reinterpretAsShorts().mul(y3));
            }
            FloatVector dx = FloatVector.broadcast(Simd.F, d[dt + b]);
            IntVector u = a0.reinterpretAsInts();
            FloatVector r = (FloatVector) u.add(u.lanewise(VectorOperators.LSHL, 16)).lanewise(VectorOperators.ASHR, 16).convert(VectorOperators.I2F, 0);
            r.fma(FloatVector.fromArray(Simd.F, scales, 32 * b).mul(dx), FloatVector.fromArray(Simd.F, out, o)).intoArray(out, o);
            u = a1.reinterpretAsInts();
            r = (FloatVector) u.add(u.lanewise(VectorOperators.LSHL, 16)).lanewise(VectorOperators.ASHR, 16).convert(VectorOperators.I2F, 0);
            r.fma(FloatVector.fromArray(Simd.F, scales, 32 * b + 16).mul(dx), FloatVector.fromArray(Simd.F, out, o + 16)).intoArray(out, o + 16);
        }
        Prefetch.keep(sink);
    }
}
