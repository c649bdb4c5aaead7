package io.modelopt.quantization.hf;

import io.modelopt.core.kernel.WeightMatrix;
import io.modelopt.quantization.format.IntLayout;
import io.modelopt.quantization.format.IntRow;
import io.modelopt.quantization.format.IntScheme;
import java.util.function.IntUnaryOperator;

/**
 * A whole group-wise integer weight in logical form, row-major (row = output channel): what every
 * exporter packs from. Codes are held as bytes (at most 8 bits each), one weight at a time.
 *
 * @param codes  {@code rows × cols} unsigned codes
 * @param scales {@code rows × groups}
 * @param zeros  {@code rows × groups}, unsigned
 */
record LogicalWeight(IntScheme scheme, int rows, int cols, int groupSize, byte[] codes, float[] scales, int[] zeros) {
    int groups() { return cols / groupSize; }

    int code(int row, int k) { return codes[row * cols + k] & 0xFF; }

    /**
     * Reads every row of {@code w} through {@code layout}; row {@code r} of the result is row
     * {@code sourceRow.applyAsInt(r)} of {@code w} (a Q/K row permutation, or identity).
     */
    static LogicalWeight read(WeightMatrix w, IntLayout layout, IntUnaryOperator sourceRow) {
        IntScheme s = layout.scheme();
        int rows = w.rows(), cols = w.cols();
        IntRow r = new IntRow(s, cols);
        int groups = r.scales.length;
        byte[] codes = new byte[Math.multiplyExact(rows, cols)];
        float[] scales = new float[rows * groups];
        int[] zeros = new int[rows * groups];
        for (int row = 0; row < rows; row++) {
            layout.readRow(w, sourceRow.applyAsInt(row), r);
            for (int k = 0; k < cols; k++) codes[row * cols + k] = (byte) r.codes[k];
            System.arraycopy(r.scales, 0, scales, row * groups, groups);
            System.arraycopy(r.zeros, 0, zeros, row * groups, groups);
        }
        return new LogicalWeight(s, rows, cols, r.groupSize, codes, scales, zeros);
    }
}
