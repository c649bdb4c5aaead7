package io.modelopt.benchmarks;

import io.modelopt.core.ModelOptimizer;
import io.modelopt.core.OptimizedModel;
import io.modelopt.core.QuantizationSpec;
import io.modelopt.core.kv.KvDtype;
import io.modelopt.core.kv.KvLayout;
import io.modelopt.core.model.ModelConfig;
import io.modelopt.core.synthetic.SyntheticFormat;
import io.modelopt.core.synthetic.SyntheticModel;
import io.modelopt.core.synthetic.SyntheticModelCache;
import io.modelopt.core.synthetic.SyntheticSpec;
import io.modelopt.core.tensor.GgmlType;
import java.nio.file.Path;

/**
 * The optimization stages of {@code ./modelopt report} (issue 21), as the JMH stage suite builds
 * them on a synthetic F16 model:
 * <ol>
 *   <li>{@link #BASELINE}: the F16 weights, F16 KV, requests one at a time;</li>
 *   <li>{@link #INT8_RTN}: per-channel symmetric INT8 (round to nearest), one at a time;</li>
 *   <li>{@link #INT4_RTN}: INT4 g128 asymmetric, round to nearest, one at a time. This is the
 *       storage format AWQ writes (AWQ changes which codes are chosen, not how many bytes a matmul
 *       reads), so its speed stands for AWQ's; AWQ itself is not run because its calibration (a
 *       scale and clip search per block) would take minutes of every fork's setup on 2 cores;</li>
 *   <li>{@link #INT4_INT8KV_ENGINE}: stage 3's weights with an INT8 KV cache, served by the
 *       continuous-batching engine (8 sequences a step) with prefix caching.</li>
 * </ol>
 * Embeddings and {@code output} stay F16 in the quantized stages ({@link QuantizationSpec}'s default).
 */
public enum Stage {
    BASELINE(null, KvDtype.F16, 1, false),
    INT8_RTN(QuantizationSpec.RTN_INT8, KvDtype.F16, 1, false),
    INT4_RTN(QuantizationSpec.RTN_INT4, KvDtype.F16, 1, false),
    INT4_INT8KV_ENGINE(QuantizationSpec.RTN_INT4, KvDtype.INT8, 8, true);

    private final QuantizationSpec quantization;
    private final KvDtype kvDtype;
    private final int maxNumSeqs;
    private final boolean prefixCaching;

    Stage(QuantizationSpec quantization, KvDtype kvDtype, int maxNumSeqs, boolean prefixCaching) {
        this.quantization = quantization;
        this.kvDtype = kvDtype;
        this.maxNumSeqs = maxNumSeqs;
        this.prefixCaching = prefixCaching;
    }

    /** The weight quantization, or null for the F16 baseline. */
    public QuantizationSpec quantization() { return quantization; }

    public KvDtype kvDtype() { return kvDtype; }

    /** Sequences the engine runs in one step: 1 is "requests served one at a time". */
    public int maxNumSeqs() { return maxNumSeqs; }

    public boolean prefixCaching() { return prefixCaching; }

    /**
     * The stage's model: the F16 synthetic {@code spec} (generated into the synthetic model cache on
     * first use), quantized as the stage says, bound to the CPU backend with this KV dtype.
     */
    public OptimizedModel build(SyntheticSpec spec, long seed, int threads, int contextLength) {
        SyntheticModel synthetic = SyntheticModel.of(spec, GgmlType.F16, seed);
        Path file = SyntheticModelCache.atDefaultLocation().get(synthetic, SyntheticFormat.GGUF, (stage, done, total) -> { });
        ModelOptimizer optimizer = ModelOptimizer.load(file).withKvCache(kvDtype).withThreads(threads).withContextLength(contextLength);
        if (quantization != null) optimizer.quantize(quantization);
        return optimizer.build();
    }

    /** KV bytes one token adds to {@code config}'s cache in this stage's dtype, scales included ({@link KvLayout#bytesPerToken()}). */
    public double kvBytesPerToken(ModelConfig config, int blockSize) {
        return KvLayout.of(config.numLayers(), config.numKvHeads(), config.headDim(), 1, blockSize, kvDtype).bytesPerToken();
    }
}
