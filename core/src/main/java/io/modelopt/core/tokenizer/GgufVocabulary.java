package io.modelopt.core.tokenizer;

import java.util.List;

/**
 * The tokenizer a GGUF file embeds ({@code tokenizer.ggml.*} keys), in plain Java types, so the
 * tokenizer code does not depend on the GGUF reader.
 *
 * @param model          {@code tokenizer.ggml.model}: "llama" (SentencePiece, merged by score) or "gpt2" (BPE merges)
 * @param pre            {@code tokenizer.ggml.pre} (pre-tokenizer name, e.g. "default", "llama-bpe", "qwen2"), or null
 * @param tokens         {@code tokenizer.ggml.tokens}
 * @param scores         {@code tokenizer.ggml.scores}, or null
 * @param tokenTypes     {@code tokenizer.ggml.token_type} (1 normal, 2 unknown, 3 control, 4 user-defined, 5 unused, 6 byte), or null
 * @param merges         {@code tokenizer.ggml.merges} ("left right"), or null
 * @param bosId          {@code tokenizer.ggml.bos_token_id}, or -1
 * @param eosId          {@code tokenizer.ggml.eos_token_id}, or -1
 * @param unkId          {@code tokenizer.ggml.unknown_token_id}, or -1
 * @param padId          {@code tokenizer.ggml.padding_token_id}, or -1
 * @param addBos         {@code tokenizer.ggml.add_bos_token}, or null when absent (llama.cpp's default then applies)
 * @param addEos         {@code tokenizer.ggml.add_eos_token}, or null
 * @param addSpacePrefix {@code tokenizer.ggml.add_space_prefix}, or null
 */
public record GgufVocabulary(String model, String pre, List<String> tokens, float[] scores, int[] tokenTypes, List<String> merges,
                             int bosId, int eosId, int unkId, int padId, Boolean addBos, Boolean addEos, Boolean addSpacePrefix) {
}
