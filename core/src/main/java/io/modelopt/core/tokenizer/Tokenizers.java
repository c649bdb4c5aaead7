package io.modelopt.core.tokenizer;

import java.nio.file.Path;

/** Builds the right {@link Tokenizer} for a model's files. (Bodies arrive with the tokenizer work.) */
public final class Tokenizers {
    private Tokenizers() {}

    /** From a GGUF's embedded vocabulary. */
    public static Tokenizer fromGguf(GgufVocabulary vocab) {
        throw new UnsupportedOperationException("GGUF tokenizers not implemented yet");
    }

    /**
     * From a Hugging Face model directory: {@code tokenizer.json}, plus {@code tokenizer_config.json}
     * (add_bos_token/add_eos_token, added tokens) when present.
     */
    public static Tokenizer fromHuggingFace(Path modelDir) {
        throw new UnsupportedOperationException("tokenizer.json not implemented yet");
    }
}
