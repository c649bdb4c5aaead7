package io.modelopt.core.kernel;

import java.lang.foreign.MemorySegment;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorOperators;

/**
 * F16 weights re-encoded at load so that the Vector API can widen them in registers, for the
 * one-token matmuls (decode) and the prefill GEMM's panels.
 *
 * <p><b>Why.</b> The Vector API has no half-to-float conversion. The in-place F16 kernel widens
 * each row into an L1 buffer with a plain {@link Float#float16ToFloat} loop (which the JIT turns
 * into {@code vcvtph2ps}) and then reads it back for the dot product: a store and a second load
 * per 16 weights. The integer route — sign-extend the half to 32 bits, shift left 13, mask —
 * gives the float bits of {@code w · 2^-112} in three operations, exact for every normal half,
 * but a subnormal half (about 0.24% of N(0, 0.02) weights) becomes a denormal float, and each
 * denormal FMA input costs a microcode assist (that kernel ran at half speed). Here the
 * exponents are re-biased so that no value is subnormal.
 *
 * <p><b>Format.</b> One 16-bit code per weight, rows as in the file (row-major, {@code 2·cols}
 * bytes each). A nonzero weight {@code w = ±2^p · 1.m} (10-bit {@code m}; a subnormal half is
 * normalized first) is stored as sign (bit 15), {@code E = p + 25} (bits 10–14) and {@code m}
 * (bits 0–9); ±0 is stored as ±0 (code {@code 0x0000} / {@code 0x8000}). {@code E} must lie in
 * 1..31, so the format holds every half with {@code 2^-24 ≤ |w| < 2^7}: all finite halves of a
 * real weight matrix in practice. A matrix with a larger value, an infinity or a NaN is not
 * re-encoded ({@link #pack} fails and the matrix is read in place).
 *
 * <p><b>Decoding.</b> {@code intBitsToFloat((sext(code) << 13) & 0x8FFFE000)} is
 * {@code ±2^(E-127) · 1.m = w · 2^-102}: a normal float (or ±0) for every code. The one-token
 * kernel multiplies it by the activations pre-scaled by {@code 2^102} ({@link Activations#f16Scaled}),
 * so each product, and every sum, is the same float as {@code w · x}'s. Scaling is exact unless
 * {@code |x| ≥ 2^25} (the scaled value could overflow): such a call, or one with an infinite or
 * NaN activation, takes {@link #decodeRows} (exact floats) and the plain dot products instead.
 * A 64-byte line holds 32 codes, an even and an odd column in each 32-bit lane:
 * {@code (v << 16) >> 3} and {@code v >> 3}, each masked, are the two columns' floats, so per 32
 * weights the kernel issues one load, five integer operations and two FMAs, with the activation
 * vectors loaded once for four rows (four rows in flight are four memory streams; a probe with
 * two threads over 1 GiB of 2048- or 5632-column rows: 23.9–24.5 GB/s against 15.5–16.1 for
 * widen-then-dot, docs/PERFORMANCE.md). The kernel keeps to the 512-bit int and float shapes
 * that the other kernels use: a first version that sign-extended 256-bit short vectors made
 * the Q4_0 kernel's compilation box its vectors in the same JVM (docs/ARCHITECTURE.md).
 */
final class RebiasedF16 {
    private RebiasedF16() {}

    /** {@code decoded = w · 2^-102}; the activations are multiplied by this to compensate. */
    static final float ACTIVATION_SCALE = 0x1p102f;
    /** Activations at or above this magnitude cannot be scaled without a risk of overflow. */
    static final float MAX_SCALABLE = 0x1p25f;
    /** Bits kept after the shift: the sign and the 28 bits that carry {@code E} and {@code m}. */
    static final int DECODE_MASK = 0x8FFFE000;
    /** {@code E - p}. */
    private static final int BIAS = 25;
    /** Rows per pass of the one-token kernel. */
    static final int ROWS = 4;

    /** The code of half {@code h}, or -1 when it is outside the format (|w| ≥ 2^7, infinite or NaN). */
    static int encode(short h) {
        int sign = h & 0x8000, e = (h >>> 10) & 31, m = h & 0x3FF;
        if (e == 0 && m == 0) return sign;
        int p;
        if (e == 0) {
            // subnormal m · 2^-24: shift the leading 1 up to bit 10, the implicit bit of a normal value
            int shift = Integer.numberOfLeadingZeros(m) - 21;
            m = (m << shift) & 0x3FF;
            p = -14 - shift;
        } else {
            p = e - 15;
        }
        int code = p + BIAS;
        if (e == 31 || code > 31) return -1;
        return sign | code << 10 | m; // code ≥ 1: p ≥ -24 for every half
    }

