package io.modelopt.core.gguf;

import io.modelopt.core.ModelFormatException;
import io.modelopt.core.tokenizer.GgufVocabulary;
import java.util.List;

/** Collects the {@code tokenizer.ggml.*} keys of a GGUF file into a {@link GgufVocabulary}. */
public final class GgufVocabularyReader {
    private GgufVocabularyReader() {}

    public static GgufVocabulary read(GgufFile f) {
        String model = f.getString("tokenizer.ggml.model");
        List<String> tokens = f.getStringList("tokenizer.ggml.tokens");
        float[] scores = f.findFloatArray("tokenizer.ggml.scores").orElse(null);
        int[] types = f.findIntArray("tokenizer.ggml.token_type").orElse(null);
        if (scores != null && scores.length != tokens.size()) {
            throw new ModelFormatException(f.path(), "tokenizer.ggml.scores has " + scores.length + " entries for " + tokens.size() + " tokens");
        }
        if (types != null && types.length != tokens.size()) {
            throw new ModelFormatException(f.path(), "tokenizer.ggml.token_type has " + types.length + " entries for " + tokens.size() + " tokens");
        }
        return new GgufVocabulary(model, f.findString("tokenizer.ggml.pre").orElse(null), tokens, scores, types,
                f.findStringList("tokenizer.ggml.merges").orElse(null),
                checkedId(f, "tokenizer.ggml.bos_token_id", tokens.size()),
                checkedId(f, "tokenizer.ggml.eos_token_id", tokens.size()),
                checkedId(f, "tokenizer.ggml.unknown_token_id", tokens.size()),
                checkedId(f, "tokenizer.ggml.padding_token_id", tokens.size()),
                f.findBoolean("tokenizer.ggml.add_bos_token").orElse(null),
                f.findBoolean("tokenizer.ggml.add_eos_token").orElse(null),
                f.findBoolean("tokenizer.ggml.add_space_prefix").orElse(null));
    }

    private static int checkedId(GgufFile f, String key, int vocab) {
        int id = GgufConfigReader.tokenId(f, key);
        if (id >= vocab) throw new ModelFormatException(f.path(), "metadata key '" + key + "' = " + id + " is outside the vocabulary of " + vocab + " tokens");
        return id;
    }
}
