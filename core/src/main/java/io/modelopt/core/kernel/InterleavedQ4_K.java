package io.modelopt.core.kernel;

import io.modelopt.core.quant.Q4_K;
import java.lang.foreign.MemorySegment;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorOperators;

/**
 * Q4_K weights repacked at load so that one 32-bit vector lane is one weight row, for the
 * decode-sized matmuls: the integer dot products then run on 16-bit lanes (twice the float
 * lanes, no float conversion per weight), as {@link InterleavedQ4_0} does for Q4_0.
 *
 * <p><b>Why.</b> The in-place kernel ({@link Q4_KKernel.Vectorized}) turns every weight into a
 * float and multiplies it by a float activation: per 64 weights at 256 bits about 8 widening
 * loads, 8 masks or shifts, 8 conversions, 8 activation loads and 8 FMAs (~44 vector
 * instructions, 256 activation bytes), and 8 sub-block scales decoded in scalar code per
 * super-block. llama.cpp's AVX2 {@code ggml_vec_dot_q4_K_q8_K} spends ~14 per 64 weights
 * ({@code maddubs} multiplies 32 byte pairs at once). Java's Vector API has no byte dot product,
 * but a 16-bit multiply of packed nibbles does the same work per instruction ("Arithmetic").
 *
 * <p><b>Layout.</b> Rows are taken in groups of {@link #ROWS} = 2L ({@code L} = float lanes of
 * the process's width: 32, 16 or 8 rows at 512, 256, 128 bits). Each group is a sequence of one
 * {@link #record} per super-block (256 columns), {@code 304·L} bytes (a multiple of 64):
 * <ul>
 *   <li>bytes {@code [0, 16L)}: the 6-bit scales, {@code sc[j][r]} at {@code 2L·j + r}
 *       (sub-block {@code j} = 0..7, row {@code r} of the group);
 *   <li>{@code [16L, 32L)}: the 6-bit mins {@code m[j][r]}, the same way;
 *   <li>{@code [32L, 40L)}: {@code d} of each row as a float, {@code [40L, 48L)}: {@code dmin};
 *   <li>{@code [48L, 304L)}: the quants, one line of {@code L} ints per (sub-block {@code j},
 *       lane group {@code s} = 0..3, half {@code h} = 0..1), line {@code 8j + 2s + h}: lane
 *       {@code i} holds elements {@code 8s .. 8s+7} of sub-block {@code j} of row {@code hL + i},
 *       element {@code 8s + k} in bits {@code 4k .. 4k+3}.
 * </ul>
 * Rows past the last whole group are not repacked ({@link Q4_KKernel} computes them in place).
 *
 * <p><b>Arithmetic</b> (that of {@link InterleavedQ4_0}). For a lane {@code w} with nibbles
 * {@code n_0 .. n_7}, let {@code L_v} be the low 16 bits of {@code w >>> 4v}: then
 * {@code L_v - 16·L_(v+1) ≡ n_v (mod 2^16)}, so {@code Σ_k x_k·n_k ≡ Σ_v y_v·L_v} with
 * {@code y_v = x_v - 16·x_(v-1)} ({@code y_0 = x_0}); the high 16 bits of {@code w >>> 4v} are
 * {@code L_(v+4)}, so four 32-bit shifts and four 16-bit multiplies by a broadcast int holding
 * {@code y_v} and {@code y_(v+4)} ({@link #multipliers}) give a lane's eight products. Per
 * sub-block the 16-bit accumulator starts at {@code -8·Σx - 256} (Q8_K's {@code bsums}), so that
 * the sum of its two halves, {@code Σ(q - 8)·x - 256}, lies in {@code [-32768, 32512]} and is
 * exact as a sign-extended short ({@code |x| ≤ 128}, {@code q - 8} in {@code [-8, 7]}); adding
 * {@code 8·Σx + 256} back in 32 bits gives ggml's {@code Σ q·x} exactly. Then, as ggml:
 * {@code sumi = Σ_j sc_j·Σq·x} and {@code summ = Σ_j m_j·Σx} in int lanes (exact), and per
 * super-block {@code out += (dx·d)·sumi - (dx·dmin)·summ} in floats.
 *
 * <p>Per 64 weights at 256 bits: one line load, three shifts, four multiplies, four adds and
 * (per two lines) four broadcasts; each sub-block's end costs ~20 instructions per 16 rows.
 */
