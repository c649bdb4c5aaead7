package io.modelopt.core.engine;

import io.modelopt.core.kernel.ComputePool;
import io.modelopt.core.kernel.KernelMode;
import io.modelopt.core.kv.KvDtype;
import java.util.Objects;

/**
 * How a {@link ModelRunner} is built. Immutable; build with {@link #builder()}.
 *
 * @param threads        worker threads of the runner's compute pool
 * @param kvDtype        element type of the KV caches the runner creates (F16 is llama.cpp's default)
 * @param maxBatchTokens most tokens one {@link Batch} may hold; every activation buffer is sized for it once
 * @param maxLogitsRows  most tokens of one batch that may ask for logits (the logits buffer is
 *                       {@code maxLogitsRows × vocab} floats); at most {@code maxBatchTokens}
 * @param maxSequences   default number of sequences of {@link ModelRunner#newKvCache()}
 * @param contextLength  positions a sequence may use; 0 = the model's trained context length
 * @param kernelMode     Vector API or scalar element-wise kernels
 * @param batchInvariant every row of a batch computed by the same kernels in the same reduction
 *                       order as when it runs alone (each token's matrix products one row at a time,
 *                       attention read from the KV storage for every token), so a sequence's logits
 *                       are bit-identical whatever else shares its steps; costs the weight reuse of
 *                       the multi-row GEMM (see docs/ENGINE.md)
 * @param computePool    a pool shared with other runners (e.g. the base and quantized models of a
 *                       KL comparison), which the runner does not close; or null for a pool of
 *                       {@code threads} workers owned by the runner. Given a pool, {@code threads} is its size.
 */
public record RunnerOptions(int threads, KvDtype kvDtype, int maxBatchTokens, int maxLogitsRows, int maxSequences,
                            int contextLength, KernelMode kernelMode, ComputePool computePool, boolean batchInvariant) {

    public RunnerOptions {
        Objects.requireNonNull(kvDtype, "kvDtype");
        Objects.requireNonNull(kernelMode, "kernelMode");
        positive("threads", threads);
        positive("maxBatchTokens", maxBatchTokens);
        positive("maxLogitsRows", maxLogitsRows);
        positive("maxSequences", maxSequences);
        if (contextLength < 0) throw new IllegalArgumentException("contextLength (" + contextLength + ") must be >= 0 (0 = the model's)");
        if (computePool != null && computePool.threads() != threads) {
            throw new IllegalArgumentException("threads (" + threads + ") differs from the shared compute pool's " + computePool.threads());
        }
        if (maxLogitsRows > maxBatchTokens) {
            throw new IllegalArgumentException("maxLogitsRows (" + maxLogitsRows + ") must not exceed maxBatchTokens (" + maxBatchTokens + ")");
        }
    }

    private static void positive(String what, int v) {
        if (v < 1) throw new IllegalArgumentException(what + " (" + v + ") must be >= 1");
    }

    /** Defaults: all processors, F16 KV, 512 batch tokens (all may want logits), 1 sequence, the model's context. */
    public static RunnerOptions defaults() { return builder().build(); }

    public static Builder builder() { return new Builder(); }

    public Builder toBuilder() {
        return new Builder().threads(threads).kvDtype(kvDtype).maxBatchTokens(maxBatchTokens).maxLogitsRows(maxLogitsRows)
                .maxSequences(maxSequences).contextLength(contextLength).kernelMode(kernelMode).computePool(computePool).batchInvariant(batchInvariant);
    }

    /** The context length to use for a model trained with {@code trained} positions. */
    public int effectiveContextLength(int trained) { return contextLength > 0 ? contextLength : trained; }

    public static final class Builder {
        private int threads = Runtime.getRuntime().availableProcessors();
        private KvDtype kvDtype = KvDtype.F16;
        private int maxBatchTokens = 512;
        private int maxLogitsRows = -1;
        private int maxSequences = 1;
        private int contextLength;
        private KernelMode kernelMode = KernelMode.DEFAULT;
        private ComputePool computePool;
        private boolean batchInvariant;

        /** Worker threads (default: available processors). */
        public Builder threads(int v) { threads = v; return this; }
        /** KV cache element type (default F16, as llama.cpp). */
        public Builder kvDtype(KvDtype v) { kvDtype = v; return this; }
        /** Most tokens per batch (default 512). */
        public Builder maxBatchTokens(int v) { maxBatchTokens = v; return this; }
        /** Most logits rows per batch (default: maxBatchTokens). */
        public Builder maxLogitsRows(int v) { maxLogitsRows = v; return this; }
        /** Sequences of the default KV cache (default 1). */
        public Builder maxSequences(int v) { maxSequences = v; return this; }
        /** Context length override (default 0: the model's). */
        public Builder contextLength(int v) { contextLength = v; return this; }
        /** Kernel implementation (default {@link KernelMode#DEFAULT}). */
        public Builder kernelMode(KernelMode v) { kernelMode = v; return this; }
        /** Run on a shared pool the runner does not own (default: none, the runner makes its own of {@link #threads} workers). */
        public Builder computePool(ComputePool v) { computePool = v; return this; }

        /** See {@link RunnerOptions#batchInvariant()}; off by default. */
        public Builder batchInvariant(boolean v) { batchInvariant = v; return this; }

        public RunnerOptions build() {
            return new RunnerOptions(computePool != null ? computePool.threads() : threads, kvDtype, maxBatchTokens,
                    maxLogitsRows < 0 ? maxBatchTokens : maxLogitsRows, maxSequences, contextLength, kernelMode, computePool, batchInvariant);
        }
    }
}
