package io.modelopt.core.eval;

import io.modelopt.core.ModelOptimizer;
import io.modelopt.core.ProgressListener;
import io.modelopt.core.QuantizationSpec;
import io.modelopt.core.engine.Backend;
import io.modelopt.core.engine.ModelRunner;
import io.modelopt.core.engine.RunnerOptions;
import io.modelopt.core.kernel.ComputePool;
import io.modelopt.core.model.ModelConfig;
import io.modelopt.core.model.ModelSource;
import java.nio.file.Path;

/**
 * A base and a quantized model loaded side by side for an {@link Evaluation}: both opened with
 * {@link ModelOptimizer#load}, checked to share a vocabulary, and bound to the options' backend
 * on one shared compute pool (the models run one after the other, never at once, so two pools
 * would only double the threads). Owns all of it until {@link #close()}.
 *
 * <p>The runners' limits are {@link RunnerOptions}' defaults, as {@code modelopt perplexity}
 * uses, so each model's perplexity here equals that command's for the same file and context.
 */
public final class EvaluationModels implements AutoCloseable {
    private final Evaluation.Options options;
    private final ModelOptimizer baseModel, quantModel;
    /** The quantized model when it was made in memory from the base (closed before the base); else null. */
    private final ModelSource quantizedInMemory;
    private ComputePool pool;
    private ModelRunner baseRunner, quantRunner;
    private final Evaluation.Subject base, quant;

    private EvaluationModels(Path basePath, Path quantPath, QuantizationSpec spec, Evaluation.Options options, ProgressListener listener) {
        this.options = options;
        Backend backend = Backend.named(options.backend());
        if (!backend.isAvailable()) throw new IllegalStateException("backend '" + options.backend() + "' is not available on this machine");
        ModelOptimizer b = ModelOptimizer.load(basePath), q = null;
        ModelSource inMemory = null;
        String quantName = quantPath != null ? quantPath.toString() : spec.toString();
        try {
            if (quantPath != null) q = ModelOptimizer.load(quantPath);
            else inMemory = ModelOptimizer.quantizer(spec).quantize(b.source(), spec, listener);
            ModelSource qs = q != null ? q.source() : inMemory;
            ModelConfig cb = b.config(), cq = qs.config();
            int trained = Math.min(cb.contextLength(), cq.contextLength());
            int ctx = options.contextLength() > 0 ? options.contextLength() : trained;
            if (ctx > trained) {
                throw new IllegalArgumentException("context " + ctx + " exceeds the trained context length " + trained + " of "
                        + (cb.contextLength() == trained ? basePath : quantName));
            }
            int positions = Math.max(ctx, options.greedyPositions());
            if (positions > trained) {
                throw new IllegalArgumentException("greedy prompts of " + options.promptTokens() + " tokens with " + options.newTokens()
                        + " new tokens need " + positions + " positions, more than the trained context length " + trained);
            }
            Evaluation.checkSameVocabulary(basePath.toString(), b.source(), quantName, qs);
            pool = new ComputePool(options.threads());
            RunnerOptions ro = RunnerOptions.builder().computePool(pool).kvDtype(options.kvDtype()).contextLength(positions).build();
            baseRunner = backend.load(b.source(), ro);
            quantRunner = backend.load(qs, ro);
        } catch (RuntimeException e) {
            if (baseRunner != null) baseRunner.close();
            if (pool != null) pool.close();
            if (q != null) q.close();
            if (inMemory != null) inMemory.close();
            b.close();
            throw e;
        }
        this.baseModel = b;
        this.quantModel = q;
        this.quantizedInMemory = inMemory;
        this.base = new Evaluation.Subject(basePath.toString(), b.source(), baseRunner);
        this.quant = new Evaluation.Subject(quantName, q != null ? q.source() : inMemory, quantRunner);
    }

    /**
     * Opens {@code base} and {@code quant} (each a GGUF file or a Hugging Face directory) and
     * binds them to the options' backend.
     *
     * @throws IllegalArgumentException when the vocabularies differ, or the context (or the greedy
     *         prompts) exceed the models' trained context length
     */
    public static EvaluationModels load(Path base, Path quant, Evaluation.Options options) {
        return new EvaluationModels(base, quant, null, options, ProgressListener.NONE);
    }

    /**
     * Opens {@code base}, quantizes it in memory as {@code spec} says (through the registered
     * quantizer, as {@code modelopt quantize} does before it writes a file) and binds both to the
     * options' backend: the way to judge schemes no file format holds (INT3, our INT formats beside
     * ggml types), and to skip the export when only the numbers matter.
     *
     * @throws IllegalStateException no registered quantizer supports the spec's method
     * @throws IllegalArgumentException as {@link #load}
     */
    public static EvaluationModels quantizeAndLoad(Path base, QuantizationSpec spec, Evaluation.Options options, ProgressListener listener) {
        return new EvaluationModels(base, null, spec, options, listener);
    }

    public Evaluation.Subject base() { return base; }

    public Evaluation.Subject quant() { return quant; }

    /** {@link Evaluation#run(Evaluation.Subject, Evaluation.Subject, String, Evaluation.Options, ProgressListener)} on these models. */
    public Evaluation.Result evaluate(String text, ProgressListener listener) {
        return Evaluation.run(base, quant, text, options, listener);
    }

    @Override public void close() {
        try {
            quantRunner.close();
            baseRunner.close();
            pool.close();
        } finally {
            if (quantModel != null) quantModel.close();
            if (quantizedInMemory != null) quantizedInMemory.close();
            baseModel.close();
        }
    }
}
