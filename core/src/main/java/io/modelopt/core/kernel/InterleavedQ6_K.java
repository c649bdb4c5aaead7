package io.modelopt.core.kernel;

import io.modelopt.core.quant.Q6_K;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorOperators;

/**
 * Q6_K weights repacked at load so that one 32-bit vector lane is one weight row, for the
 * decode-sized matmuls: integer dot products on 16-bit lanes, each quant's six bits in one
 * field, so that one 16-bit multiply covers a whole quant ({@link InterleavedQ5_K}'s idea with
 * six-bit fields), with the Q6_K multipliers of their own ({@link #MULTIPLIERS}).
 *
 * <p><b>Why.</b> The in-place kernel ({@link Q6_KKernel.Vectorized}) turns every weight into a
 * float (tiny1b decode 0.30× llama.cpp AVX2, whose {@code ggml_vec_dot_q6_K_q8_K} multiplies
 * bytes with {@code maddubs}). Split as the file splits it ({@code q = lo + 16·hi}, a nibble
 * and two bits, both multiplied as nibbles) a quant took two 16-bit multiplies and a mask
 * (decode median 0.87× llama.cpp at 256 bits, Zen 3); six-bit slots take three quarters of one.
 *
 * <p><b>Layout.</b> Rows are taken in groups of {@link #ROWS} = 2L ({@code L} = float lanes of
 * the process's width). Each group is a sequence of one {@link #record} per super-block (256
 * columns), {@code 212·2L} bytes (as many bits per weight as the file: 6.6):
 * <ul>
 *   <li>bytes {@code [0, 32L)}: the int8 scales, {@code sc[j][r]} at {@code 2L·j + r}
 *       (sub-block {@code j} = 0..15 of 16 elements, row {@code r} of the group);
 *   <li>{@code [32L, 40L)}: {@code d} of each row as a float;
 *   <li>{@code [40L, 424L)}: per sub-block {@code j}, six lines of {@code L} ints, line
 *       {@code 2k + h} ({@code k} = 0..2 a slot, {@code h} a half of the group) lane {@code i}
 *       (row {@code hL + i}) holding slot {@code k} of the sub-block's elements 0..7 in its low
 *       and of elements 8..15 in its high 16 bits. Slot {@code k} of eight quants
 *       {@code n_0 .. n_7} is {@code n_2k | n_(2k+1) << 6 | (bits 2k, 2k+1 of n_6) << 12 |
 *       (bits 2k, 2k+1 of n_7) << 14}: six quants in six-bit fields, the last two spread over
 *       the slots' two-bit tops.
 * </ul>
 * Rows past the last whole group are not repacked ({@link Q6_KKernel} computes them in place).
 *
 * <p><b>Arithmetic.</b> For a slot {@code w} let {@code L_v = w >>> s_v} (16-bit shifts,
 * {@code s} = 0, 6, 12, 14). With {@code y_0 = x_2k}, {@code y_1 = x_(2k+1) - 64·x_2k},
 * {@code y_2 = 4^k·x_6 - 64·x_(2k+1)} and {@code y_3 = 4^k·x_7 - 4^(k+1)·x_6},
 * {@code Σ_v y_v·L_v ≡ x_2k·n_2k + x_(2k+1)·n_(2k+1) + 4^k·(x_6·c_6k + x_7·c_7k)} (mod 2^16,
 * {@code c} the two-bit pieces), and the three slots give {@code Σ n·x} over eight elements.
 * Each 16-bit accumulator starts at {@code -32·Σx - 256} of its eight columns (held with the
 * multipliers: Q8_K's {@code bsums} are per sixteen), so it ends at {@code Σ(n - 32)·x - 256}
 * in {@code [-32768, 32512]}, exact as a short ({@code |x| ≤ 128}, {@code n - 32} in
 * {@code [-32, 31]}); both halves sign-extended and summed in 32 bits plus 512 give ggml's
 * {@code Σ(q-32)·x} of the sub-block. Then {@code sumi = Σ_j sc_j·Σ(q-32)·x} in int lanes
 * (exact: below 2^27), and per super-block {@code out += (dx·d)·sumi} in floats: ggml's integers.
 *
 * <p>Per 16 weights of a row: three line loads, nine shifts, twelve multiplies and adds, against
 * three loads, two masks, sixteen multiplies and adds with the nibble split.
 */
final class InterleavedQ6_K {
    private InterleavedQ6_K() {}

    /** Rows per group: twice the float lanes (0 without vector kernels). */
    static final int ROWS = VectorWidth.BITS / 16;
    /** Bytes per (group, super-block) record: {@code ROWS · 212}. */
    static final int RECORD = ROWS * 212;

