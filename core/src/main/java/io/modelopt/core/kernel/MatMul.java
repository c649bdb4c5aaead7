package io.modelopt.core.kernel;

/**
 * {@code out[t * rows + r] = Σ_k W[r][k] · x[t * cols + k]} for all tokens t of a batch: a GEMM
 * that reads each weight row once for all tokens. Placeholder scalar body; the kernels issue
 * replaces it with per-format Vector API kernels.
 */
public final class MatMul {
    private MatMul() {}

    public static void matmul(ComputePool pool, WeightMatrix w, float[] x, int nTokens, float[] out) {
        int cols = w.cols(), rows = w.rows();
        pool.parallelFor(rows, (start, end, worker) -> {
            float[] row = new float[cols];
            for (int r = start; r < end; r++) {
                w.dequantizeRow(r, row, 0);
                for (int t = 0; t < nTokens; t++) {
                    float s = 0;
                    for (int k = 0; k < cols; k++) s += row[k] * x[t * cols + k];
                    out[t * rows + r] = s;
                }
            }
        });
    }
}
