package io.modelopt.core.kernel;

import java.lang.foreign.MemorySegment;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorOperators;

/**
 * The inner loop the repacked five- and six-bit k-quant kernels share ({@link InterleavedQ5_K},
 * {@link InterleavedQ6_K}): a sub-block's 16-bit slot lines of a four-group pass, each slot a
 * 16-bit field of several quants read through four shifted views ({@code w >>> s_v}, v = 0..3)
 * and multiplied by the layout's per-view multipliers, into eight 16-bit accumulators.
 *
 * <p>The layouts differ only in the number of slots per sub-block and in the shifts (Q5_K 5
 * slots at 0/5/10/15, Q6_K 3 slots at 0/6/12/14); what the sums mean is each layout's
 * "Arithmetic". A method of its own, as {@link InterleavedQ4_K#lowNibbles}: inlined into the
 * pass it would outgrow what C2 compiles with unboxed vectors.
 */
final class SlotSums {
    private SlotSums() {}

    /**
     * Lines {@code 2k + h} from {@code lines} ({@code k} below {@code slots}, {@code stride} from one
     * group to the next) of the pass's four groups; the multipliers of slot {@code k} at
     * {@code y[c + 4k .. c + 4k + 4)}; each accumulator from {@code init} (both 16-bit halves);
     * the eight sums into {@code scratch[0, 8L)} (accumulator {@code 2·group + h}).
     */
    static void pass(MemorySegment m, long lines, long stride, int[] y, int c, int init, int slots, int s1, int s2, int s3, int[] scratch) {
        long lb = 4L * Simd.L;
        long k1 = lb, k2 = stride, k3 = stride + lb, k4 = 2 * stride, k5 = 2 * stride + lb, k6 = 3 * stride, k7 = 3 * stride + lb;
        ShortVector a0 = IntVector.broadcast(Simd.I, init).reinterpretAsShorts(), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;
        for (int k = 0; k < slots; k++) {
            long l = lines + 2L * k * lb;
            ShortVector v0 = IntVector.fromMemorySegment(Simd.I, m, l, Simd.LE).reinterpretAsShorts();
            ShortVector v1 = IntVector.fromMemorySegment(Simd.I, m, l + k1, Simd.LE).reinterpretAsShorts();
            ShortVector v2 = IntVector.fromMemorySegment(Simd.I, m, l + k2, Simd.LE).reinterpretAsShorts();
            ShortVector v3 = IntVector.fromMemorySegment(Simd.I, m, l + k3, Simd.LE).reinterpretAsShorts();
            ShortVector v4 = IntVector.fromMemorySegment(Simd.I, m, l + k4, Simd.LE).reinterpretAsShorts();
            ShortVector v5 = IntVector.fromMemorySegment(Simd.I, m, l + k5, Simd.LE).reinterpretAsShorts();
            ShortVector v6 = IntVector.fromMemorySegment(Simd.I, m, l + k6, Simd.LE).reinterpretAsShorts();
            ShortVector v7 = IntVector.fromMemorySegment(Simd.I, m, l + k7, Simd.LE).reinterpretAsShorts();
            int ck = c + 4 * k;
            ShortVector y0 = IntVector.broadcast(Simd.I, y[ck]).reinterpretAsShorts();
            a0 = a0.add(v0.mul(y0));
            a1 = a1.add(v1.mul(y0));
            a2 = a2.add(v2.mul(y0));
            a3 = a3.add(v3.mul(y0));
            a4 = a4.add(v4.mul(y0));
            a5 = a5.add(v5.mul(y0));
            a6 = a6.add(v6.mul(y0));
            a7 = a7.add(v7.mul(y0));
            ShortVector y1 = IntVector.broadcast(Simd.I, y[ck + 1]).reinterpretAsShorts();
            a0 = a0.add(v0.lanewise(VectorOperators.LSHR, s1).mul(y1));
            a1 = a1.add(v1.lanewise(VectorOperators.LSHR, s1).mul(y1));
            a2 = a2.add(v2.lanewise(VectorOperators.LSHR, s1).mul(y1));
            a3 = a3.add(v3.lanewise(VectorOperators.LSHR, s1).mul(y1));
            a4 = a4.add(v4.lanewise(VectorOperators.LSHR, s1).mul(y1));
            a5 = a5.add(v5.lanewise(VectorOperators.LSHR, s1).mul(y1));
            a6 = a6.add(v6.lanewise(VectorOperators.LSHR, s1).mul(y1));
            a7 = a7.add(v7.lanewise(VectorOperators.LSHR, s1).mul(y1));
            ShortVector y2 = IntVector.broadcast(Simd.I, y[ck + 2]).reinterpretAsShorts();
            a0 = a0.add(v0.lanewise(VectorOperators.LSHR, s2).mul(y2));
            a1 = a1.add(v1.lanewise(VectorOperators.LSHR, s2).mul(y2));
            a2 = a2.add(v2.lanewise(VectorOperators.LSHR, s2).mul(y2));
            a3 = a3.add(v3.lanewise(VectorOperators.LSHR, s2).mul(y2));
            a4 = a4.add(v4.lanewise(VectorOperators.LSHR, s2).mul(y2));
            a5 = a5.add(v5.lanewise(VectorOperators.LSHR, s2).mul(y2));
            a6 = a6.add(v6.lanewise(VectorOperators.LSHR, s2).mul(y2));
            a7 = a7.add(v7.lanewise(VectorOperators.LSHR, s2).mul(y2));
            ShortVector y3 = IntVector.broadcast(Simd.I, y[ck + 3]).reinterpretAsShorts();
            a0 = a0.add(v0.lanewise(VectorOperators.LSHR, s3).mul(y3));
            a1 = a1.add(v1.lanewise(VectorOperators.LSHR, s3).mul(y3));
            a2 = a2.add(v2.lanewise(VectorOperators.LSHR, s3).mul(y3));
            a3 = a3.add(v3.lanewise(VectorOperators.LSHR, s3).mul(y3));
            a4 = a4.add(v4.lanewise(VectorOperators.LSHR, s3).mul(y3));
            a5 = a5.add(v5.lanewise(VectorOperators.LSHR, s3).mul(y3));
            a6 = a6.add(v6.lanewise(VectorOperators.LSHR, s3).mul(y3));
            a7 = a7.add(v7.lanewise(VectorOperators.LSHR, s3).mul(y3));
        }
        a0.reinterpretAsInts().intoArray(scratch, 0);
        a1.reinterpretAsInts().intoArray(scratch, 1 * Simd.L);
        a2.reinterpretAsInts().intoArray(scratch, 2 * Simd.L);
        a3.reinterpretAsInts().intoArray(scratch, 3 * Simd.L);
        a4.reinterpretAsInts().intoArray(scratch, 4 * Simd.L);
        a5.reinterpretAsInts().intoArray(scratch, 5 * Simd.L);
        a6.reinterpretAsInts().intoArray(scratch, 6 * Simd.L);
        a7.reinterpretAsInts().intoArray(scratch, 7 * Simd.L);
    }