    private static final int SCALES = 0, D = 16 * ROWS, QUANTS = D + 4 * ROWS;
    /** Slots per (sub-block, half of the group); the views' shifts. */
    static final int SLOTS = 3, S1 = 6, S2 = 12, S3 = 14;
    /** Multipliers per sub-block: four per slot, then the accumulators' start ({@link #multipliers}). */
    static final int SUB_BLOCK_MULTIPLIERS = 4 * SLOTS + 1;
    /** Bytes of one sub-block's six lines. */
    private static final int SUB = 12 * ROWS;

    /** The activations' form this layout's kernel reads. */
    static final KQuantMultipliers MULTIPLIERS = new KQuantMultipliers() {
        @Override public int perToken(int cols) { return cols / 16 * SUB_BLOCK_MULTIPLIERS; }
        @Override public void write(float[] q, int qOff, int cols, int[] y, int yOff) { multipliers(q, qOff, cols, y, yOff); }
    };

    /** Groups per pass of a one-token call ({@link #groupQuad}): four, eight line streams of {@code L} rows. */
    static final int DECODE_GROUPS = 4;

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
                        for (int k = 0; k < SLOTS; k++) {
                            dst.set(WeightData.INT, lines + (2L * k + h) * 2 * ROWS + 4L * i, slot(q, 16 * j, k) | slot(q, 16 * j + 8, k) << 16);
                        }
                    }
                }
            }
        }
    }

    /** Slot {@code k} of the eight quants {@code q[e0 .. e0+8)} (see "Layout"). */
    static int slot(int[] q, int e0, int k) {
        int e = e0 + 2 * k;
        return q[e] | q[e + 1] << 6 | ((q[e0 + 6] >>> 2 * k) & 3) << 12 | ((q[e0 + 7] >>> 2 * k) & 3) << 14;
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
     * The multipliers of one token's Q8_K quants {@code q[qOff .. qOff+cols)} (exact integer
     * floats), {@link #SUB_BLOCK_MULTIPLIERS} ints per 16 columns: for sub-block {@code sb} and slot
     * {@code k}, {@code y[yOff + 13sb + 4k + v]} holds {@code y_v} (see "Arithmetic") of the
     * sub-block's first eight columns in its low and of its last eight in its high 16 bits, and
     * {@code y[yOff + 13sb + 12]} the accumulators' start, {@code -32·Σx - 256} of each eight.
     */
    static void multipliers(float[] q, int qOff, int cols, int[] y, int yOff) {
        for (int sb = 0; sb < cols / 16; sb++) {
            int at = qOff + 16 * sb, o = yOff + SUB_BLOCK_MULTIPLIERS * sb;
            for (int k = 0; k < SLOTS; k++) {
                for (int v = 0; v < 4; v++) y[o + 4 * k + v] = (multiplier(q, at, k, v) & 0xFFFF) | multiplier(q, at + 8, k, v) << 16;
            }
            int sA = 0, sB = 0;
            for (int e = 0; e < 8; e++) {
                sA += (int) q[at + e];
                sB += (int) q[at + 8 + e];
            }
            y[o + 4 * SLOTS] = ((-32 * sA - 256) & 0xFFFF) | (-32 * sB - 256) << 16;
        }
    }

    private static int multiplier(float[] q, int e0, int k, int v) {
        int e = e0 + 2 * k;
        return switch (v) {
            case 0 -> (int) q[e];
            case 1 -> (int) q[e + 1] - 64 * (int) q[e];
            case 2 -> ((int) q[e0 + 6] << 2 * k) - 64 * (int) q[e + 1];
            default -> ((int) q[e0 + 7] << 2 * k) - ((int) q[e0 + 6] << 2 * k + 2);
        };
    }

    /**
     * Groups {@code [g0, g1)} of the copy {@code m} for every token of {@code a} (Q8_K), with
     * {@code y} the tokens' {@link #multipliers} ({@link #MULTIPLIERS}{@code .perToken(cols)} ints
     * per token): {@code out[outOff + t·outStride + r]} for the groups' rows.
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
     * One group for token {@code t}, through the pass's scratch: {@code [0, 2L)} a sub-block's two
     * accumulators, {@link InterleavedQ4_K#SUMI} the super-block's {@code sumi}. The float sums go
     * through {@code out} rather than vector variables carried around the super-block loop (see
     * {@link InterleavedQ4_0}'s groupQuad: such a phi can make the JIT box every vector of the method).
     */
    private static void group(MemorySegment m, long base, int nb, Activations a, int[] y, int t, float[] out, int o, int[] scratch) {
        int per = MULTIPLIERS.perToken(a.cols);
        java.util.Arrays.fill(out, o, o + ROWS, 0f);
        java.util.Arrays.fill(scratch, InterleavedQ4_K.SUMI * Simd.L, (InterleavedQ4_K.SUMI + 2) * Simd.L, 0);
        for (int b = 0; b < nb; b++) {
            long rec = base + (long) b * RECORD;
            for (int j = 0; j < 16; j++) {
                int c = t * per + SUB_BLOCK_MULTIPLIERS * (16 * b + j);
                SlotSums.group(m, rec + QUANTS + (long) SUB * j, y, c, y[c + 4 * SLOTS], SLOTS, S1, S2, S3, scratch);
                finishSubBlock(m, rec, 0, j, 1, scratch);
            }
            finishSuperBlock(m, rec, 0, a.d[t * a.blocks + b], 1, scratch, out, o);
        }
    }

    /**
     * {@link #DECODE_GROUPS} adjacent groups from {@code base} (group {@code g}'s first record) for a
     * one-token call, as {@link InterleavedQ4_K#groupQuad}: eight accumulators of {@code L} rows
     * (accumulator {@code k}: group {@code k/2}, half {@code k%2}), eight streams read at once
     * (one group per pass, {@link #group}: 7.9 GB/s from memory against 15.4 from cache, JMH
     * 5632×2048, one thread, Zen 4 VM). Exact integer sums and {@link #group}'s float steps: the
     * bits of one-group calls.
     */
    private static void groupQuad(MemorySegment m, long base, int nb, Activations a, int[] y, float[] out, int o, int[] scratch) {
        float[] d = a.d;
        long stride = (long) nb * RECORD; // from one group to the next
        java.util.Arrays.fill(out, o, o + DECODE_GROUPS * ROWS, 0f);
        java.util.Arrays.fill(scratch, InterleavedQ4_K.SUMI * Simd.L, (InterleavedQ4_K.SUMI + 2 * DECODE_GROUPS) * Simd.L, 0);
        for (int b = 0; b < nb; b++) {
            long rec = base + (long) b * RECORD;
            for (int j = 0; j < 16; j++) {
                int c = SUB_BLOCK_MULTIPLIERS * (16 * b + j);
                SlotSums.pass(m, rec + QUANTS + (long) SUB * j, stride, y, c, y[c + 4 * SLOTS], SLOTS, S1, S2, S3, scratch);
                finishSubBlock(m, rec, stride, j, DECODE_GROUPS, scratch);
            }
            finishSuperBlock(m, rec, stride, d[b], DECODE_GROUPS, scratch, out, o);
        }
    }

    /** Sub-block {@code j}'s end for {@code groups} groups' accumulators: {@code sumi += sc_j·Σ(q-32)·x}, exact. */
    private static void finishSubBlock(MemorySegment m, long rec, long stride, int j, int groups, int[] scratch) {
        int bl = Simd.BL.length(), lanes = Simd.L, si = InterleavedQ4_K.SUMI * lanes;
        for (int gi = 0; gi < groups; gi++) {
            long sc = rec + gi * stride + SCALES + (long) ROWS * j;
            int k0 = 2 * gi * lanes, k1 = k0 + lanes;
            IntVector u0 = SlotSums.halves(scratch, k0, 512), u1 = SlotSums.halves(scratch, k1, 512);
            IntVector sc0 = (IntVector) ByteVector.fromMemorySegment(Simd.BL, m, sc, Simd.LE).convertShape(VectorOperators.B2I, Simd.I, 0);
            IntVector sc1 = (IntVector) ByteVector.fromMemorySegment(Simd.BL, m, sc + (Simd.BL_PARTS == 1 ? bl : 0), Simd.LE)
                    .convertShape(VectorOperators.B2I, Simd.I, Simd.BL_PARTS == 1 ? 0 : 1);
            u0.mul(sc0).add(IntVector.fromArray(Simd.I, scratch, si + k0)).intoArray(scratch, si + k0);
            u1.mul(sc1).add(IntVector.fromArray(Simd.I, scratch, si + k1)).intoArray(scratch, si + k1);
        }
    }

    /** A super-block's end for {@code groups} groups: {@code out += (dx·d)·sumi} per row; the sums reset. */
    private static void finishSuperBlock(MemorySegment m, long rec, long stride, float dx, int groups, int[] scratch, float[] out, int o) {
        int lanes = Simd.L, lineBytes = 4 * lanes, si = InterleavedQ4_K.SUMI * lanes;
        for (int gi = 0; gi < groups; gi++) {
            long r = rec + gi * stride;
            for (int h = 0; h < 2; h++) {
                int k = (2 * gi + h) * lanes, at = o + gi * ROWS + h * lanes;
                FloatVector dw = FloatVector.fromMemorySegment(Simd.F, m, r + D + (long) h * lineBytes, Simd.LE).mul(dx);
                FloatVector sumi = (FloatVector) IntVector.fromArray(Simd.I, scratch, si + k).convert(VectorOperators.I2F, 0);
                sumi.fma(dw, FloatVector.fromArray(Simd.F, out, at)).intoArray(out, at);
            }
        }
        java.util.Arrays.fill(scratch, si, si + 2 * groups * lanes, 0);
    }
}
