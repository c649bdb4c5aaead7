package io.modelopt.quantization.gptq;

import io.modelopt.core.kernel.ComputePool;
import io.modelopt.core.kernel.MatMul;
import io.modelopt.core.kernel.WeightMatrix;
import io.modelopt.core.tensor.GgmlType;
import io.modelopt.core.tensor.TensorData;
import io.modelopt.quantization.calib.InputStatistics;
import java.lang.foreign.MemorySegment;

/**
 * GPTQ's Hessian of one linear input, {@code H = 2XᵀX / n} over the {@code n} calibration tokens
 * (AutoGPTQ's {@code add_batch} keeps the same matrix up to the factor, which GPTQ is invariant
 * to: the dampening is relative to the mean diagonal).
 *
 * <p>Each batch is one GEMM on the engine's own F32 kernel: the batch transposed to
 * {@code cols × tokens} is both the "weight" and the "activations" of {@link MatMul#matmul}, so
 * {@code out[b·cols + a] = Σ_t x[t][a]·x[t][b]}; the float products of a batch are summed into a
 * double matrix across batches.
 */
public final class HessianAccumulator implements InputStatistics {
    private final ComputePool pool;
    private int cols;
    private double[] sum;
    private float[] transposed = new float[0];
    private float[] product;
    private long tokens;
    /** The matrix {@link #takeHessian} handed out, still counted by {@link #bytes()}. */
    private double[] taken;

    public HessianAccumulator(ComputePool pool, int cols) {
        this.pool = pool;
        this.cols = cols;
        this.sum = new double[cols * cols];
    }

    /** Sized by the first batch it sees. */
    public HessianAccumulator(ComputePool pool) {
        this.pool = pool;
        this.cols = -1;
    }

    @Override public void accept(float[] rows, int n, int c) {
        if (taken != null) throw new IllegalStateException("the Hessian was taken; no more rows");
        if (sum == null) {
            cols = c;
            sum = new double[c * c];
        }
        if (c != cols) throw new IllegalArgumentException("Hessian of " + cols + " columns fed rows of " + c);
        if (n == 0) return;
        if (transposed.length < n * cols) transposed = new float[n * cols];
        for (int t = 0; t < n; t++) {
            int o = t * cols;
            for (int a = 0; a < cols; a++) transposed[a * n + t] = rows[o + a];
        }
        if (product == null) product = new float[cols * cols];
        TensorData td = new TensorData("hessian", GgmlType.F32, new long[] {n, cols}, MemorySegment.ofArray(transposed).asSlice(0, 4L * n * cols));
        MatMul.matmul(pool, WeightMatrix.of(td), transposed, cols, product);
        for (int i = 0; i < product.length; i++) sum[i] += product[i];
        tokens += n;
    }

    /** Columns (the linear's inputs). */
    public int cols() { return cols; }

    /** Tokens seen. */
    public long tokens() { return tokens; }

    /** {@code 2XᵀX / n}, row-major {@code cols × cols} (a new array). */
    public double[] hessian() {
        if (sum == null) throw new IllegalStateException("no inputs were accumulated");
        double[] h = new double[sum.length];
        if (tokens == 0) return h;
        double f = 2.0 / tokens;
        for (int i = 0; i < h.length; i++) h[i] = sum[i] * f;
        return h;
    }

    /**
     * {@link #hessian()} without a copy, for the last use: the sum is scaled in place and returned,
     * and the GEMM buffers are dropped ({@link #bytes()} then counts the returned matrix alone).
     * The accumulator takes no more rows.
     */
    public double[] takeHessian() {
        if (sum == null) throw new IllegalStateException("no inputs were accumulated");
        double[] h = sum;
        if (tokens > 0) {
            double f = 2.0 / tokens;
            for (int i = 0; i < h.length; i++) h[i] *= f;
        }
        transposed = new float[0];
        product = null;
        sum = null;
        taken = h;
        return h;
    }

    /** Adds rows without the GEMM (tests: the float64 path). */
    void acceptExact(double[] x, int n) {
        for (int t = 0; t < n; t++) {
            for (int a = 0; a < cols; a++) {
                double xa = x[t * cols + a];
                for (int b = 0; b < cols; b++) sum[a * cols + b] += xa * x[t * cols + b];
            }
        }
        tokens += n;
    }

    @Override public long bytes() {
        return (sum == null ? 0 : 8L * sum.length) + (taken == null ? 0 : 8L * taken.length) + 4L * transposed.length
                + (product == null ? 0 : 4L * product.length);
    }
}
