package io.modelopt.core.kernel;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorShape;
import jdk.incubator.vector.VectorSpecies;

/**
 * Q8_0 weights repacked at load so that one float lane is one weight row, for the decode-sized
 * matmuls and, through {@link #decodeGroup}, the prefill GEMM's panels (the counterpart of
 * {@link InterleavedQ4_0}).
 *
 * <p><b>Layout.</b> Rows in groups of {@link #ROWS} = 16. A group starts with its scales, one
 * 64-byte line per two 32-column blocks: the file's halves re-encoded as {@link RebiasedF16} codes,
 * 32-bit lane {@code r} holding row {@code r}'s scale of block {@code 2j} in its low half and of
 * block {@code 2j + 1} in its high half (an odd last block leaves the high halves zero). Then one
 * 512-byte record per block: 32 × 16 bytes of quants, column after column (byte {@code 16k + r}
 * is row {@code r}'s quant of column {@code 32b + k}). Rows after the last whole group are
 * computed in place by {@link Q8_0Kernel}.
 *
 * <p><b>Scales.</b> The one-token kernel decodes a block's 16 scales from their line in registers,
 * as {@link InterleavedQ4_0} does: {@code dw · 2^-102} times the activation scale times
 * {@code 2^102} is exactly {@code dw · dx} (why: {@link InterleavedQ4_0}, "Scales"). A group's scales used to
 * be widened into a float array in a pass of their own before its blocks (11% of a tiny1b decode
 * step's samples). Read from the stream at the end of each block as floats, in an earlier layout,
 * they had made the record a ninth cache line and put a load from the stream into the row
 * accumulators' chain (tiny1b decode 12.1–12.6 t/s then, 16.9–17.0 after): here the line is loaded
 * at the start of the block, and the float sums go through {@code out}. The prefill GEMM and the
 * few-token path decode a group's scales into floats ({@link #scales}). A matrix with a scale the
 * codes cannot hold ({@code |d| ≥ 128}, infinite, NaN) is not repacked.
 *
 * <p><b>Arithmetic.</b> Per block, four float accumulators collect {@code q_w·q_x} over the
 * columns (every product and partial sum is an integer below 2^24, so exact: ggml's
 * {@code sumi}); their sum is scaled by {@code dw·dx} into the row's accumulator, block after
 * block. One column of 16 rows costs a widening load, a conversion and an FMA with the broadcast
 * activation, and no horizontal sum is left at the end.
 *
 * <p><b>A few tokens</b> (4 to 15: a decode step of several sequences; 16 or more take the
 * GEMM). {@link #groupTokens8} and {@link #groupTokens} convert each column's 16 weights once
 * for eight or four tokens, which then cost a broadcast and an FMA each; at 512 bits
 * {@link #groupPair8} takes eight tokens over two groups, a broadcast per two FMAs. A token at a
 * time ({@link #group}) repeats the widening load and the two conversions per token. JMH
 * 5632×2048, eight tokens, one thread, weights in cache, on the Xeon VM: 207–216 calls/s a token
 * at a time, 389–407 four at a time, 558–564 eight at a time; on the Zen 4 VM, out of cache:
 * 286–291 eight at a time, 396–446 eight over two groups. Block sums are exact integers in any order and the scaling is
 * {@link #group}'s: every token gets the bits of a call of its own.
 */
final class InterleavedQ8_0 {
    private InterleavedQ8_0() {}

    static final int ROWS = 16;
    private static final int L = Simd.L;
    /** Vectors per column of a group's 16 rows: 1, 2 or 4. Vector {@code v} holds rows {@code [vL, vL + L)}. */
    private static final int RV = ROWS / L;
    /** Byte offset in a column of vector {@code v}'s rows and the part of that {@link Simd#BL} load it widens: {@code (v / PARTS)·|BL|}, {@code v % PARTS}. */
    private static final int PARTS = Simd.BL_PARTS, BL_BYTES = Simd.BL.length();
    /**
     * Column accumulators per row vector and group in {@link #groupQuad}: 4 at 512 bits (16
     * accumulators of the 32 registers), 2 below (8 of AVX2's 16; 16 spilled).
     */
    private static final int PHASES = L == 16 ? 4 : 2;
    /** Floats per vector of {@link #decodeGroup}'s 8-row slices: 8, or 4 at 128 bits. */
    private static final int SL = Math.min(8, L);
    /** Species of the 8-row slices ({@link #SL} lanes; never wider than {@link Simd#F}), and the byte loads widened to them. */
    private static final VectorSpecies<Float> F_SL = VectorSpecies.of(float.class, VectorShape.forBitSize(32 * SL));
    private static final VectorSpecies<Integer> I_SL = VectorSpecies.of(int.class, VectorShape.forBitSize(32 * SL));
    private static final VectorSpecies<Byte> B_SL = ByteVector.SPECIES_64;
    /** {@link #I_SL} vectors per 8-byte load: 1, or 2 at 128 bits. */
    private static final int SL_PARTS = 8 / SL;
    /** Row groups per pass of a one-token call ({@link #groupQuad}). */
    static final int DECODE_GROUPS = 4;
    /** Bytes of one block's quants in a group (32 columns × 16 rows). */
    private static final int QUANTS = 512;
    /** Bytes of one block's scales in a group (16 codes, half a line). */
    private static final int SCALES = 2 * ROWS;
    /** Bytes per (group, block) when the blocks are even in number: {@link #packedBytes} is then groups × blocks × RECORD. */
    static final int RECORD = QUANTS + SCALES;

    /** Bytes of a group's scale lines: one per two blocks. */
    private static long scaleBytes(int nb) {
        return (nb + 1) / 2 * 64L;
    }

    /** Bytes of one group: its scale lines and its {@code nb} records of quants. */
    private static long groupBytes(int nb) {
        return scaleBytes(nb) + (long) nb * QUANTS;
    }

    /** Where group {@code g}'s quants start: after its scale lines. */
    private static long quants(long base, int nb) {
        return base + scaleBytes(nb);
    }

    static long packedBytes(int rows, int cols) {
        return (rows / ROWS) * groupBytes(cols / 32);
    }

    /** Where row {@code r} keeps its scale code of block {@code b}, from the group's start. */
    private static long scaleAt(int b, int r) {
        return 64L * (b / 2) + 4L * r + 2 * (b % 2);
    }

