package io.modelopt.core.kernel;

import io.modelopt.core.tensor.GgmlType;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.Arrays;

/**
 * Scaled dot-product attention of one query head over {@code n} cached positions:
 * <pre>
 *   s_p   = scale · (q · K_p)            p in [0, n)
 *   a     = softmax(s)                   in float ({@link Softmax})
 *   out   = Σ_p a_p · V_p
 * </pre>
 * The kernel does not know how the cache is laid out: the caller passes, per position, the byte
 * offset of that position's row in the key and value segments ({@code rowOffsets[p]}), plus the
 * offset of the KV head inside a row ({@code headOffset}). A contiguous cache and a paged one
 * (block table → block, offset) both reduce to such a list, so one kernel serves both. Causality
 * is the caller's business: it passes only the positions a query may see.
 *
 * <p>Keys and values are F32 or F16 (little endian, as ggml stores them). F16 rows are converted
 * element by element with {@link Float#float16ToFloat}, which the JIT turns into the hardware
 * conversion where there is one.
 */
public final class AttentionKernel {
    private AttentionKernel() {}

    static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    static final ValueLayout.OfShort F16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    /**
     * @param scores scratch of at least {@code n} floats; holds the attention weights afterwards
     * @param out    receives the {@code headDim} outputs at {@code outOff} (overwritten)
     */
    public static void attend(KernelMode mode, float[] q, int qOff, int headDim, float scale,
                              MemorySegment keys, MemorySegment values, GgmlType kvType,
                              long[] rowOffsets, long headOffset, int n, float[] scores, float[] out, int outOff) {
        if (kvType != GgmlType.F32 && kvType != GgmlType.F16) {
            throw new IllegalArgumentException("attention reads F32 or F16 keys/values, not " + kvType);
        }
        if (scores.length < n) throw new IllegalArgumentException("score scratch holds " + scores.length + " floats, need " + n);
        boolean vector = mode == KernelMode.VECTOR;
        boolean f16 = kvType == GgmlType.F16;
        for (int p = 0; p < n; p++) {
            long off = rowOffsets[p] + headOffset;
            float dot = f16 ? dotF16(q, qOff, keys, off, headDim)
                    : vector ? ElementwiseVector.dotF32(q, qOff, keys, off, headDim)
                    : dotF32(q, qOff, keys, off, headDim);
            scores[p] = dot * scale;
        }
        Softmax.apply(mode, scores, 0, n);
        Arrays.fill(out, outOff, outOff + headDim, 0f);
        for (int p = 0; p < n; p++) {
            long off = rowOffsets[p] + headOffset;
            float a = scores[p];
            if (f16) axpyF16(a, values, off, out, outOff, headDim);
            else if (vector) ElementwiseVector.axpyF32(a, values, off, out, outOff, headDim);
            else axpyF32(a, values, off, out, outOff, headDim);
        }
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
