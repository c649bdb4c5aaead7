package io.modelopt.core.kernel;

import io.modelopt.core.tensor.GgmlType;
import io.modelopt.core.tensor.TensorData;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * A 2-D weight ready for {@link MatMul}: {@code rows} output features of {@code cols} inputs each
 * (ggml ne1 = rows, ne0 = cols), in the tensor's own format. Placeholder: the kernels issue
 * puts format dispatch (and any load-time repacking) here.
 */
public final class WeightMatrix {
    private final TensorData tensor;
    private final int rows, cols;

    private WeightMatrix(TensorData t) {
        this.tensor = t;
        this.cols = Math.toIntExact(t.rowLength());
        this.rows = Math.toIntExact(t.rows());
    }

    public static WeightMatrix of(TensorData t) { return new WeightMatrix(t); }

    public int rows() { return rows; }
    public int cols() { return cols; }
    public GgmlType type() { return tensor.type(); }
    public TensorData tensor() { return tensor; }

    /** Dequantizes row {@code row} into {@code dst[off .. off+cols)} (embedding lookup). */
    public void dequantizeRow(int row, float[] dst, int off) {
        MemorySegment d = tensor.data();
        long base = row * tensor.rowBytes();
        switch (tensor.type()) {
            case F32 -> MemorySegment.copy(d, ValueLayout.JAVA_FLOAT_UNALIGNED, base, dst, off, cols);
            case F16 -> { for (int i = 0; i < cols; i++) dst[off + i] = Float.float16ToFloat(d.get(ValueLayout.JAVA_SHORT_UNALIGNED, base + 2L * i)); }
            default -> throw new UnsupportedOperationException("no kernel yet for " + tensor.type());
        }
    }
}
