package io.modelopt.core.gguf;

import io.modelopt.core.tensor.GgmlType;
import io.modelopt.core.tensor.TensorData;
import java.util.Arrays;
import java.util.Objects;

/**
 * One entry of a GGUF file's tensor-info table.
 *
 * @param name   the tensor name as stored (GGUF names are the canonical ones, e.g. {@code blk.0.attn_q.weight})
 * @param type   the ggml type
 * @param dims   the dimensions in GGUF/ggml order, ne0 (the contiguous row length) first; 0 to 4 of them
 * @param offset byte offset of the data from the start of the data section (a multiple of the alignment)
 */
public record GgufTensorInfo(String name, GgmlType type, long[] dims, long offset) {
    public GgufTensorInfo {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(type, "type");
        dims = dims.clone();
    }

    @Override public long[] dims() { return dims.clone(); }

    public int nDims() { return dims.length; }

    public long elementCount() { return TensorData.elementCount(dims); }

    /** Bytes of data: elements / block size * type size. */
    public long byteSize() { return type.bytesFor(elementCount()); }

    @Override public boolean equals(Object o) {
        return o instanceof GgufTensorInfo t && name.equals(t.name) && type == t.type && Arrays.equals(dims, t.dims) && offset == t.offset;
    }

    @Override public int hashCode() { return name.hashCode() * 31 + Arrays.hashCode(dims); }

    @Override public String toString() {
        return name + " " + type + Arrays.toString(dims) + " @" + offset;
    }
}
