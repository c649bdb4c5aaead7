package io.modelopt.quantization.hf;

import io.modelopt.core.safetensors.SafetensorsDType;
import io.modelopt.core.safetensors.SafetensorsWriter;
import io.modelopt.quantization.format.IntScheme;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * GPTQ v1 checkpoints ({@code --format gptq}): {@code qweight}, {@code qzeros} (zero − 1),
 * F16 {@code scales}, {@code g_idx} (contiguous groups, {@code desc_act false}) per linear;
 * {@code quantization_config} with AutoGPTQ's {@code BaseQuantizeConfig.to_dict} fields
 * ({@code bits}, {@code group_size}, {@code damp_percent}, {@code desc_act}, {@code static_groups},
 * {@code sym}, {@code true_sequential}, {@code model_name_or_path}, {@code model_file_base_name},
 * {@code quant_method "gptq"}, {@code checkpoint_format "gptq"}) plus GPTQModel's {@code lm_head}.
 *
 * <p>Holds INT2/INT4/INT8 with F16 scales, one scheme for every block linear (the config has no
 * per-module exclusion that AutoGPTQ and transformers read); a quantized {@code lm_head} of the
 * same scheme sets {@code lm_head true}.
 *
 * <p><b>Zero point 0.</b> v1 stores {@code zero − 1}, which has no field value for 0. We write
 * as GPTQModel does ({@code convert_gptq_v2_to_v1_format_module}): the packed word minus a 1 in
 * every field, one 32-bit subtraction, so GPTQModel (which adds it back) and our reader recover
 * every zero exactly; readers that add 1 per field (AutoGPTQ's kernels, exllama) read the fields
 * above such a zero one too high. Symmetric schemes (zero 2^(bits−1)) never hit it; for
 * asymmetric ones a warning counts the groups.
 */
public final class GptqExporter extends HfCheckpointExporter {
    private static final Logger log = LoggerFactory.getLogger(GptqExporter.class);

    @Override public String format() { return "gptq"; }

    static boolean holds(IntScheme s) {
        return (s.bits() == 2 || s.bits() == 4 || s.bits() == 8) && s.scaleType() == IntScheme.ScaleType.F16;
    }

    @Override protected void check(List<Linear> linears) {
        IntScheme first = null;
        for (Linear l : linears) {
            boolean head = l.name().equals("output.weight");
            if (!l.quantized()) {
                if (head) continue;
                throw new IllegalArgumentException("gptq cannot hold " + l.name() + " unquantized beside quantized linears: its quantization_config"
                        + " quantizes every block linear; formats that can: awq (modules_to_not_convert), compressed-tensors (ignore)");
            }
            IntScheme s = l.scheme();
            if (!holds(s)) {
                throw cannotHold("gptq", l, s.scaleType() != IntScheme.ScaleType.F16 ? "GPTQ stores F16 scales" : "only 2, 4 and 8-bit codes fill its int32 words");
            }
            if (first == null) first = s;
            else if (!first.equals(s)) {
                throw new IllegalArgumentException("gptq cannot hold " + l.name() + " (" + s + ") beside " + first
                        + ": one quantization_config has one scheme; formats that can: compressed-tensors");
            }
        }
        if (first == null) throw new IllegalArgumentException("gptq: the model has no quantized linear to export");
    }

    @Override protected Map<String, Object> quantizationConfig(List<Linear> linears) {
        IntScheme s = linears.stream().filter(Linear::quantized).findFirst().orElseThrow().scheme();
        boolean head = linears.stream().anyMatch(l -> l.quantized() && l.name().equals("output.weight"));
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("bits", s.bits());
        m.put("group_size", s.groupSize());
        m.put("damp_percent", 0.01);
        m.put("desc_act", false);
        m.put("static_groups", false);
        m.put("sym", s.symmetric());
        m.put("true_sequential", true);
        m.put("model_name_or_path", null);
        m.put("model_file_base_name", "model");
        m.put("quant_method", "gptq");
        m.put("checkpoint_format", "gptq");
        m.put("lm_head", head);
        return m;
    }

    @Override protected void addQuantized(SafetensorsWriter w, String module, LogicalWeight lw) {
        int bits = lw.scheme().bits(), pf = 32 / bits, in = lw.cols(), out = lw.rows(), groups = lw.groups();
        int zeroZeros = 0;
        for (int z : lw.zeros()) if (z == 0) zeroZeros++;
        if (zeroZeros > 0) {
            log.warn("{}: {} groups have zero point 0, stored as GPTQModel stores them in v1 (one word subtraction): exact for GPTQModel and this"
                    + " library, off by one in the next field for per-field readers (AutoGPTQ kernels, exllama)", module, zeroZeros);
        }
        add(w, module + ".qweight", SafetensorsDType.I32, HfPackers.gptqQweight(lw), in / pf, out);
        add(w, module + ".qzeros", SafetensorsDType.I32, HfPackers.gptqQzeros(lw, true), groups, out / pf);
        add(w, module + ".scales", SafetensorsDType.F16, HfPackers.scalesByGroup(lw, true), groups, out);
        add(w, module + ".g_idx", SafetensorsDType.I32, HfPackers.gIdx(lw), in);
    }
}
