package io.modelopt.quantization.model;

import io.modelopt.core.tensor.GgmlType;
import io.modelopt.core.tensor.TensorData;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/** Rows of an F32/F16/BF16 tensor as floats (F16 and BF16 converted exactly), and float rows written back as those types. */
public final class FloatRows {
    private static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfShort I16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private FloatRows() {}

    /** Row {@code row} of {@code t} (ne0 values) into {@code x[0..ne0)}. */
    public static void read(TensorData t, long row, float[] x) {
        int n = (int) t.rowLength();
        MemorySegment d = t.data();
        long first = row * n;
        switch (t.type()) {
            case F32 -> MemorySegment.copy(d, F32, first * 4, x, 0, n);
            case F16 -> { for (int i = 0; i < n; i++) x[i] = Float.float16ToFloat(d.get(I16, (first + i) * 2)); }
            case BF16 -> { for (int i = 0; i < n; i++) x[i] = Float.intBitsToFloat((d.get(I16, (first + i) * 2) & 0xFFFF) << 16); }
            default -> throw new IllegalStateException("tensor " + t.name() + " is " + t.type() + ", not F32/F16/BF16");
        }
    }

    /** {@code x[0..n)} as row {@code row} of an F32/F16/BF16 segment (F16 round to nearest even, BF16 as ggml rounds it). */
    public static void write(MemorySegment d, GgmlType type, long row, float[] x, int n) {
        long first = row * n;
        switch (type) {
            case F32 -> MemorySegment.copy(x, 0, d, F32, first * 4, n);
            case F16 -> { for (int i = 0; i < n; i++) d.set(I16, (first + i) * 2, Float.floatToFloat16(x[i])); }
            case BF16 -> { for (int i = 0; i < n; i++) d.set(I16, (first + i) * 2, toBf16(x[i])); }
            default -> throw new IllegalStateException("not a float type: " + type);
        }
    }

    /** ggml's {@code ggml_compute_fp32_to_bf16}: round to nearest even, NaN kept quiet. */
    private static short toBf16(float f) {
        int u = Float.floatToRawIntBits(f);
        if ((u & 0x7fffffff) > 0x7f800000) return (short) ((u >>> 16) | 64);
        return (short) ((u + (0x7fff + ((u >>> 16) & 1))) >>> 16);
    }
}