    /**
     * Writes groups {@code [g0, g1)} of {@code w}'s packed copy into {@code dst} ({@link #packedBytes}
     * long in all); their scales must be {@link RebiasedF16#scalesRepresentable}.
     */
    static void packGroups(WeightMatrix w, MemorySegment dst, int g0, int g1) {
        int nb = w.cols() / 32;
        MemorySegment src = w.data();
        long rowBytes = w.rowBytes();
        for (int g = g0; g < g1; g++) {
            long base = g * groupBytes(nb), q = quants(base, nb);
            if (nb % 2 == 1) dst.asSlice(base + scaleBytes(nb) - 64, 64).fill((byte) 0); // the unused high halves
            for (int b = 0; b < nb; b++) {
                long rec = q + (long) b * QUANTS;
                for (int r = 0; r < ROWS; r++) {
                    long blk = (long) (g * ROWS + r) * rowBytes + (long) b * Q8_0Kernel.BLOCK_BYTES;
                    dst.set(WeightData.SHORT, base + scaleAt(b, r), RebiasedF16.scaleCode(w, src.get(WeightData.SHORT, blk)));
                    for (int k = 0; k < 32; k++) dst.set(ValueLayout.JAVA_BYTE, rec + 16L * k + r, src.get(ValueLayout.JAVA_BYTE, blk + 2 + k));
                }
            }
        }
    }

    /** Group {@code g}'s scales as floats: row {@code r} of block {@code b} at {@code scales[16b + r]} ({@code nb · 16} of them). */
    static void scales(MemorySegment m, int g, int nb, float[] scales) {
        long base = g * groupBytes(nb);
        for (int b = 0; b < nb; b += 2) {
            for (int v = 0; v < RV; v++) {
                IntVector c = IntVector.fromMemorySegment(Simd.I, m, base + 32L * b + 4L * L * v, Simd.LE);
                c.lanewise(VectorOperators.LSHL, 16).lanewise(VectorOperators.ASHR, 3).and(RebiasedF16.DECODE_MASK).reinterpretAsFloats()
                        .mul(RebiasedF16.ACTIVATION_SCALE).intoArray(scales, 16 * b + L * v);
                if (b + 1 < nb) {
                    c.lanewise(VectorOperators.ASHR, 3).and(RebiasedF16.DECODE_MASK).reinterpretAsFloats()
                            .mul(RebiasedF16.ACTIVATION_SCALE).intoArray(scales, 16 * b + 16 + L * v);
                }
            }
        }
    }

    /**
     * Group {@code g} decoded for the prefill GEMM as two 8-row slices ({@link Gemm}): row {@code r},
     * column {@code k} at {@code panel[(r / 8)·8·cols + 8k + r % 8] = q·d} (the reference decoder's floats).
     */
    static void decodeGroup(MemorySegment m, int g, int nb, float[] panel, float[] scales) {
        if (L == 16) {
            decodeGroupWide(m, g, nb, panel, scales);
            return;
        }
        long q = quants(g * groupBytes(nb), nb);
        int slice = 8 * 32 * nb; // floats per 8-row slice
        scales(m, g, nb, scales);
        for (int b = 0; b < nb; b++) {
            long rec = q + (long) b * QUANTS;
            // 8-lane halves, one per slice: plain 32-byte stores (two masked 64-byte stores per
            // column, half of them straddling cache lines, took twice as long); at 128 bits each
            // half is two 4-lane vectors, the two parts of its 8-byte load
            for (int p = 0; p < SL_PARTS; p++) {
                FloatVector d0 = FloatVector.fromArray(F_SL, scales, 16 * b + SL * p);
                FloatVector d1 = FloatVector.fromArray(F_SL, scales, 16 * b + 8 + SL * p);
                for (int k = 0; k < 32; k++) {
                    long at = rec + 16L * k;
                    FloatVector lo = (FloatVector) ((IntVector) ByteVector.fromMemorySegment(B_SL, m, at, Simd.LE).convertShape(VectorOperators.B2I, I_SL, p)).convert(VectorOperators.I2F, 0);
                    FloatVector hi = (FloatVector) ((IntVector) ByteVector.fromMemorySegment(B_SL, m, at + 8, Simd.LE).convertShape(VectorOperators.B2I, I_SL, p)).convert(VectorOperators.I2F, 0);
                    int col = 32 * b + k;
                    lo.mul(d0).intoArray(panel, 8 * col + SL * p);
                    hi.mul(d1).intoArray(panel, slice + 8 * col + SL * p);
                }
            }
        }
    }

    /**
     * {@link #decodeGroup} at 512 bits with vectors of the kernels' one shape: a column's 16 rows
     * widened at once, and two columns' halves brought together for each slice by a two-vector
     * permute. It used to decode with 8-lane (256-bit) vectors; those passed through the same
     * Vector API methods as every 512-bit kernel, whose type profiles then held two classes, and
     * the JIT compiled whichever kernel came next with its vectors boxed (in about half the runs:
     * 11-77 MB allocated per decoded token; docs/PERFORMANCE.md, "One vector shape per process").
     */
    private static void decodeGroupWide(MemorySegment m, int g, int nb, float[] panel, float[] scales) {
        long q = quants(g * groupBytes(nb), nb);
        int slice = 8 * 32 * nb; // floats per 8-row slice
        scales(m, g, nb, scales);
        for (int b = 0; b < nb; b++) {
            long rec = q + (long) b * QUANTS;
            FloatVector d = FloatVector.fromArray(Simd.F, scales, 16 * b);
            for (int k = 0; k < 32; k += 2) {
                long at = rec + 16L * k;
                // receivers are loads or constants, never a conversion's result (see the method comment)
                FloatVector c0 = d.mul((FloatVector) ByteVector.fromMemorySegment(Simd.BL, m, at, Simd.LE).convertShape(VectorOperators.B2F, Simd.F, 0));
                FloatVector c1 = d.mul((FloatVector) ByteVector.fromMemorySegment(Simd.BL, m, at + 16, Simd.LE).convertShape(VectorOperators.B2F, Simd.F, 0));
                int col = 32 * b + k;
                SLICE_LOW.selectFrom(c0, c1).intoArray(panel, 8 * col);
                SLICE_HIGH.selectFrom(c0, c1).intoArray(panel, slice + 8 * col);
            }
        }
    }

    /** Lanes of (column k, column k + 1) for the first slice at 512 bits: rows 0-7 of each; null below 512. */
    private static final FloatVector SLICE_LOW = L == 16 ? sliceIndexes(0) : null;
    /** The same for the second slice: rows 8-15 of each. */
    private static final FloatVector SLICE_HIGH = L == 16 ? sliceIndexes(8) : null;