final class InterleavedQ4_K {
    private InterleavedQ4_K() {}

    /** Rows per group: twice the float lanes (0 without vector kernels). */
    static final int ROWS = VectorWidth.BITS / 16;
    /** Bytes per (group, super-block) record: {@code ROWS · 152}. */
    static final int RECORD = ROWS * 152;

    private static final int SCALES = 0, MINS = 8 * ROWS, D = 16 * ROWS, DMIN = D + 4 * ROWS, QUANTS = DMIN + 4 * ROWS;

    /**
     * Groups per pass of a one-token call ({@link #groupQuad}): four, eight line streams of
     * {@code L} rows, as {@link InterleavedQ4_0#DECODE_GROUPS} at 512 bits.
     */
    static final int DECODE_GROUPS = 4;

    /**
     * A pass's scratch, in vectors of {@code L} ints: {@code [0, 8)} a sub-block's eight 16-bit
     * accumulators, from {@link #SUMI} the super-block's
     * {@code sumi}, from {@link #SUMM} its {@code summ} of the eight accumulators' rows.
     */
    static final int SUMI = 16, SUMM = 24, SCRATCH_VECTORS = 32;
    /** Per thread, a pass's scratch (Q4_K's and Q5_K's). */
    static final ThreadLocal<int[]> SCRATCH = ThreadLocal.withInitial(() -> new int[SCRATCH_VECTORS * 16]);

    /** The activations' form this layout's kernel reads ({@link #multipliers}). */
    static final KQuantMultipliers MULTIPLIERS = new KQuantMultipliers() {
        @Override public int perToken(int cols) { return cols / 2; }
        @Override public void write(float[] q, int qOff, int cols, int[] y, int yOff) { multipliers(q, qOff, cols, y, yOff); }
    };