    /** The weight a code stands for, exactly (scalar; the vector paths decode in registers). */
    static float decode(short code) {
        return Float.intBitsToFloat((code << 13) & DECODE_MASK) * ACTIVATION_SCALE;
    }

    /**
     * Whether every weight of rows {@code [r0, r1)} of an F16 matrix fits the format: its half's
     * exponent field is at most 21 ({@code |w| < 2^7}; infinities and NaNs have 31). Checked
     * before the copy is written, so that a matrix left in place has touched none of it.
     */
    static boolean representable(WeightMatrix w, int r0, int r1) {
        MemorySegment src = w.data();
        long n = (long) (r1 - r0) * w.cols(), at = (long) r0 * w.cols() * 2, i = 0;
        // four halves per long: an exponent field of 22..31 (0x5800..0x7C00 once masked) carries into bit 15 when 0x2800 is added
        for (; i + 4 <= n; i += 4) {
            long v = src.get(WeightData.LONG, at + 2 * i);
            if ((((v & 0x7C007C007C007C00L) + 0x2800280028002800L) & 0x8000800080008000L) != 0) return false;
        }
        for (; i < n; i++) {
            if (((src.get(WeightData.SHORT, at + 2 * i) >>> 10) & 31) > 21) return false;
        }
        return true;
    }

    /**
     * Whether every block scale (the half that starts each block) of rows {@code [r0, r1)} of a
     * Q4_0 or Q8_0 matrix has a code: the repacked copies ({@link InterleavedQ4_0},
     * {@link InterleavedQ8_0}) keep their scales in this format. Checked before a copy is allocated.
     */
    static boolean scalesRepresentable(WeightMatrix w, int r0, int r1) {
        MemorySegment src = w.data();
        int nb = w.cols() / 32;
        long blockBytes = w.type().bytesFor(32);
        for (int r = r0; r < r1; r++) {
            long row = r * w.rowBytes();
            for (int b = 0; b < nb; b++) {
                if (encode(src.get(WeightData.SHORT, row + b * blockBytes)) < 0) return false;
            }
        }
        return true;
    }

    /** The code of block scale {@code h} of a matrix that passed {@link #scalesRepresentable}. */
    static short scaleCode(WeightMatrix w, short h) {
        int code = encode(h);
        if (code < 0) throw new IllegalStateException(w + ": a block scale (half 0x" + Integer.toHexString(h & 0xFFFF) + ") has no re-encoded form");
        return (short) code;
    }

    /**
     * Re-encodes rows {@code [r0, r1)} of an F16 matrix into {@code dst} (the whole copy is
     * {@code rows · cols · 2} bytes); the rows must be {@link #representable}.
     */
    static void pack(WeightMatrix w, MemorySegment dst, int r0, int r1) {
        MemorySegment src = w.data();
        long n = (long) (r1 - r0) * w.cols(), at = (long) r0 * w.cols() * 2;
        for (long i = 0; i < n; i++) {
            int code = encode(src.get(WeightData.SHORT, at + 2 * i));
            if (code < 0) throw new IllegalStateException(w + ": weight " + (at / 2 + i) + " is outside the re-encoded F16 format");
            dst.set(WeightData.SHORT, at + 2 * i, (short) code);
        }
    }

    /**
     * {@code n} codes from byte {@code off} decoded to the exact weights at {@code dst[dstOff..]}:
     * at 512 bits per 32 codes, the even and odd columns decoded as in {@link #computeOneToken} and
     * zipped back into column order; at narrower widths {@code L} codes widened as shorts.
     */
    static void decodeRows(MemorySegment codes, long off, float[] dst, int dstOff, int n) {
        int i = 0;
        if (Simd.L == 16) {
            for (; i + 32 <= n; i += 32) {
                IntVector v = IntVector.fromMemorySegment(Simd.I, codes, off + 2L * i, Simd.LE);
                FloatVector even = v.lanewise(VectorOperators.LSHL, 16).lanewise(VectorOperators.ASHR, 3).and(DECODE_MASK).reinterpretAsFloats().mul(ACTIVATION_SCALE);
                FloatVector odd = v.lanewise(VectorOperators.ASHR, 3).and(DECODE_MASK).reinterpretAsFloats().mul(ACTIVATION_SCALE);
                ZIP_LOW.selectFrom(even, odd).intoArray(dst, dstOff + i);
                ZIP_HIGH.selectFrom(even, odd).intoArray(dst, dstOff + i + 16);
            }
        } else {
            // narrower widths: L codes sign-extended to ints (Simd.SL, half the width) are L floats in
            // column order, (sext(code) << 13) & mask, with no zip: fewer operations than the
            // two-vector selects, which AVX2 lacks as one instruction
            for (; i + Simd.L <= n; i += Simd.L) {
                ((IntVector) ShortVector.fromMemorySegment(Simd.SL, codes, off + 2L * i, Simd.LE).convertShape(VectorOperators.S2I, Simd.I, 0))
                        .lanewise(VectorOperators.LSHL, 13).and(DECODE_MASK).reinterpretAsFloats().mul(ACTIVATION_SCALE).intoArray(dst, dstOff + i);
            }
        }
        for (; i < n; i++) dst[dstOff + i] = decode(codes.get(WeightData.SHORT, off + 2L * i));
    }

