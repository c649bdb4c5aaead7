package io.modelopt.core;

/**
 * The weight quantizations {@link ModelOptimizer#quantize} can ask for. Each is provided by a
 * {@link io.modelopt.core.spi.Quantizer} found through {@link java.util.ServiceLoader}: core has
 * none; the quantization module brings them.
 */
public enum QuantizationMethod {
    /** Round-to-nearest, per-channel INT8. */
    RTN_INT8,
    /** Round-to-nearest, group-wise INT4 with zero points. */
    RTN_INT4,
    /** Activation-aware weight quantization, group-wise INT4. */
    AWQ,
    /** GPTQ (second-order error compensation), group-wise INT4. */
    GPTQ,
    /** ggml block formats, written as GGUF. */
    Q8_0, Q4_0, Q4_K_M, Q6_K
}
