package io.modelopt.core.kernel;

import java.lang.foreign.MemorySegment;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorOperators;

/**
 * Decode attention of one query head over an F16 cache, widening the halves in registers: each
 * key goes from memory straight into its dot product with the query, each value into the
 * weighted sum, with no float rows in between (the counterpart of {@link Int8Attention}).
 *
 * <p><b>Why.</b> The gathered path converts {@link AttentionKernel#ROW_CHUNK} entries at a time into
 * a float buffer ({@link Float#float16ToFloat} loop, {@code vcvtph2ps}) and reads the buffer back
 * for the scores and again for the values: every element is stored and loaded once more, and the
 * buffer of 128 × 64 floats fills a 32 KB L1 data cache. On Zen 4 that path read the cache at
 * 5.6 GB/s (docs/KVCACHE.md).
 *
 * <p><b>Widening.</b> The Vector API has no half-to-float conversion; the integer route of
 * {@link RebiasedF16} does it: a 32-bit lane holds two halves, and
 * {@code ((v << 16) >> 3) & 0x8FFFE000} and {@code (v >> 3) & 0x8FFFE000} are the float bits of
 * the even and the odd half times {@code 2^-112}, exact for every finite half (a subnormal half
 * becomes a denormal float, exactly). The query, or the attention weights, are multiplied by
 * {@code 2^112} to compensate, which is exact, so every product {@code q_d · k_d} and
 * {@code a_p · v_p} is the same real number as the unscaled one and every FMA rounds alike. The
 * query must be below {@code 2^16} in magnitude (an F16-rounded query always is; {@link #scalable}
 * checks it) and the attention weights are at most 1. An infinite or NaN half decodes to a finite
 * value here, where the gathered path gives ±∞/NaN; an F16 cache holds such a value only when a
 * key or value overflowed F16 when it was written, and the output is garbage either way.
 *
 * <p><b>Order.</b> The values' output lanes are the gathered path's: each one an FMA chain over the
 * positions in order, so given the same weights the outputs are bit for bit equal. The scores sum
 * the even and the odd elements in two accumulators, so a score can differ from the gathered
 * path's {@link ElementwiseVector#rowScores} in its last bits; the result is deterministic and does
 * not depend on where the entries lie (a contiguous cache or shuffled blocks give the same bits).
 * Used for a KV head read by one query head (the gathered rows serve every head of a GQA group,
 * converted once) and head sizes that are whole pairs of float vectors.
 */
final class F16Attention {
    private F16Attention() {}

    /** {@code decoded = h · 2^-112}; the query and the weights are multiplied by this to compensate. */
    private static final float SCALE = 0x1p112f;
    /** Queries at or above this magnitude would overflow when scaled (an F16-rounded query is below 65,520). */
    private static final float MAX_QUERY = 0x1p16f;
    private static final int MASK = RebiasedF16.DECODE_MASK;

    /** Whether {@link #attend} takes this head size at the process's vector width: whole pairs of float vectors. */
    static boolean handles(int headDim) {
        return headDim % (2 * Simd.L) == 0;
    }

    /** Whether the query can be scaled by {@code 2^112} without overflow (false for ±∞ and NaN too). */
    static boolean scalable(float[] q, int qOff, int headDim) {
        float max = 0;
        for (int d = 0; d < headDim; d++) max = Math.max(max, Math.abs(q[qOff + d]));
        return max < MAX_QUERY;
    }

