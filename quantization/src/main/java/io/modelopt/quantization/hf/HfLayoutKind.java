package io.modelopt.quantization.hf;

import io.modelopt.quantization.format.IntLayout;
import io.modelopt.quantization.format.IntScheme;

/** The checkpoint layouts of the Hugging Face quantization tools that bind here, each with its format-name prefix and main-tensor geometry. */
enum HfLayoutKind {
    /** AutoAWQ {@code version: "gemm"}. */
    AWQ_GEMM("AWQ_GEMM_"),
    /** GPTQ {@code checkpoint_format: "gptq"} (zero points stored minus one). */
    GPTQ("GPTQ_"),
    /** GPTQModel's {@code checkpoint_format: "gptq_v2"} (zero points stored as they are). */
    GPTQ_V2("GPTQ_V2_"),
    /** compressed-tensors {@code pack-quantized}. */
    CT_PACKED("CT_PACKED_"),
    /** compressed-tensors {@code int-quantized} (8-bit). */
    CT_INT("CT_INT_");

    final String prefix;

    HfLayoutKind(String prefix) { this.prefix = prefix; }

    /** Whether this layout holds {@code scheme} (bits it packs; AWQ GEMM is 4-bit only). */
    boolean holds(IntScheme scheme) {
        int b = scheme.bits();
        return switch (this) {
            case AWQ_GEMM -> b == 4;
            case GPTQ, GPTQ_V2, CT_PACKED -> b == 2 || b == 4 || b == 8;
            case CT_INT -> b == 8;
        };
    }

    IntLayout layout(IntScheme scheme) {
        return switch (this) {
            case AWQ_GEMM -> new AwqGemmLayout(scheme);
            case GPTQ -> new GptqLayout(scheme, false);
            case GPTQ_V2 -> new GptqLayout(scheme, true);
            case CT_PACKED -> new CtPackedLayout(scheme);
            case CT_INT -> new CtIntLayout(scheme);
        };
    }

    /** Weights per block of the main tensor: a 32-bit word's worth of codes ({@link #blockBytes()} = 4), or one int8 for {@link #CT_INT}. */
    int blockSize(IntScheme scheme) { return this == CT_INT ? 1 : 32 / scheme.bits(); }

    int blockBytes() { return this == CT_INT ? 1 : 4; }
}
