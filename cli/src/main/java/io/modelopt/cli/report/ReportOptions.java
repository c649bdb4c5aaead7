package io.modelopt.cli.report;

import java.nio.file.Path;
import java.util.List;
import java.util.Objects;

/**
 * How a report is run. Immutable; build with {@link #builder()}. The defaults are the main job's
 * (issue 21: 5 measured runs; llama-bench's -p 128 -n 64) and were sized so the default report on
 * the built-in model finishes within 5 minutes on 2 cores.
 *
 * @param model          a GGUF file or HF directory, or null for the built-in synthetic model
 * @param syntheticPreset the synthetic preset used when {@code model} is null
 * @param text           evaluation text (perplexity and KL on its tokens), or null for synthetic tokens
 * @param calib          calibration text for calibrated INT4 methods, or null
 * @param evalContext    tokens per evaluation window (0: the default, the trained context with
 *                       --text as modelopt perplexity and evaluate, 128 without)
 * @param evalWindows    evaluation windows (0: all windows of --text; without it the default 4)
 * @param out            folder for report.csv, report.json, report.svg
 * @param json           an extra copy of the JSON, or null
 * @param method         stage 3's method, or null for the default (AWQ when its quantizer is registered, else GPTQ, else RTN)
 * @param int4Bits       bits of stage 3's weights (rtn/awq/gptq; 4 by default)
 * @param int4GroupSize  its group size (128 by default; {@code QuantizationSpec.PER_CHANNEL} for one scale per row)
 * @param duoScaling     AWQ's scale rule for stage 3 (awq, awq+gptq): AutoAWQ's duo scaling (true, the default) or the paper's x̄^α
 * @param calibSamples   calibration sequences (0: the default, 16, or on the built-in model {@link #SYNTHETIC_CALIB_SAMPLES})
 * @param calibTokens    tokens per calibration sequence (0: the default, 256, or on the built-in model {@link #SYNTHETIC_CALIB_TOKENS})
 * @param concurrentGenTokens tokens each of the 8 concurrent requests generates
 * @param explicitInt4Shape --bits or --group-size was given: stage 3 must store every linear weight so
 */
