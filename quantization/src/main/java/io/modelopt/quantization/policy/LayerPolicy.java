package io.modelopt.quantization.policy;

import io.modelopt.core.QuantizationSpec;
import io.modelopt.core.model.ModelConfig;
import io.modelopt.core.model.ModelSource;
import io.modelopt.core.tensor.GgmlType;
import io.modelopt.core.tensor.TensorData;
import io.modelopt.quantization.format.IntScheme;
import io.modelopt.quantization.format.PackedIntLayout;
import io.modelopt.quantization.gguf.GgufPreset;
import io.modelopt.quantization.gguf.GgufQuantizer;
import io.modelopt.quantization.gguf.TensorTypePolicy;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Chooses each tensor's target format for a {@link QuantizationSpec}, as a {@link QuantizationPlan}.
 *
 * <ol>
 *   <li>Only llama-quantize's quantizable tensors are candidates ({@link TensorTypePolicy#isQuantizable}:
 *       names ending in {@code weight} with two or more dimensions, no norms): 1-D tensors and
 *       norms are never quantized, whatever a rule says.</li>
 *   <li>The default: for rtn/awq/gptq the spec's scheme; for a GGUF preset llama-quantize's
 *       per-tensor choice ({@link TensorTypePolicy}, with its fallbacks). With
 *       {@link QuantizationSpec#keepEmbeddingAndOutput()} (the default of our methods, because a
 *       low-bit {@code lm_head} garbles the output distribution) {@code token_embd} and
 *       {@code output} stay at full precision.</li>
 *   <li>The spec's rules, in order; the last matching one wins (as llm-compressor recipes and
 *       llama.cpp's {@code --tensor-type}). A pattern that matches nothing is logged as a warning.</li>
 *   <li>Shapes: a default the format cannot take (stories260K's 172-wide {@code ffn_down}: no
 *       group of 32 or more divides it) falls back to INT8 per channel if our layout stores that
 *       row, else the tensor is kept, and this is logged; a rule asking for the impossible fails
 *       with {@link IllegalArgumentException} naming the tensor and the sizes that would work.</li>
 *   <li>A tensor to be rewritten must be F32, F16 or BF16: an already-quantized input is refused.</li>
 * </ol>
 */
public final class LayerPolicy {
    private static final Logger LOG = LoggerFactory.getLogger(LayerPolicy.class);

    private LayerPolicy() {}

    /**
     * The plan for quantizing {@code source} as {@code spec} says.
     *
     * @throws IllegalArgumentException a rule target that is unknown or impossible for a tensor it
     *         matches, a scheme our layout does not store, or a quantized input tensor
     */
    public static QuantizationPlan plan(ModelSource source, QuantizationSpec spec) {
        List<TargetRule> rules = new ArrayList<>();
        for (QuantizationSpec.LayerRule r : spec.rules()) {
            TargetFormat t;
            try {
                t = TargetFormat.parse(r.target());
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("layer rule " + r + ": " + e.getMessage(), e);
            }
            rules.add(new TargetRule(r, LayerPattern.of(r.pattern()), t));
        }
        Map<String, TargetFormat> defaults = defaults(source, spec);
        Set<String> matched = new LinkedHashSet<>();
        List<QuantizationPlan.Entry> entries = new ArrayList<>();
        for (TensorData t : source.tensors().values()) {
            String name = t.name();
            long[] dims = trim(t.shape());
            TargetRule winner = null;
            for (TargetRule r : rules) {
                if (r.pattern().matches(name)) {
                    matched.add(r.rule().pattern());
                    winner = r;
                }
            }
            entries.add(entry(name, dims, t.type(), defaults.get(name), winner, spec));
        }
        List<String> unmatched = new ArrayList<>();
        for (TargetRule r : rules) {
            String p = r.rule().pattern();
            if (!matched.contains(p) && !unmatched.contains(p)) {
                LOG.warn("layer rule pattern '{}' matches no tensor of {}", p, source.path());
                unmatched.add(p);
            }
        }
        return new QuantizationPlan(spec.toString(), entries, unmatched);
    }

    private record TargetRule(QuantizationSpec.LayerRule rule, LayerPattern pattern, TargetFormat target) {}

    /** The default target of every candidate tensor (absent: kept). */
    private static Map<String, TargetFormat> defaults(ModelSource source, QuantizationSpec spec) {
        Map<String, TargetFormat> out = new HashMap<>();
        Map<String, TensorData> tensors = source.tensors();
        boolean keepEnds = spec.keepEmbeddingAndOutput();
        if (spec.isGguf()) {
            GgufPreset preset = GgufPreset.parse(spec.method());
            List<String> names = new ArrayList<>(tensors.keySet());
            names.sort(GgufQuantizer.TENSOR_ORDER);
            int nAttnV = 0;
            for (String n : names) if (n.contains("attn_v.weight") || n.contains("attn_qkv.weight") || n.contains("attn_kv_b.weight")) nAttnV++;
            ModelConfig c = source.config();
            TensorTypePolicy llama = new TensorTypePolicy(preset,
                    new TensorTypePolicy.ModelShape(c.architecture().ggufName(), c.numLayers(), c.numHeads(), c.numKvHeads(), 0),
                    false, tensors.containsKey("output.weight"), nAttnV);
            // llama-quantize's counters advance per quantizable tensor in its order, so every one is asked
            for (String n : names) {
                long[] dims = trim(tensors.get(n).shape());
                if (!TensorTypePolicy.isQuantizable(n, dims.length)) continue;
                GgmlType type;
                try {
                    type = llama.typeFor(n, dims);
                } catch (IllegalArgumentException e) {
                    LOG.info("{}: {}; the tensor is kept", n, e.getMessage());
                    continue;
                }
                if (!(keepEnds && isEnd(n))) out.put(n, new TargetFormat.Ggml(type));
            }
            return out;
        }
        TargetFormat.Int base = TargetFormat.ofScheme(new IntScheme(spec.bits(), spec.groupSize(), spec.symmetric(),
                spec.scaleType() == QuantizationSpec.ScaleType.F32 ? IntScheme.ScaleType.F32 : IntScheme.ScaleType.F16), spec.method());
        for (TensorData t : tensors.values()) {
            long[] dims = trim(t.shape());
            if (!TensorTypePolicy.isQuantizable(t.name(), dims.length) || (keepEnds && isEnd(t.name()))) continue;
            out.put(t.name(), base);
        }
        return out;
    }