    /** Indexes for {@code selectFrom(even, odd)}: lane {@code 2j} is {@code even[j]}, lane {@code 2j+1} is {@code odd[j]} (index {@code 16 + j}). */
    private static final FloatVector ZIP_LOW = Simd.L == 16 ? FloatVector.fromArray(Simd.F, zip(0), 0) : null;
    /** The same for lanes 8..15 of both. */
    private static final FloatVector ZIP_HIGH = Simd.L == 16 ? FloatVector.fromArray(Simd.F, zip(8), 0) : null;

    private static float[] zip(int from) {
        float[] idx = new float[16];
        for (int lane = 0; lane < 16; lane++) idx[lane] = lane % 2 == 0 ? from + lane / 2 : 16 + from + lane / 2;
        return idx;
    }

    /**
     * One token, rows {@code [r0, r1)}: {@code out[outOff + r] = Σ_k w[r][k] · x[k]} with
     * {@code xs} the activations times {@code 2^102} in the order {@link #permuteActivations} gives
     * ({@code cols} of them, a multiple of 32). Per {@code 2L} columns one int vector per row;
     * four rows per pass, each with its own FMA chain
     * over the columns and the lanes summed pairwise in a fixed order. Every vector method is
     * called on an activation load or a constant, never on a decoded (reinterpreted) vector: see
     * docs/PERFORMANCE.md, "One vector shape per process" (the products are the same either way).
     */
    static void computeOneToken(MemorySegment codes, int cols, float[] xs, int r0, int r1, float[] out, int outOff) {
        long rb = 2L * cols;
        int r = r0;
        for (; r + ROWS <= r1; r += ROWS) {
            long o = r * rb;
            FloatVector a0 = FloatVector.zero(Simd.F), a1 = a0, a2 = a0, a3 = a0;
            for (int k = 0; k < cols; k += 2 * Simd.L) {
                FloatVector xe = FloatVector.fromArray(Simd.F, xs, k), xo = FloatVector.fromArray(Simd.F, xs, k + Simd.L);
                long p = o + 2L * k;
                IntVector v0 = IntVector.fromMemorySegment(Simd.I, codes, p, Simd.LE);
                IntVector v1 = IntVector.fromMemorySegment(Simd.I, codes, p + rb, Simd.LE);
                IntVector v2 = IntVector.fromMemorySegment(Simd.I, codes, p + 2 * rb, Simd.LE);
                IntVector v3 = IntVector.fromMemorySegment(Simd.I, codes, p + 3 * rb, Simd.LE);
                a0 = xe.fma(v0.lanewise(VectorOperators.LSHL, 16).lanewise(VectorOperators.ASHR, 3).and(DECODE_MASK).reinterpretAsFloats(), a0);
                a1 = xe.fma(v1.lanewise(VectorOperators.LSHL, 16).lanewise(VectorOperators.ASHR, 3).and(DECODE_MASK).reinterpretAsFloats(), a1);
                a2 = xe.fma(v2.lanewise(VectorOperators.LSHL, 16).lanewise(VectorOperators.ASHR, 3).and(DECODE_MASK).reinterpretAsFloats(), a2);
                a3 = xe.fma(v3.lanewise(VectorOperators.LSHL, 16).lanewise(VectorOperators.ASHR, 3).and(DECODE_MASK).reinterpretAsFloats(), a3);
                a0 = xo.fma(v0.lanewise(VectorOperators.ASHR, 3).and(DECODE_MASK).reinterpretAsFloats(), a0);
                a1 = xo.fma(v1.lanewise(VectorOperators.ASHR, 3).and(DECODE_MASK).reinterpretAsFloats(), a1);
                a2 = xo.fma(v2.lanewise(VectorOperators.ASHR, 3).and(DECODE_MASK).reinterpretAsFloats(), a2);
                a3 = xo.fma(v3.lanewise(VectorOperators.ASHR, 3).and(DECODE_MASK).reinterpretAsFloats(), a3);
            }
            if (Simd.L > 8) a0 = a0.add(a0.rearrange(Simd.SWAP8));
            if (Simd.L > 4) a0 = a0.add(a0.rearrange(Simd.SWAP4));
            a0 = a0.add(a0.rearrange(Simd.SWAP2));
            a0 = a0.add(a0.rearrange(Simd.SWAP1));
            if (Simd.L > 8) a1 = a1.add(a1.rearrange(Simd.SWAP8));
            if (Simd.L > 4) a1 = a1.add(a1.rearrange(Simd.SWAP4));
            a1 = a1.add(a1.rearrange(Simd.SWAP2));
            a1 = a1.add(a1.rearrange(Simd.SWAP1));
            out[outOff + r] = a0.lane(0);
            out[outOff + r + 1] = a1.lane(0);
            if (Simd.L > 8) a2 = a2.add(a2.rearrange(Simd.SWAP8));
            if (Simd.L > 4) a2 = a2.add(a2.rearrange(Simd.SWAP4));
            a2 = a2.add(a2.rearrange(Simd.SWAP2));
            a2 = a2.add(a2.rearrange(Simd.SWAP1));
            if (Simd.L > 8) a3 = a3.add(a3.rearrange(Simd.SWAP8));
            if (Simd.L > 4) a3 = a3.add(a3.rearrange(Simd.SWAP4));
            a3 = a3.add(a3.rearrange(Simd.SWAP2));
            a3 = a3.add(a3.rearrange(Simd.SWAP1));
            out[outOff + r + 2] = a2.lane(0);
            out[outOff + r + 3] = a3.lane(0);
        }
        for (; r < r1; r++) {
            long o = r * rb;
            FloatVector a0 = FloatVector.zero(Simd.F);
            for (int k = 0; k < cols; k += 2 * Simd.L) {
                IntVector v0 = IntVector.fromMemorySegment(Simd.I, codes, o + 2L * k, Simd.LE);
                a0 = FloatVector.fromArray(Simd.F, xs, k).fma(v0.lanewise(VectorOperators.LSHL, 16).lanewise(VectorOperators.ASHR, 3).and(DECODE_MASK).reinterpretAsFloats(), a0);
                a0 = FloatVector.fromArray(Simd.F, xs, k + Simd.L).fma(v0.lanewise(VectorOperators.ASHR, 3).and(DECODE_MASK).reinterpretAsFloats(), a0);
            }
            if (Simd.L > 8) a0 = a0.add(a0.rearrange(Simd.SWAP8));
            if (Simd.L > 4) a0 = a0.add(a0.rearrange(Simd.SWAP4));
            a0 = a0.add(a0.rearrange(Simd.SWAP2));
            a0 = a0.add(a0.rearrange(Simd.SWAP1));
            out[outOff + r] = a0.lane(0);
        }
    }

    /**
     * {@code xs[c + i] = x[xOff + c + 2i] · 2^102} and {@code xs[c + L + i] = x[xOff + c + 2i + 1] · 2^102}
     * for each block {@code c} of {@code 2L} columns and {@code i < L} ({@code L} = {@link Simd#L}: the
     * order depends on the process's vector width): the kernel reads a block's codes as {@code L}
     * ints, each holding an even column's code in its low half and the next column's in its high
     * half. Returns whether every scaling was exact ({@code |x| < 2^25}; false for NaN and infinities).
     */
    static boolean permuteActivations(float[] x, int xOff, int cols, float[] xs) {
        boolean exact = true;
        final int L = Simd.L;
        for (int c = 0; c < cols; c += 2 * L) {
            for (int i = 0; i < L; i++) {
                float even = x[xOff + c + 2 * i], odd = x[xOff + c + 2 * i + 1];
                exact &= Math.abs(even) < MAX_SCALABLE & Math.abs(odd) < MAX_SCALABLE;
                xs[c + i] = even * ACTIVATION_SCALE;
                xs[c + L + i] = odd * ACTIVATION_SCALE;
            }
        }
        return exact;
    }
}
