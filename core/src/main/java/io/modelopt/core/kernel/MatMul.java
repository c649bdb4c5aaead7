package io.modelopt.core.kernel;

import io.modelopt.core.tensor.GgmlType;

/**
 * {@code out[t*rows + r] = Σ_k W[r][k] · x[t*cols + k]} for all tokens t of a batch: a GEMM that
 * reads each weight row once for all tokens (the row stays in cache while every token uses it).
 *
 * <p>Activations are prepared once per call as llama.cpp's CPU backend does for the weight
 * format: kept F32 for F32/F16/BF16 weights, quantized to Q8_0 for Q8_0/Q4_0/Q5_0 (Q8_1 for Q4_1)
 * and to Q8_K for Q4_K/Q5_K/Q6_K, with the arithmetic of llama.cpp's x86 build (see
 * {@link io.modelopt.core.quant.Q8_0#quantizeActivations}); in the per-token kernels each
 * block's dot product is an exact integer sum scaled as ggml scales it. The quantized
 * activations live in per-thread scratch that is reused, so a steady-state call allocates
 * nothing. A block of activations holding a NaN or an infinity makes that token's outputs NaN.
 *
 * <p>Rows are split into contiguous chunks over the pool's threads. The vector or scalar
 * kernels are chosen by {@link KernelMode#DEFAULT} unless a mode is given. With the vector
 * kernels, calls of 16 tokens or more (prefill; {@code -Dmodelopt.gemm.minTokens}) take the
 * register-blocked {@link Gemm} path over decoded weights; fewer tokens use the per-format dot
 * products. All paths give the same results for any thread count and, because every vector
 * reduction is written out in a fixed order, whether the JIT has compiled them yet or not.
 */
public final class MatMul {
    private MatMul() {}

    /** Rows are handed to threads in multiples of this (the vector kernels process row groups). */
    static final int ROW_GRAIN = 4;

    private static final ThreadLocal<Call> CALL = ThreadLocal.withInitial(Call::new);

    /** {@code out[t*rows + r] = Σ_k W[r][k]·x[t*cols + k]} for {@code t < nTokens}. */
    public static void matmul(ComputePool pool, WeightMatrix w, float[] x, int nTokens, float[] out) {
        matmul(KernelMode.DEFAULT, pool, w, x, 0, w.cols(), nTokens, out, 0, w.rows());
    }

    /**
     * The strided form: token {@code t} reads {@code x[xOffset + t*xStride .. + cols)} and writes
     * {@code out[outOffset + t*outStride .. + rows)}; {@code xStride >= cols}, {@code outStride >= rows}
     * (e.g. to write into a slice of a wider buffer). {@code x} and {@code out} must not overlap.
     */
    public static void matmul(ComputePool pool, WeightMatrix w, float[] x, int xOffset, int xStride, int nTokens,
                              float[] out, int outOffset, int outStride) {
        matmul(KernelMode.DEFAULT, pool, w, x, xOffset, xStride, nTokens, out, outOffset, outStride);
    }

    /** As the strided form with an explicit kernel choice (tests compare both). */
    public static void matmul(KernelMode mode, ComputePool pool, WeightMatrix w, float[] x, int xOffset, int xStride, int nTokens,
                              float[] out, int outOffset, int outStride) {
        int rows = w.rows(), cols = w.cols();
        if (nTokens < 0) throw new IllegalArgumentException("nTokens must be >= 0, got " + nTokens);
        if (nTokens == 0) return;
        if (xStride < cols || outStride < rows) {
            throw new IllegalArgumentException("strides too small for " + w + ": xStride " + xStride + " < cols or outStride " + outStride + " < rows");
        }
        checkRange("x", x.length, xOffset, (long) (nTokens - 1) * xStride + cols);
        checkRange("out", out.length, outOffset, (long) (nTokens - 1) * outStride + rows);
        FormatKernel kernel = kernel(mode, w);
        // Q4_1 stays on its dot product: ggml's Q8_1 sum term (half(d·Σq)) is not a product of decoded values.
        boolean gemm = mode == KernelMode.VECTOR && nTokens >= Gemm.MIN_TOKENS && rows >= Gemm.ROWS && w.type() != GgmlType.Q4_1;
        boolean packed = mode == KernelMode.VECTOR && !gemm && w.isRepacked();
        Call call = CALL.get();
        call.set(kernel, w, x, xOffset, xStride, nTokens, out, outOffset, outStride, gemm, packed, pool.threads());
        try {
            if (kernel.activations() != Activations.Kind.F32 || gemm) {
                if (nTokens >= 2 * pool.threads()) pool.parallelFor(nTokens, call.quantizeTask);
                else call.activations.quantize(0, nTokens);
            }
            int grain = gemm ? Gemm.ROWS : packed ? InterleavedQ4_0.ROWS : ROW_GRAIN;
            call.grain = grain;
            pool.parallelFor((rows + grain - 1) / grain, call.rowTask);
        } finally {
            call.clear();
        }
    }

