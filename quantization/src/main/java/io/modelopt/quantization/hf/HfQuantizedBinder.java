package io.modelopt.quantization.hf;

import io.modelopt.core.ModelFormatException;
import io.modelopt.core.kernel.WeightFormat;
import io.modelopt.core.kernel.WeightMatrix;
import io.modelopt.core.model.ModelConfig;
import io.modelopt.core.model.ModelSource;
import io.modelopt.core.model.WeightBinder;
import io.modelopt.core.tensor.GgmlType;
import io.modelopt.core.tensor.TensorData;
import io.modelopt.quantization.format.IntScheme;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * Binds the linears of an AutoAWQ (GEMM), GPTQ (v1/v2) or compressed-tensors
 * (pack-quantized / int-quantized) checkpoint, read from the source's {@code config.json}
 * {@code quantization_config} ({@link HfQuantizationConfig}), to their formats ({@link HfFormats}),
 * in place over the checkpoint's own tensors: core keeps tensors whose names it does not know
 * ({@code ….qweight}, {@code ….weight_packed}, ...) under their HF names, and this binder finds them
 * beside the weight's HF name.
 *
 * <p>Everything is checked against config.json before a matrix is made, and a mismatch is a
 * {@link ModelFormatException} naming the tensor: dtypes, every tensor's shape against the
 * in/out features the model config implies and the bits and group size, {@code g_idx} values in
 * {@code [0, groups)}, compressed-tensors' {@code weight_shape}. A symmetric format is chosen only
 * when every stored zero point is the symmetric one (GPTQ stores zeros even when {@code sym}).
 */
public final class HfQuantizedBinder implements WeightBinder {
    private static final Pattern LINEAR = Pattern.compile("(blk\\.\\d+\\.(attn_q|attn_k|attn_v|attn_output|ffn_gate|ffn_up|ffn_down)|output)\\.weight");

    /** compressed-tensors int-quantized keeps an int8 tensor under the weight's own name. */
    @Override public boolean claims(String canonicalName, GgmlType type) {
        return type == GgmlType.I8 && LINEAR.matcher(canonicalName).matches();
    }

    @Override public WeightMatrix bind(ModelSource source, String weightName) {
        Path configFile = source.path().resolve("config.json");
        Optional<HfQuantizationConfig> qc = HfQuantizationConfig.of(source.metadata(), configFile);
        if (qc.isEmpty() || !LINEAR.matcher(weightName).matches()) return null;
        String hf = source.fileTensorName(weightName);
        if (!hf.endsWith(".weight")) return null;
        String module = hf.substring(0, hf.length() - ".weight".length());
        Optional<HfQuantizationConfig.Target> target = qc.get().target(module);
        if (target.isEmpty()) return null;
        int[] inOut = inOut(source.config(), weightName);
        Linear l = new Linear(source, configFile, module, weightName, inOut[0], inOut[1], target.get());
        return switch (target.get().kind()) {
            case AWQ_GEMM -> l.awq();
            case GPTQ, GPTQ_V2 -> l.gptq();
            case CT_PACKED -> l.ctPacked();
            case CT_INT -> l.ctInt();
        };
    }

    /** In and out features of a linear of the Llama family, from the model config. */
    static int[] inOut(ModelConfig c, String weightName) {
        int h = c.hiddenSize(), q = c.qDim(), kv = c.kvDim(), f = c.intermediateSize();
        if (weightName.equals("output.weight")) return new int[] {h, c.vocabSize()};
        String stem = weightName.substring(weightName.indexOf('.', 4) + 1, weightName.length() - ".weight".length());
        return switch (stem) {
            case "attn_q" -> new int[] {h, q};
            case "attn_k", "attn_v" -> new int[] {h, kv};
            case "attn_output" -> new int[] {q, h};
            case "ffn_gate", "ffn_up" -> new int[] {h, f};
            case "ffn_down" -> new int[] {f, h};
            default -> throw new IllegalArgumentException("not a linear: " + weightName);
        };
    }

    /** One linear's tensors and the checks on them. */
    private record Linear(ModelSource source, Path configFile, String module, String weightName, int in, int out, HfQuantizationConfig.Target t) {
        TensorData opt(String suffix) {
            TensorData t = source.tensors().get(module + "." + suffix);
            // the int8 `weight` itself is kept under its canonical (GGUF) name, its siblings under their HF names
            if (t == null && suffix.equals("weight")) t = source.tensors().get(weightName);
            return t;
        }

