package io.modelopt.core.safetensors;

import io.modelopt.core.tensor.GgmlType;
import io.modelopt.core.tensor.TensorData;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.Arrays;

/**
 * One tensor of a safetensors file: its header name, dtype, shape in PyTorch order (row-major,
 * last dimension contiguous; a {@code [out, in]} matrix is {@code {out, in}} here) and its bytes,
 * little endian. {@code data} is normally a zero-copy slice of the file's mapping and lives as long
 * as the {@link SafetensorsFile} that made it.
 */
public record SafetensorsTensor(String name, SafetensorsDType dtype, long[] shape, MemorySegment data) {
    private static final ValueLayout.OfFloat F32_LE = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfShort I16_LE = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfDouble F64_LE = ValueLayout.JAVA_DOUBLE_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    public SafetensorsTensor {
        shape = shape.clone();
        long bytes = byteSizeOf(dtype, shape);
        if (bytes != data.byteSize()) {
            throw new IllegalArgumentException("tensor " + name + ": " + dtype + Arrays.toString(shape) + " needs " + bytes
                    + " bytes but the data has " + data.byteSize());
        }
    }

    /**
     * Bytes taken by a tensor of this dtype and shape.
     *
     * @throws ArithmeticException on overflow; IllegalArgumentException on a negative dimension
     */
    public static long byteSizeOf(SafetensorsDType dtype, long[] shape) {
        long n = 1;
        for (long d : shape) {
            if (d < 0) throw new IllegalArgumentException("negative dimension " + d + " in " + Arrays.toString(shape));
            n = Math.multiplyExact(n, d);
        }
        return Math.multiplyExact(n, (long) dtype.size());
    }

    @Override public long[] shape() { return shape.clone(); }

    public long elementCount() { return data.byteSize() / dtype.size(); }

    public long byteSize() { return data.byteSize(); }

    /** The shape in ggml order (reversed; a scalar becomes {@code {1}}). */
    public long[] ggmlShape() {
        if (shape.length == 0) return new long[] {1};
        long[] r = new long[shape.length];
        for (int i = 0; i < shape.length; i++) r[i] = shape[shape.length - 1 - i];
        return r;
    }

    /** {@link #toTensorData(String)} under this tensor's own name. */
    public TensorData toTensorData() { return toTensorData(name); }

    /**
     * The same bytes as a {@link TensorData} named {@code newName}, shape reversed to ggml order
     * (no copy: the bytes of a row-major PyTorch tensor already are a ggml tensor with reversed dims).
     *
     * @throws IllegalArgumentException for dtypes ggml has no type for (BOOL, U8/U16/U32/U64, F8_*)
     */
    public TensorData toTensorData(String newName) {
        GgmlType type = dtype.ggmlType().orElseThrow(() -> new IllegalArgumentException(
                "tensor " + name + " has dtype " + dtype + ", which has no ggml equivalent"));
        return new TensorData(newName, type, ggmlShape(), data);
    }

    /**
     * Decodes an F32, F16, BF16 or F64 tensor into floats (F64 rounded to nearest float), in storage
     * order. Meant for tests, conversion and small tensors, not the inference path.
     */
    public float[] toFloatArray() {
        long n = elementCount();
        if (n > Integer.MAX_VALUE - 8) throw new IllegalStateException("tensor " + name + " has " + n + " elements, too many for a float[]");
        float[] out = new float[(int) n];
        switch (dtype) {
            case F32 -> MemorySegment.copy(data, F32_LE, 0, out, 0, out.length);
            case F16 -> { for (int i = 0; i < out.length; i++) out[i] = Float.float16ToFloat(data.getAtIndex(I16_LE, i)); }
            case BF16 -> { for (int i = 0; i < out.length; i++) out[i] = Float.intBitsToFloat((data.getAtIndex(I16_LE, i) & 0xffff) << 16); }
            case F64 -> { for (int i = 0; i < out.length; i++) out[i] = (float) data.getAtIndex(F64_LE, i); }
            default -> throw new IllegalStateException("tensor " + name + " has dtype " + dtype + ", not a float type");
        }
        return out;
    }

    @Override public boolean equals(Object o) {
        return o instanceof SafetensorsTensor t && name.equals(t.name) && dtype == t.dtype && Arrays.equals(shape, t.shape) && data.equals(t.data);
    }

    @Override public int hashCode() { return name.hashCode() * 31 + Arrays.hashCode(shape); }

    @Override public String toString() { return name + " " + dtype + Arrays.toString(shape) + " " + data.byteSize() + " B"; }
}
