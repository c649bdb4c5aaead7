package io.modelopt.core.kernel;

import java.lang.foreign.MemorySegment;


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
 * <p>Rows are handed to the pool's threads in pieces taken from a shared counter, large first
 * and small last ({@link ComputePool#parallelForGuided}). The vector or
 * scalar kernels are chosen by {@link KernelMode#DEFAULT} unless a mode is given. With the vector
 * kernels, calls of 16 tokens or more (prefill; {@code -Dmodelopt.gemm.minTokens}) take the
 * register-blocked {@link Gemm} path over decoded weights; fewer tokens use the per-format dot
 * products, or for a repacked matrix ({@link WeightMatrix#repacked}) its interleaved kernel (one
 * token: several row groups per pass; 4 to 15 tokens, a decode step of several sequences: four
 * or eight tokens per pass over each group, the rest one at a time, each token with the bits of
 * a call of its own). All paths give the same results for any thread count and, because every
 * vector reduction is written out in a fixed order, whether the JIT has compiled them yet or not.
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
        run(mode, pool, x, xOffset, xStride, nTokens, w, out, outOffset, outStride, null, null, null, null);
    }

    /**
     * Several matrices applied to the same input ({@code x[t*cols ..]}, {@code nTokens} tokens):
     * {@code outI[t*rowsI + r] = Σ_k WI[r][k]·x_t[k]}, e.g. the Q, K and V projections or FFN gate and
     * up. The activations are quantized once and all rows go to the pool in one call, which saves
     * a synchronization per matrix in a decode step. {@code w2}/{@code out2} may be null. Matrices of
     * different formats or widths are computed one after another.
     */
    public static void matmulSharedInput(ComputePool pool, float[] x, int nTokens, WeightMatrix w0, float[] out0,
                                         WeightMatrix w1, float[] out1, WeightMatrix w2, float[] out2) {
        KernelMode mode = KernelMode.DEFAULT;
        boolean same = alike(w0, w1) && (w2 == null || alike(w0, w2));
        if (!same || nTokens <= 0) {
            matmul(pool, w0, x, nTokens, out0);
            matmul(pool, w1, x, nTokens, out1);
            if (w2 != null) matmul(pool, w2, x, nTokens, out2);
            return;
        }
        int cols = w0.cols();
        checkRange("x", x.length, 0, (long) nTokens * cols);
        checkRange("out0", out0.length, 0, (long) nTokens * w0.rows());
        checkRange("out1", out1.length, 0, (long) nTokens * w1.rows());
        if (w2 != null) checkRange("out2", out2.length, 0, (long) nTokens * w2.rows());
        run(mode, pool, x, 0, cols, nTokens, w0, out0, 0, w0.rows(), w1, out1, w2, out2);
    }

    /** Whether two matrices take the same path for any token count (so that fusing them changes no result). */
    private static boolean alike(WeightMatrix a, WeightMatrix b) {
        return a.cols() == b.cols() && a.type() == b.type() && a.format() == b.format() && a.isRepacked() == b.isRepacked()
                && a.isTranscoded() == b.isTranscoded() && (a.rows() >= Gemm.ROWS) == (b.rows() >= Gemm.ROWS);
    }

    /** One pool call over the rows of {@code w0} (and {@code w1}, {@code w2} when not null: same format and width, outputs unstrided). */
    private static void run(KernelMode mode, ComputePool pool, float[] x, int xOffset, int xStride, int nTokens,
                            WeightMatrix w0, float[] out0, int outOffset, int outStride,
                            WeightMatrix w1, float[] out1, WeightMatrix w2, float[] out2) {
        FormatKernel kernel = kernel(mode, w0);
        int minRows = Math.min(w0.rows(), Math.min(w1 == null ? Integer.MAX_VALUE : w1.rows(), w2 == null ? Integer.MAX_VALUE : w2.rows()));
        boolean gemm = mode == KernelMode.VECTOR && nTokens >= Gemm.MIN_TOKENS && minRows >= Gemm.ROWS && kernel.decodesForGemm();
        // repacked matrices: the decode kernels, or the GEMM over panels decoded from the copy
        // (a transcoded matrix has only the copy: its stored tensors are not in the target's blocks)
        boolean packed = mode == KernelMode.VECTOR && w0.isInterleaved()
                && (!gemm || w0.isTranscoded() || (Gemm.FROM_COPY && w0.repacking().gemmReadsCopy()));
        // re-encoded F16 (RebiasedF16): its one-token kernel reads the activations pre-scaled
        boolean scaleForF16 = kernel.wantsScaledF16Activations() && w0.isRepacked() && !gemm && nTokens == 1;
        int grain = packed ? w0.packedGroupRows() : gemm ? Gemm.ROWS : ROW_GRAIN;
        Call call = CALL.get();
        call.set(kernel, x, xOffset, xStride, nTokens, w0.cols(), gemm, packed, packed && !gemm && w0.repacking().wantsQ4Multipliers(), grain, pool.threads(),
                mode == KernelMode.VECTOR, scaleForF16);
        call.activations.prepareKMultipliers(packed && !gemm ? w0.repacking().multipliers() : null);
        if (packed && w0.isTranscoded()) call.sumGroups(w0.affine(), x, xOffset, xStride, nTokens, w0.cols());
        call.add(w0, out0, outOffset, outStride);
        if (w1 != null) call.add(w1, out1, 0, w1.rows());
        if (w2 != null) call.add(w2, out2, 0, w2.rows());
        try {
            if (kernel.activations() != Activations.Kind.F32 || gemm || scaleForF16) {
                if (nTokens >= 2 * pool.threads()) pool.parallelFor(nTokens, call.quantizeTask);
                else call.activations.quantize(0, nTokens);
            }
            // Guided pieces: a thread slowed by the caller's serial work, the OS or memory does not
            // hold up the call, and the last pieces are small, so both threads finish together. (Fixed
            // pieces of 1/16 of the rows left one thread waiting up to a piece at the end of each
            // call, e.g. ~40 µs of tiny1b's fused gate/up; guided: decode 1–10% faster, alternating
            // runs, docs/PERFORMANCE.md.) A repacked matrix's pieces are whole passes of its kernel.
            int units = call.units();
            int piece = packed ? passGroups(w0, gemm, nTokens) : Math.max(1, units / (32 * pool.threads()));
            pool.parallelForGuided(units, piece, call.rowTask);
        } finally {
            call.clear();
        }
    }

    private static void checkRange(String what, int length, int offset, long needed) {
        if (offset < 0 || offset + needed > length) {
            throw new IllegalArgumentException(what + ": needs " + needed + " elements from offset " + offset + " but has length " + length);
        }
    }

    /** The kernel for a weight's format ({@link WeightFormat#kernel}). Vector kernels are only loaded in {@link KernelMode#VECTOR}. */
    static FormatKernel kernel(KernelMode mode, WeightMatrix w) {
        return w.kernelFormat(mode).kernel(mode);
    }

    /**
     * Row groups a repacked matrix's kernel takes per pass: several for a one-token call
     * ({@link Repacking#decodeGroups}) and for some few-token calls ({@link Repacking#fewTokenGroups}),
     * one otherwise (the GEMM).
     */
    private static int passGroups(WeightMatrix w, boolean gemm, int nTokens) {
        if (gemm) return 1;
        return nTokens == 1 ? w.repacking().decodeGroups() : w.repacking().fewTokenGroups(nTokens);
    }

    /** One thread's reusable call state: the activation scratch and the two range tasks, so a call allocates nothing. */
    private static final class Call {
        final Activations activations = new Activations();
        FormatKernel kernel;
        /** The matrices of the call (1 to 3), their outputs, and the end of each one's units (row groups of {@link #grain}). */
        final WeightMatrix[] ws = new WeightMatrix[3];
        final float[][] outs = new float[3][];
        final int[] outOffsets = new int[3], outStrides = new int[3], unitEnds = new int[3];
        int count;

        int grain;
        boolean gemm, packed;
        /** Per-worker panels of the GEMM path, grown on demand. */
        float[][] panels = new float[1][];
        /** Per-worker scales of one row group of a repacked matrix, as floats, grown on demand. */
        float[][] scales = new float[1][];

        final ComputePool.RangeTask quantizeTask = (start, end, worker) -> activations.quantize(start, end);
        final ComputePool.RangeTask rowTask = (start, end, worker) -> {
            for (int i = 0; i < count; i++) {
                int u0 = i == 0 ? 0 : unitEnds[i - 1];
                int s = Math.max(start, u0), e = Math.min(end, unitEnds[i]);
                if (s < e) rows(ws[i], outs[i], outOffsets[i], outStrides[i], (s - u0) * grain, Math.min(ws[i].rows(), (e - u0) * grain), worker);
            }
        };

        private void rows(WeightMatrix w, float[] out, int outOffset, int outStride, int r0, int r1, int worker) {
            if (packed) {
                // whole groups from the repacked copy, the rows after the last group from the file
                int split = Math.min(r1, w.packedRows()), nb = w.cols() / 32;
                if (r0 < split) {
                    float[] sc = scales[worker];
                    // one group's scales as floats, for the prefill GEMM and the few-token path (the one-token kernels decode theirs in the block loop)
                    int need = nb * grain;
                    if (sc == null || sc.length < need) sc = scales[worker] = new float[need];
                    if (gemm) {
                        float[] panel = panels[worker] = Gemm.packedPanel(panels[worker], grain, w.cols());
                        Gemm.computePacked(w, activations, r0 / grain, split / grain, out, outOffset, outStride, panel, sc);
                    } else {
                        w.repacking().compute(w.packed(), nb, activations, r0 / grain, split / grain, out, outOffset, outStride, sc);
                    }
                    if (w.isTranscoded()) applyAffine(w.affine(), w.cols(), w.rows(), out, outOffset, outStride, r0, split);
                }
                int tail = Math.max(r0, split);
                if (tail < r1) {
                    if (gemm) {
                        float[] panel = panels[worker] = Gemm.panel(panels[worker], w.cols());
                        Gemm.compute(kernel, w, activations, tail, r1, out, outOffset, outStride, panel);
                    } else {
                        kernel.compute(w, activations, tail, r1, out, outOffset, outStride);
                    }
                }
            } else if (gemm) {
                float[] panel = panels[worker] = Gemm.panel(panels[worker], w.cols());
                Gemm.compute(kernel, w, activations, r0, r1, out, outOffset, outStride, panel);
            } else {
                kernel.compute(w, activations, r0, r1, out, outOffset, outStride);
            }
        }

        void set(FormatKernel kernel, float[] x, int xOffset, int xStride, int nTokens, int cols,
                 boolean gemm, boolean packed, boolean q4Activations, int grain, int threads, boolean vector, boolean scaleForF16) {
            this.kernel = kernel;
            this.gemm = gemm;
            this.packed = packed;
            this.grain = grain;
            this.count = 0;
            if (gemm && panels.length < threads) panels = java.util.Arrays.copyOf(panels, threads);
            if (packed && scales.length < threads) scales = java.util.Arrays.copyOf(scales, threads);
            activations.prepare(kernel.activations(), x, xOffset, xStride, nTokens, cols, gemm, q4Activations, vector, scaleForF16);
        }

        void add(WeightMatrix w, float[] out, int outOffset, int outStride) {
            ws[count] = w;
            outs[count] = out;
            outOffsets[count] = outOffset;
            outStrides[count] = outStride;
            unitEnds[count] = (count == 0 ? 0 : unitEnds[count - 1]) + (w.rows() + grain - 1) / grain;
            count++;
        }

        int units() { return unitEnds[count - 1]; }

        /** Per token, the sums of the F32 activations over each offset group (a transcoded matrix's offsets multiply them). */
        float[] groupSums = new float[0];
        int sumGroups, sumTokens;

        void sumGroups(WeightMatrix.Affine affine, float[] x, int xOffset, int xStride, int nTokens, int cols) {
            sumGroups = affine.groups(cols);
            sumTokens = nTokens;
            if (sumGroups == 0) return;
            int need = nTokens * sumGroups, g = affine.group();
            if (groupSums.length < need) groupSums = new float[need];
            for (int t = 0; t < nTokens; t++) {
                int base = xOffset + t * xStride;
                for (int j = 0; j < sumGroups; j++) {
                    float s = 0;
                    for (int k = base + j * g, end = k + g; k < end; k++) s += x[k];
                    groupSums[t * sumGroups + j] = s;
                }
            }
        }

        /** {@code out = rowScale·out + Σ_g offset[r][g]·groupSum[t][g]} for rows {@code [r0, r1)} of every token ({@link Transcoding}). */
        void applyAffine(WeightMatrix.Affine affine, int cols, int rows, float[] out, int outOffset, int outStride, int r0, int r1) {
            if (affine.rowScales() == null && affine.offsets() == null) return;
            AffineTerms.apply(affine.rowScales(), affine.offsets(), sumGroups, rows, groupSums, sumTokens, out, outOffset, outStride, r0, r1);
        }

        /** Drops references to the caller's arrays and weights so they are not kept alive by the thread. */
        void clear() {
            for (int i = 0; i < ws.length; i++) {
                ws[i] = null;
                outs[i] = null;
            }
            count = 0;
            activations.x = null;
        }
    }
}