    private static boolean isEnd(String name) { return name.equals("token_embd.weight") || name.equals("output.weight"); }

    private static QuantizationPlan.Entry entry(String name, long[] dims, GgmlType source, TargetFormat byDefault, TargetRule rule, QuantizationSpec spec) {
        boolean candidate = TensorTypePolicy.isQuantizable(name, dims.length);
        if (!candidate) {
            return new QuantizationPlan.Entry(name, dims, source, TargetFormat.KEEP, dims.length < 2 ? "1-D: never quantized" : "not a quantizable weight");
        }
        TargetFormat target;
        String reason;
        if (rule != null) {
            target = rule.target();
            reason = "rule " + rule.rule();
        } else if (byDefault != null) {
            target = byDefault;
            reason = "default";
        } else {
            target = TargetFormat.KEEP;
            reason = isEnd(name) && spec.keepEmbeddingAndOutput() ? "full precision by default" : "kept by default";
        }
        if (target instanceof TargetFormat.Ggml g && g.type() == source) target = TargetFormat.KEEP;
        if (!(target instanceof TargetFormat.Keep)) {
            String fit = misfit(name, dims, target);
            if (fit != null) {
                if (rule != null) throw new IllegalArgumentException(fit);
                TargetFormat.Int int8 = new TargetFormat.Int(new IntScheme(8, IntScheme.PER_CHANNEL, true,
                        spec.scaleType() == QuantizationSpec.ScaleType.F32 ? IntScheme.ScaleType.F32 : IntScheme.ScaleType.F16));
                if (target instanceof TargetFormat.Int && dims.length == 2 && int8.fits(dims[0])) {
                    LOG.info("{}: stored as {} instead", fit, int8.name());
                    reason = "fallback: " + dims[0] + " columns do not fit " + target.name();
                    target = int8;
                } else {
                    LOG.info("{}: kept as {}", fit, source);
                    reason = "fallback: " + dims[0] + " columns do not fit " + target.name() + ", kept";
                    target = TargetFormat.KEEP;
                }
            }
        }
        if (!(target instanceof TargetFormat.Keep) && source != GgmlType.F32 && source != GgmlType.F16 && source != GgmlType.BF16) {
            throw new IllegalArgumentException("tensor " + name + " is already quantized (" + source + "): " + spec.method()
                    + " needs float weights (F32, F16 or BF16) to make " + target.name() + "; start from the unquantized model");
        }
        return new QuantizationPlan.Entry(name, dims, source, target, reason);
    }

    /** Why {@code target} cannot hold tensor {@code name}, naming what would; null when it can. */
    private static String misfit(String name, long[] dims, TargetFormat target) {
        long cols = dims[0];
        if (target instanceof TargetFormat.Int i) {
            IntScheme s = i.scheme();
            if (dims.length != 2) return "tensor " + name + " has shape " + Arrays.toString(dims) + ": our INT formats hold 2-D weights only";
            if (i.fits(cols)) return null;
            List<String> ok = new ArrayList<>();
            for (int g : new int[] {32, 64, 128, IntScheme.PER_CHANNEL}) {
                IntScheme alt = new IntScheme(s.bits(), g, s.symmetric(), IntScheme.ScaleType.F16);
                if (PackedIntLayout.fits(alt, (int) cols)) ok.add(g == IntScheme.PER_CHANNEL ? "-1 (per channel)" : String.valueOf(g));
            }
            boolean int8 = PackedIntLayout.fits(IntScheme.int8(), (int) cols);
            return "tensor " + name + " (" + cols + " columns) cannot be stored as " + s + "; "
                    + (ok.isEmpty() ? "no group size works at " + s.bits() + " bits" : "group sizes that would work at " + s.bits() + " bits: " + String.join(", ", ok))
                    + (int8 && s.bits() != 8 ? "; INT8 per channel would" : "");
        }
        if (target instanceof TargetFormat.Ggml g && !g.fits(cols)) {
            List<String> ok = new ArrayList<>();
            for (GgmlType t : new GgmlType[] {GgmlType.Q8_0, GgmlType.Q6_K, GgmlType.Q5_0, GgmlType.Q4_0, GgmlType.Q4_K, GgmlType.F16, GgmlType.F32}) {
                if (cols % t.blockSize() == 0) ok.add(t.name());
            }
            return "tensor " + name + ": " + cols + " columns are not a multiple of " + g.type().blockSize() + ", as " + g.type()
                    + " needs; types that would fit: " + String.join(", ", ok);
        }
        return null;
    }

    /** ggml pads shapes with trailing 1s; a {@code {n, 1}} tensor is a vector. */
    static long[] trim(long[] s) {
        int n = s.length;
        while (n > 1 && s[n - 1] == 1) n--;
        return Arrays.copyOf(s, n);
    }
}
