package io.modelopt.quantization.hf;

import io.modelopt.core.tensor.GgmlType;
import io.modelopt.core.tensor.TensorData;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/** Little-endian element reads from a checkpoint tensor's bytes (safetensors is little endian). */
final class Words {
    private Words() {}

    static final ValueLayout.OfInt I32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    static final ValueLayout.OfLong I64 = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    static final ValueLayout.OfShort I16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    /** Element {@code i} of an I32 tensor. */
    static int i32(TensorData t, long i) { return t.data().get(I32, 4 * i); }

    /** Element {@code i} of an I8 tensor. */
    static int i8(TensorData t, long i) { return t.data().get(ValueLayout.JAVA_BYTE, i); }

    /** Element {@code i} of an integer tensor (I32 or I64). */
    static long integer(TensorData t, long i) {
        return t.type() == GgmlType.I64 ? t.data().get(I64, 8 * i) : t.data().get(I32, 4 * i);
    }

    /** Element {@code i} of a float tensor (F16, BF16 or F32: the dtypes the tools write scales in). */
    static float scale(TensorData t, long i) {
        MemorySegment d = t.data();
        return switch (t.type()) {
            case F16 -> Float.float16ToFloat(d.get(I16, 2 * i));
            case BF16 -> Float.intBitsToFloat((d.get(I16, 2 * i) & 0xFFFF) << 16);
            case F32 -> d.get(F32, 4 * i);
            default -> throw new IllegalStateException("tensor " + t.name() + " of type " + t.type() + " is not a scale tensor");
        };
    }
}