    /**
     * One group's two accumulators (lines {@code 2k + h} from {@code lines}) for the one-group
     * kernels, the same sums as {@link #pass}'s first two; into {@code scratch[0, 2L)}.
     */
    static void group(MemorySegment m, long lines, int[] y, int c, int init, int slots, int s1, int s2, int s3, int[] scratch) {
        long lb = 4L * Simd.L;
        ShortVector a0 = IntVector.broadcast(Simd.I, init).reinterpretAsShorts(), a1 = a0;
        for (int k = 0; k < slots; k++) {
            long l = lines + 2L * k * lb;
            ShortVector v0 = IntVector.fromMemorySegment(Simd.I, m, l, Simd.LE).reinterpretAsShorts();
            ShortVector v1 = IntVector.fromMemorySegment(Simd.I, m, l + lb, Simd.LE).reinterpretAsShorts();
            int ck = c + 4 * k;
            ShortVector y0 = IntVector.broadcast(Simd.I, y[ck]).reinterpretAsShorts();
            a0 = a0.add(v0.mul(y0));
            a1 = a1.add(v1.mul(y0));
            ShortVector y1 = IntVector.broadcast(Simd.I, y[ck + 1]).reinterpretAsShorts();
            a0 = a0.add(v0.lanewise(VectorOperators.LSHR, s1).mul(y1));
            a1 = a1.add(v1.lanewise(VectorOperators.LSHR, s1).mul(y1));
            ShortVector y2 = IntVector.broadcast(Simd.I, y[ck + 2]).reinterpretAsShorts();
            a0 = a0.add(v0.lanewise(VectorOperators.LSHR, s2).mul(y2));
            a1 = a1.add(v1.lanewise(VectorOperators.LSHR, s2).mul(y2));
            ShortVector y3 = IntVector.broadcast(Simd.I, y[ck + 3]).reinterpretAsShorts();
            a0 = a0.add(v0.lanewise(VectorOperators.LSHR, s3).mul(y3));
            a1 = a1.add(v1.lanewise(VectorOperators.LSHR, s3).mul(y3));
        }
        a0.reinterpretAsInts().intoArray(scratch, 0);
        a1.reinterpretAsInts().intoArray(scratch, Simd.L);
    }

    /** An accumulator's two 16-bit halves, sign-extended and summed, plus {@code back}: a lane per row. */
    static IntVector halves(int[] scratch, int at, int back) {
        IntVector u = IntVector.fromArray(Simd.I, scratch, at);
        return u.lanewise(VectorOperators.LSHL, 16).lanewise(VectorOperators.ASHR, 16).add(u.lanewise(VectorOperators.ASHR, 16)).add(back);
    }
}