        TensorData req(String suffix, GgmlType... types) {
            TensorData d = opt(suffix);
            if (d == null) throw bad("missing tensor '" + module + "." + suffix + "' (quantization_config " + describe() + ")");
            if (types.length > 0 && !Arrays.asList(types).contains(d.type())) {
                throw bad("tensor '" + module + "." + suffix + "' has dtype " + d.type() + ", expected " + Arrays.toString(types));
            }
            return d;
        }

        ModelFormatException bad(String problem) { return new ModelFormatException(source.path(), problem); }

        String describe() {
            return "bits " + t.bits() + ", group_size " + t.groupSize() + "; " + module + ": in_features " + in + ", out_features " + out;
        }

        /** Checks a tensor's PyTorch-order shape. */
        void shape(TensorData d, long... pytorch) {
            long[] g = d.shape();
            long[] actual = new long[g.length];
            for (int i = 0; i < g.length; i++) actual[i] = g[g.length - 1 - i];
            if (!Arrays.equals(actual, pytorch)) {
                throw bad("tensor '" + d.name() + "' has shape " + Arrays.toString(actual) + " but " + configFile.getFileName()
                        + " implies " + Arrays.toString(pytorch) + " (" + describe() + ")");
            }
        }

        int groupSize() {
            int g = t.groupSize() <= 0 ? in : t.groupSize();
            if (in % g != 0) throw bad(module + ": group_size " + g + " does not divide in_features " + in);
            return g;
        }

        IntScheme scheme(int groupSize, boolean symmetric, TensorData scales) {
            IntScheme.ScaleType st = scales.type() == GgmlType.F16 ? IntScheme.ScaleType.F16 : IntScheme.ScaleType.F32;
            try {
                return new IntScheme(t.bits(), groupSize == in ? IntScheme.PER_CHANNEL : groupSize, symmetric, st);
            } catch (IllegalArgumentException e) {
                throw bad(module + ": " + e.getMessage() + " (" + describe() + ")");
            }
        }

        void packs(int perWord, int n, String what) {
            if (n % perWord != 0) throw bad(module + ": " + what + " " + n + " is not a multiple of " + perWord + " (" + t.bits() + "-bit codes, " + perWord + " per int32)");
        }

        WeightMatrix awq() {
            TensorData q = req("qweight", GgmlType.I32), z = req("qzeros", GgmlType.I32), s = req("scales", GgmlType.F16, GgmlType.BF16, GgmlType.F32);
            packs(8, out, "out_features");
            int g = groupSize(), groups = in / g;
            shape(q, in, out / 8);
            shape(z, groups, out / 8);
            shape(s, groups, out);
            return WeightMatrix.of(HfFormats.of(HfLayoutKind.AWQ_GEMM, scheme(g, false, s)), out, in, q, z, s);
        }

        WeightMatrix gptq() {
            int bits = t.bits(), pf = 32 / bits;
            TensorData q = req("qweight", GgmlType.I32), z = req("qzeros", GgmlType.I32), s = req("scales", GgmlType.F16, GgmlType.BF16, GgmlType.F32);
            TensorData gIdx = opt("g_idx");
            packs(pf, in, "in_features");
            packs(pf, out, "out_features");
            int g = groupSize(), groups = in / g;
            shape(q, in / pf, out);
            shape(z, groups, out / pf);
            shape(s, groups, out);
            boolean v2 = t.kind() == HfLayoutKind.GPTQ_V2;
            boolean contiguous = true;
            if (gIdx != null) {
                if (gIdx.type() != GgmlType.I32) throw bad("tensor '" + gIdx.name() + "' has dtype " + gIdx.type() + ", expected I32");
                shape(gIdx, in);
                for (int k = 0; k < in; k++) {
                    int v = Words.i32(gIdx, k);
                    if (v < 0 || v >= groups) throw bad("tensor '" + gIdx.name() + "': g_idx[" + k + "] = " + v + " is out of range [0, " + groups + ") (" + describe() + ")");
                    if (v != k / g) contiguous = false;
                }
            }
            if (!contiguous) return WeightMatrix.of(HfFormats.gptqActOrder(bits, v2), out, in, q, z, s, gIdx);
            IntScheme asym = scheme(g, false, s);
            IntScheme sym = scheme(g, true, s);
            WeightFormat f = HfFormats.of(t.kind(), allZerosAre(new GptqLayout(asym, v2), q, z, s, sym.symmetricZero()) ? sym : asym);
            return WeightMatrix.of(f, out, in, q, z, s);
        }

