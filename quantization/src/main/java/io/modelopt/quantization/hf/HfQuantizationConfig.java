package io.modelopt.quantization.hf;

import io.modelopt.core.ModelFormatException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * The {@code quantization_config} object of a checkpoint's {@code config.json}, as the three tools
 * write it, reduced to what binding a linear needs: which modules are quantized, with which bits,
 * group size and zero points, in which layout.
 * <ul>
 *   <li>AutoAWQ ({@code AwqConfig.to_transformers_dict}): {@code quant_method "awq"}, {@code bits},
 *       {@code group_size}, {@code zero_point}, {@code version} ({@code "gemm"} only), {@code modules_to_not_convert}
 *       (matched as AutoAWQ does: a module is skipped when one entry is a substring of its name).</li>
 *   <li>GPTQ (AutoGPTQ {@code BaseQuantizeConfig.to_dict}, GPTQModel {@code QuantizeConfig.to_dict}):
 *       {@code quant_method "gptq"}, {@code bits}, {@code group_size}, {@code desc_act}, {@code sym},
 *       {@code checkpoint_format} ({@code "gptq"} default, {@code "gptq_v2"}), {@code lm_head}.</li>
 *   <li>compressed-tensors ({@code QuantizationConfig}): {@code quant_method "compressed-tensors"},
 *       {@code format}, {@code config_groups} ({@code targets}, {@code weights}: {@code num_bits},
 *       {@code type}, {@code symmetric}, {@code group_size}, {@code strategy}, {@code actorder};
 *       optional per-group {@code format}), {@code ignore}; targets and ignore entries match a module's
 *       name exactly, by {@code re:} regex (Python {@code re.match}: a prefix match), or by the
 *       class name {@code Linear}.</li>
 * </ul>
 */
final class HfQuantizationConfig {
    /** The tool that wrote the checkpoint. */
    enum Method { AWQ, GPTQ, COMPRESSED_TENSORS }

    /** How one module's weight is stored. {@code groupSize} is as written ({@code -1}: per channel). */
    record Target(HfLayoutKind kind, int bits, int groupSize, boolean symmetric, boolean actOrder) {}

    private record CtGroup(String name, List<String> targets, Target target) {}

    final Method method;
    private final Path file;
    private final Target single;
    private final List<String> notConverted;
    private final boolean lmHead;
    private final List<CtGroup> groups;
    private final List<String> ignore;

    private HfQuantizationConfig(Method method, Path file, Target single, List<String> notConverted, boolean lmHead, List<CtGroup> groups, List<String> ignore) {
        this.method = method;
        this.file = file;
        this.single = single;
        this.notConverted = notConverted;
        this.lmHead = lmHead;
        this.groups = groups;
        this.ignore = ignore;
    }

    /** The quantization config of a source's metadata (config.json), or empty when it has none or another tool's. */
    static Optional<HfQuantizationConfig> of(Map<String, Object> metadata, Path file) {
        if (metadata == null || !(metadata.get("quantization_config") instanceof Map<?, ?> qc)) return Optional.empty();
        Object m = qc.get("quant_method");
        if (!(m instanceof String method)) return Optional.empty();
        return switch (method.toLowerCase(java.util.Locale.ROOT)) {
            case "awq" -> Optional.of(awq(qc, file));
            case "gptq" -> Optional.of(gptq(qc, file));
            case "compressed-tensors" -> Optional.of(compressedTensors(qc, file));
            default -> Optional.empty();
        };
    }

    /** How the module named {@code module} (HF name without {@code .weight}) is stored, or empty when it is not quantized. */
    Optional<Target> target(String module) {
        switch (method) {
            case AWQ -> {
                for (String n : notConverted) if (module.contains(n)) return Optional.empty();
                if (module.equals("lm_head")) return Optional.empty(); // AutoAWQ never quantizes lm_head
                return Optional.of(single);
            }
            case GPTQ -> {
                if (module.equals("lm_head") && !lmHead) return Optional.empty();
                return Optional.of(single);
            }
            default -> {
                for (String i : ignore) if (matches(i, module)) return Optional.empty();
                for (CtGroup g : groups) for (String t : g.targets) if (matches(t, module)) return Optional.of(g.target);
                return Optional.empty();
            }
        }
    }

    /** Where the config was read from, for messages. */
    Path file() { return file; }

    private static boolean matches(String target, String module) {
        if (target.startsWith("re:")) return Pattern.compile(target.substring(3)).matcher(module).lookingAt();
        return target.equals(module) || target.equals("Linear");
    }

    private static HfQuantizationConfig awq(Map<?, ?> qc, Path file) {
        String version = str(qc, "version", "gemm", file).toLowerCase(java.util.Locale.ROOT);
        if (!version.equals("gemm")) {
            throw bad(file, "AWQ 'version' \"" + version + "\" is not supported (only \"gemm\": qweight [in, out/8] in AutoAWQ's order)");
        }
        int bits = integer(qc, qc.containsKey("bits") ? "bits" : "w_bit", 4, file);
        if (bits != 4) throw bad(file, "AWQ GEMM 'bits' " + bits + " is not supported (AutoAWQ's GEMM layout packs 4-bit codes only)");
        int group = integer(qc, qc.containsKey("group_size") ? "group_size" : "q_group_size", 128, file);
        if (!bool(qc, "zero_point", true, file)) {
            throw bad(file, "AWQ GEMM with 'zero_point' false is not supported (AutoAWQ's WQLinear_GEMM always stores qzeros)");
        }
        List<String> skip = new ArrayList<>();
        if (qc.get("modules_to_not_convert") instanceof List<?> l) for (Object o : l) if (o instanceof String s) skip.add(s);
        return new HfQuantizationConfig(Method.AWQ, file, new Target(HfLayoutKind.AWQ_GEMM, 4, group, false, false), skip, false, List.of(), List.of());
    }

