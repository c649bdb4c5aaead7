package io.modelopt.core.kernel;

import io.modelopt.core.quant.Q5_K;
import java.lang.foreign.MemorySegment;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorOperators;

/**
 * Q5_K weights repacked at load as {@link InterleavedQ4_K} repacks Q4_K (one row per 32-bit
 * lane, integer dot products on 16-bit lanes), with each weight's five bits kept together, so
 * that one 16-bit multiply covers a whole quant rather than its low nibble and its fifth bit
 * apart.
 *
 * <p><b>Why.</b> The nibble products of {@link InterleavedQ4_K} cost one 16-bit multiply per
 * element per field: with Q5_K's low nibbles and fifth bits as two nibble fields that was two per
 * weight, and the fifth bits' pass took as many profile samples as the low nibbles' (JFR,
 * 256 bits, Zen 3). Five-bit fields take one and a quarter.
 *
 * <p><b>Layout.</b> Groups of {@link #ROWS} = 2L rows, one {@link #record} per (group,
 * super-block) of {@code 184·2L} bytes, the file's 176 per row plus 8: bytes {@code [0, 48L)}
 * exactly as {@link InterleavedQ4_K}'s record (scales, mins, {@code d}, {@code dmin}), then
 * per sub-block {@code j} (32 elements) ten lines of {@code L} ints, line {@code 2(5j + k) + h}
 * ({@code k} = 0..4 a slot, {@code h} a half of the group) lane {@code i} (row {@code hL + i})
 * holding slot {@code k} of the sub-block's elements 0..15 in its low 16 bits and of elements
 * 16..31 in its high 16 bits. Slot {@code k} of sixteen quants {@code n_0 .. n_15} is
 * {@code n_3k | n_(3k+1) << 5 | n_(3k+2) << 10 | (bit k of n_15) << 15}: fifteen quants in
 * five-bit fields, the sixteenth spread over the five top bits.
 * Rows past the last whole group are not repacked ({@link Q5_KKernel} computes them in place).
 *
 * <p><b>Arithmetic.</b> For a slot {@code w} let {@code L_v = w >>> 5v} (16-bit shifts, v = 0..3):
 * {@code L_v - 32·L_(v+1)} is field {@code v} for v < 3 and {@code L_3} is the top bit, so with
 * {@code y_0 = x_3k}, {@code y_v = x_(3k+v) - 32·x_(3k+v-1)} (v = 1, 2) and
 * {@code y_3 = 2^k·x_15 - 32·x_(3k+2)}, {@code Σ_v y_v·L_v = Σ_(v<3) x_(3k+v)·n_(3k+v) + 2^k·b_k·x_15}
 * (mod 2^16), and the five slots give {@code Σ n·x} over sixteen elements ({@link #multipliers}
 * holds the {@code y}, both halves of a sub-block in one int). Each 16-bit accumulator starts at
 * {@code -16·Σx - 256} (Q8_K's {@code bsums} of its sixteen elements), so it ends at
 * {@code Σ(n - 16)·x - 256} in {@code [-32768, 32512]}, exact as a short ({@code |x| ≤ 128},
 * {@code n - 16} in {@code [-16, 15]}); both halves sign-extended and summed in 32 bits plus
 * {@code 16·Σx + 512} give ggml's {@code Σ q·x} exactly. Then scales, mins, {@code d} and
 * {@code dmin} as for Q4_K (ggml's integers, float rounding only at the super-block's end).
 *
 * <p>Per 32 weights of a row: five line loads, fifteen shifts, twenty multiplies and adds, against
 * five, thirty-two and thirty-two with the fifth bits as a nibble field.
 */
final class InterleavedQ5_K {
    private InterleavedQ5_K() {}

    /** Rows per group: twice the float lanes (0 without vector kernels). */
    static final int ROWS = VectorWidth.BITS / 16;
    /** Bytes per (group, super-block) record: {@code ROWS · 184}. */
    static final int RECORD = ROWS * 184;