    /**
     * One head: {@code out[outOff ..+headDim) = Σ_p round16(softmax(scale · q·K_p))_p · V_p} over
     * the F16 entries at {@code rowOffsets[p] + headOffset}, p < n; the weights rounded to F16 as
     * {@link AttentionKernel#attend} does for an F16 cache. Requires {@link #handles} and
     * {@link #scalable}; {@code tmp} holds at least {@code 2·headDim} floats (the split query, then the
     * split outputs; the caller's row scratch is far larger).
     */
    static void attend(float[] q, int qOff, int headDim, float scale, MemorySegment keys, MemorySegment values,
                       long[] rowOffsets, long headOffset, int n, float[] scores, int sOff, float[] tmp, float[] out, int outOff) {
        final int L = Simd.L, chunk = 2 * L;
        // tmp[0, headDim): the query's even elements then its odd ones per chunk of 2L, times 2^112
        for (int c = 0; c < headDim; c += chunk) {
            for (int j = 0; j < L; j++) {
                tmp[c + j] = q[qOff + c + 2 * j] * SCALE;
                tmp[c + L + j] = q[qOff + c + 2 * j + 1] * SCALE;
            }
        }
        for (int p = 0; p < n; p++) {
            long off = rowOffsets[p] + headOffset;
            FloatVector even = FloatVector.zero(Simd.F), odd = even;
            for (int c = 0; c < headDim; c += chunk) {
                IntVector v = IntVector.fromMemorySegment(Simd.I, keys, off + 2L * c, Simd.LE);
                FloatVector ke = v.lanewise(VectorOperators.LSHL, 16).lanewise(VectorOperators.ASHR, 3).and(MASK).reinterpretAsFloats();
                FloatVector ko = v.lanewise(VectorOperators.ASHR, 3).and(MASK).reinterpretAsFloats();
                even = ke.fma(FloatVector.fromArray(Simd.F, tmp, c), even);
                odd = ko.fma(FloatVector.fromArray(Simd.F, tmp, c + L), odd);
            }
            FloatVector acc = even.add(odd);
            if (Simd.L > 8) acc = acc.add(acc.rearrange(Simd.SWAP8));
            if (Simd.L > 4) acc = acc.add(acc.rearrange(Simd.SWAP4));
            acc = acc.add(acc.rearrange(Simd.SWAP2));
            acc = acc.add(acc.rearrange(Simd.SWAP1));
            scores[sOff + p] = acc.lane(0) * scale;
        }
        Softmax.apply(KernelMode.VECTOR, scores, sOff, n);
        AttentionKernel.roundToF16(scores, sOff, n); // the weights as llama.cpp's F16 cache uses them (AttentionKernel)
        // two chunks (four vectors) of the output at a time: four FMA chains over the positions;
        // tmp[headDim, 2·headDim): the outputs, even then odd elements per chunk
        for (int d0 = 0; d0 < headDim; d0 += 2 * chunk) {
            boolean two = d0 + chunk < headDim;
            FloatVector e0 = FloatVector.zero(Simd.F), o0 = e0, e1 = e0, o1 = e0;
            for (int p = 0; p < n; p++) {
                long off = rowOffsets[p] + headOffset + 2L * d0;
                FloatVector w = FloatVector.broadcast(Simd.F, scores[sOff + p] * SCALE); // exact: a weight is at most 1
                IntVector v = IntVector.fromMemorySegment(Simd.I, values, off, Simd.LE);
                e0 = v.lanewise(VectorOperators.LSHL, 16).lanewise(VectorOperators.ASHR, 3).and(MASK).reinterpretAsFloats().fma(w, e0);
                o0 = v.lanewise(VectorOperators.ASHR, 3).and(MASK).reinterpretAsFloats().fma(w, o0);
                if (two) {
                    IntVector u = IntVector.fromMemorySegment(Simd.I, values, off + 4L * L, Simd.LE);
                    e1 = u.lanewise(VectorOperators.LSHL, 16).lanewise(VectorOperators.ASHR, 3).and(MASK).reinterpretAsFloats().fma(w, e1);
                    o1 = u.lanewise(VectorOperators.ASHR, 3).and(MASK).reinterpretAsFloats().fma(w, o1);
                }
            }
            int t = headDim + d0;
            e0.intoArray(tmp, t);
            o0.intoArray(tmp, t + L);
            if (two) {
                e1.intoArray(tmp, t + chunk);
                o1.intoArray(tmp, t + chunk + L);
            }
        }
        for (int c = 0; c < headDim; c += chunk) {
            for (int j = 0; j < L; j++) {
                out[outOff + c + 2 * j] = tmp[headDim + c + j];
                out[outOff + c + 2 * j + 1] = tmp[headDim + c + L + j];
            }
        }
    }
}
