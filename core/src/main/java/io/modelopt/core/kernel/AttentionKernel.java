package io.modelopt.core.kernel;

import io.modelopt.core.kv.KvDtype;
import io.modelopt.core.kv.KvLayout;
import io.modelopt.core.kv.KvStorage;
import io.modelopt.core.tensor.GgmlType;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.Arrays;

/**
 * Scaled dot-product attention of a query head over {@code n} cached positions:
 * <pre>
 *   s_p   = scale · (q · K_p)            p in [0, n)
 *   a     = softmax(s)                   in float ({@link Softmax})
 *   out   = Σ_p a_p · V_p
 * </pre>
 * {@link #attend} reads a cache in place and does not know how it is laid out: the caller passes,
 * per position, the byte offset of that position's entry for KV head 0 ({@code rowOffsets[p]},
 * {@link io.modelopt.core.kv.KvCache#entryOffset}) and the offset of the KV head in question
 * ({@code headOffset}, a multiple of {@link io.modelopt.core.kv.KvCache#headStride}). A contiguous
 * cache and a paged one (block table → block, offset) both reduce to such a list, so one kernel
 * serves both. {@link #attendTransposed} and {@link #attendTransposed4} work on keys and values the
 * runner has already converted to float arrays (a prefill's sequences). Causality is the caller's
 * business: it passes only the positions a query may see.
 *
 * <p>Keys and values are F32 or F16 (little endian, as ggml stores them), converted to float
 * with {@link Float#float16ToFloat} semantics. With F16 values the attention weights are rounded
 * to F16 before they multiply the values, as in llama.cpp, whose {@code ggml_mul_mat(v, kq)}
 * converts the F32 operand to the F16 operand's type (the runner rounds the query likewise before
 * {@code q·K}). That costs ~3 significant digits on each weight, which llama-perplexity's numbers
 * include: without it our F16-cache perplexities differ from llama.cpp's by up to 5e-4 relative,
 * with it by 1e-4. An F32 cache has no rounding.
 */
public final class AttentionKernel {
    private AttentionKernel() {}

    static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    static final ValueLayout.OfShort F16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    /** Cached positions whose entries the vector path of {@link #attend} converts to float at a time. */
    public static final int ROW_CHUNK = 128;

    static final boolean FUSED_F16 = !Boolean.getBoolean("modelopt.attention.gatheredF16");

    /** Floats of the {@code rows} scratch that {@link #attend} needs for this head size. */
    public static int rowScratch(int headDim) {
        return ROW_CHUNK * headDim;
    }

    /**
     * Attention of {@code heads} query heads that share one KV head (consecutive heads of a GQA
     * group; one head without GQA) over {@code n} cached positions read in place: head {@code i}'s query
     * is at {@code q[qOff + i·headDim]}, its output goes to {@code out[outOff + i·headDim]}.
     *
     * <p>The vector path converts the KV head's entries of {@link #ROW_CHUNK} positions at a time
     * to floats, so each key and value is converted once for all the heads; the scores are FMA
     * chains over the head dimension with a fixed-order lane sum, and each output lane is the FMA
     * chain over the positions in order, the same whatever the chunking. The scalar path runs the
     * heads one by one, element by element.
     *
     * @param scores {@code heads} rows of at least {@code n} floats, {@code scoreStride} apart; they
     *               hold the attention weights afterwards
     * @param rows   scratch of at least {@link #rowScratch}{@code (headDim)} floats (vector path)
     * @param out    receives {@code heads · headDim} outputs at {@code outOff} (overwritten)
     */
    public static void attend(KernelMode mode, float[] q, int qOff, int heads, int headDim, float scale,
                              MemorySegment keys, MemorySegment values, GgmlType kvType,
                              long[] rowOffsets, long headOffset, int n,
                              float[] scores, int scoreStride, float[] rows, float[] out, int outOff) {
        if (kvType != GgmlType.F32 && kvType != GgmlType.F16) {
            throw new IllegalArgumentException("attention reads F32 or F16 keys/values, not " + kvType);
        }
        if (heads < 1) throw new IllegalArgumentException("heads must be >= 1, got " + heads);
        if (scoreStride < n || scores.length < (long) (heads - 1) * scoreStride + n) {
            throw new IllegalArgumentException("score scratch of " + scores.length + " floats (stride " + scoreStride + ") for "
                    + heads + " heads x " + n + " positions");
        }
        boolean f16 = kvType == GgmlType.F16;
        if (mode != KernelMode.VECTOR) {
            for (int i = 0; i < heads; i++) {
                attendScalar(q, qOff + i * headDim, headDim, scale, keys, values, f16, rowOffsets, headOffset, n,
                        scores, i * scoreStride, out, outOff + i * headDim);
            }
            return;
        }
        if (rows.length < rowScratch(headDim)) {
            throw new IllegalArgumentException("row scratch of " + rows.length + " floats, need " + rowScratch(headDim));
        }
        if (f16 && heads == 1 && FUSED_F16 && F16Attention.handles(headDim) && F16Attention.scalable(q, qOff, headDim)) {
            F16Attention.attend(q, qOff, headDim, scale, keys, values, rowOffsets, headOffset, n, scores, 0, rows, out, outOff);
            return;
        }
        for (int c = 0; c < n; c += ROW_CHUNK) {
            int m = Math.min(ROW_CHUNK, n - c);
            gather(keys, f16, rowOffsets, c, m, headOffset, headDim, rows);
            for (int i = 0; i < heads; i++) {
                ElementwiseVector.rowScores(q, qOff + i * headDim, rows, headDim, m, scale, scores, i * scoreStride + c);
            }
        }
        for (int i = 0; i < heads; i++) {
            Softmax.apply(mode, scores, i * scoreStride, n);
            if (f16) roundToF16(scores, i * scoreStride, n);
        }
        for (int c = 0; c < n; c += ROW_CHUNK) {
            int m = Math.min(ROW_CHUNK, n - c);
            gather(values, f16, rowOffsets, c, m, headOffset, headDim, rows);
            for (int i = 0; i < heads; i++) {
                int w = i * scoreStride + c, o = outOff + i * headDim;
                int d = ElementwiseVector.weightedSum(scores, w, m, rows, 0, headDim, headDim, out, o, c > 0);
                for (; d < headDim; d++) {
                    float s = c > 0 ? out[o + d] : 0f;
                    for (int p = 0; p < m; p++) s = Math.fma(scores[w + p], rows[p * headDim + d], s);
                    out[o + d] = s;
                }
            }
        }
    }