    private static final int SCALES = 0, MINS = 8 * ROWS, D = 16 * ROWS, DMIN = D + 4 * ROWS, QUANTS = DMIN + 4 * ROWS;
    /** Lines per (sub-block, half of the group), and multipliers per sub-block ({@link #multipliers}). */
    static final int SLOTS = 5, SUB_BLOCK_MULTIPLIERS = 4 * SLOTS;

    /** The activations' form this layout's kernel reads. */
    static final KQuantMultipliers MULTIPLIERS = new KQuantMultipliers() {
        @Override public int perToken(int cols) { return cols / 32 * SUB_BLOCK_MULTIPLIERS; }
        @Override public void write(float[] q, int qOff, int cols, int[] y, int yOff) { multipliers(q, qOff, cols, y, yOff); }
    };

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
        int[] q = new int[32];
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
                        // sub-block j's quants as ggml's dequantize_row_q5_K reads them
                        long qs = blk + Q5_K.QS + (j / 2) * 32L;
                        int shift = (j & 1) * 4;
                        for (int e = 0; e < 32; e++) {
                            q[e] = ((WeightData.u8(src, qs + e) >>> shift) & 0xF) | (((WeightData.u8(src, blk + Q5_K.QH + e) >>> j) & 1) << 4);
                        }
                        for (int k = 0; k < SLOTS; k++) {
                            long line = rec + QUANTS + (long) (2 * (SLOTS * j + k) + h) * 2 * ROWS;
                            dst.set(WeightData.INT, line + 4L * i, slot(q, 0, k) | slot(q, 16, k) << 16);
                        }
                    }
                }
            }
        }
    }

    /** Slot {@code k} of the sixteen quants {@code q[e0 .. e0+16)} (see "Layout"). */
    static int slot(int[] q, int e0, int k) {
        int e = e0 + 3 * k;
        return q[e] | q[e + 1] << 5 | q[e + 2] << 10 | ((q[e0 + 15] >>> k) & 1) << 15;
    }

    /**
     * The multipliers of one token's Q8_K quants {@code q[qOff .. qOff+cols)} (exact integer
     * floats), {@link #SUB_BLOCK_MULTIPLIERS} ints per 32 columns ({@code cols · 5/8} in all): for
     * sub-block {@code sb} (columns {@code 32sb ..}) and slot {@code k}, {@code y[yOff + 20sb + 4k + v]}
     * holds {@code y_v} (see "Arithmetic") of the sub-block's first sixteen columns in its low and of
     * its last sixteen in its high 16 bits.
     */
    static void multipliers(float[] q, int qOff, int cols, int[] y, int yOff) {
        for (int sb = 0; sb < cols / 32; sb++) {
            int at = qOff + 32 * sb, o = yOff + SUB_BLOCK_MULTIPLIERS * sb;
            for (int k = 0; k < SLOTS; k++) {
                for (int v = 0; v < 4; v++) y[o + 4 * k + v] = (multiplier(q, at, k, v) & 0xFFFF) | multiplier(q, at + 16, k, v) << 16;
            }
        }
    }

    private static int multiplier(float[] q, int e0, int k, int v) {
        int e = e0 + 3 * k;
        return switch (v) {
            case 0 -> (int) q[e];
            case 1, 2 -> (int) q[e + v] - 32 * (int) q[e + v - 1];
            default -> ((int) q[e0 + 15] << k) - 32 * (int) q[e + 2];
        };
    }

    /**
     * Groups {@code [g0, g1)} of the copy {@code m} for every token of {@code a} (Q8_K), with
     * {@code y} the tokens' {@link #multipliers} ({@code cols · 5/8} ints per token, token {@code t}
     * at {@code t · cols · 5/8}): {@code out[outOff + t·outStride + r]} for the groups' rows.
     */
    static void compute(MemorySegment m, int nb, Activations a, int[] y, int g0, int g1, float[] out, int outOff, int outStride) {
        int g = g0;
        int[] scratch = InterleavedQ4_K.SCRATCH.get(); // per thread: the pool's workers share the call's Activations
        if (a.nTokens == 1) {
            for (; g + DECODE_GROUPS <= g1; g += DECODE_GROUPS) groupQuad(m, record(g, nb, 0), nb, a, y, out, outOff + g * ROWS, scratch);
        }
        for (; g < g1; g++) {
            // the first token reads the group from memory, the others from cache
            for (int t = 0; t < a.nTokens; t++) group(m, record(g, nb, 0), nb, a, y, t, out, outOff + t * outStride + g * ROWS, scratch);
        }
    }

    /**
     * One group for token {@code t}. The float sums go through {@code out} rather than vector
     * variables carried around the super-block loop (see {@link InterleavedQ4_0}'s groupQuad:
     * such a phi can make the JIT box every vector of the method).
     */
    private static void group(MemorySegment m, long base, int nb, Activations a, int[] y, int t, float[] out, int o, int[] scratch) {
        float[] d = a.d;
        int[] bs = a.bsums;
        int yt = t * a.cols / 32 * SUB_BLOCK_MULTIPLIERS, dt = t * a.blocks, bt = t * (a.cols / 16);
        int lineBytes = 4 * Simd.L;
        // the byte loads of scales and mins: one BL load per half (two halves per load at 128 bits)
        int bl = Simd.BL.length();
        java.util.Arrays.fill(out, o, o + 2 * Simd.L, 0f);
        for (int b = 0; b < nb; b++) {
            long rec = base + (long) b * RECORD;
            IntVector si0 = IntVector.zero(Simd.I), si1 = si0, sm0 = si0, sm1 = si0;
            for (int j = 0; j < 8; j++) {
                int bsA = bs[bt + 16 * b + 2 * j], bsB = bs[bt + 16 * b + 2 * j + 1], bsj = bsA + bsB;
                long lines = rec + QUANTS + 2L * SLOTS * j * lineBytes;
                SlotSums.group(m, lines, y, yt + SUB_BLOCK_MULTIPLIERS * (8 * b + j), init(bsA, bsB), SLOTS, 5, 10, 15, scratch);
                int back = 16 * bsj + 512;
                long sc = rec + SCALES + (long) ROWS * j, mn = rec + MINS + (long) ROWS * j;
                IntVector u0 = SlotSums.halves(scratch, 0, back), u1 = SlotSums.halves(scratch, Simd.L, back);
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

    /** A sub-block's accumulator start: {@code -16·Σx - 256} of its first sixteen columns in the low, of its last in the high 16 bits. */
    static int init(int bsA, int bsB) {
        return ((-16 * bsA - 256) & 0xFFFF) | (-16 * bsB - 256) << 16;
    }

    /**
     * {@link #DECODE_GROUPS} adjacent groups from {@code base} for a one-token call, as
     * {@link InterleavedQ4_K#groupQuad} (eight streams, eight accumulators of {@code L} rows), whose
     * sub-block end and super-block end it shares (the record starts as Q4_K's); the slots' sums
     * come from {@link SlotSums#pass}. The bits of one-group calls.
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
                int bsA = bs[16 * b + 2 * j], bsB = bs[16 * b + 2 * j + 1];
                SlotSums.pass(m, rec + QUANTS + 2L * SLOTS * j * lb, stride, y, SUB_BLOCK_MULTIPLIERS * (8 * b + j), init(bsA, bsB), SLOTS, 5, 10, 15, scratch);
                InterleavedQ4_K.finishSubBlock(m, rec, stride, j, bsA + bsB, true, scratch);
            }
            InterleavedQ4_K.finishSuperBlock(m, rec, stride, d[b], scratch, out, o);
        }
    }
}
