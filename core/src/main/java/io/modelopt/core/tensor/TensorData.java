package io.modelopt.core.tensor;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;

/**
 * A named tensor as it lies in a model file: its ggml type, its shape in ggml order
 * ({@code shape[0]} = ne0 = the contiguous row length; a PyTorch {@code [out, in]} matrix is
 * {@code {in, out}} here) and its bytes, usually a zero-copy slice of a mapped file.
 * The segment's lifetime is its owner's (the model file's arena).
 */
public record TensorData(String name, GgmlType type, long[] shape, MemorySegment data) {
    public TensorData {
        shape = shape.clone();
        long bytes = type.bytesFor(elementCount(shape));
        if (data.byteSize() != bytes) {
            throw new IllegalArgumentException("tensor " + name + ": " + data.byteSize() + " bytes but " + type + Arrays.toString(shape) + " needs " + bytes);
        }
    }

    public static long elementCount(long[] shape) {
        long n = 1;
        for (long d : shape) n = Math.multiplyExact(n, d);
        return n;
    }

    public long elementCount() { return elementCount(shape); }

    public long byteSize() { return data.byteSize(); }

    /** ne0: elements in one row. */
    public long rowLength() { return shape[0]; }

    /** Number of rows (product of the dims after ne0). */
    public long rows() { return shape.length == 0 ? 1 : elementCount() / shape[0]; }

    /** Bytes in one row. */
    public long rowBytes() { return type.bytesFor(shape[0]); }

    @Override public long[] shape() { return shape.clone(); }

    public long dim(int i) { return i < shape.length ? shape[i] : 1; }

    @Override public String toString() {
        return name + " " + type + Arrays.toString(shape) + " " + data.byteSize() + " B";
    }

    @Override public boolean equals(Object o) {
        return o instanceof TensorData t && name.equals(t.name) && type == t.type && Arrays.equals(shape, t.shape) && data.equals(t.data);
    }

    @Override public int hashCode() { return name.hashCode() * 31 + Arrays.hashCode(shape); }
}
