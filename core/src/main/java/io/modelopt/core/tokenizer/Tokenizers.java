package io.modelopt.core.tokenizer;

import io.modelopt.core.ModelFormatException;
import java.nio.file.Path;

/** Builds the right {@link Tokenizer} for a model's files. */
public final class Tokenizers {
    private Tokenizers() {}

    /**
     * From a GGUF's embedded vocabulary: {@code tokenizer.ggml.model} "llama" gives llama.cpp's
     * SentencePiece tokenizer, "gpt2" its byte-level BPE tokenizer; other models are refused.
     * Problems are {@link ModelFormatException}s without a file (the caller knows which GGUF it read).
     */
    public static Tokenizer fromGguf(GgufVocabulary vocab) {
        String model = vocab.model();
        if ("llama".equals(model)) return new GgufSpmTokenizer(vocab);
        if ("gpt2".equals(model)) return new GgufBpeTokenizer(vocab);
        throw new ModelFormatException(null, "unsupported tokenizer.ggml.model '" + model + "' (supported: llama, gpt2)");
    }

    /**
     * From a Hugging Face model directory: {@code tokenizer.json} (BPE model), plus
     * {@code tokenizer_config.json} (add_bos_token/add_eos_token, bos/eos tokens,
     * clean_up_tokenization_spaces) when present.
     */
    public static Tokenizer fromHuggingFace(Path modelDir) {
        return HfTokenizerLoader.load(modelDir);
    }
}
