package io.modelopt.core.kernel;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;

/**
 * Decode attention of one query head over an INT8 cache (a scale per token and KV head),
 * dequantizing in registers: each key's bytes are widened, multiplied by the token's scale and
 * go straight into the dot product with the query, each value's into the weighted sum, with no
 * float rows in between. The gathered path ({@link KvRows} into a row buffer, then the F16 path's
 * kernels) stores every dequantized element and loads it back, which cost INT8 the speed its
 * halved bytes should buy (small125m at 2,000 positions: 0.87× the F16 cache's decode rate).
 *
 * <p>Bit for bit the gathered path's result: every key and value element is the same float
 * ({@code byte · scale}, rounded once), each score is the same FMA chain over the head dimension
 * with the same lane sum ({@link ElementwiseVector#rowScores}), and each output lane the same FMA
 * chain over the positions in order ({@link ElementwiseVector#weightedSum}). Used for a KV head
 * read by one query head (no GQA: the gathered rows serve all heads of a group, converted once)
 * and head sizes that are whole float vectors.
 */
final class Int8Attention {
    private Int8Attention() {}

    private static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    /** Whether {@link #attend} takes this head size at the process's vector width. */
    static boolean handles(int headDim) {
        return headDim % Simd.L == 0 && headDim % Simd.BL.length() == 0;
    }

    /**
     * One head: {@code out[outOff ..+headDim) = Σ_p softmax(scale · q·K_p)_p · V_p} over the
     * entries at {@code rowOffsets[p] + headOffset}, p < n, whose scales are at index
     * {@code (rowOffsets[p] + headOffset) / headDim} of the scale segments (the entries' own order).
     */
    static void attend(float[] q, int qOff, int headDim, float scale, MemorySegment keys, MemorySegment keyScales,
                       MemorySegment values, MemorySegment valueScales, long[] rowOffsets, long headOffset, int n,
                       float[] scores, int sOff, float[] out, int outOff) {
        final int L = Simd.L, step = Simd.BL.length();
        int shift = Integer.bitCount(headDim) == 1 ? Integer.numberOfTrailingZeros(headDim) : -1;
        for (int p = 0; p < n; p++) {
            long off = rowOffsets[p] + headOffset;
            FloatVector s = FloatVector.broadcast(Simd.F, keyScales.getAtIndex(F32, shift >= 0 ? off >>> shift : off / headDim));
            FloatVector acc = FloatVector.zero(Simd.F);
            for (int d = 0; d < headDim; d += step) {
                ByteVector b = ByteVector.fromMemorySegment(Simd.BL, keys, off + d, Simd.LE);
                for (int part = 0; part < Simd.BL_PARTS; part++) {
                    FloatVector k = ((FloatVector) b.convertShape(VectorOperators.B2F, Simd.F, part)).mul(s);
                    acc = k.fma(FloatVector.fromArray(Simd.F, q, qOff + d + part * L), acc);
                }
            }
            if (Simd.L > 8) acc = acc.add(acc.rearrange(Simd.SWAP8));
            if (Simd.L > 4) acc = acc.add(acc.rearrange(Simd.SWAP4));
            acc = acc.add(acc.rearrange(Simd.SWAP2));
            acc = acc.add(acc.rearrange(Simd.SWAP1));
            scores[sOff + p] = acc.lane(0) * scale;
        }
        Softmax.apply(KernelMode.VECTOR, scores, sOff, n);
        // four vectors of the output at a time: four independent FMA chains over the positions
        for (int d0 = 0; d0 < headDim; d0 += 4 * L) {
            int width = Math.min(4 * L, headDim - d0);
            FloatVector a0 = FloatVector.zero(Simd.F), a1 = a0, a2 = a0, a3 = a0;
            for (int p = 0; p < n; p++) {
                long off = rowOffsets[p] + headOffset;
                float vs = valueScales.getAtIndex(F32, shift >= 0 ? off >>> shift : off / headDim);
                FloatVector s = FloatVector.broadcast(Simd.F, vs), w = FloatVector.broadcast(Simd.F, scores[sOff + p]);
                a0 = value(values, off, d0, s).fma(w, a0);
                if (width > L) a1 = value(values, off, d0 + L, s).fma(w, a1);
                if (width > 2 * L) a2 = value(values, off, d0 + 2 * L, s).fma(w, a2);
                if (width > 3 * L) a3 = value(values, off, d0 + 3 * L, s).fma(w, a3);
            }
            a0.intoArray(out, outOff + d0);
            if (width > L) a1.intoArray(out, outOff + d0 + L);
            if (width > 2 * L) a2.intoArray(out, outOff + d0 + 2 * L);
            if (width > 3 * L) a3.intoArray(out, outOff + d0 + 3 * L);
        }
    }

    /**
     * Elements {@code d .. d+L)} of the entry at byte {@code entry}, as floats times the token's
     * scale: the {@link Simd#BL} load holding them (at 128 bits one 8-byte load holds two float
     * vectors' worth; never past the entry's end, as handles() takes whole loads), then its part.
     */
    private static FloatVector value(MemorySegment seg, long entry, int d, FloatVector s) {
        ByteVector b = ByteVector.fromMemorySegment(Simd.BL, seg, entry + (d & ~(Simd.BL.length() - 1)), Simd.LE);
        return ((FloatVector) b.convertShape(VectorOperators.B2F, Simd.F, (d / Simd.L) % Simd.BL_PARTS)).mul(s);
    }
}