public record ReportOptions(Path model, String syntheticPreset, Path text, Path calib, List<Stage> stages, Int4Method method,
                            int int4Bits, int int4GroupSize, boolean explicitInt4Shape, int calibSamples, int calibTokens, int concurrentGenTokens,
                            int promptTokens, int genTokens, int runs, int warmupRuns, int threads, int evalContext, int evalWindows,
                            Path out, Path json, Bounds bounds, boolean require, boolean quiet, boolean duoScaling) {
    public static final int DEFAULT_PROMPT = 128, DEFAULT_GEN = 64, DEFAULT_RUNS = 5, DEFAULT_WARMUP = 3;
    /** Evaluation windows on synthetic tokens: 4 × 128 tokens, 252 scored positions (KL settles to ~2 digits). */
    public static final int SYNTHETIC_EVAL_CONTEXT = 128, SYNTHETIC_EVAL_WINDOWS = 4;
    public static final Path DEFAULT_OUT = Path.of("report");
    public static final int DEFAULT_INT4_BITS = 4, DEFAULT_GROUP_SIZE = 128, CONCURRENT_GEN_TOKENS = ConcurrentLoad.DEFAULT_GEN_TOKENS;
    /**
     * Calibration of the built-in synthetic model without --calib: 8 × 128 tokens instead of the
     * issue's 16 × 256, so the default report stays within 5 minutes on 2 cores.
     */
    public static final int SYNTHETIC_CALIB_SAMPLES = 8, SYNTHETIC_CALIB_TOKENS = 128;

    public ReportOptions {
        Objects.requireNonNull(syntheticPreset, "syntheticPreset");
        stages = List.copyOf(stages);
        if (stages.isEmpty()) throw new IllegalArgumentException("no stages chosen");
        atLeast("calibration samples", calibSamples, 0);
        atLeast("calibration tokens", calibTokens, 0);
        if (calibTokens == 1) throw new IllegalArgumentException("calibration tokens must be >= 2, got 1");
        atLeast("concurrent generated tokens", concurrentGenTokens, 1);
        Objects.requireNonNull(out, "out");
        Objects.requireNonNull(bounds, "bounds");
        atLeast("prompt tokens", promptTokens, 1);
        atLeast("generated tokens", genTokens, 1);
        atLeast("runs", runs, 1);
        atLeast("warm-up runs", warmupRuns, 0);
        atLeast("threads", threads, 1);
        atLeast("evaluation context", evalContext, 0);
        if (evalContext == 1) throw new IllegalArgumentException("evaluation context must be >= 2 tokens, got 1");
        atLeast("evaluation windows", evalWindows, 0);
        if (bounds.hasPerplexityBound() && text == null) {
            throw new IllegalArgumentException("--max-ppl-increase needs --text (perplexity is measured on a text)");
        }
    }

    private static void atLeast(String what, int v, int min) {
        if (v < min) throw new IllegalArgumentException(what + " must be >= " + min + ", got " + v);
    }

    public static Builder builder() { return new Builder(); }

    public static final class Builder {
        private Path model, text, calib, json;
        private String syntheticPreset = "small125m";
        private List<Stage> stages = List.of(Stage.values());
        private Int4Method method;
        private int int4Bits = DEFAULT_INT4_BITS, int4GroupSize = DEFAULT_GROUP_SIZE, calibSamples, calibTokens,
                concurrentGenTokens = CONCURRENT_GEN_TOKENS;
        private int promptTokens = DEFAULT_PROMPT, genTokens = DEFAULT_GEN, runs = DEFAULT_RUNS, warmupRuns = DEFAULT_WARMUP;
        private int threads = Runtime.getRuntime().availableProcessors(), evalContext, evalWindows;
        private Path out = DEFAULT_OUT;
        private Bounds bounds = Bounds.NONE;
        private boolean require, quiet, explicitInt4Shape;
        private boolean duoScaling = true;

        public Builder model(Path v) { model = v; return this; }
        public Builder syntheticPreset(String v) { syntheticPreset = v; return this; }
        public Builder text(Path v) { text = v; return this; }
        public Builder calib(Path v) { calib = v; return this; }
        public Builder stages(List<Stage> v) { stages = v; return this; }
        public Builder method(Int4Method v) { method = v; return this; }
        public Builder int4Bits(int v) { int4Bits = v; explicitInt4Shape = true; return this; }
        public Builder int4GroupSize(int v) { int4GroupSize = v; explicitInt4Shape = true; return this; }
        public Builder calibSamples(int v) { calibSamples = v; return this; }
        public Builder calibTokens(int v) { calibTokens = v; return this; }
        public Builder concurrentGenTokens(int v) { concurrentGenTokens = v; return this; }
        public Builder promptTokens(int v) { promptTokens = v; return this; }
        public Builder genTokens(int v) { genTokens = v; return this; }
        public Builder runs(int v) { runs = v; return this; }
        public Builder warmupRuns(int v) { warmupRuns = v; return this; }
        public Builder threads(int v) { threads = v; return this; }
        public Builder evalContext(int v) { evalContext = v; return this; }
        public Builder evalWindows(int v) { evalWindows = v; return this; }
        public Builder out(Path v) { out = v; return this; }
        public Builder json(Path v) { json = v; return this; }
        public Builder bounds(Bounds v) { bounds = v; return this; }
        public Builder require(boolean v) { require = v; return this; }
        public Builder quiet(boolean v) { quiet = v; return this; }
        public Builder duoScaling(boolean v) { duoScaling = v; return this; }

        public ReportOptions build() {
            return new ReportOptions(model, syntheticPreset, text, calib, stages, method, int4Bits, int4GroupSize, explicitInt4Shape, calibSamples, calibTokens,
                    concurrentGenTokens, promptTokens, genTokens, runs, warmupRuns, threads,
                    evalContext, evalWindows, out, json, bounds, require, quiet, duoScaling);
        }
    }
}