    /** Whether a {@code rows × cols} Q4_K matrix has a whole group to repack (vector kernels only). */
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
        int nb = w.cols() / Q4_K.BLOCK_ELEMENTS;
        long rowBytes = w.rowBytes();
        int half = ROWS / 2;
        for (int g = g0; g < g1; g++) {
            for (int b = 0; b < nb; b++) {
                long rec = record(g, nb, b);
                for (int r = 0; r < ROWS; r++) {
                    long blk = (long) (g * ROWS + r) * rowBytes + (long) b * Q4_K.BLOCK_BYTES;
                    dst.set(WeightData.FLOAT, rec + D + 4L * r, WeightData.half(src, blk + Q4_K.D));
                    dst.set(WeightData.FLOAT, rec + DMIN + 4L * r, WeightData.half(src, blk + Q4_K.DMIN));
                    int h = r / half, i = r % half;
                    for (int j = 0; j < 8; j++) {
                        int sm = Q4_K.scaleMin(src, blk, j);
                        dst.set(java.lang.foreign.ValueLayout.JAVA_BYTE, rec + SCALES + (long) ROWS * j + r, (byte) (sm & 0xFF));
                        dst.set(java.lang.foreign.ValueLayout.JAVA_BYTE, rec + MINS + (long) ROWS * j + r, (byte) (sm >>> 8));
                        long qs = blk + Q4_K.QS + (j / 2) * 32L;
                        int shift = (j & 1) * 4;
                        for (int s = 0; s < 4; s++) {
                            int lane = 0;
                            for (int k = 0; k < 8; k++) lane |= ((WeightData.u8(src, qs + 8 * s + k) >>> shift) & 0xF) << (4 * k);
                            long line = rec + QUANTS + (long) (8 * j + 2 * s + h) * 2 * ROWS;
                            dst.set(WeightData.INT, line + 4L * i, lane);
                        }
                    }
                }
            }
        }
    }

    /**
     * The multipliers of one token's Q8_K quants {@code q[qOff .. qOff+cols)} (exact integer
     * floats): for each 8 columns {@code e .. e+7} ({@code e} a multiple of 8), with
     * {@code y_k = x_(e+k) - 16·x_(e+k-1)} ({@code y_0 = x_e}), {@code y[yOff + e/2 + v]} holds
     * {@code y_v} in its low and {@code y_(v+4)} in its high 16 bits, {@code v} = 0..3
     * ({@code cols / 2} ints).
     */
    static void multipliers(float[] q, int qOff, int cols, int[] y, int yOff) {
        for (int e = 0; e < cols; e += 8) {
            int at = qOff + e;
            int x0 = (int) q[at], x1 = (int) q[at + 1], x2 = (int) q[at + 2], x3 = (int) q[at + 3];
            int x4 = (int) q[at + 4], x5 = (int) q[at + 5], x6 = (int) q[at + 6], x7 = (int) q[at + 7];
            int o = yOff + e / 2;
            y[o] = (x0 & 0xFFFF) | ((x4 - 16 * x3) << 16);
            y[o + 1] = ((x1 - 16 * x0) & 0xFFFF) | ((x5 - 16 * x4) << 16);
            y[o + 2] = ((x2 - 16 * x1) & 0xFFFF) | ((x6 - 16 * x5) << 16);
            y[o + 3] = ((x3 - 16 * x2) & 0xFFFF) | ((x7 - 16 * x6) << 16);
        }
    }

    /**
     * Groups {@code [g0, g1)} of the copy {@code m} for every token of {@code a} (Q8_K), with
     * {@code y} the tokens' {@link #multipliers} ({@code cols / 2} ints per token, token {@code t}
     * at {@code t · cols / 2}): {@code out[outOff + t·outStride + r]} for the groups' rows.
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
        // the byte loads of scales and mins: one BL load per half (two halves per load at 128 bits)
        int bl = Simd.BL.length();
        java.util.Arrays.fill(out, o, o + 2 * Simd.L, 0f);
        for (int b = 0; b < nb; b++) {
            long rec = base + (long) b * RECORD;
            IntVector si0 = IntVector.zero(Simd.I), si1 = si0, sm0 = si0, sm1 = si0;
            for (int j = 0; j < 8; j++) {
                int bsj = bs[bt + 16 * b + 2 * j] + bs[bt + 16 * b + 2 * j + 1];
                ShortVector a0 = IntVector.broadcast(Simd.I, (-8 * bsj - 256) & 0xFFFF).reinterpretAsShorts(), a1 = a0;
                long lines = rec + QUANTS + 8L * j * lineBytes;
                int c = yt + 128 * b + 16 * j;
                for (int s = 0; s < 4; s++) {
                    IntVector v0 = IntVector.fromMemorySegment(Simd.I, m, lines + 2L * s * lineBytes, Simd.LE);
                    IntVector v1 = IntVector.fromMemorySegment(Simd.I, m, lines + (2L * s + 1) * lineBytes, Simd.LE);
                    int cs = c + 4 * s;
                    ShortVector y0 = IntVector.broadcast(Simd.I, y[cs]).reinterpretAsShorts();
                    a0 = a0.add(v0.reinterpretAsShorts().mul(y0));
                    a1 = a1.add(v1.reinterpretAsShorts().mul(y0));
                    ShortVector y1 = IntVector.broadcast(Simd.I, y[cs + 1]).reinterpretAsShorts();
                    a0 = a0.add(v0.lanewise(VectorOperators.LSHR, 4).reinterpretAsShorts().mul(y1));
                    a1 = a1.add(v1.lanewise(VectorOperators.LSHR, 4).reinterpretAsShorts().mul(y1));
                    ShortVector y2 = IntVector.broadcast(Simd.I, y[cs + 2]).reinterpretAsShorts();
                    a0 = a0.add(v0.lanewise(VectorOperators.LSHR, 8).reinterpretAsShorts().mul(y2));
                    a1 = a1.add(v1.lanewise(VectorOperators.LSHR, 8).reinterpretAsShorts().mul(y2));
                    ShortVector y3 = IntVector.broadcast(Simd.I, y[cs + 3]).reinterpretAsShorts();
                    a0 = a0.add(v0.lanewise(VectorOperators.LSHR, 12).reinterpretAsShorts().mul(y3));
                    a1 = a1.add(v1.lanewise(VectorOperators.LSHR, 12).reinterpretAsShorts().mul(y3));
                }
                int back = 8 * bsj + 256;
                long sc = rec + SCALES + (long) ROWS * j, mn = rec + MINS + (long) ROWS * j;
                IntVector u0 = a0.reinterpretAsInts(), u1 = a1.reinterpretAsInts();
                u0 = u0.add(u0.lanewise(VectorOperators.LSHL, 16)).lanewise(VectorOperators.ASHR, 16).add(back);
                u1 = u1.add(u1.lanewise(VectorOperators.LSHL, 16)).lanewise(VectorOperators.ASHR, 16).add(back);
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
     * {@link #DECODE_GROUPS} adjacent groups from {@code base} (group {@code g}'s first record) for
     * a one-token call: eight accumulators of {@code L} rows (accumulator {@code k}: group {@code k/2},
     * half {@code k%2}), so each multiplier is broadcast once for the pass's {@code 8L} rows and eight
     * streams are read at once. With one group per pass (two streams, {@link #group}) the kernel ran
     * at 7.3 GB/s from memory against Q4_0's four-group kernel's 16.6, though at 26 against 30 GB/s
     * from cache (JMH 5632×2048, one thread, Zen 4 VM): it waited on memory, not on instructions.
     *
     * <p>The integer sums are exact and the float steps those of {@link #group}, so the outputs are
     * the bits of one-group calls. As in {@link InterleavedQ4_0#groupQuad}, no vector crosses a
     * sub-block's end: the 16-bit sums leave through {@code scratch} to {@link #finishSubBlock},
     * the super-block's integer sums stay there, and {@link #finishSuperBlock} adds them into {@code out}.
     */
    private static void groupQuad(MemorySegment m, long base, int nb, Activations a, int[] y, float[] out, int o, int[] scratch) {
        float[] d = a.d;
        int[] bs = a.bsums;
        long stride = (long) nb * RECORD; // from one group to the next
        java.util.Arrays.fill(out, o, o + DECODE_GROUPS * ROWS, 0f);
        java.util.Arrays.fill(scratch, SUMI * Simd.L, SCRATCH_VECTORS * Simd.L, 0);
        for (int b = 0; b < nb; b++) {
            long rec = base + (long) b * RECORD;
            for (int j = 0; j < 8; j++) {
                int bsj = bs[16 * b + 2 * j] + bs[16 * b + 2 * j + 1];
                lowNibbles(m, rec + QUANTS + 8L * j * 4 * Simd.L, stride, y, 128 * b + 16 * j, -8 * bsj - 256, 4, scratch);
                finishSubBlock(m, rec, stride, j, bsj, false, scratch);
            }
            finishSuperBlock(m, rec, stride, d[b], scratch, out, o);
        }
    }

    /**
     * A sub-block's low-nibble sums (Q4_K's quants, Q5_K's or Q6_K's low four bits: lines
     * {@code 2s + h}, {@code s < steps}, from {@code lines}, {@code stride} from one group to the
     * next; 4 steps of 8 columns for Q4_K and Q5_K, 2 for Q6_K) of a pass's eight accumulators, each
     * from {@code init}, into {@code scratch[0, 8L)}; {@code c}: the sub-block's first multiplier. A
     * method of its own so that {@code groupQuad} stays small enough for C2 to keep every vector in
     * registers (Q6_K's pass boxed with this loop and its highs' inline).
     */
    static void lowNibbles(MemorySegment m, long lines, long stride, int[] y, int c, int init, int steps, int[] scratch) {
        long lb = 4L * Simd.L;
        long k1 = lb, k2 = stride, k3 = stride + lb, k4 = 2 * stride, k5 = 2 * stride + lb, k6 = 3 * stride, k7 = 3 * stride + lb;
        ShortVector a0 = IntVector.broadcast(Simd.I, init & 0xFFFF).reinterpretAsShorts(), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;
        for (int s = 0; s < steps; s++) {
            long l = lines + 2L * s * lb;
            IntVector v0 = IntVector.fromMemorySegment(Simd.I, m, l, Simd.LE);
            IntVector v1 = IntVector.fromMemorySegment(Simd.I, m, l + k1, Simd.LE);
            IntVector v2 = IntVector.fromMemorySegment(Simd.I, m, l + k2, Simd.LE);
            IntVector v3 = IntVector.fromMemorySegment(Simd.I, m, l + k3, Simd.LE);
            IntVector v4 = IntVector.fromMemorySegment(Simd.I, m, l + k4, Simd.LE);
            IntVector v5 = IntVector.fromMemorySegment(Simd.I, m, l + k5, Simd.LE);
            IntVector v6 = IntVector.fromMemorySegment(Simd.I, m, l + k6, Simd.LE);
            IntVector v7 = IntVector.fromMemorySegment(Simd.I, m, l + k7, Simd.LE);
            int cs = c + 4 * s;
            ShortVector y0 = IntVector.broadcast(Simd.I, y[cs]).reinterpretAsShorts();
            a0 = a0.add(v0.reinterpretAsShorts().mul(y0));
            a1 = a1.add(v1.reinterpretAsShorts().mul(y0));
            a2 = a2.add(v2.reinterpretAsShorts().mul(y0));
            a3 = a3.add(v3.reinterpretAsShorts().mul(y0));
            a4 = a4.add(v4.reinterpretAsShorts().mul(y0));
            a5 = a5.add(v5.reinterpretAsShorts().mul(y0));
            a6 = a6.add(v6.reinterpretAsShorts().mul(y0));
            a7 = a7.add(v7.reinterpretAsShorts().mul(y0));
            ShortVector y1 = IntVector.broadcast(Simd.I, y[cs + 1]).reinterpretAsShorts();
            a0 = a0.add(v0.lanewise(VectorOperators.LSHR, 4).reinterpretAsShorts().mul(y1));
            a1 = a1.add(v1.lanewise(VectorOperators.LSHR, 4).reinterpretAsShorts().mul(y1));
            a2 = a2.add(v2.lanewise(VectorOperators.LSHR, 4).reinterpretAsShorts().mul(y1));
            a3 = a3.add(v3.lanewise(VectorOperators.LSHR, 4).reinterpretAsShorts().mul(y1));
            a4 = a4.add(v4.lanewise(VectorOperators.LSHR, 4).reinterpretAsShorts().mul(y1));
            a5 = a5.add(v5.lanewise(VectorOperators.LSHR, 4).reinterpretAsShorts().mul(y1));
            a6 = a6.add(v6.lanewise(VectorOperators.LSHR, 4).reinterpretAsShorts().mul(y1));
            a7 = a7.add(v7.lanewise(VectorOperators.LSHR, 4).reinterpretAsShorts().mul(y1));
            ShortVector y2 = IntVector.broadcast(Simd.I, y[cs + 2]).reinterpretAsShorts();
            a0 = a0.add(v0.lanewise(VectorOperators.LSHR, 8).reinterpretAsShorts().mul(y2));
            a1 = a1.add(v1.lanewise(VectorOperators.LSHR, 8).reinterpretAsShorts().mul(y2));
            a2 = a2.add(v2.lanewise(VectorOperators.LSHR, 8).reinterpretAsShorts().mul(y2));
            a3 = a3.add(v3.lanewise(VectorOperators.LSHR, 8).reinterpretAsShorts().mul(y2));
            a4 = a4.add(v4.lanewise(VectorOperators.LSHR, 8).reinterpretAsShorts().mul(y2));
            a5 = a5.add(v5.lanewise(VectorOperators.LSHR, 8).reinterpretAsShorts().mul(y2));
            a6 = a6.add(v6.lanewise(VectorOperators.LSHR, 8).reinterpretAsShorts().mul(y2));
            a7 = a7.add(v7.lanewise(VectorOperators.LSHR, 8).reinterpretAsShorts().mul(y2));
            ShortVector y3 = IntVector.broadcast(Simd.I, y[cs + 3]).reinterpretAsShorts();
            a0 = a0.add(v0.lanewise(VectorOperators.LSHR, 12).reinterpretAsShorts().mul(y3));
            a1 = a1.add(v1.lanewise(VectorOperators.LSHR, 12).reinterpretAsShorts().mul(y3));
            a2 = a2.add(v2.lanewise(VectorOperators.LSHR, 12).reinterpretAsShorts().mul(y3));
            a3 = a3.add(v3.lanewise(VectorOperators.LSHR, 12).reinterpretAsShorts().mul(y3));
            a4 = a4.add(v4.lanewise(VectorOperators.LSHR, 12).reinterpretAsShorts().mul(y3));
            a5 = a5.add(v5.lanewise(VectorOperators.LSHR, 12).reinterpretAsShorts().mul(y3));
            a6 = a6.add(v6.lanewise(VectorOperators.LSHR, 12).reinterpretAsShorts().mul(y3));
            a7 = a7.add(v7.lanewise(VectorOperators.LSHR, 12).reinterpretAsShorts().mul(y3));
        }
        a0.reinterpretAsInts().intoArray(scratch, 0);
        a1.reinterpretAsInts().intoArray(scratch, Simd.L);
        a2.reinterpretAsInts().intoArray(scratch, 2 * Simd.L);
        a3.reinterpretAsInts().intoArray(scratch, 3 * Simd.L);
        a4.reinterpretAsInts().intoArray(scratch, 4 * Simd.L);
        a5.reinterpretAsInts().intoArray(scratch, 5 * Simd.L);
        a6.reinterpretAsInts().intoArray(scratch, 6 * Simd.L);
        a7.reinterpretAsInts().intoArray(scratch, 7 * Simd.L);
    }

    /**
     * Sub-block {@code j}'s end for a pass's eight accumulators ({@code scratch[0, 8L)}): each one's
     * exact sum, as in {@link #group} (Q4_K: the pair sum plus {@code 8·Σx + 256}; Q5_K,
     * {@code fiveBit}: both halves sign-extended plus {@code 16·Σx + 512}, see {@link InterleavedQ5_K}),
     * times its rows' scales into {@code sumi}, and the mins times {@code Σx} into {@code summ} (both
     * in {@code scratch}). {@code rec} is the first group's record: the scales and mins sit where
     * Q4_K's do in Q5_K's record too.
     */
    static void finishSubBlock(MemorySegment m, long rec, long stride, int j, int bsj, boolean fiveBit, int[] scratch) {
        int back = fiveBit ? 16 * bsj + 512 : 8 * bsj + 256, bl = Simd.BL.length(), lanes = Simd.L;
        for (int gi = 0; gi < DECODE_GROUPS; gi++) {
            long r = rec + gi * stride, sc = r + SCALES + (long) ROWS * j, mn = r + MINS + (long) ROWS * j;
            int k0 = 2 * gi * lanes, k1 = k0 + lanes, si = SUMI * lanes, sm = SUMM * lanes;
            IntVector u0 = IntVector.fromArray(Simd.I, scratch, k0), u1 = IntVector.fromArray(Simd.I, scratch, k1);
            if (fiveBit) {
                u0 = u0.lanewise(VectorOperators.LSHL, 16).lanewise(VectorOperators.ASHR, 16).add(u0.lanewise(VectorOperators.ASHR, 16)).add(back);
                u1 = u1.lanewise(VectorOperators.LSHL, 16).lanewise(VectorOperators.ASHR, 16).add(u1.lanewise(VectorOperators.ASHR, 16)).add(back);
            } else {
                u0 = u0.add(u0.lanewise(VectorOperators.LSHL, 16)).lanewise(VectorOperators.ASHR, 16).add(back);
                u1 = u1.add(u1.lanewise(VectorOperators.LSHL, 16)).lanewise(VectorOperators.ASHR, 16).add(back);
            }
            IntVector sc0 = (IntVector) ByteVector.fromMemorySegment(Simd.BL, m, sc, Simd.LE).convertShape(VectorOperators.ZERO_EXTEND_B2I, Simd.I, 0);
            IntVector sc1 = (IntVector) ByteVector.fromMemorySegment(Simd.BL, m, sc + (Simd.BL_PARTS == 1 ? bl : 0), Simd.LE)
                    .convertShape(VectorOperators.ZERO_EXTEND_B2I, Simd.I, Simd.BL_PARTS == 1 ? 0 : 1);
            u0.mul(sc0).add(IntVector.fromArray(Simd.I, scratch, si + k0)).intoArray(scratch, si + k0);
            u1.mul(sc1).add(IntVector.fromArray(Simd.I, scratch, si + k1)).intoArray(scratch, si + k1);
            IntVector mn0 = (IntVector) ByteVector.fromMemorySegment(Simd.BL, m, mn, Simd.LE).convertShape(VectorOperators.ZERO_EXTEND_B2I, Simd.I, 0);
            IntVector mn1 = (IntVector) ByteVector.fromMemorySegment(Simd.BL, m, mn + (Simd.BL_PARTS == 1 ? bl : 0), Simd.LE)
                    .convertShape(VectorOperators.ZERO_EXTEND_B2I, Simd.I, Simd.BL_PARTS == 1 ? 0 : 1);
            mn0.mul(bsj).add(IntVector.fromArray(Simd.I, scratch, sm + k0)).intoArray(scratch, sm + k0);
            mn1.mul(bsj).add(IntVector.fromArray(Simd.I, scratch, sm + k1)).intoArray(scratch, sm + k1);
        }
    }

    /** A super-block's end: {@code out += (dx·d)·sumi - (dx·dmin)·summ} per row, as {@link #group} (Q4_K's and Q5_K's {@code d}, {@code dmin}); the sums reset. */
    static void finishSuperBlock(MemorySegment m, long rec, long stride, float dx, int[] scratch, float[] out, int o) {
        int lanes = Simd.L, lineBytes = 4 * lanes;
        for (int gi = 0; gi < DECODE_GROUPS; gi++) {
            long r = rec + gi * stride;
            for (int h = 0; h < 2; h++) {
                int k = (2 * gi + h) * lanes, at = o + gi * ROWS + h * lanes;
                FloatVector dw = FloatVector.fromMemorySegment(Simd.F, m, r + D + (long) h * lineBytes, Simd.LE).mul(dx);
                FloatVector dm = FloatVector.fromMemorySegment(Simd.F, m, r + DMIN + (long) h * lineBytes, Simd.LE).mul(-dx);
                FloatVector si = (FloatVector) IntVector.fromArray(Simd.I, scratch, SUMI * lanes + k).convert(VectorOperators.I2F, 0);
                FloatVector sm = (FloatVector) IntVector.fromArray(Simd.I, scratch, SUMM * lanes + k).convert(VectorOperators.I2F, 0);
                sm.fma(dm, si.fma(dw, FloatVector.fromArray(Simd.F, out, at))).intoArray(out, at);
            }
        }
        java.util.Arrays.fill(scratch, SUMI * lanes, SCRATCH_VECTORS * lanes, 0);
    }
}