    private static void checkRange(String what, int length, int offset, long needed) {
        if (offset < 0 || offset + needed > length) {
            throw new IllegalArgumentException(what + ": needs " + needed + " elements from offset " + offset + " but has length " + length);
        }
    }

    /** The kernel for a weight's format. Vector kernels are only loaded in {@link KernelMode#VECTOR}. */
    static FormatKernel kernel(KernelMode mode, WeightMatrix w) {
        if (mode == KernelMode.VECTOR) return VectorKernels.forType(w.type());
        return switch (w.type()) {
            case F32 -> F32Kernel.Scalar.INSTANCE;
            case F16 -> F16Kernel.Scalar.INSTANCE;
            case BF16 -> BF16Kernel.Scalar.INSTANCE;
            case Q8_0 -> Q8_0Kernel.Scalar.INSTANCE;
            case Q4_0 -> Q4_0Kernel.Scalar.INSTANCE;
            case Q4_1 -> Q4_1Kernel.Scalar.INSTANCE;
            case Q5_0 -> Q5_0Kernel.Scalar.INSTANCE;
            case Q4_K -> Q4_KKernel.Scalar.INSTANCE;
            case Q5_K -> Q5_KKernel.Scalar.INSTANCE;
            case Q6_K -> Q6_KKernel.Scalar.INSTANCE;
            default -> throw new IllegalStateException("unreachable: " + w.type());
        };
    }

    /** One thread's reusable call state: the activation scratch and the two range tasks, so a call allocates nothing. */
    private static final class Call {
        final Activations activations = new Activations();
        FormatKernel kernel;
        WeightMatrix w;
        float[] out;
        int outOffset, outStride;

        int grain;
        boolean gemm, packed;
        /** Per-worker panels of the GEMM path, grown on demand. */
        float[][] panels = new float[1][];

        final ComputePool.RangeTask quantizeTask = (start, end, worker) -> activations.quantize(start, end);
        final ComputePool.RangeTask rowTask = (start, end, worker) -> {
            int r0 = start * grain, r1 = Math.min(w.rows(), end * grain);
            if (packed) {
                // whole groups from the repacked copy, the rows after the last group in place
                int split = Math.min(r1, w.packedRows());
                if (r0 < split) InterleavedQ4_0.compute(w.packed(), w.cols() / 32, activations, r0 / InterleavedQ4_0.ROWS, split / InterleavedQ4_0.ROWS, out, outOffset, outStride);
                if (split < r1) kernel.compute(w, activations, Math.max(r0, split), r1, out, outOffset, outStride);
            } else if (gemm) {
                float[] panel = panels[worker] = Gemm.panel(panels[worker], w.cols());
                Gemm.compute(kernel, w, activations, r0, r1, out, outOffset, outStride, panel);
            } else {
                kernel.compute(w, activations, r0, r1, out, outOffset, outStride);
            }
        };

        void set(FormatKernel kernel, WeightMatrix w, float[] x, int xOffset, int xStride, int nTokens, float[] out, int outOffset, int outStride,
                 boolean gemm, boolean packed, int threads) {
            this.kernel = kernel;
            this.w = w;
            this.out = out;
            this.outOffset = outOffset;
            this.outStride = outStride;
            this.gemm = gemm;
            this.packed = packed;
            if (gemm && panels.length < threads) panels = java.util.Arrays.copyOf(panels, threads);
            activations.prepare(kernel.activations(), x, xOffset, xStride, nTokens, w.cols(), gemm, packed);
        }

        /** Drops references to the caller's arrays and weights so they are not kept alive by the thread. */
        void clear() {
            w = null;
            out = null;
            activations.x = null;
        }
    }
}
