package io.modelopt.quantization.hf;

import io.modelopt.core.safetensors.SafetensorsDType;
import io.modelopt.core.safetensors.SafetensorsWriter;
import io.modelopt.quantization.format.IntScheme;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * compressed-tensors checkpoints as llm-compressor saves them ({@code --format compressed-tensors}):
 * INT2/INT4 weights {@code pack-quantized} ({@code weight_packed}, {@code weight_scale},
 * {@code weight_zero_point} when asymmetric, {@code weight_shape} int64 {@code [out, in]}), INT8
 * {@code int-quantized} ({@code weight} int8, {@code weight_scale}, {@code weight_zero_point} int8
 * when asymmetric). Scales are F16 or F32 as the scheme stores them.
 *
 * <p>{@code quantization_config}: {@code config_groups} (one per scheme: {@code targets},
 * {@code weights} with every {@code QuantizationArgs} field, {@code input_activations} and
 * {@code output_activations} null, {@code format}), {@code quant_method "compressed-tensors"},
 * {@code kv_cache_scheme null}, {@code format} (the groups' one, or {@code "mixed-precision"}),
 * {@code quantization_status "compressed"}, {@code global_compression_ratio null}, {@code ignore}
 * (every unquantized linear, e.g. {@code lm_head}). One scheme targets {@code ["Linear"]}; with
 * several, each group names its modules.
 */
public final class CompressedTensorsExporter extends HfCheckpointExporter {
    @Override public String format() { return "compressed-tensors"; }

    static boolean holds(IntScheme s) { return s.bits() == 2 || s.bits() == 4 || s.bits() == 8; }

    @Override protected void check(List<Linear> linears) {
        boolean any = false;
        for (Linear l : linears) {
            if (!l.quantized()) continue;
            any = true;
            if (!holds(l.scheme())) throw cannotHold("compressed-tensors", l, "pack-quantized rows of 3-bit codes need padding, which is not written here");
        }
        if (!any) throw new IllegalArgumentException("compressed-tensors: the model has no quantized linear to export");
    }

    private static String layoutOf(IntScheme s) { return s.bits() == 8 ? "int-quantized" : "pack-quantized"; }

    @Override protected Map<String, Object> quantizationConfig(List<Linear> linears) {
        Map<IntScheme, List<String>> bySchema = new LinkedHashMap<>();
        List<String> ignore = new ArrayList<>();
        for (Linear l : linears) {
            if (l.quantized()) bySchema.computeIfAbsent(l.scheme(), k -> new ArrayList<>()).add(l.module());
            else ignore.add(l.module());
        }
        Map<String, Object> groups = new LinkedHashMap<>();
        int i = 0;
        for (Map.Entry<IntScheme, List<String>> e : bySchema.entrySet()) {
            IntScheme s = e.getKey();
            Map<String, Object> w = new LinkedHashMap<>();
            w.put("num_bits", s.bits());
            w.put("type", "int");
            w.put("symmetric", s.symmetric());
            w.put("group_size", s.groupSize() == IntScheme.PER_CHANNEL ? null : s.groupSize());
            w.put("strategy", s.groupSize() == IntScheme.PER_CHANNEL ? "channel" : "group");
            w.put("block_structure", null);
            w.put("dynamic", false);
            w.put("actorder", null);
            w.put("observer", "minmax");
            w.put("observer_kwargs", Map.of());
            Map<String, Object> g = new LinkedHashMap<>();
            g.put("targets", bySchema.size() == 1 ? List.of("Linear") : e.getValue());
            g.put("weights", w);
            g.put("input_activations", null);
            g.put("output_activations", null);
            g.put("format", layoutOf(s));
            groups.put("group_" + i++, g);
        }
        List<String> formats = bySchema.keySet().stream().map(CompressedTensorsExporter::layoutOf).distinct().toList();
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("config_groups", groups);
        m.put("quant_method", "compressed-tensors");
        m.put("kv_cache_scheme", null);
        m.put("format", formats.size() == 1 ? formats.getFirst() : "mixed-precision");
        m.put("quantization_status", "compressed");
        m.put("global_compression_ratio", null);
        m.put("ignore", ignore);
        return m;
    }

    @Override protected void addQuantized(SafetensorsWriter w, String module, LogicalWeight lw) {
        IntScheme s = lw.scheme();
        int in = lw.cols(), out = lw.rows(), groups = lw.groups();
        boolean f16 = s.scaleType() == IntScheme.ScaleType.F16;
        if (s.bits() == 8) {
            add(w, module + ".weight", SafetensorsDType.I8, HfPackers.ctInt8(lw), out, in);
            add(w, module + ".weight_scale", f16 ? SafetensorsDType.F16 : SafetensorsDType.F32, HfPackers.scalesByRow(lw, f16), out, groups);
            if (!s.symmetric()) add(w, module + ".weight_zero_point", SafetensorsDType.I8, HfPackers.ctInt8Zeros(lw), out, groups);
            return;
        }
        int pf = 32 / s.bits();
        add(w, module + ".weight_packed", SafetensorsDType.I32, HfPackers.ctPacked(lw), out, in / pf);
        add(w, module + ".weight_scale", f16 ? SafetensorsDType.F16 : SafetensorsDType.F32, HfPackers.scalesByRow(lw, f16), out, groups);
        if (!s.symmetric()) add(w, module + ".weight_zero_point", SafetensorsDType.I32, HfPackers.ctPackedZeros(lw), (out + pf - 1) / pf, groups);
        MemorySegment shape = MemorySegment.ofArray(new byte[16]);
        shape.set(Words.I64, 0, out);
        shape.set(Words.I64, 8, in);
        add(w, module + ".weight_shape", SafetensorsDType.I64, shape, 2);
    }
}
