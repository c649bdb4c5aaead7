package io.modelopt.quantization.hf;

import io.modelopt.core.safetensors.SafetensorsDType;
import io.modelopt.core.safetensors.SafetensorsWriter;
import io.modelopt.quantization.format.IntScheme;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * AutoAWQ GEMM checkpoints ({@code --format awq}): {@code qweight}, {@code qzeros}, F16 {@code scales}
 * per linear ({@link HfPackers#awqQweight}); {@code quantization_config} as
 * {@code AwqConfig.to_transformers_dict}: {@code quant_method "awq"}, {@code zero_point true},
 * {@code group_size}, {@code bits 4}, {@code version "gemm"}, {@code modules_to_not_convert}
 * (the block linears left unquantized, or null).
 *
 * <p>Holds INT4 with F16 scales at one group size for every quantized linear. A symmetric scheme is
 * written with its implicit zero point 8 stored in {@code qzeros} (AutoAWQ's GEMM always stores
 * zeros; the weights are the same). {@code lm_head} is never quantized by AutoAWQ, so a quantized
 * one is refused.
 */
public final class AwqExporter extends HfCheckpointExporter {
    @Override public String format() { return "awq"; }

    static boolean holds(IntScheme s) { return s.bits() == 4 && s.scaleType() == IntScheme.ScaleType.F16; }

    @Override protected void check(List<Linear> linears) {
        IntScheme first = null;
        for (Linear l : linears) {
            if (!l.quantized()) continue;
            IntScheme s = l.scheme();
            if (s.bits() != 4) throw cannotHold("awq", l, "AutoAWQ's GEMM layout packs 4-bit codes only");
            if (s.scaleType() != IntScheme.ScaleType.F16) throw cannotHold("awq", l, "AutoAWQ stores F16 scales");
            if (l.name().equals("output.weight")) throw cannotHold("awq", l, "AutoAWQ never quantizes lm_head");
            if (first == null) first = s;
            else if (first.groupSize() != s.groupSize()) {
                throw new IllegalArgumentException("awq cannot hold " + l.name() + " (" + s + ") beside " + first
                        + ": one quantization_config has one group size; formats that can: compressed-tensors");
            }
        }
        if (first == null) throw new IllegalArgumentException("awq: the model has no quantized linear to export (formats for float models: gguf)");
    }

    @Override protected Map<String, Object> quantizationConfig(List<Linear> linears) {
        IntScheme s = linears.stream().filter(Linear::quantized).findFirst().orElseThrow().scheme();
        List<String> skipped = new ArrayList<>();
        for (Linear l : linears) if (!l.quantized() && !l.name().equals("output.weight")) skipped.add(l.module());
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("quant_method", "awq");
        m.put("zero_point", true);
        m.put("group_size", s.groupSize());
        m.put("bits", 4);
        m.put("version", "gemm");
        m.put("modules_to_not_convert", skipped.isEmpty() ? null : skipped);
        return m;
    }

    @Override protected void addQuantized(SafetensorsWriter w, String module, LogicalWeight lw) {
        int in = lw.cols(), out = lw.rows(), groups = lw.groups();
        add(w, module + ".qweight", SafetensorsDType.I32, HfPackers.awqQweight(lw), in, out / 8);
        add(w, module + ".qzeros", SafetensorsDType.I32, HfPackers.awqQzeros(lw), groups, out / 8);
        add(w, module + ".scales", SafetensorsDType.F16, HfPackers.scalesByGroup(lw, true), groups, out);
    }
}
