package io.modelopt.core.synthetic;

import java.util.Locale;

/** How a synthetic model is stored. */
public enum SyntheticFormat {
    /** One GGUF file (F32, F16, Q8_0, Q4_0). */
    GGUF,
    /** A Hugging Face directory: config.json, model.safetensors (F32, F16), tokenizer.json. */
    HF;

    /** "gguf" or "hf" (case-insensitive). */
    public static SyntheticFormat parse(String s) {
        return switch (s.toLowerCase(Locale.ROOT)) {
            case "gguf" -> GGUF;
            case "hf", "huggingface", "safetensors" -> HF;
            default -> throw new IllegalArgumentException("unknown synthetic model format '" + s + "' (gguf, hf)");
        };
    }
}
