package io.modelopt.core.kernel;

import java.lang.foreign.MemorySegment;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorMask;
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
 * <p><b>Widths.</b> The layout is the same at every vector width ({@link Simd}): a 64-byte line
 * is one {@link IntVector} at 512 bits, two at 256 and four at 128 ({@link #VPL}), each lane still
 * one row, so every step above is per lane and the same at every width. The one-token kernel keeps
 * eight accumulators of {@code L} rows ({@code 8·L} rows per pass: {@link #DECODE_GROUPS} = 4, 2
 * or 1 groups) and the few-token kernels one line part of each row half at a time.
 *
 * <p><b>A few tokens</b> (4 to 15: a decode step of several sequences; 16 or more take the
 * GEMM). {@link #groupTokens} loads each line and shifts it into its views once for four
 * tokens, which then cost four multiplies and four adds per line each (a token at a time,
 * {@link #group}, also repeats the load and the three shifts, which share the multiplies' port:
 * JMH 5632×2048, eight tokens, one thread, weights in cache: 470–473 → 657–676 calls/s). The
 * rest of a call's tokens (fewer than four) go one at a time. Every token gets the bits of a call
 * of its own.
 */
final class InterleavedQ4_0 {
    private InterleavedQ4_0() {}

    /** Rows per group (the lanes of a 512-bit vector of shorts). */
    static final int ROWS = 32;
    /** Int vectors per 64-byte line: 1 at 512 bits, 2 at 256, 4 at 128. */
    private static final int VPL = 16 / Simd.L;
    /**
     * Row groups per pass of a one-token call ({@link #groupQuad}): 4 at 512 bits, 2 at 256, 1 at
     * 128, so that a pass has eight accumulators of {@code L} rows at every width.
     */
    static final int DECODE_GROUPS = Simd.L / 4;
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
     * sixteen lanes {@code 4s + j} are gathered from the block with four two-vector selects per
     * {@code L} lanes: lanes {@code [u, u + L)} read only {@code q[j0 + u ..]} and
     * {@code q[j0 + 16 + u ..]}, {@code L} of each (column {@code 4s + k/2 + 16·(k mod 2)}), with
     * the same indexes for every {@code u}. (A scalar loop over {@link #column} took ~10 µs per
     * 2048-column token, 4% of a tiny1b decode step, all of it on the calling thread while the
     * others waited.)
     */
    static int multipliers(float[] q, int j0, int[] y, int yOff) {
        int sum = 0;
        for (int u = 0; u < 16; u += Simd.L) {
            FloatVector lo = FloatVector.fromArray(Simd.F, q, j0 + u), hi = FloatVector.fromArray(Simd.F, q, j0 + 16 + u);
            sum += (int) lo.add(hi).reduceLanes(VectorOperators.ADD); // exact: |Σq| ≤ 32·128
            FloatVector low = MUL_LOW_X.selectFrom(lo, hi).sub(MUL_LOW_PREV.selectFrom(lo, hi).mul(MUL_LOW_16));
            FloatVector high = MUL_HIGH_X.selectFrom(lo, hi).sub(MUL_HIGH_PREV.selectFrom(lo, hi).mul(16f));
            IntVector l = (IntVector) low.convert(VectorOperators.F2I, 0), h = (IntVector) high.convert(VectorOperators.F2I, 0);
            l.and(0xFFFF).or(h.lanewise(VectorOperators.LSHL, 16)).intoArray(y, yOff + u);
        }
        return (-8 * sum) & 0xFFFF;
    }

    /**
     * Indexes into {@code selectFrom(lo, hi)} ({@code lo} = the block's {@code L} columns from
     * {@code u}, {@code hi} those from {@code 16 + u}) of {@code x_k} for lane {@code u + i} =
     * {@code 4s + j}, and of {@code x_(k-1)}; the same for every {@code u}.
     */
    private static float[] multiplierIndexes(int k0, boolean previous) {
        float[] idx = new float[Simd.L];
        for (int lane = 0; lane < Simd.L; lane++) {
            int s = lane / 4, k = k0 + lane % 4;
            int c = column(s, previous ? Math.max(0, k - 1) : k);
            idx[lane] = c < 16 ? c : Simd.L + c - 16;
        }
        return idx;
    }

    private static final FloatVector MUL_LOW_X = FloatVector.fromArray(Simd.F, multiplierIndexes(0, false), 0);
    private static final FloatVector MUL_LOW_PREV = FloatVector.fromArray(Simd.F, multiplierIndexes(0, true), 0);
    private static final FloatVector MUL_HIGH_X = FloatVector.fromArray(Simd.F, multiplierIndexes(4, false), 0);
    private static final FloatVector MUL_HIGH_PREV = FloatVector.fromArray(Simd.F, multiplierIndexes(4, true), 0);
    /** 16 for every lane but {@code j = 0} of the low halves ({@code y_0 = x_0} has no previous nibble). */
    private static final FloatVector MUL_LOW_16 = FloatVector.fromArray(Simd.F, new float[]{0, 16, 16, 16, 0, 16, 16, 16, 0, 16, 16, 16, 0, 16, 16, 16}, 0);
    /** At 512 bits: lanes 0..7 and 8..15 of a line's vector (rows of two 8-row panel slices; narrower, a vector lies in one slice). */
    private static final VectorMask<Float> LOW8 = Simd.L == 16 ? VectorMask.fromLong(Simd.F, 0x00FFL) : null;
    private static final VectorMask<Float> HIGH8 = Simd.L == 16 ? VectorMask.fromLong(Simd.F, 0xFF00L) : null;

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
                for (int part = 0; part < VPL; part++) {
                    int r = 16 * h + Simd.L * part; // the vector's first row
                    FloatVector d = FloatVector.fromArray(Simd.F, scales, 32 * b + r);
                    // at 512 bits lanes 0..7 (rows 16h..16h+7) to slice 2h, lanes 8..15 to slice 2h+1:
                    // the masked store writes lane j at offset + j, hence the - 8; narrower the
                    // vector's rows lie in one slice, from row r % 8 of it
                    int lo = r / 8 * slice + r % 8, hi = lo + slice - 8;
                    for (int s = 0; s < 4; s++) {
                        IntVector w = IntVector.fromMemorySegment(Simd.I, m, rec + 64L * (2 * s + h) + 4L * Simd.L * part, Simd.LE);
                        for (int k = 0; k < 8; k++) {
                            FloatVector v = w.lanewise(VectorOperators.LSHR, 4 * k).and(0xF).or(Simd.MAGIC_BITS)
                                    .reinterpretAsFloats().sub(Simd.MAGIC + 8).mul(d);
                            int col = 8 * (32 * b + column(s, k));
                            if (Simd.L > 8) {
                                v.intoArray(panel, lo + col, LOW8);
                                v.intoArray(panel, hi + col, HIGH8);
                            } else {
                                v.intoArray(panel, lo + col);
                            }
                        }
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
        int[] sums = a.nTokens >= TOKEN_TILE ? TILE_SUMS.get() : null; // per thread: the pool's workers share the call's Activations
        for (; g < g1; g++) {
            long q = quants((long) g * nb * RECORD, nb);
            scales(m, g, nb, scales);
            int t = 0, o = outOff + g * ROWS;
            // a few tokens: TOKEN_TILE of them per pass over the group's lines (groupTokens), the rest one at a time;
            // the first pass reads the group from memory, the others find it in L1/L2 (36 KB at 2048 columns)
            for (; t + TOKEN_TILE <= a.nTokens; t += TOKEN_TILE) groupTokens(m, q, nb, a, t, out, o + t * outStride, outStride, scales, sums);
            for (; t < a.nTokens; t++) group(m, q, nb, a, t, out, o + t * outStride, scales);
        }
    }

    /** Tokens per pass of {@link #groupTokens}, the kernel of calls of 4 to 15 tokens (a decode step of several sequences). */
    static final int TOKEN_TILE = 4;

    /** Per thread, a {@link #groupTokens} block's eight 16-bit pair sums on their way to {@link #finishTokens}. */
    private static final ThreadLocal<int[]> TILE_SUMS = ThreadLocal.withInitial(() -> new int[2 * TOKEN_TILE * 16]);

    /**
     * One group for the {@link #TOKEN_TILE} tokens {@code t .. t+3} (outputs of token {@code t + i}
     * at {@code out[o + i·os ..]}): each line of weights is loaded and shifted into its four views
     * once and multiplied by every token's multipliers, where {@link #group} repeats the load and
     * the shifts per token (and reads the whole group again for each, from L2 at 5632 columns).
     * Per line and token four multiplies and four adds remain, and the shifts count a quarter.
     * Eight 16-bit accumulators (two line halves × four tokens), carried only around the line
     * loop of a block, as in {@link #groupQuad}; each block's sums leave through {@code sums}
     * to {@link #finishTokens} (no vector crosses a call or a block). The integer sums are exact
     * and the float steps are {@link #group}'s: each token gets the bits of a call of its own.
     * One line part at a time (the whole group at 512 bits), as in {@link #group}.
     */
    private static void groupTokens(MemorySegment m, long base, int nb, Activations a, int t, float[] out, int o, int os, float[] scales, int[] sums) {
        int[] y = a.q4Multipliers, neg8 = a.q4Neg8;
        int half = a.cols / 2, blocks = a.blocks;
        for (int i = 0; i < TOKEN_TILE; i++) java.util.Arrays.fill(out, o + i * os, o + i * os + ROWS, 0f);
        for (int part = 0; part < VPL; part++) {
            long pa = base + 4L * Simd.L * part;
            for (int b = 0; b < nb; b++) {
                long rec = pa + (long) b * QUANTS;
                int n = t * blocks + b;
                ShortVector a0 = IntVector.broadcast(Simd.I, neg8[n]).reinterpretAsShorts(), a1 = a0;
                ShortVector b0 = IntVector.broadcast(Simd.I, neg8[n + blocks]).reinterpretAsShorts(), b1 = b0;
                ShortVector c0 = IntVector.broadcast(Simd.I, neg8[n + 2 * blocks]).reinterpretAsShorts(), c1 = c0;
                ShortVector e0 = IntVector.broadcast(Simd.I, neg8[n + 3 * blocks]).reinterpretAsShorts(), e1 = e0;
                for (int s = 0; s < 4; s++) {
                    IntVector v0 = IntVector.fromMemorySegment(Simd.I, m, rec + 128L * s, Simd.LE);
                    IntVector v1 = IntVector.fromMemorySegment(Simd.I, m, rec + 128L * s + 64, Simd.LE);
                    int c = t * half + 16 * b + 4 * s;
                    ShortVector w0 = v0.reinterpretAsShorts(), w1 = v1.reinterpretAsShorts(), yv;
                    yv = IntVector.broadcast(Simd.I, y[c]).reinterpretAsShorts();
                    a0 = a0.add(w0.mul(yv));
                    a1 = a1.add(w1.mul(yv));
                    yv = IntVector.broadcast(Simd.I, y[c + half]).reinterpretAsShorts();
                    b0 = b0.add(w0.mul(yv));
                    b1 = b1.add(w1.mul(yv));
                    yv = IntVector.broadcast(Simd.I, y[c + 2 * half]).reinterpretAsShorts();
                    c0 = c0.add(w0.mul(yv));
                    c1 = c1.add(w1.mul(yv));
                    yv = IntVector.broadcast(Simd.I, y[c + 3 * half]).reinterpretAsShorts();
                    e0 = e0.add(w0.mul(yv));
                    e1 = e1.add(w1.mul(yv));
                    w0 = v0.lanewise(VectorOperators.LSHR, 4).reinterpretAsShorts();
                    w1 = v1.lanewise(VectorOperators.LSHR, 4).reinterpretAsShorts();
                    yv = IntVector.broadcast(Simd.I, y[c + 1]).reinterpretAsShorts();
                    a0 = a0.add(w0.mul(yv));
                    a1 = a1.add(w1.mul(yv));
                    yv = IntVector.broadcast(Simd.I, y[c + 1 + half]).reinterpretAsShorts();
                    b0 = b0.add(w0.mul(yv));
                    b1 = b1.add(w1.mul(yv));
                    yv = IntVector.broadcast(Simd.I, y[c + 1 + 2 * half]).reinterpretAsShorts();
                    c0 = c0.add(w0.mul(yv));
                    c1 = c1.add(w1.mul(yv));
                    yv = IntVector.broadcast(Simd.I, y[c + 1 + 3 * half]).reinterpretAsShorts();
                    e0 = e0.add(w0.mul(yv));
                    e1 = e1.add(w1.mul(yv));
                    w0 = v0.lanewise(VectorOperators.LSHR, 8).reinterpretAsShorts();
                    w1 = v1.lanewise(VectorOperators.LSHR, 8).reinterpretAsShorts();
                    yv = IntVector.broadcast(Simd.I, y[c + 2]).reinterpretAsShorts();
                    a0 = a0.add(w0.mul(yv));
                    a1 = a1.add(w1.mul(yv));
                    yv = IntVector.broadcast(Simd.I, y[c + 2 + half]).reinterpretAsShorts();
                    b0 = b0.add(w0.mul(yv));
                    b1 = b1.add(w1.mul(yv));
                    yv = IntVector.broadcast(Simd.I, y[c + 2 + 2 * half]).reinterpretAsShorts();
                    c0 = c0.add(w0.mul(yv));
                    c1 = c1.add(w1.mul(yv));
                    yv = IntVector.broadcast(Simd.I, y[c + 2 + 3 * half]).reinterpretAsShorts();
                    e0 = e0.add(w0.mul(yv));
                    e1 = e1.add(w1.mul(yv));
                    w0 = v0.lanewise(VectorOperators.LSHR, 12).reinterpretAsShorts();
                    w1 = v1.lanewise(VectorOperators.LSHR, 12).reinterpretAsShorts();
                    yv = IntVector.broadcast(Simd.I, y[c + 3]).reinterpretAsShorts();
                    a0 = a0.add(w0.mul(yv));
                    a1 = a1.add(w1.mul(yv));
                    yv = IntVector.broadcast(Simd.I, y[c + 3 + half]).reinterpretAsShorts();
                    b0 = b0.add(w0.mul(yv));
                    b1 = b1.add(w1.mul(yv));
                    yv = IntVector.broadcast(Simd.I, y[c + 3 + 2 * half]).reinterpretAsShorts();
                    c0 = c0.add(w0.mul(yv));
                    c1 = c1.add(w1.mul(yv));
                    yv = IntVector.broadcast(Simd.I, y[c + 3 + 3 * half]).reinterpretAsShorts();
                    e0 = e0.add(w0.mul(yv));
                    e1 = e1.add(w1.mul(yv));
                }
                a0.reinterpretAsInts().intoArray(sums, 0);
                a1.reinterpretAsInts().intoArray(sums, Simd.L);
                b0.reinterpretAsInts().intoArray(sums, 2 * Simd.L);
                b1.reinterpretAsInts().intoArray(sums, 3 * Simd.L);
                c0.reinterpretAsInts().intoArray(sums, 4 * Simd.L);
                c1.reinterpretAsInts().intoArray(sums, 5 * Simd.L);
                e0.reinterpretAsInts().intoArray(sums, 6 * Simd.L);
                e1.reinterpretAsInts().intoArray(sums, 7 * Simd.L);
                finishTokens(a, t, b, sums, scales, 32 * b + Simd.L * part, out, o + Simd.L * part, os);
            }
        }
    }

    /**
     * The end of one block of {@link #groupTokens}: token {@code t + i}'s two 16-bit pair sums
     * ({@code sums[2i·L ..]}, {@code sums[(2i+1)·L ..]}) to floats, times the rows' scales
     * ({@code scales[sc ..]}, {@code scales[sc + 16 ..]}) and the token's block scale, added into
     * {@code out}: {@link #group}'s operations in its order. A method of its own for the reason
     * {@link #finishBlock} is (the epilogue inline made the kernel too large to compile whole).
     */
    private static void finishTokens(Activations a, int t, int b, int[] sums, float[] scales, int sc, float[] out, int o, int os) {
        float[] d = a.d;
        for (int i = 0; i < TOKEN_TILE; i++) {
            float dx = d[(t + i) * a.blocks + b];
            int oi = o + i * os;
            IntVector u = IntVector.fromArray(Simd.I, sums, 2 * i * Simd.L);
            FloatVector r = (FloatVector) u.add(u.lanewise(VectorOperators.LSHL, 16)).lanewise(VectorOperators.ASHR, 16).convert(VectorOperators.I2F, 0);
            r.fma(FloatVector.fromArray(Simd.F, scales, sc).mul(dx), FloatVector.fromArray(Simd.F, out, oi)).intoArray(out, oi);
            u = IntVector.fromArray(Simd.I, sums, (2 * i + 1) * Simd.L);
            r = (FloatVector) u.add(u.lanewise(VectorOperators.LSHL, 16)).lanewise(VectorOperators.ASHR, 16).convert(VectorOperators.I2F, 0);
            r.fma(FloatVector.fromArray(Simd.F, scales, sc + 16).mul(dx), FloatVector.fromArray(Simd.F, out, oi + 16)).intoArray(out, oi + 16);
        }
    }

    /** Group {@code g}'s scales as floats: row {@code r} of block {@code b} at {@code scales[32b + r]} ({@code nb · 32} of them). */
    static void scales(MemorySegment m, int g, int nb, float[] scales) {
        long base = (long) g * nb * RECORD;
        for (int b = 0; b < nb; b++) {
            for (int part = 0; part < VPL; part++) {
                IntVector v = IntVector.fromMemorySegment(Simd.I, m, base + (long) b * SCALES + 4L * Simd.L * part, Simd.LE);
                int at = 32 * b + Simd.L * part;
                v.lanewise(VectorOperators.LSHL, 16).lanewise(VectorOperators.ASHR, 3).and(RebiasedF16.DECODE_MASK).reinterpretAsFloats()
                        .mul(RebiasedF16.ACTIVATION_SCALE).intoArray(scales, at);
                v.lanewise(VectorOperators.ASHR, 3).and(RebiasedF16.DECODE_MASK).reinterpretAsFloats()
                        .mul(RebiasedF16.ACTIVATION_SCALE).intoArray(scales, at + 16);
            }
        }
    }

    /*
     * The one-token pass: accumulator k (0..7) holds L rows, the lanes of part p = (k/2) % VPL of
     * line half h = k % 2 of group k/2 / VPL of the pass (at 512 bits group k/2, h = k % 2: rows
     * 16k..16k+15), and is scaled by scale vector k/2 (the same part of that group's scale line),
     * its low halves for even k, its high ones for odd k.
     */


    /** Byte offset of accumulator {@code k}'s vector in a pass's lines ({@code stride}: from one group to the next). */
    private static long quantsAt(int k, long stride) {
        int j = k / 2;
        return stride * (j / VPL) + 64L * (k % 2) + 4L * Simd.L * (j % VPL);
    }

    /** Byte offset of scale vector {@code j} (0..3) in a pass's scale lines. */
    private static long scalesAt(int j, long stride) {
        return stride * (j / VPL) + 4L * Simd.L * (j % VPL);
    }

    /** Offset in {@code out} of accumulator {@code k}'s first row, from the pass's first. */
    private static int rowsAt(int k) {
        int j = k / 2;
        return ROWS * (j / VPL) + 16 * (k % 2) + Simd.L * (j % VPL);
    }

    /**
     * {@link #DECODE_GROUPS} adjacent groups ({@code q0} and the next ones: 128 rows at 512 bits, 64
     * at 256, 32 at 128) for a one-token call, eight accumulators of {@code L} rows: each
     * multiplier is loaded and broadcast once for the pass's rows, the loop's own instructions count
     * once per eight vectors of weights (on the AVX-512 machine every instruction per line cost
     * bandwidth, docs/PERFORMANCE.md, "Where the time goes"), and several streams are read at once (JMH,
     * 1 GiB, 512 bits: one group 13.5–14.0 GB/s, two 16.7–17.8, four 20.0–21.4; 16-row groups, four
     * per pass, ran the same). Integer sums are exact, the float steps those of {@link #group}: the
     * same bits.
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
        long k0 = quantsAt(0, stride), k1 = quantsAt(1, stride), k2 = quantsAt(2, stride), k3 = quantsAt(3, stride);
        long k4 = quantsAt(4, stride), k5 = quantsAt(5, stride), k6 = quantsAt(6, stride), k7 = quantsAt(7, stride);
        java.util.Arrays.fill(out, o, o + DECODE_GROUPS * ROWS, 0f);
        int[] sums = SUMS.get(); // per thread: the pool's workers share the call's Activations
        for (int b = 0; b < nb; b++) {
            long r0 = q0 + (long) b * QUANTS;
            long sl = base + (long) b * SCALES;
            ShortVector a0 = IntVector.broadcast(Simd.I, neg8[b]).reinterpretAsShorts(), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;
            for (int s = 0; s < 4; s++) {
                long l = r0 + 128L * s;
                IntVector v0 = IntVector.fromMemorySegment(Simd.I, m, l + k0, Simd.LE);
                IntVector v1 = IntVector.fromMemorySegment(Simd.I, m, l + k1, Simd.LE);
                IntVector v2 = IntVector.fromMemorySegment(Simd.I, m, l + k2, Simd.LE);
                IntVector v3 = IntVector.fromMemorySegment(Simd.I, m, l + k3, Simd.LE);
                IntVector v4 = IntVector.fromMemorySegment(Simd.I, m, l + k4, Simd.LE);
                IntVector v5 = IntVector.fromMemorySegment(Simd.I, m, l + k5, Simd.LE);
                IntVector v6 = IntVector.fromMemorySegment(Simd.I, m, l + k6, Simd.LE);
                IntVector v7 = IntVector.fromMemorySegment(Simd.I, m, l + k7, Simd.LE);
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
            // the block's sums leave through a per-thread array to a method of their own (see
            // finishBlock): the scale decode and FMAs at the end of this large method were left
            // uninlined, i.e. in the Vector API's Java fallback, in some runs at every width
            a0.reinterpretAsInts().intoArray(sums, 0);
            a1.reinterpretAsInts().intoArray(sums, Simd.L);
            a2.reinterpretAsInts().intoArray(sums, 2 * Simd.L);
            a3.reinterpretAsInts().intoArray(sums, 3 * Simd.L);
            a4.reinterpretAsInts().intoArray(sums, 4 * Simd.L);
            a5.reinterpretAsInts().intoArray(sums, 5 * Simd.L);
            a6.reinterpretAsInts().intoArray(sums, 6 * Simd.L);
            a7.reinterpretAsInts().intoArray(sums, 7 * Simd.L);
            finishBlock(m, sl, stride, d[b] * RebiasedF16.ACTIVATION_SCALE, sums, out, o);
        }
    }

    /**
     * The end of one block of a one-token pass: accumulator {@code k}'s 16-bit pair
     * sums ({@code sums[k·L ..]}) to floats, times its rows' scales and the block's activation
     * scale {@code dx}, added into {@code out}, with the operations, in the order, of
     * {@link #group} (the same bits). Why a method of its own: with the
     * epilogue inline, {@code groupQuad} grew past what C2 inlines into one method
     * and the last calls (the scale decode's shifts, the FMAs) stayed calls into the Vector API's
     * Java fallback in about one run in three (JFR: {@code IntVector.lanewiseShiftTemplate},
     * {@code FloatVector.fma} from these lines; 150–550 MB allocated per token). No vector crosses
     * the call: the sums go through the array.
     */
    /** Per thread, a pass's eight block sums on their way to {@link #finishBlock}. */
    private static final ThreadLocal<int[]> SUMS = ThreadLocal.withInitial(() -> new int[8 * 16]);

    static void finishBlock(MemorySegment m, long sl, long stride, float scale, int[] sums, float[] out, int o) {
        FloatVector dx = FloatVector.broadcast(Simd.F, scale);
        for (int k = 0; k < 8; k++) {
            // even k: the low 16-bit halves (shifted up first), odd k: the high ones (a shift by 0)
            IntVector s = IntVector.fromMemorySegment(Simd.I, m, sl + scalesAt(k / 2, stride), Simd.LE).lanewise(VectorOperators.LSHL, 16 * (1 - k % 2));
            IntVector t = IntVector.fromArray(Simd.I, sums, k * Simd.L);
            FloatVector r = (FloatVector) t.add(t.lanewise(VectorOperators.LSHL, 16)).lanewise(VectorOperators.ASHR, 16).convert(VectorOperators.I2F, 0);
            int at = o + rowsAt(k);
            r.fma(s.lanewise(VectorOperators.ASHR, 3).and(RebiasedF16.DECODE_MASK).reinterpretAsFloats().mul(dx), FloatVector.fromArray(Simd.F, out, at)).intoArray(out, at);
        }
    }

    /**
     * One group for token {@code t}; the float sums through {@code out}, as in {@link #groupQuad}:
     * two accumulators (the two line halves, rows {@code 16h + L·part ..}), one line part at a
     * time (the whole group at 512 bits; narrower the later parts find the group's lines in cache).
     */
    private static void group(MemorySegment m, long base, int nb, Activations a, int t, float[] out, int o, float[] scales) {
        int[] y = a.q4Multipliers, neg8 = a.q4Neg8;
        float[] d = a.d;
        int yt = t * a.cols / 2, dt = t * a.blocks;
        java.util.Arrays.fill(out, o, o + ROWS, 0f);
        for (int part = 0; part < VPL; part++) {
            long pa = base + 4L * Simd.L * part;
            int op = o + Simd.L * part;
            for (int b = 0; b < nb; b++) {
                long rec = pa + (long) b * QUANTS;
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
                int sc = 32 * b + Simd.L * part;
                IntVector u = a0.reinterpretAsInts();
                FloatVector r = (FloatVector) u.add(u.lanewise(VectorOperators.LSHL, 16)).lanewise(VectorOperators.ASHR, 16).convert(VectorOperators.I2F, 0);
                r.fma(FloatVector.fromArray(Simd.F, scales, sc).mul(dx), FloatVector.fromArray(Simd.F, out, op)).intoArray(out, op);
                u = a1.reinterpretAsInts();
                r = (FloatVector) u.add(u.lanewise(VectorOperators.LSHL, 16)).lanewise(VectorOperators.ASHR, 16).convert(VectorOperators.I2F, 0);
                r.fma(FloatVector.fromArray(Simd.F, scales, sc + 16).mul(dx), FloatVector.fromArray(Simd.F, out, op + 16)).intoArray(out, op + 16);
            }
        }
    }
}
