package io.modelopt.core.model;

/**
 * Which elements of a head RoPE rotates together. Hugging Face checkpoints keep
 * {@code rotate_half} order (element i pairs with i + headDim/2); llama.cpp's converter permutes
 * llama Q/K weights at conversion so GGUF llama tensors rotate adjacent pairs (2i, 2i+1).
 * Qwen2 GGUFs are not permuted (ggml's NEOX rope), so they keep {@code ROTATE_HALF}.
 */
public enum RopeConvention {
    /** (2i, 2i+1): GGUF llama after convert_hf_to_gguf's permutation ("normal" rope in ggml). */
    ADJACENT_PAIRS,
    /** (i, i + d/2): HF {@code rotate_half}, ggml's NEOX mode. */
    ROTATE_HALF
}
