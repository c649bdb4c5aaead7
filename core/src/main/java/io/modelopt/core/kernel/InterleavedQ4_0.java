package io.modelopt.core.kernel;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * Q4_0 weights repacked at load so that one vector lane is one weight row (as llama.cpp repacks
 * Q4_0 into {@code block_q4_0x8} for its x86 GEMV), for the decode-sized matmuls; the prefill
 * GEMM decodes its panels from the same copy ({@link #decodeGroup}), so the file's pages of the
 * copied rows can be released.
 *
 * <p><b>Layout.</b> Rows are taken in groups of {@link #ROWS} = 32. A group starts with its
 * scales, the file's halves, 32 per 32-column block (row order; widened once per group into a
 * float array, {@link #scales}, as in {@link InterleavedQ8_0}), followed by one 512-byte record of
 * quants per block: 8 × 64 bytes. Quant chunk {@code p} holds block bytes {@code 2p} and
 * {@code 2p+1} of every row of the group as one 16-bit lane per row: lane {@code 2i} is row
 * {@code i}, lane {@code 2i+1} row {@code 16+i} (so that the two halves of each 32-bit lane are
 * rows {@code i} and {@code 16+i}, see below). The four nibbles of a lane are columns
 * {@code 2p}, {@code 2p+16}, {@code 2p+1}, {@code 2p+17} of its row (ggml's nibble order). Rows
 * past the last whole group (e.g. 172 = 5·32 + 12) are not repacked; {@link MatMul} computes them
 * in place with {@link Q4_0Kernel}.
 *
 * <p><b>Arithmetic.</b> Per block and row the integer {@code Σ_k (q_k - 8)·x_k} is summed exactly
 * in 16-bit lanes: a nibble times an 8-bit activation fits in 11 bits, and the block sum
 * {@code Σ q·x - 8·Σx} is accumulated with wrap-around; the true value lies in
 * {@code [-32512, 32512]} (|q-8| ≤ 8, |x| ≤ 127, 32 terms), so the wrapped 16-bit result equals
 * it. That is ggml's {@code sumi}; it is then scaled by {@code dw·dx} into a float accumulator,
 * block after block, as the scalar {@code ggml_vec_dot_q4_0_q8_0} does except that the two scales
 * are multiplied first. 16-bit lanes do twice the work per instruction of float lanes, and rows
 * in lanes need no horizontal sum. The sums leave the 16-bit lanes through 32-bit shifts and the
 * magic-number conversion ({@link Simd}), without shape-changing conversions: a compilation in
 * which the JIT cannot prove such a conversion's species constant boxes every vector (seen with
 * {@code convertShape(ZERO_EXTEND_B2S, …)} here, depending on profile).
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
    /** Row groups per pass of a one-token call ({@link #groupPair}). */
    static final int DECODE_GROUPS = 2;
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

    private static final VectorSpecies<Short> S = ShortVector.SPECIES_512;
    private static final VectorSpecies<Byte> B64 = ByteVector.SPECIES_512;
    /** {@code intBitsToFloat(MAGIC_BITS + n) - MAGIC = n} exactly for |n| < 2^22. */
    private static final int MAGIC_BITS = 0x4B400000;
    private static final float MAGIC = 0x1.8p23f;

    static long packedBytes(int rows, int cols) {
        return (long) (rows / ROWS) * (cols / 32) * RECORD;
    }

    /** The 16-bit lane of row {@code r} (0..31) of a group. */
    static int lane(int r) {
        return r < 16 ? 2 * r : 2 * (r - 16) + 1;
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
                    long blk = (long) (g * ROWS + r) * rowBytes + (long) b * Q4_0Kernel.BLOCK_BYTES;
                    dst.set(WeightData.SHORT, base + (long) b * SCALES + 2L * r, src.get(WeightData.SHORT, blk));
                    long at = rec + 2L * lane(r);
                    for (int p = 0; p < 8; p++) {
                        dst.set(ValueLayout.JAVA_BYTE, at + 64L * p, src.get(ValueLayout.JAVA_BYTE, blk + 2 + 2 * p));
                        dst.set(ValueLayout.JAVA_BYTE, at + 64L * p + 1, src.get(ValueLayout.JAVA_BYTE, blk + 3 + 2 * p));
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
            FloatVector d0 = FloatVector.fromArray(Simd.F, scales, 32 * b);
            FloatVector d1 = FloatVector.fromArray(Simd.F, scales, 32 * b + 16);
            for (int p = 0; p < 8; p++) {
                ShortVector v = ByteVector.fromMemorySegment(B64, m, rec + 64L * p, Simd.LE).reinterpretAsShorts();
                int c = 32 * b + 2 * p;
                // nibble n of every lane; 32-bit lane i holds row i (low half) and row 16+i (high half)
                for (int n = 0; n < 4; n++) {
                    IntVector q = v.lanewise(VectorOperators.LSHR, 4 * n).and((short) 0xF).reinterpretAsInts();
                    FloatVector lo = q.and(0xFFFF).or(Simd.MAGIC_BITS).reinterpretAsFloats().sub(Simd.MAGIC + 8);
                    FloatVector hi = q.lanewise(VectorOperators.LSHR, 16).or(Simd.MAGIC_BITS).reinterpretAsFloats().sub(Simd.MAGIC + 8);
                    int col = c + NIBBLE_COLUMN[n];
                    // lanes 0..7 to slice 0 (2 for hi), lanes 8..15 to slice 1 (3): the masked store
                    // writes lane j at offset + j, hence the - 8
                    lo = lo.mul(d0);
                    hi = hi.mul(d1);
                    lo.intoArray(panel, 8 * col, Simd.LOW8);
                    lo.intoArray(panel, slice + 8 * col - 8, Simd.HIGH8);
                    hi.intoArray(panel, 2 * slice + 8 * col, Simd.LOW8);
                    hi.intoArray(panel, 3 * slice + 8 * col - 8, Simd.HIGH8);
                }
            }
        }
    }

    /** Column offset, within a chunk's pair of block bytes, of nibble n (low/high of byte 2p, then of byte 2p+1). */
    private static final int[] NIBBLE_COLUMN = {0, 16, 1, 17};

    /** Groups {@code [g0, g1)} for every token of {@code a} ({@link Activations#packedQ4} filled). */
    static void compute(MemorySegment m, int nb, Activations a, int g0, int g1, float[] out, int outOff, int outStride, float[] scales) {
        int g = g0;
        if (a.nTokens == 1) {
            for (; g + DECODE_GROUPS <= g1; g += DECODE_GROUPS) {
                scales(m, g, nb, scales, 0);
                scales(m, g + 1, nb, scales, 1);
                groupPair(m, quants((long) g * nb * RECORD, nb), nb, a, out, outOff + g * ROWS, scales);
            }
        }
        for (; g < g1; g++) {
            long q = quants((long) g * nb * RECORD, nb);
            scales(m, g, nb, scales);
            // the first token reads the group from memory; the others find it in L1 (18 KB at 2048 columns)
            for (int t = 0; t < a.nTokens; t++) group(m, q, nb, a, t, out, outOff + t * outStride + g * ROWS, scales);
        }
    }

    /** Group {@code g}'s scales as floats: row {@code r} of block {@code b} at {@code scales[32b + r]} ({@code nb · 32} of them). */
    static void scales(MemorySegment m, int g, int nb, float[] scales) {
        scales(m, g, nb, scales, 0);
    }

    /** The same, into the {@code slot}-th group's place of a pass: {@code scales[slot·nb·ROWS ..]}. */
    private static void scales(MemorySegment m, int g, int nb, float[] scales, int slot) {
        WeightData.halves(m, (long) g * nb * RECORD, scales, slot * nb * ROWS, nb * ROWS);
    }

    /**
     * Two adjacent groups ({@code q0} and the next) for a one-token call: each activation is
     * loaded and broadcast once for 64 rows, and the loop's own instructions count once per two
     * lines of weights; on this machine every instruction per line costs bandwidth
     * (docs/PERFORMANCE.md, "Closing session"). JMH 5632×2048 and 2048×5632, one token, two
     * threads, 1 GiB: 13.6–13.9 → 16.4–18.7 GB/s. Integer sums are exact, the float steps those of
     * {@link #group}: the same bits.
     */
    private static void groupPair(MemorySegment m, long q0, int nb, Activations a, float[] out, int o, float[] scales) {
        short[] x = a.q16, neg8 = a.neg8Sum;
        float[] d = a.d;
        long stride = (long) nb * RECORD; // from one group's quants to the next's
        FloatVector f0 = FloatVector.zero(Simd.F), f1 = f0, h0 = f0, h1 = f0;
        for (int b = 0; b < nb; b++) {
            long rec = q0 + (long) b * QUANTS, rec2 = rec + stride;
            int xo = 32 * b;
            ShortVector a0 = ShortVector.broadcast(S, neg8[b]), a1 = ShortVector.zero(S), c0 = a0, c1 = a1;
            for (int p = 0; p < 8; p++) {
                ShortVector v = ByteVector.fromMemorySegment(B64, m, rec + 64L * p, Simd.LE).reinterpretAsShorts();
                ShortVector u = ByteVector.fromMemorySegment(B64, m, rec2 + 64L * p, Simd.LE).reinterpretAsShorts();
                int c = xo + 2 * p;
                short x0 = x[c], x16 = x[c + 16], x1 = x[c + 1], x17 = x[c + 17];
                a0 = a0.add(v.and((short) 0xF).mul(x0));
                c0 = c0.add(u.and((short) 0xF).mul(x0));
                a1 = a1.add(v.lanewise(VectorOperators.LSHR, 4).and((short) 0xF).mul(x16));
                c1 = c1.add(u.lanewise(VectorOperators.LSHR, 4).and((short) 0xF).mul(x16));
                a0 = a0.add(v.lanewise(VectorOperators.LSHR, 8).and((short) 0xF).mul(x1));
                c0 = c0.add(u.lanewise(VectorOperators.LSHR, 8).and((short) 0xF).mul(x1));
                a1 = a1.add(v.lanewise(VectorOperators.LSHR, 12).mul(x17));
                c1 = c1.add(u.lanewise(VectorOperators.LSHR, 12).mul(x17));
            }
            FloatVector dx = FloatVector.broadcast(Simd.F, d[b]);
            IntVector sums = a0.add(a1).reinterpretAsInts();
            FloatVector lo = sums.lanewise(VectorOperators.LSHL, 16).lanewise(VectorOperators.ASHR, 16).add(MAGIC_BITS).reinterpretAsFloats().sub(MAGIC);
            FloatVector hi = sums.lanewise(VectorOperators.ASHR, 16).add(MAGIC_BITS).reinterpretAsFloats().sub(MAGIC);
            f0 = lo.fma(FloatVector.fromArray(Simd.F, scales, 32 * b).mul(dx), f0);
            f1 = hi.fma(FloatVector.fromArray(Simd.F, scales, 32 * b + 16).mul(dx), f1);
            sums = c0.add(c1).reinterpretAsInts();
            lo = sums.lanewise(VectorOperators.LSHL, 16).lanewise(VectorOperators.ASHR, 16).add(MAGIC_BITS).reinterpretAsFloats().sub(MAGIC);
            hi = sums.lanewise(VectorOperators.ASHR, 16).add(MAGIC_BITS).reinterpretAsFloats().sub(MAGIC);
            h0 = lo.fma(FloatVector.fromArray(Simd.F, scales, 32 * (nb + b)).mul(dx), h0);
            h1 = hi.fma(FloatVector.fromArray(Simd.F, scales, 32 * (nb + b) + 16).mul(dx), h1);
        }
        f0.intoArray(out, o);
        f1.intoArray(out, o + 16);
        h0.intoArray(out, o + ROWS);
        h1.intoArray(out, o + ROWS + 16);
    }

    private static void group(MemorySegment m, long base, int nb, Activations a, int t, float[] out, int o, float[] scales) {
        short[] x = a.q16, neg8 = a.neg8Sum;
        float[] d = a.d;
        int xt = t * a.cols, dt = t * a.blocks;
        long touchLimit = m.byteSize() - RECORD;
        int sink = 0;
        FloatVector f0 = FloatVector.zero(Simd.F), f1 = f0;
        for (int b = 0; b < nb; b++) {
            long rec = base + (long) b * QUANTS;
            if (TOUCH) {
                long ahead = Math.min(rec + TOUCH_AHEAD, touchLimit);
                sink += m.get(ValueLayout.JAVA_BYTE, ahead) + m.get(ValueLayout.JAVA_BYTE, ahead + 64) + m.get(ValueLayout.JAVA_BYTE, ahead + 128)
                        + m.get(ValueLayout.JAVA_BYTE, ahead + 192) + m.get(ValueLayout.JAVA_BYTE, ahead + 256) + m.get(ValueLayout.JAVA_BYTE, ahead + 320)
                        + m.get(ValueLayout.JAVA_BYTE, ahead + 384) + m.get(ValueLayout.JAVA_BYTE, ahead + 448);
            }
            int xo = xt + 32 * b;
            // a0 starts at -8·Σx: with it, Σ q·x (wrapping) becomes Σ (q-8)·x
            ShortVector a0 = ShortVector.broadcast(S, neg8[dt + b]), a1 = ShortVector.zero(S);
            for (int p = 0; p < 8; p++) {
                ShortVector v = ByteVector.fromMemorySegment(B64, m, rec + 64L * p, Simd.LE).reinterpretAsShorts();
                int c = xo + 2 * p;
                a0 = a0.add(v.and((short) 0xF).mul(x[c]));
                a1 = a1.add(v.lanewise(VectorOperators.LSHR, 4).and((short) 0xF).mul(x[c + 16]));
                a0 = a0.add(v.lanewise(VectorOperators.LSHR, 8).and((short) 0xF).mul(x[c + 1]));
                a1 = a1.add(v.lanewise(VectorOperators.LSHR, 12).mul(x[c + 17]));
            }
            // 32-bit lane i: row i in the low half, row 16+i in the high half
            IntVector sums = a0.add(a1).reinterpretAsInts();
            FloatVector lo = sums.lanewise(VectorOperators.LSHL, 16).lanewise(VectorOperators.ASHR, 16).add(MAGIC_BITS).reinterpretAsFloats().sub(MAGIC);
            FloatVector hi = sums.lanewise(VectorOperators.ASHR, 16).add(MAGIC_BITS).reinterpretAsFloats().sub(MAGIC);
            FloatVector dx = FloatVector.broadcast(Simd.F, d[dt + b]);
            f0 = lo.fma(FloatVector.fromArray(Simd.F, scales, 32 * b).mul(dx), f0);
            f1 = hi.fma(FloatVector.fromArray(Simd.F, scales, 32 * b + 16).mul(dx), f1);
        }
        Prefetch.keep(sink);
        f0.intoArray(out, o);
        f1.intoArray(out, o + 16);
    }
}