    /**
     * {@link #attend(KernelMode, float[], int, int, int, float, MemorySegment, MemorySegment, GgmlType, long[], long, int, float[], int, float[], float[], int) attend}
     * over {@code layer} of a {@link KvStorage} of any {@link KvDtype}: F32 and F16 go to that
     * kernel; BF16, INT8 and FP8 E4M3 entries are dequantized on the fly, {@link #ROW_CHUNK}
     * positions at a time into {@code rows} ({@link KvRows}), then scored and summed by the same
     * vector kernels (scalar loops in {@link KernelMode#SCALAR}). No F16 rounding of the weights:
     * that is llama.cpp's F16-cache arithmetic only.
     */
    public static void attend(KernelMode mode, float[] q, int qOff, int heads, int headDim, float scale, KvStorage kv, int layer,
                              long[] rowOffsets, long headOffset, int n, float[] scores, int scoreStride, float[] rows, float[] out, int outOff) {
        KvLayout l = kv.layout();
        if (l.dtype() == KvDtype.F32 || l.dtype() == KvDtype.F16) {
            attend(mode, q, qOff, heads, headDim, scale, kv.keys(layer), kv.values(layer), l.dtype() == KvDtype.F32 ? GgmlType.F32 : GgmlType.F16,
                    rowOffsets, headOffset, n, scores, scoreStride, rows, out, outOff);
            return;
        }
        if (headDim != l.headDim()) throw new IllegalArgumentException("head size " + headDim + " but the KV storage holds " + l.headDim());
        if (heads < 1) throw new IllegalArgumentException("heads must be >= 1, got " + heads);
        if (scoreStride < n || scores.length < (long) (heads - 1) * scoreStride + n) {
            throw new IllegalArgumentException("score scratch of " + scores.length + " floats (stride " + scoreStride + ") for "
                    + heads + " heads x " + n + " positions");
        }
        if (rows.length < rowScratch(headDim)) throw new IllegalArgumentException("row scratch of " + rows.length + " floats, need " + rowScratch(headDim));
        boolean vector = mode == KernelMode.VECTOR;
        if (vector && heads == 1 && l.dtype() == KvDtype.INT8 && Int8Attention.handles(headDim)) {
            Int8Attention.attend(q, qOff, headDim, scale, kv.keys(layer), kv.keyScales(layer), kv.values(layer), kv.valueScales(layer),
                    rowOffsets, headOffset, n, scores, 0, out, outOff);
            return;
        }
        for (int c = 0; c < n; c += ROW_CHUNK) {
            int m = Math.min(ROW_CHUNK, n - c);
            KvRows.gather(l, kv.keys(layer), kv.keyScales(layer), rowOffsets, c, m, headOffset, rows, vector);
            for (int i = 0; i < heads; i++) {
                int qo = qOff + i * headDim, so = i * scoreStride + c;
                if (vector) {
                    ElementwiseVector.rowScores(q, qo, rows, headDim, m, scale, scores, so);
                } else {
                    for (int p = 0; p < m; p++) {
                        float dot = 0;
                        for (int d = 0; d < headDim; d++) dot = Math.fma(q[qo + d], rows[p * headDim + d], dot);
                        scores[so + p] = dot * scale;
                    }
                }
            }
        }
        for (int i = 0; i < heads; i++) Softmax.apply(mode, scores, i * scoreStride, n);
        for (int c = 0; c < n; c += ROW_CHUNK) {
            int m = Math.min(ROW_CHUNK, n - c);
            KvRows.gather(l, kv.values(layer), kv.valueScales(layer), rowOffsets, c, m, headOffset, rows, vector);
            for (int i = 0; i < heads; i++) {
                int w = i * scoreStride + c, o = outOff + i * headDim;
                int d = vector ? ElementwiseVector.weightedSum(scores, w, m, rows, 0, headDim, headDim, out, o, c > 0) : 0;
                for (; d < headDim; d++) {
                    float s = c > 0 ? out[o + d] : 0f;
                    for (int p = 0; p < m; p++) s = Math.fma(scores[w + p], rows[p * headDim + d], s);
                    out[o + d] = s;
                }
            }
        }
    }

