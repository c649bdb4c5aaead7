package io.modelopt.quantization.gptq;

import java.util.Locale;

/**
 * GPTQ's knobs, with GPTQModel's defaults. Immutable; made with {@link #builder()}.
 *
 * @param damp          dampening added to the Hessian's diagonal, as a fraction of its mean
 *                      ({@code damp_percent}, 0.01)
 * @param dampIncrement added to {@code damp} while the dampened Hessian is not positive definite
 *                      (GPTQModel's {@code damp_auto_increment}, 0.0025)
 * @param maxDamp       the damp at which that gives up, failing with the layer's name (1.0)
 * @param blockSize     columns per lazy batch (128)
 * @param actOrder      process columns in descending order of the Hessian's diagonal ({@code desc_act})
 * @param staticGroups  group parameters from the unmodified weights, before any column is
 *                      quantized ({@code static_groups}); with act-order this keeps the groups
 *                      runs of consecutive columns ({@code g_idx[k] = k / groupSize}), which every
 *                      format holds; off by default, implied by act-order
 * @param trueSequential quantize q/k/v, then o, then gate/up, then down, each on inputs computed
 *                      with the linears before it already quantized ({@code true_sequential})
 * @param clipSearch    each group's scale and zero point from the range shrunk over a grid to the
 *                      lowest squared error of its weights, as the reference quantizer's
 *                      {@code find_params} with {@code mse} ({@link io.modelopt.quantization.rtn.RtnQuantizer#groupParams});
 *                      off by default, as there
 */
public record GptqConfig(double damp, double dampIncrement, double maxDamp, int blockSize, boolean actOrder, boolean staticGroups,
                         boolean trueSequential, boolean clipSearch) {
    /** GPTQModel's defaults: damp 0.01 (+0.0025 up to 1.0), 128-column batches, no act-order, true-sequential. */
    public GptqConfig {
        if (!(damp > 0) || !Double.isFinite(damp)) throw new IllegalArgumentException("GPTQ damp must be positive (a fraction of the Hessian's mean diagonal, e.g. 0.01), got " + damp);
        if (!(dampIncrement > 0)) throw new IllegalArgumentException("GPTQ damp increment must be positive, got " + dampIncrement);
        if (!(maxDamp > damp)) throw new IllegalArgumentException("GPTQ max damp " + maxDamp + " must exceed damp " + damp);
        if (blockSize < 1) throw new IllegalArgumentException("GPTQ block size must be positive, got " + blockSize);
        if (actOrder && !staticGroups) {
            throw new IllegalArgumentException("act-order without static groups puts column k in group g_idx[k] != k / groupSize, which our INT formats"
                    + " (and the AWQ and compressed-tensors exports) cannot express: only GPTQ's g_idx layout can; use static groups (the default)");
        }
    }

    public static final GptqConfig DEFAULT = builder().build();

    public static Builder builder() { return new Builder(); }

    public Builder toBuilder() {
        return new Builder().damp(damp).dampIncrement(dampIncrement).maxDamp(maxDamp).blockSize(blockSize).actOrder(actOrder)
                .staticGroups(staticGroups).trueSequential(trueSequential).clipSearch(clipSearch);
    }

    @Override public String toString() {
        return String.format(Locale.ROOT, "damp %.4g%s%s%s", damp, actOrder ? " act-order" : "", staticGroups && !actOrder ? " static-groups" : "",
                trueSequential ? " true-sequential" : "") + (clipSearch ? " clip-search" : "");
    }

    public static final class Builder {
        private double damp = 0.01, dampIncrement = 0.0025, maxDamp = 1.0;
        private int blockSize = 128;
        private boolean actOrder, staticGroups, staticGroupsSet, trueSequential = true, clipSearch;

        private Builder() {}

        public Builder damp(double v) { damp = v; return this; }
        public Builder dampIncrement(double v) { dampIncrement = v; return this; }
        public Builder maxDamp(double v) { maxDamp = v; return this; }
        public Builder blockSize(int v) { blockSize = v; return this; }
        /** Act-order; implies static groups unless {@link #staticGroups} says otherwise. */
        public Builder actOrder(boolean v) {
            actOrder = v;
            if (!staticGroupsSet) staticGroups = v;
            return this;
        }
        public Builder staticGroups(boolean v) { staticGroups = v; staticGroupsSet = true; return this; }
        public Builder trueSequential(boolean v) { trueSequential = v; return this; }
        public Builder clipSearch(boolean v) { clipSearch = v; return this; }

        public GptqConfig build() { return new GptqConfig(damp, dampIncrement, maxDamp, blockSize, actOrder, staticGroups, trueSequential, clipSearch); }
    }
}
