package io.modelopt.cli.report;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The measurement method and the machine, written above the table so that a figure is never read
 * without the conditions it was taken under.
 *
 * @param model        what was measured ("synthetic small125m f16 (…gguf)" or the path)
 * @param parameters   the baseline's parameter count (all tensors)
 * @param evaluation   the evaluation token set in words
 * @param vectorBits   the Vector API width the kernels run at (0: scalar kernels)
 * @param method       further lines of the method (the concurrent requests, calibration)
 */
public record ReportHeader(String model, long parameters, int promptTokens, int genTokens, int warmupRuns, int runs,
                           int threads, String jdk, String cpu, String kernels, int vectorBits, String date, String evaluation,
                           List<String> method) {
    public ReportHeader {
        method = List.copyOf(method);
    }

    public List<String> lines() {
        List<String> l = new ArrayList<>();
        l.add(String.format(Locale.ROOT, "Model: %s, %.1fM parameters.", model, parameters / 1e6));
        String warm = warmupRuns == 0 ? "no warm-up" : String.format(Locale.ROOT, "at least %d warm-up runs and 3 s of them", warmupRuns);
        l.add(String.format(Locale.ROOT, "Method: per stage %s, then %d measured runs (median and min-max); each run prefills a fixed "
                + "%d-token prompt as one batch (TTFT = time to its last logits) and then decodes %d tokens greedily, one sequence "
                + "(\"sequential\": requests served one at a time); KV cache cleared between runs.", warm, runs, promptTokens, genTokens));
        l.add("Memory: weights, KV and other (activations, scratch) as the runner accounts them (KV of the engine's stage: its block pool); RSS sampled from /proc/self/status "
                + "while the stage loads and runs (peak) and during the measured runs (steady, median). One process runs every stage in turn; "
                + "between stages the freed memory is returned to the OS (GC and malloc_trim).");
        l.addAll(method);
        l.add("Quality: against the baseline on " + evaluation + ".");
        l.add(String.format(Locale.ROOT, "Machine: %s; %d threads; %s; kernels %s%s; %s.", cpu, threads, jdk, kernels,
                vectorBits > 0 ? " at " + vectorBits + " bits" : "", date));
        return l;
    }

    Map<String, Object> toJson() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("model", model);
        m.put("parameters", parameters);
        m.put("prompt_tokens", promptTokens);
        m.put("gen_tokens", genTokens);
        m.put("warmup_runs", warmupRuns);
        m.put("runs", runs);
        m.put("threads", threads);
        m.put("jdk", jdk);
        m.put("cpu", cpu);
        m.put("kernels", kernels);
        m.put("vector_bits", vectorBits);
        m.put("date", date);
        m.put("evaluation", evaluation);
        m.put("method", method);
        return m;
    }
}