    private static FloatVector sliceIndexes(int firstRow) {
        float[] idx = new float[16];
        for (int i = 0; i < 8; i++) {
            idx[i] = firstRow + i;          // from the first vector
            idx[8 + i] = 16 + firstRow + i; // from the second
        }
        return FloatVector.fromArray(Simd.F, idx, 0);
    }

    /** Groups {@code [g0, g1)} for every token of {@code a} (Q8_0 activations). */
    static void compute(MemorySegment m, int nb, Activations a, int g0, int g1, float[] out, int outOff, int outStride, float[] scales) {
        int g = g0;
        if (a.nTokens == 1) {
            for (; g + DECODE_GROUPS <= g1; g += DECODE_GROUPS) groupQuad(m, g * groupBytes(nb), nb, a, out, outOff + g * ROWS);
        }
        for (; g < g1; g++) {
            int t = 0, o = outOff + g * ROWS;
            if (PAIRS && g + 1 < g1 && a.nTokens >= 2 * TOKEN_TILE) {
                // two groups, eight tokens per pass (groupPair8); what is left of the tokens, group by group
                for (; t + 2 * TOKEN_TILE <= a.nTokens; t += 2 * TOKEN_TILE) groupPair8(m, g * groupBytes(nb), nb, a, t, out, o + t * outStride, outStride);
                if (t < a.nTokens) fewTokens(m, g, nb, a, t, out, o, outStride, scales);
                g++;
                if (t < a.nTokens) fewTokens(m, g, nb, a, t, out, o + ROWS, outStride, scales);
                continue;
            }
            fewTokens(m, g, nb, a, t, out, o, outStride, scales);
        }
    }

    /** Tokens {@code [t, nTokens)} of group {@code g}: eight, then four per pass over the group (groupTokens8, groupTokens), the rest one at a time. */
    private static void fewTokens(MemorySegment m, int g, int nb, Activations a, int t, float[] out, int o, int outStride, float[] scales) {
        long q = quants(g * groupBytes(nb), nb);
        scales(m, g, nb, scales);
        for (; t + 2 * TOKEN_TILE <= a.nTokens; t += 2 * TOKEN_TILE) groupTokens8(m, q, nb, a, t, out, o + t * outStride, outStride, scales);
        for (; t + TOKEN_TILE <= a.nTokens; t += TOKEN_TILE) groupTokens(m, q, nb, a, t, out, o + t * outStride, outStride, scales);
        for (; t < a.nTokens; t++) group(m, q, nb, a, t, out, o + t * outStride, scales);
    }

    /**
     * Whether {@link #groupPair8} runs: at 512 bits, where a group's 16 rows are one vector and 16
     * accumulators (8 tokens × 2 groups) fit the 32 registers with room to spare. Below, a group
     * already takes two or four vectors per column and AVX2 has 16 registers.
     */
    private static final boolean PAIRS = RV == 1;

    /** Groups per piece of a few-token call handed to a thread: two where {@link #groupPair8} takes the call's tokens, so that no piece leaves a group on its own. */
    static int fewTokenGroups(int nTokens) {
        return PAIRS && nTokens >= 2 * TOKEN_TILE ? 2 : 1;
    }