    /**
     * rows[p·headDim ..] = the KV head's entry of cached position {@code c + p} as floats, p < m.
     * Entries that follow each other in memory (a contiguous cache, a block of a paged one: see
     * {@link io.modelopt.core.kv.KvCache}) are converted as one run, which the JIT's
     * vectorized half conversion does about seven times faster than entry by entry.
     */
    private static void gather(MemorySegment seg, boolean f16, long[] rowOffsets, int c, int m, long headOffset, int headDim, float[] rows) {
        long entryBytes = (long) headDim * (f16 ? 2 : 4);
        for (int p = 0; p < m; ) {
            long start = rowOffsets[c + p];
            int run = 1;
            while (p + run < m && rowOffsets[c + p + run] == start + run * entryBytes) run++;
            if (f16) WeightData.halves(seg, start + headOffset, rows, p * headDim, run * headDim);
            else MemorySegment.copy(seg, F32, start + headOffset, rows, p * headDim, run * headDim);
            p += run;
        }
    }

    private static void attendScalar(float[] q, int qOff, int headDim, float scale, MemorySegment keys, MemorySegment values,
                                     boolean f16, long[] rowOffsets, long headOffset, int n, float[] scores, int sOff, float[] out, int outOff) {
        for (int p = 0; p < n; p++) {
            long off = rowOffsets[p] + headOffset;
            float dot = f16 ? dotF16(q, qOff, keys, off, headDim) : dotF32(q, qOff, keys, off, headDim);
            scores[sOff + p] = dot * scale;
        }
        Softmax.apply(KernelMode.SCALAR, scores, sOff, n);
        if (f16) roundToF16(scores, sOff, n);
        Arrays.fill(out, outOff, outOff + headDim, 0f);
        for (int p = 0; p < n; p++) {
            long off = rowOffsets[p] + headOffset;
            float a = scores[sOff + p];
            if (f16) axpyF16(a, values, off, out, outOff, headDim);
            else axpyF32(a, values, off, out, outOff, headDim);
        }
    }

    /**
     * The same over keys and values already converted to float arrays, with the keys transposed:
     * element {@code d} of position {@code p}'s key is {@code keysT[kBase + d·kStride + p]}, so the
     * scores of many positions are computed together ({@code s[p..] += q[d]·keysT[d][p..]}, one
     * vector FMA per element and no horizontal sums); position {@code p}'s value row starts at
     * {@code values[vBase + p·vStride]}. Each score is the FMA chain over {@code d} in order, in
     * both modes, so scalar and vector results are identical. The runner uses it for sequences
     * with several tokens in a batch, whose cached rows it converts once per layer.
     *
     * @param f16Weights round the attention weights to F16 (the cache holds F16 values; see the class comment)
     */
    public static void attendTransposed(KernelMode mode, float[] q, int qOff, int headDim, float scale,
                                        float[] keysT, int kBase, int kStride, float[] values, int vBase, int vStride,
                                        int n, boolean f16Weights, float[] scores, float[] out, int outOff) {
        if (scores.length < n) throw new IllegalArgumentException("score scratch holds " + scores.length + " floats, need " + n);
        if (mode == KernelMode.VECTOR) {
            ElementwiseVector.transposedScores(q, qOff, headDim, keysT, kBase, kStride, n, scale, scores);
        } else {
            for (int p = 0; p < n; p++) {
                float s = 0;
                for (int d = 0; d < headDim; d++) s = Math.fma(q[qOff + d], keysT[kBase + d * kStride + p], s);
                scores[p] = s * scale;
            }
        }
        Softmax.apply(mode, scores, 0, n);
        if (f16Weights) roundToF16(scores, n);
        int d = mode == KernelMode.VECTOR ? ElementwiseVector.weightedSum(scores, 0, n, values, vBase, vStride, headDim, out, outOff, false) : 0;
        for (; d < headDim; d++) {
            float s = 0;
            for (int p = 0; p < n; p++) s = Math.fma(scores[p], values[vBase + p * vStride + d], s);
            out[outOff + d] = s;
        }
    }