    private static HfQuantizationConfig gptq(Map<?, ?> qc, Path file) {
        int bits = integer(qc, "bits", 4, file);
        if (bits == 3) throw bad(file, "GPTQ 'bits' 3 is not supported (3-bit codes straddle the int32 words; 2, 4 and 8 are)");
        if (bits != 2 && bits != 4 && bits != 8) throw bad(file, "GPTQ 'bits' " + bits + " is not supported (2, 4 or 8)");
        String format = str(qc, "checkpoint_format", str(qc, "format", "gptq", file), file).toLowerCase(java.util.Locale.ROOT);
        HfLayoutKind kind = switch (format) {
            case "gptq" -> HfLayoutKind.GPTQ;
            case "gptq_v2" -> HfLayoutKind.GPTQ_V2;
            default -> throw bad(file, "GPTQ 'checkpoint_format' \"" + format + "\" is not supported (\"gptq\" or \"gptq_v2\")");
        };
        if (qc.get("dynamic") instanceof Map<?, ?> d && !d.isEmpty()) {
            throw bad(file, "GPTQModel 'dynamic' per-module overrides are not supported");
        }
        int group = integer(qc, "group_size", 128, file);
        boolean sym = bool(qc, "sym", true, file), descAct = bool(qc, "desc_act", false, file);
        return new HfQuantizationConfig(Method.GPTQ, file, new Target(kind, bits, group, sym, descAct), List.of(),
                bool(qc, "lm_head", false, file), List.of(), List.of());
    }

    private static HfQuantizationConfig compressedTensors(Map<?, ?> qc, Path file) {
        String status = str(qc, "quantization_status", "compressed", file);
        if (!status.equals("compressed")) {
            throw bad(file, "compressed-tensors 'quantization_status' \"" + status + "\": only \"compressed\" checkpoints hold packed weights");
        }
        String topFormat = str(qc, "format", "dense", file);
        if (!(qc.get("config_groups") instanceof Map<?, ?> cg)) throw bad(file, "compressed-tensors 'config_groups' is missing");
        List<CtGroup> groups = new ArrayList<>();
        for (Map.Entry<?, ?> e : cg.entrySet()) {
            String name = String.valueOf(e.getKey());
            if (!(e.getValue() instanceof Map<?, ?> g)) throw bad(file, "config_groups." + name + " is not an object");
            if (!(g.get("weights") instanceof Map<?, ?> w)) continue; // activations only: weights stay dense
            if (g.get("input_activations") instanceof Map<?, ?>) {
                throw bad(file, "config_groups." + name + ": quantized input activations are not supported (weight-only schemes are)");
            }
            String format = g.get("format") instanceof String f ? f : topFormat;
            String p = "config_groups." + name + ".weights.";
            String type = str(w, "type", "int", file);
            if (!type.equals("int")) throw bad(file, p + "type \"" + type + "\" is not supported (int)");
            int bits = integer(w, "num_bits", 8, file);
            String strategy = str(w, "strategy", "tensor", file);
            int group = switch (strategy) {
                case "group" -> integer(w, "group_size", 128, file);
                case "channel" -> -1;
                default -> throw bad(file, p + "strategy \"" + strategy + "\" is not supported (group or channel)");
            };
            Object actorder = w.get("actorder");
            HfLayoutKind kind = switch (format) {
                case "pack-quantized" -> HfLayoutKind.CT_PACKED;
                case "int-quantized", "naive-quantized" -> HfLayoutKind.CT_INT;
                default -> throw bad(file, "compressed-tensors format \"" + format + "\" of " + name + " is not supported (pack-quantized, int-quantized)");
            };
            if (kind == HfLayoutKind.CT_PACKED && 32 % bits != 0) throw bad(file, p + "num_bits " + bits + " is not supported in pack-quantized (2, 4 or 8)");
            if (kind == HfLayoutKind.CT_INT && bits != 8) throw bad(file, p + "num_bits " + bits + " is not supported in int-quantized (8)");
            List<String> targets = strings(g.get("targets"));
            groups.add(new CtGroup(name, targets, new Target(kind, bits, group, bool(w, "symmetric", true, file),
                    actorder != null && !Boolean.FALSE.equals(actorder))));
        }
        return new HfQuantizationConfig(Method.COMPRESSED_TENSORS, file, null, List.of(), false, groups, strings(qc.get("ignore")));
    }

    private static List<String> strings(Object o) {
        List<String> out = new ArrayList<>();
        if (o instanceof List<?> l) for (Object x : l) if (x instanceof String s) out.add(s);
        return out;
    }

    private static ModelFormatException bad(Path file, String problem) {
        return new ModelFormatException(file, "quantization_config: " + problem);
    }

    private static int integer(Map<?, ?> m, String key, int dflt, Path file) {
        Object v = m.get(key);
        if (v == null) return dflt;
        if (v instanceof Number n && n.doubleValue() == Math.rint(n.doubleValue())) return n.intValue();
        throw bad(file, "'" + key + "' must be an integer, got " + v);
    }

    private static boolean bool(Map<?, ?> m, String key, boolean dflt, Path file) {
        Object v = m.get(key);
        if (v == null) return dflt;
        if (v instanceof Boolean b) return b;
        throw bad(file, "'" + key + "' must be true or false, got " + v);
    }

    private static String str(Map<?, ?> m, String key, String dflt, Path file) {
        Object v = m.get(key);
        if (v == null) return dflt;
        if (v instanceof String s) return s;
        throw bad(file, "'" + key + "' must be a string, got " + v);
    }
}