        /** Whether every zero point GPTQ stored is {@code zero} (a symmetric checkpoint's 2^(bits−1)). */
        boolean allZerosAre(GptqLayout reader, TensorData q, TensorData z, TensorData s, int zero) {
            WeightMatrix probe = WeightMatrix.of(HfFormats.of(t.kind(), reader.scheme()), out, in, q, z, s);
            int groups = in / groupSize();
            float[] scales = new float[groups];
            int[] zeros = new int[groups];
            for (int r = 0; r < out; r++) {
                reader.readGroups(probe, r, scales, zeros);
                for (int zr : zeros) if (zr != zero) return false;
            }
            return true;
        }

        WeightMatrix ctPacked() {
            int bits = t.bits(), pf = 32 / bits;
            TensorData q = opt("weight_packed");
            if (q == null) return null; // stored dense
            if (q.type() != GgmlType.I32) throw bad("tensor '" + q.name() + "' has dtype " + q.type() + ", expected I32");
            TensorData s = req("weight_scale", GgmlType.F16, GgmlType.BF16, GgmlType.F32);
            packs(pf, in, "in_features");
            int g = groupSize(), groups = in / g;
            shape(q, out, in / pf);
            shape(s, out, groups);
            checkWeightShape(opt("weight_shape"));
            refuseActOrder(g);
            if (t.symmetric()) return WeightMatrix.of(HfFormats.of(HfLayoutKind.CT_PACKED, scheme(g, true, s)), out, in, q, s);
            TensorData zp = req("weight_zero_point", GgmlType.I32);
            shape(zp, (out + pf - 1) / pf, groups);
            return WeightMatrix.of(HfFormats.of(HfLayoutKind.CT_PACKED, scheme(g, false, s)), out, in, q, s, zp);
        }

        WeightMatrix ctInt() {
            TensorData q = opt("weight");
            if (q == null || q.type() != GgmlType.I8) return null; // stored dense
            TensorData s = req("weight_scale", GgmlType.F16, GgmlType.BF16, GgmlType.F32);
            int g = groupSize(), groups = in / g;
            shape(q, out, in);
            shape(s, out, groups);
            refuseActOrder(g);
            if (t.symmetric()) return WeightMatrix.of(HfFormats.of(HfLayoutKind.CT_INT, scheme(g, true, s)), out, in, q, s);
            TensorData zp = req("weight_zero_point", GgmlType.I8);
            shape(zp, out, groups);
            return WeightMatrix.of(HfFormats.of(HfLayoutKind.CT_INT, scheme(g, false, s)), out, in, q, s, zp);
        }

        void checkWeightShape(TensorData ws) {
            if (ws == null) return;
            if ((ws.type() != GgmlType.I32 && ws.type() != GgmlType.I64) || ws.elementCount() != 2) {
                throw bad("tensor '" + ws.name() + "' must hold 2 integers [out, in], got " + ws);
            }
            long o = Words.integer(ws, 0), i = Words.integer(ws, 1);
            if (o != out || i != in) throw bad("tensor '" + ws.name() + "' says [" + o + ", " + i + "] but " + configFile.getFileName() + " implies [" + out + ", " + in + "]");
        }

        /** compressed-tensors' activation order ({@code weight_g_idx}) is not read here; a trivial one is harmless. */
        void refuseActOrder(int g) {
            TensorData gIdx = opt("weight_g_idx");
            if (gIdx == null) return;
            for (int k = 0; k < in; k++) {
                if (Words.integer(gIdx, k) != k / g) {
                    throw bad("tensor '" + gIdx.name() + "': activation-ordered compressed-tensors weights are not supported (g_idx[" + k + "] = "
                            + Words.integer(gIdx, k) + ")");
                }
            }
        }
    }
}