    /** Queries per {@link #attendTransposed4} call. */
    public static final int QUERIES = 4;

    /** Head sizes {@link #attendTransposed4} takes are multiples of this: whole pairs of vectors at every width (2 × 16 lanes at 512 bits). */
    static final int FOUR_GRAIN = 32;

    /**
     * Whether {@link #attendTransposed4} handles this head size in {@code mode} (vector kernels,
     * a multiple of {@link #FOUR_GRAIN}: whole pairs of vectors at 512, 256 and 128 bits alike, so
     * the choice, and with it every result, does not depend on the width). Other head sizes take
     * {@link #attendTransposed}, which handles any size.
     */
    public static boolean canAttendFour(KernelMode mode, int headDim) {
        return mode == KernelMode.VECTOR && headDim % FOUR_GRAIN == 0;
    }

    /**
     * {@link #attendTransposed} for four queries that read the same keys and values (four heads
     * of one GQA group at one position, or one head at four positions of a sequence), so that each
     * key and value vector loaded serves four queries instead of one. Query {@code i} is at
     * {@code q[qOffs[i]]}, attends over positions {@code [0, ns[i])} and writes
     * {@code out[outOffs[i] .. + headDim)}; {@code scores} holds {@code 4 · scoreStride} floats,
     * {@code scoreStride ≥ max(ns)}. Each query's result equals {@link #attendTransposed}'s: every
     * score and output lane is the same chain of FMAs in the same order; positions past a query's
     * own length get weight 0 (which adds nothing unless the value there is infinite or NaN).
     * Requires {@link #canAttendFour}.
     */
    public static void attendTransposed4(float[] q, int[] qOffs, int headDim, float scale,
                                         float[] keysT, int kBase, int kStride, float[] values, int vBase, int vStride,
                                         int[] ns, boolean f16Weights, float[] scores, int scoreStride, float[] out, int[] outOffs) {
        int nMax = 0;
        for (int i = 0; i < QUERIES; i++) nMax = Math.max(nMax, ns[i]);
        if (scoreStride < nMax || scores.length < QUERIES * scoreStride) {
            throw new IllegalArgumentException("score scratch: stride " + scoreStride + " and length " + scores.length + " for " + nMax + " positions");
        }
        ElementwiseVector.transposedScores4(q, qOffs, headDim, keysT, kBase, kStride, nMax, scale, scores, scoreStride);
        for (int i = 0; i < QUERIES; i++) {
            int so = i * scoreStride;
            Softmax.apply(KernelMode.VECTOR, scores, so, ns[i]);
            if (f16Weights) roundToF16(scores, so, ns[i]);
            java.util.Arrays.fill(scores, so + ns[i], so + nMax, 0f);
        }
        ElementwiseVector.weightedSum4(scores, scoreStride, nMax, values, vBase, vStride, headDim, out, outOffs);
    }

    /** x[i] = nearest F16 of x[i], for i in [0, n). */
    public static void roundToF16(float[] x, int n) {
        roundToF16(x, 0, n);
    }

    /** x[off+i] = nearest F16 of x[off+i], for i in [0, n). */
    public static void roundToF16(float[] x, int off, int n) {
        for (int i = off; i < off + n; i++) x[i] = Float.float16ToFloat(Float.floatToFloat16(x[i]));
    }

    static float dotF32(float[] q, int qOff, MemorySegment seg, long off, int n) {
        float s = 0;
        for (int i = 0; i < n; i++) s += q[qOff + i] * seg.get(F32, off + 4L * i);
        return s;
    }

    static float dotF16(float[] q, int qOff, MemorySegment seg, long off, int n) {
        float s = 0;
        for (int i = 0; i < n; i++) s += q[qOff + i] * Float.float16ToFloat(seg.get(F16, off + 2L * i));
        return s;
    }

    static void axpyF32(float a, MemorySegment seg, long off, float[] out, int outOff, int n) {
        for (int i = 0; i < n; i++) out[outOff + i] += a * seg.get(F32, off + 4L * i);
    }

    static void axpyF16(float a, MemorySegment seg, long off, float[] out, int outOff, int n) {
        for (int i = 0; i < n; i++) out[outOff + i] += a * Float.float16ToFloat(seg.get(F16, off + 2L * i));
    }
}