    /**
     * {@link #groupTokens8} over two adjacent groups at once (group at {@code base} and the next,
     * 32 rows), for the eight tokens {@code t .. t+7}: each activation is broadcast once for two
     * weight vectors, so a column costs two widening loads, eight broadcasts and sixteen FMAs, the
     * prefill GEMM's ratio of broadcasts to FMAs, where one group costs a broadcast per FMA. On a
     * core that executes a 512-bit operation as two 256-bit halves (Zen 4) the broadcasts compete
     * with the FMAs for the vector pipes. The scales are decoded from the groups' lines in
     * registers, as {@link #groupQuad} does, into the same floats as {@link #scales}; every token
     * gets {@link #group}'s bits.
     */
    private static void groupPair8(MemorySegment m, long base, int nb, Activations a, int t, float[] out, int o, int os) {
        float[] x = a.q, d = a.d;
        int cols = a.cols, blocks = a.blocks;
        long stride = groupBytes(nb); // from one group to the next
        long q0 = quants(base, nb);
        for (int i = 0; i < 2 * TOKEN_TILE; i++) java.util.Arrays.fill(out, o + i * os, o + i * os + 2 * ROWS, 0f);
        for (int b = 0; b < nb; b++) {
            int x0 = t * cols + 32 * b, x1 = x0 + cols, x2 = x1 + cols, x3 = x2 + cols, x4 = x3 + cols, x5 = x4 + cols, x6 = x5 + cols, x7 = x6 + cols;
            long rec = q0 + (long) b * QUANTS;
            FloatVector p0 = FloatVector.zero(Simd.F), p1 = p0, p2 = p0, p3 = p0, p4 = p0, p5 = p0, p6 = p0, p7 = p0;
            FloatVector r0 = p0, r1 = p0, r2 = p0, r3 = p0, r4 = p0, r5 = p0, r6 = p0, r7 = p0;
            for (int k = 0; k < 32; k++) {
                long at = rec + 16L * k;
                FloatVector w = (FloatVector) ((IntVector) ByteVector.fromMemorySegment(Simd.BL, m, at, Simd.LE).convertShape(VectorOperators.B2I, Simd.I, 0)).convert(VectorOperators.I2F, 0);
                FloatVector u = (FloatVector) ((IntVector) ByteVector.fromMemorySegment(Simd.BL, m, at + stride, Simd.LE).convertShape(VectorOperators.B2I, Simd.I, 0)).convert(VectorOperators.I2F, 0);
                FloatVector xb;
                xb = FloatVector.broadcast(Simd.F, x[x0 + k]);
                p0 = w.fma(xb, p0);
                r0 = u.fma(xb, r0);
                xb = FloatVector.broadcast(Simd.F, x[x1 + k]);
                p1 = w.fma(xb, p1);
                r1 = u.fma(xb, r1);
                xb = FloatVector.broadcast(Simd.F, x[x2 + k]);
                p2 = w.fma(xb, p2);
                r2 = u.fma(xb, r2);
                xb = FloatVector.broadcast(Simd.F, x[x3 + k]);
                p3 = w.fma(xb, p3);
                r3 = u.fma(xb, r3);
                xb = FloatVector.broadcast(Simd.F, x[x4 + k]);
                p4 = w.fma(xb, p4);
                r4 = u.fma(xb, r4);
                xb = FloatVector.broadcast(Simd.F, x[x5 + k]);
                p5 = w.fma(xb, p5);
                r5 = u.fma(xb, r5);
                xb = FloatVector.broadcast(Simd.F, x[x6 + k]);
                p6 = w.fma(xb, p6);
                r6 = u.fma(xb, r6);
                xb = FloatVector.broadcast(Simd.F, x[x7 + k]);
                p7 = w.fma(xb, p7);
                r7 = u.fma(xb, r7);
            }
            // the two groups' 16 scales of this block: an even block's codes are the low halves of the lanes, an odd one's the high halves
            long sl = base + 64L * (b >> 1);
            int up = 16 - 16 * (b & 1);
            FloatVector s0 = IntVector.fromMemorySegment(Simd.I, m, sl, Simd.LE).lanewise(VectorOperators.LSHL, up).lanewise(VectorOperators.ASHR, 3)
                    .and(RebiasedF16.DECODE_MASK).reinterpretAsFloats().mul(RebiasedF16.ACTIVATION_SCALE);
            FloatVector s1 = IntVector.fromMemorySegment(Simd.I, m, sl + stride, Simd.LE).lanewise(VectorOperators.LSHL, up).lanewise(VectorOperators.ASHR, 3)
                    .and(RebiasedF16.DECODE_MASK).reinterpretAsFloats().mul(RebiasedF16.ACTIVATION_SCALE);
            int n = t * blocks + b, ov = o;
            p0.fma(s0.mul(d[n]), FloatVector.fromArray(Simd.F, out, ov)).intoArray(out, ov);
            r0.fma(s1.mul(d[n]), FloatVector.fromArray(Simd.F, out, ov + ROWS)).intoArray(out, ov + ROWS);
            ov += os;
            p1.fma(s0.mul(d[n + blocks]), FloatVector.fromArray(Simd.F, out, ov)).intoArray(out, ov);
            r1.fma(s1.mul(d[n + blocks]), FloatVector.fromArray(Simd.F, out, ov + ROWS)).intoArray(out, ov + ROWS);
            ov += os;
            p2.fma(s0.mul(d[n + 2 * blocks]), FloatVector.fromArray(Simd.F, out, ov)).intoArray(out, ov);
            r2.fma(s1.mul(d[n + 2 * blocks]), FloatVector.fromArray(Simd.F, out, ov + ROWS)).intoArray(out, ov + ROWS);
            ov += os;
            p3.fma(s0.mul(d[n + 3 * blocks]), FloatVector.fromArray(Simd.F, out, ov)).intoArray(out, ov);
            r3.fma(s1.mul(d[n + 3 * blocks]), FloatVector.fromArray(Simd.F, out, ov + ROWS)).intoArray(out, ov + ROWS);
            ov += os;
            p4.fma(s0.mul(d[n + 4 * blocks]), FloatVector.fromArray(Simd.F, out, ov)).intoArray(out, ov);
            r4.fma(s1.mul(d[n + 4 * blocks]), FloatVector.fromArray(Simd.F, out, ov + ROWS)).intoArray(out, ov + ROWS);
            ov += os;
            p5.fma(s0.mul(d[n + 5 * blocks]), FloatVector.fromArray(Simd.F, out, ov)).intoArray(out, ov);
            r5.fma(s1.mul(d[n + 5 * blocks]), FloatVector.fromArray(Simd.F, out, ov + ROWS)).intoArray(out, ov + ROWS);
            ov += os;
            p6.fma(s0.mul(d[n + 6 * blocks]), FloatVector.fromArray(Simd.F, out, ov)).intoArray(out, ov);
            r6.fma(s1.mul(d[n + 6 * blocks]), FloatVector.fromArray(Simd.F, out, ov + ROWS)).intoArray(out, ov + ROWS);
            ov += os;
            p7.fma(s0.mul(d[n + 7 * blocks]), FloatVector.fromArray(Simd.F, out, ov)).intoArray(out, ov);
            r7.fma(s1.mul(d[n + 7 * blocks]), FloatVector.fromArray(Simd.F, out, ov + ROWS)).intoArray(out, ov + ROWS);
        }
    }

    /** Tokens per pass of {@link #groupTokens}, the kernel of calls of 4 to 15 tokens (a decode step of several sequences). */
    static final int TOKEN_TILE = 4;

