package io.modelopt.quantization.hf;

import io.modelopt.core.kernel.WeightFormat;
import io.modelopt.core.kernel.WeightFormats;
import io.modelopt.quantization.format.IntFormats;
import io.modelopt.quantization.format.IntLayout;
import io.modelopt.quantization.format.IntScheme;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The weight formats of the Hugging Face checkpoint layouts, one per (layout, scheme), named
 * {@code <prefix><scheme>}, e.g. {@code AWQ_GEMM_INT4_G128_ASYM}, {@code GPTQ_INT4_G128_SYM},
 * {@code CT_PACKED_INT4_G32_ASYM}, {@code CT_INT_INT8_CHANNEL_SYM}, and, for activation-order GPTQ,
 * {@code GPTQ_ACTORDER_INT4} / {@code GPTQ_V2_ACTORDER_INT4}. Each is built with
 * {@link IntFormats#create} (shared decoder, kernels and load-time rewrite) over its layout.
 *
 * <p>The combinations published checkpoints use (F16 scales; see {@link #published()}) are listed by
 * {@link HfFormatProvider}; any other (an F32 or BF16 scale tensor, 2-bit) is made when a checkpoint
 * first needs it and then registered in {@link WeightFormats}, so a hundred-odd combinations are
 * not all built up front.
 */
public final class HfFormats {
    private HfFormats() {}

    private static final Map<String, WeightFormat> FORMATS = new ConcurrentHashMap<>();
    /** Names the provider hands to {@link WeightFormats} itself (never registered here, which would register them twice). */
    private static final Map<String, Boolean> PROVIDED = new ConcurrentHashMap<>();

    /** The format of {@code kind} for {@code scheme}. */
    static WeightFormat of(HfLayoutKind kind, IntScheme scheme) {
        if (!kind.holds(scheme)) throw new IllegalArgumentException(kind + " does not hold " + scheme);
        return lookup(kind.prefix + scheme.formatName(),
                name -> IntFormats.create(name, kind.layout(scheme), kind.blockSize(scheme), kind.blockBytes()));
    }

    /** The activation-order GPTQ format of {@code bits} (2, 4 or 8). */
    static WeightFormat gptqActOrder(int bits, boolean v2) {
        return lookup((v2 ? "GPTQ_V2" : "GPTQ") + "_ACTORDER_INT" + bits, name -> GptqActOrder.create(name, bits, v2));
    }

    private static WeightFormat lookup(String name, java.util.function.Function<String, WeightFormat> make) {
        WeightFormat f = FORMATS.get(name);
        if (f != null) return f;
        synchronized (HfFormats.class) {
            f = FORMATS.get(name);
            if (f != null) return f;
            f = make.apply(name);
            FORMATS.put(name, f);
            if (!PROVIDED.containsKey(name) && WeightFormats.named(name).isEmpty()) WeightFormats.register(f);
            return f;
        }
    }

    /** The layout of a format made by {@link IntFormats#create} (ours or any other); empty for act-order GPTQ and the other formats. */
    public static Optional<IntLayout> layout(WeightFormat f) { return IntFormats.layout(f); }

    /**
     * The formats of the common published checkpoints, for {@link HfFormatProvider}: F16 scales;
     * AWQ GEMM INT4, GPTQ v1 INT4/INT8 (symmetric and not), compressed-tensors pack-quantized INT4
     * and int-quantized INT8, at group sizes 32, 64, 128 and per channel; act-order GPTQ INT4/INT8.
     */
    static synchronized List<WeightFormat> published() {
        int[] groups = {32, 64, 128, IntScheme.PER_CHANNEL};
        List<WeightFormat> out = new ArrayList<>();
        for (int g : groups) {
            for (boolean sym : new boolean[] {true, false}) {
                if (!sym) add(out, HfLayoutKind.AWQ_GEMM, IntScheme.of(4, g, false));
                add(out, HfLayoutKind.GPTQ, IntScheme.of(4, g, sym));
                add(out, HfLayoutKind.GPTQ, IntScheme.of(8, g, sym));
                add(out, HfLayoutKind.CT_PACKED, IntScheme.of(4, g, sym));
                add(out, HfLayoutKind.CT_INT, IntScheme.of(8, g, sym));
            }
        }
        for (int bits : new int[] {4, 8}) {
            PROVIDED.put("GPTQ_ACTORDER_INT" + bits, true);
            out.add(gptqActOrder(bits, false));
        }
        return out;
    }

    private static void add(List<WeightFormat> out, HfLayoutKind kind, IntScheme scheme) {
        PROVIDED.put(kind.prefix + scheme.formatName(), true);
        out.add(of(kind, scheme));
    }
}