    /**
     * One group for the {@link #TOKEN_TILE} tokens {@code t .. t+3} (outputs of token {@code t + i}
     * at {@code out[o + i·os ..]}): each column's 16 weights are loaded and converted to floats
     * once and multiplied into every token's accumulators (a broadcast and an FMA per token),
     * where {@link #group} repeats the load and the conversion per token. Eight accumulators (four
     * tokens × two column phases), carried only around a block's column loop; the sums go through
     * {@code out}. Every product and partial sum of a block is an integer below 2^24, so the block
     * sum is exact in any order, and the scaling is {@link #group}'s: each token gets the bits of
     * a call of its own.
     */
    private static void groupTokens(MemorySegment m, long base, int nb, Activations a, int t, float[] out, int o, int os, float[] scales) {
        float[] x = a.q, d = a.d;
        int cols = a.cols, blocks = a.blocks;
        for (int i = 0; i < TOKEN_TILE; i++) java.util.Arrays.fill(out, o + i * os, o + i * os + ROWS, 0f);
        for (int b = 0; b < nb; b++) {
            int x0 = t * cols + 32 * b, x1 = x0 + cols, x2 = x1 + cols, x3 = x2 + cols;
            for (int v = 0; v < RV; v++) {
                long rec = base + (long) b * QUANTS + (long) (v / PARTS) * BL_BYTES;
                int part = PARTS == 1 ? 0 : v % PARTS; // a constant to the JIT's parser where PARTS is 1
                FloatVector p0 = FloatVector.zero(Simd.F), p1 = p0, p2 = p0, p3 = p0, q0 = p0, q1 = p0, q2 = p0, q3 = p0;
                for (int k = 0; k < 32; k += 4) {
                    long at = rec + 16L * k;
                    FloatVector w;
                    w = (FloatVector) ((IntVector) ByteVector.fromMemorySegment(Simd.BL, m, at, Simd.LE).convertShape(VectorOperators.B2I, Simd.I, part)).convert(VectorOperators.I2F, 0);
                    p0 = w.fma(FloatVector.broadcast(Simd.F, x[x0 + k]), p0);
                    p1 = w.fma(FloatVector.broadcast(Simd.F, x[x1 + k]), p1);
                    p2 = w.fma(FloatVector.broadcast(Simd.F, x[x2 + k]), p2);
                    p3 = w.fma(FloatVector.broadcast(Simd.F, x[x3 + k]), p3);
                    w = (FloatVector) ((IntVector) ByteVector.fromMemorySegment(Simd.BL, m, at + 16, Simd.LE).convertShape(VectorOperators.B2I, Simd.I, part)).convert(VectorOperators.I2F, 0);
                    q0 = w.fma(FloatVector.broadcast(Simd.F, x[x0 + k + 1]), q0);
                    q1 = w.fma(FloatVector.broadcast(Simd.F, x[x1 + k + 1]), q1);
                    q2 = w.fma(FloatVector.broadcast(Simd.F, x[x2 + k + 1]), q2);
                    q3 = w.fma(FloatVector.broadcast(Simd.F, x[x3 + k + 1]), q3);
                    w = (FloatVector) ((IntVector) ByteVector.fromMemorySegment(Simd.BL, m, at + 32, Simd.LE).convertShape(VectorOperators.B2I, Simd.I, part)).convert(VectorOperators.I2F, 0);
                    p0 = w.fma(FloatVector.broadcast(Simd.F, x[x0 + k + 2]), p0);
                    p1 = w.fma(FloatVector.broadcast(Simd.F, x[x1 + k + 2]), p1);
                    p2 = w.fma(FloatVector.broadcast(Simd.F, x[x2 + k + 2]), p2);
                    p3 = w.fma(FloatVector.broadcast(Simd.F, x[x3 + k + 2]), p3);
                    w = (FloatVector) ((IntVector) ByteVector.fromMemorySegment(Simd.BL, m, at + 48, Simd.LE).convertShape(VectorOperators.B2I, Simd.I, part)).convert(VectorOperators.I2F, 0);
                    q0 = w.fma(FloatVector.broadcast(Simd.F, x[x0 + k + 3]), q0);
                    q1 = w.fma(FloatVector.broadcast(Simd.F, x[x1 + k + 3]), q1);
                    q2 = w.fma(FloatVector.broadcast(Simd.F, x[x2 + k + 3]), q2);
                    q3 = w.fma(FloatVector.broadcast(Simd.F, x[x3 + k + 3]), q3);
                }
                int sc = 16 * b + L * v, ov = o + L * v, n = t * blocks + b;
                p0.add(q0).fma(FloatVector.fromArray(Simd.F, scales, sc).mul(d[n]), FloatVector.fromArray(Simd.F, out, ov)).intoArray(out, ov);
                ov += os;
                p1.add(q1).fma(FloatVector.fromArray(Simd.F, scales, sc).mul(d[n + blocks]), FloatVector.fromArray(Simd.F, out, ov)).intoArray(out, ov);
                ov += os;
                p2.add(q2).fma(FloatVector.fromArray(Simd.F, scales, sc).mul(d[n + 2 * blocks]), FloatVector.fromArray(Simd.F, out, ov)).intoArray(out, ov);
                ov += os;
                p3.add(q3).fma(FloatVector.fromArray(Simd.F, scales, sc).mul(d[n + 3 * blocks]), FloatVector.fromArray(Simd.F, out, ov)).intoArray(out, ov);
            }
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
    private static void groupQuad(MemorySegment m, long base, int nb, Activations a, float[] out, int o) {
        float[] x = a.q, d = a.d;
        long stride = groupBytes(nb); // from one group to the next
        long q0 = quants(base, nb);
        // the row sums go through out, not through vectors carried around the block loop (see the method comment)
        java.util.Arrays.fill(out, o, o + 4 * ROWS, 0f);
        for (int b = 0; b < nb; b++) {
            long r0 = q0 + (long) b * QUANTS;
            // an even block's scale codes are the low halves of the lanes, an odd one's the high halves
            long sl = base + 64L * (b >> 1);
            int up = 16 - 16 * (b & 1);
            int xo = 32 * b;
            FloatVector dx = FloatVector.broadcast(Simd.F, d[b] * RebiasedF16.ACTIVATION_SCALE); // matches the decoded scales
            // one pass over the block's columns per vector of rows (one at 512 bits)
            for (int v = 0; v < RV; v++) {
                // the scale lines first (their misses overlap the block's arithmetic)
                long sv = sl + 4L * L * v;
                IntVector s0 = IntVector.fromMemorySegment(Simd.I, m, sv, Simd.LE).lanewise(VectorOperators.LSHL, up);
                IntVector s1 = IntVector.fromMemorySegment(Simd.I, m, sv + stride, Simd.LE).lanewise(VectorOperators.LSHL, up);
                IntVector s2 = IntVector.fromMemorySegment(Simd.I, m, sv + 2 * stride, Simd.LE).lanewise(VectorOperators.LSHL, up);
                IntVector s3 = IntVector.fromMemorySegment(Simd.I, m, sv + 3 * stride, Simd.LE).lanewise(VectorOperators.LSHL, up);
                long rv = r0 + (long) (v / PARTS) * BL_BYTES;
                int part = PARTS == 1 ? 0 : v % PARTS; // a constant to the JIT's parser where PARTS is 1
                FloatVector a0 = FloatVector.zero(Simd.F), a1 = a0, a2 = a0, a3 = a0, b0 = a0, b1 = a0, b2 = a0, b3 = a0, c0 = a0, c1 = a0, c2 = a0, c3 = a0, e0 = a0, e1 = a0, e2 = a0, e3 = a0;
                for (int k = 0; k < 32; k += 4) {
                    long at = rv + 16L * k;
                    int xk = xo + k;
                    FloatVector w, xb;
                    xb = FloatVector.broadcast(Simd.F, x[xk]);
                    w = (FloatVector) ((IntVector) ByteVector.fromMemorySegment(Simd.BL, m, at, Simd.LE).convertShape(VectorOperators.B2I, Simd.I, part)).convert(VectorOperators.I2F, 0);
                    a0 = w.fma(xb, a0);
                    w = (FloatVector) ((IntVector) ByteVector.fromMemorySegment(Simd.BL, m, at + stride, Simd.LE).convertShape(VectorOperators.B2I, Simd.I, part)).convert(VectorOperators.I2F, 0);
                    b0 = w.fma(xb, b0);
                    w = (FloatVector) ((IntVector) ByteVector.fromMemorySegment(Simd.BL, m, at + 2 * stride, Simd.LE).convertShape(VectorOperators.B2I, Simd.I, part)).convert(VectorOperators.I2F, 0);
                    c0 = w.fma(xb, c0);
                    w = (FloatVector) ((IntVector) ByteVector.fromMemorySegment(Simd.BL, m, at + 3 * stride, Simd.LE).convertShape(VectorOperators.B2I, Simd.I, part)).convert(VectorOperators.I2F, 0);
                    e0 = w.fma(xb, e0);
                    xb = FloatVector.broadcast(Simd.F, x[xk + 1]);
                    w = (FloatVector) ((IntVector) ByteVector.fromMemorySegment(Simd.BL, m, at + 16, Simd.LE).convertShape(VectorOperators.B2I, Simd.I, part)).convert(VectorOperators.I2F, 0);
                    a1 = w.fma(xb, a1);
                    w = (FloatVector) ((IntVector) ByteVector.fromMemorySegment(Simd.BL, m, at + stride + 16, Simd.LE).convertShape(VectorOperators.B2I, Simd.I, part)).convert(VectorOperators.I2F, 0);
                    b1 = w.fma(xb, b1);
                    w = (FloatVector) ((IntVector) ByteVector.fromMemorySegment(Simd.BL, m, at + 2 * stride + 16, Simd.LE).convertShape(VectorOperators.B2I, Simd.I, part)).convert(VectorOperators.I2F, 0);
                    c1 = w.fma(xb, c1);
                    w = (FloatVector) ((IntVector) ByteVector.fromMemorySegment(Simd.BL, m, at + 3 * stride + 16, Simd.LE).convertShape(VectorOperators.B2I, Simd.I, part)).convert(VectorOperators.I2F, 0);
                    e1 = w.fma(xb, e1);
                    xb = FloatVector.broadcast(Simd.F, x[xk + 2]);
                    w = (FloatVector) ((IntVector) ByteVector.fromMemorySegment(Simd.BL, m, at + 32, Simd.LE).convertShape(VectorOperators.B2I, Simd.I, part)).convert(VectorOperators.I2F, 0);
                    if (PHASES > 2) a2 = w.fma(xb, a2);
                    else a0 = w.fma(xb, a0);
                    w = (FloatVector) ((IntVector) ByteVector.fromMemorySegment(Simd.BL, m, at + stride + 32, Simd.LE).convertShape(VectorOperators.B2I, Simd.I, part)).convert(VectorOperators.I2F, 0);
                    if (PHASES > 2) b2 = w.fma(xb, b2);
                    else b0 = w.fma(xb, b0);
                    w = (FloatVector) ((IntVector) ByteVector.fromMemorySegment(Simd.BL, m, at + 2 * stride + 32, Simd.LE).convertShape(VectorOperators.B2I, Simd.I, part)).convert(VectorOperators.I2F, 0);
                    if (PHASES > 2) c2 = w.fma(xb, c2);
                    else c0 = w.fma(xb, c0);
                    w = (FloatVector) ((IntVector) ByteVector.fromMemorySegment(Simd.BL, m, at + 3 * stride + 32, Simd.LE).convertShape(VectorOperators.B2I, Simd.I, part)).convert(VectorOperators.I2F, 0);
                    if (PHASES > 2) e2 = w.fma(xb, e2);
                    else e0 = w.fma(xb, e0);
                    xb = FloatVector.broadcast(Simd.F, x[xk + 3]);
                    w = (FloatVector) ((IntVector) ByteVector.fromMemorySegment(Simd.BL, m, at + 48, Simd.LE).convertShape(VectorOperators.B2I, Simd.I, part)).convert(VectorOperators.I2F, 0);
                    if (PHASES > 2) a3 = w.fma(xb, a3);
                    else a1 = w.fma(xb, a1);
                    w = (FloatVector) ((IntVector) ByteVector.fromMemorySegment(Simd.BL, m, at + stride + 48, Simd.LE).convertShape(VectorOperators.B2I, Simd.I, part)).convert(VectorOperators.I2F, 0);
                    if (PHASES > 2) b3 = w.fma(xb, b3);
                    else b1 = w.fma(xb, b1);
                    w = (FloatVector) ((IntVector) ByteVector.fromMemorySegment(Simd.BL, m, at + 2 * stride + 48, Simd.LE).convertShape(VectorOperators.B2I, Simd.I, part)).convert(VectorOperators.I2F, 0);
                    if (PHASES > 2) c3 = w.fma(xb, c3);
                    else c1 = w.fma(xb, c1);
                    w = (FloatVector) ((IntVector) ByteVector.fromMemorySegment(Simd.BL, m, at + 3 * stride + 48, Simd.LE).convertShape(VectorOperators.B2I, Simd.I, part)).convert(VectorOperators.I2F, 0);
                    if (PHASES > 2) e3 = w.fma(xb, e3);
                    else e1 = w.fma(xb, e1);
                }
                int ov = o + L * v;
                FloatVector ta = PHASES > 2 ? a0.add(a1).add(a2.add(a3)) : a0.add(a1);
                FloatVector tb = PHASES > 2 ? b0.add(b1).add(b2.add(b3)) : b0.add(b1);
                FloatVector tc = PHASES > 2 ? c0.add(c1).add(c2.add(c3)) : c0.add(c1);
                FloatVector te = PHASES > 2 ? e0.add(e1).add(e2.add(e3)) : e0.add(e1);
                ta.fma(s0.lanewise(VectorOperators.ASHR, 3).and(RebiasedF16.DECODE_MASK).reinterpretAsFloats().mul(dx), FloatVector.fromArray(Simd.F, out, ov)).intoArray(out, ov);
                tb.fma(s1.lanewise(VectorOperators.ASHR, 3).and(RebiasedF16.DECODE_MASK).reinterpretAsFloats().mul(dx), FloatVector.fromArray(Simd.F, out, ov + ROWS)).intoArray(out, ov + ROWS);
                tc.fma(s2.lanewise(VectorOperators.ASHR, 3).and(RebiasedF16.DECODE_MASK).reinterpretAsFloats().mul(dx), FloatVector.fromArray(Simd.F, out, ov + 2 * ROWS)).intoArray(out, ov + 2 * ROWS);
                te.fma(s3.lanewise(VectorOperators.ASHR, 3).and(RebiasedF16.DECODE_MASK).reinterpretAsFloats().mul(dx), FloatVector.fromArray(Simd.F, out, ov + 3 * ROWS)).intoArray(out, ov + 3 * ROWS);
            }
        }
    }

    /**
     * {@link #groupTokens} for eight tokens {@code t .. t+7}: one accumulator per token (eight FMA
     * chains, as many as two FMA ports with a latency of four keep busy), each column's conversion
     * shared by eight tokens instead of four (per column and token 1.25 vector operations instead
     * of 1.5). Same sums, same bits.
     */
    private static void groupTokens8(MemorySegment m, long base, int nb, Activations a, int t, float[] out, int o, int os, float[] scales) {
        float[] x = a.q, d = a.d;
        int cols = a.cols, blocks = a.blocks;
        for (int i = 0; i < 2 * TOKEN_TILE; i++) java.util.Arrays.fill(out, o + i * os, o + i * os + ROWS, 0f);
        for (int b = 0; b < nb; b++) {
            int x0 = t * cols + 32 * b, x1 = x0 + cols, x2 = x1 + cols, x3 = x2 + cols, x4 = x3 + cols, x5 = x4 + cols, x6 = x5 + cols, x7 = x6 + cols;
            for (int v = 0; v < RV; v++) {
                long rec = base + (long) b * QUANTS + (long) (v / PARTS) * BL_BYTES;
                int part = PARTS == 1 ? 0 : v % PARTS; // a constant to the JIT's parser where PARTS is 1
                FloatVector p0 = FloatVector.zero(Simd.F), p1 = p0, p2 = p0, p3 = p0, p4 = p0, p5 = p0, p6 = p0, p7 = p0;
                for (int k = 0; k < 32; k += 2) {
                    long at = rec + 16L * k;
                    FloatVector w;
                    w = (FloatVector) ((IntVector) ByteVector.fromMemorySegment(Simd.BL, m, at, Simd.LE).convertShape(VectorOperators.B2I, Simd.I, part)).convert(VectorOperators.I2F, 0);
                    p0 = w.fma(FloatVector.broadcast(Simd.F, x[x0 + k]), p0);
                    p1 = w.fma(FloatVector.broadcast(Simd.F, x[x1 + k]), p1);
                    p2 = w.fma(FloatVector.broadcast(Simd.F, x[x2 + k]), p2);
                    p3 = w.fma(FloatVector.broadcast(Simd.F, x[x3 + k]), p3);
                    p4 = w.fma(FloatVector.broadcast(Simd.F, x[x4 + k]), p4);
                    p5 = w.fma(FloatVector.broadcast(Simd.F, x[x5 + k]), p5);
                    p6 = w.fma(FloatVector.broadcast(Simd.F, x[x6 + k]), p6);
                    p7 = w.fma(FloatVector.broadcast(Simd.F, x[x7 + k]), p7);
                    w = (FloatVector) ((IntVector) ByteVector.fromMemorySegment(Simd.BL, m, at + 16, Simd.LE).convertShape(VectorOperators.B2I, Simd.I, part)).convert(VectorOperators.I2F, 0);
                    p0 = w.fma(FloatVector.broadcast(Simd.F, x[x0 + k + 1]), p0);
                    p1 = w.fma(FloatVector.broadcast(Simd.F, x[x1 + k + 1]), p1);
                    p2 = w.fma(FloatVector.broadcast(Simd.F, x[x2 + k + 1]), p2);
                    p3 = w.fma(FloatVector.broadcast(Simd.F, x[x3 + k + 1]), p3);
                    p4 = w.fma(FloatVector.broadcast(Simd.F, x[x4 + k + 1]), p4);
                    p5 = w.fma(FloatVector.broadcast(Simd.F, x[x5 + k + 1]), p5);
                    p6 = w.fma(FloatVector.broadcast(Simd.F, x[x6 + k + 1]), p6);
                    p7 = w.fma(FloatVector.broadcast(Simd.F, x[x7 + k + 1]), p7);
                }
                int sc = 16 * b + L * v, ov = o + L * v, n = t * blocks + b;
                p0.fma(FloatVector.fromArray(Simd.F, scales, sc).mul(d[n]), FloatVector.fromArray(Simd.F, out, ov)).intoArray(out, ov);
                ov += os;
                p1.fma(FloatVector.fromArray(Simd.F, scales, sc).mul(d[n + blocks]), FloatVector.fromArray(Simd.F, out, ov)).intoArray(out, ov);
                ov += os;
                p2.fma(FloatVector.fromArray(Simd.F, scales, sc).mul(d[n + 2 * blocks]), FloatVector.fromArray(Simd.F, out, ov)).intoArray(out, ov);
                ov += os;
                p3.fma(FloatVector.fromArray(Simd.F, scales, sc).mul(d[n + 3 * blocks]), FloatVector.fromArray(Simd.F, out, ov)).intoArray(out, ov);
                ov += os;
                p4.fma(FloatVector.fromArray(Simd.F, scales, sc).mul(d[n + 4 * blocks]), FloatVector.fromArray(Simd.F, out, ov)).intoArray(out, ov);
                ov += os;
                p5.fma(FloatVector.fromArray(Simd.F, scales, sc).mul(d[n + 5 * blocks]), FloatVector.fromArray(Simd.F, out, ov)).intoArray(out, ov);
                ov += os;
                p6.fma(FloatVector.fromArray(Simd.F, scales, sc).mul(d[n + 6 * blocks]), FloatVector.fromArray(Simd.F, out, ov)).intoArray(out, ov);
                ov += os;
                p7.fma(FloatVector.fromArray(Simd.F, scales, sc).mul(d[n + 7 * blocks]), FloatVector.fromArray(Simd.F, out, ov)).intoArray(out, ov);
            }
        }
    }

    private static void group(MemorySegment m, long base, int nb, Activations a, int t, float[] out, int o, float[] scales) {
        float[] x = a.q, d = a.d;
        int xt = t * a.cols, dt = t * a.blocks;
        java.util.Arrays.fill(out, o, o + ROWS, 0f); // the row sums go through out (see groupQuad)
        for (int b = 0; b < nb; b++) {
            int xo = xt + 32 * b;
            float db = d[dt + b];
            for (int v = 0; v < RV; v++) {
                long rec = base + (long) b * QUANTS + (long) (v / PARTS) * BL_BYTES;
                int part = PARTS == 1 ? 0 : v % PARTS; // a constant to the JIT's parser where PARTS is 1
                FloatVector p0 = FloatVector.zero(Simd.F), p1 = p0, p2 = p0, p3 = p0;
                // 16 columns (four cache lines) written out per iteration: the JIT then unrolls the
                // block's two iterations into straight code with constant offsets, where a loop of 4
                // columns spent ~20 of its ~33 instructions per line on indices, counters and moving
                // the broadcast activations. On this VM every instruction per streamed line costs
                // bandwidth (docs/PERFORMANCE.md, "Where the time goes"): +30% from memory. Same products,
                // same order. (All 32 columns written out is too large for C1, which then leaves the
                // method in tier 2 with boxed vectors.)
                for (int k = 0; k < 32; k += 16) {
                    long at = rec + 16L * k;
                    int xk = xo + k;
                    FloatVector w;
                    w = (FloatVector) ((IntVector) ByteVector.fromMemorySegment(Simd.BL, m, at, Simd.LE).convertShape(VectorOperators.B2I, Simd.I, part)).convert(VectorOperators.I2F, 0);
                    p0 = w.fma(FloatVector.broadcast(Simd.F, x[xk]), p0);
                    w = (FloatVector) ((IntVector) ByteVector.fromMemorySegment(Simd.BL, m, at + 16, Simd.LE).convertShape(VectorOperators.B2I, Simd.I, part)).convert(VectorOperators.I2F, 0);
                    p1 = w.fma(FloatVector.broadcast(Simd.F, x[xk + 1]), p1);
                    w = (FloatVector) ((IntVector) ByteVector.fromMemorySegment(Simd.BL, m, at + 32, Simd.LE).convertShape(VectorOperators.B2I, Simd.I, part)).convert(VectorOperators.I2F, 0);
                    p2 = w.fma(FloatVector.broadcast(Simd.F, x[xk + 2]), p2);
                    w = (FloatVector) ((IntVector) ByteVector.fromMemorySegment(Simd.BL, m, at + 48, Simd.LE).convertShape(VectorOperators.B2I, Simd.I, part)).convert(VectorOperators.I2F, 0);
                    p3 = w.fma(FloatVector.broadcast(Simd.F, x[xk + 3]), p3);
                    w = (FloatVector) ((IntVector) ByteVector.fromMemorySegment(Simd.BL, m, at + 64, Simd.LE).convertShape(VectorOperators.B2I, Simd.I, part)).convert(VectorOperators.I2F, 0);
                    p0 = w.fma(FloatVector.broadcast(Simd.F, x[xk + 4]), p0);
                    w = (FloatVector) ((IntVector) ByteVector.fromMemorySegment(Simd.BL, m, at + 80, Simd.LE).convertShape(VectorOperators.B2I, Simd.I, part)).convert(VectorOperators.I2F, 0);
                    p1 = w.fma(FloatVector.broadcast(Simd.F, x[xk + 5]), p1);
                    w = (FloatVector) ((IntVector) ByteVector.fromMemorySegment(Simd.BL, m, at + 96, Simd.LE).convertShape(VectorOperators.B2I, Simd.I, part)).convert(VectorOperators.I2F, 0);
                    p2 = w.fma(FloatVector.broadcast(Simd.F, x[xk + 6]), p2);
                    w = (FloatVector) ((IntVector) ByteVector.fromMemorySegment(Simd.BL, m, at + 112, Simd.LE).convertShape(VectorOperators.B2I, Simd.I, part)).convert(VectorOperators.I2F, 0);
                    p3 = w.fma(FloatVector.broadcast(Simd.F, x[xk + 7]), p3);
                    w = (FloatVector) ((IntVector) ByteVector.fromMemorySegment(Simd.BL, m, at + 128, Simd.LE).convertShape(VectorOperators.B2I, Simd.I, part)).convert(VectorOperators.I2F, 0);
                    p0 = w.fma(FloatVector.broadcast(Simd.F, x[xk + 8]), p0);
                    w = (FloatVector) ((IntVector) ByteVector.fromMemorySegment(Simd.BL, m, at + 144, Simd.LE).convertShape(VectorOperators.B2I, Simd.I, part)).convert(VectorOperators.I2F, 0);
                    p1 = w.fma(FloatVector.broadcast(Simd.F, x[xk + 9]), p1);
                    w = (FloatVector) ((IntVector) ByteVector.fromMemorySegment(Simd.BL, m, at + 160, Simd.LE).convertShape(VectorOperators.B2I, Simd.I, part)).convert(VectorOperators.I2F, 0);
                    p2 = w.fma(FloatVector.broadcast(Simd.F, x[xk + 10]), p2);
                    w = (FloatVector) ((IntVector) ByteVector.fromMemorySegment(Simd.BL, m, at + 176, Simd.LE).convertShape(VectorOperators.B2I, Simd.I, part)).convert(VectorOperators.I2F, 0);
                    p3 = w.fma(FloatVector.broadcast(Simd.F, x[xk + 11]), p3);
                    w = (FloatVector) ((IntVector) ByteVector.fromMemorySegment(Simd.BL, m, at + 192, Simd.LE).convertShape(VectorOperators.B2I, Simd.I, part)).convert(VectorOperators.I2F, 0);
                    p0 = w.fma(FloatVector.broadcast(Simd.F, x[xk + 12]), p0);
                    w = (FloatVector) ((IntVector) ByteVector.fromMemorySegment(Simd.BL, m, at + 208, Simd.LE).convertShape(VectorOperators.B2I, Simd.I, part)).convert(VectorOperators.I2F, 0);
                    p1 = w.fma(FloatVector.broadcast(Simd.F, x[xk + 13]), p1);
                    w = (FloatVector) ((IntVector) ByteVector.fromMemorySegment(Simd.BL, m, at + 224, Simd.LE).convertShape(VectorOperators.B2I, Simd.I, part)).convert(VectorOperators.I2F, 0);
                    p2 = w.fma(FloatVector.broadcast(Simd.F, x[xk + 14]), p2);
                    w = (FloatVector) ((IntVector) ByteVector.fromMemorySegment(Simd.BL, m, at + 240, Simd.LE).convertShape(VectorOperators.B2I, Simd.I, part)).convert(VectorOperators.I2F, 0);
                    p3 = w.fma(FloatVector.broadcast(Simd.F, x[xk + 15]), p3);
                }
                FloatVector sumi = p0.add(p1).add(p2.add(p3));
                sumi.fma(FloatVector.fromArray(Simd.F, scales, 16 * b + L * v).mul(db), FloatVector.fromArray(Simd.F, out, o + L * v)).intoArray(out, o + L * v);
            }
        }
    }
}
