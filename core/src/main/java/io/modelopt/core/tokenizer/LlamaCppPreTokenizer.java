package io.modelopt.core.tokenizer;

import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * The pre-tokenizer a GGUF BPE vocabulary names in {@code tokenizer.ggml.pre}, as llama.cpp's
 * {@code llm_tokenizer_bpe} maps it (llama-vocab.cpp): the list of regexes applied in turn, each
 * cutting every piece the previous ones left (matches and the text between them both kept), plus
 * the per-name flags llama.cpp sets with it.
 *
 * <p>The Llama-3 and Qwen2 patterns are llama.cpp's adapted spellings (the case-insensitive
 * {@code (?i:'s|'t|...)} written as {@code '[sS]|'[tT]|...}); they mean the same as the
 * tokenizer.json originals. Names llama.cpp does not know are rejected, as llama.cpp does.
 *
 * @param name         the {@code tokenizer.ggml.pre} value ("default" when absent)
 * @param patterns     compiled regexes, applied in order
 * @param ignoreMerges a whole piece that is itself a token is emitted as it is (llama3)
 * @param addBos       llama.cpp's default for add_bos with this pre-tokenizer (the GGUF key overrides it)
 * @param cleanSpaces  llama.cpp's {@code clean_spaces}: the detokenizer removes the space before . , ! ? and some contractions
 */
record LlamaCppPreTokenizer(String name, List<Pattern> patterns, boolean ignoreMerges, boolean addBos, boolean cleanSpaces) {

    private static final String GPT2 = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)";
    private static final String LLAMA3 = "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
    private static final String QWEN2 = "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
    private static final String GPT4O = "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
    private static final String TEKKEN = "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

    private record Spec(List<String> regexes, boolean ignoreMerges, boolean addBos, boolean cleanSpaces) {}

    private static final Spec DEFAULT = new Spec(List.of(
            "[\\p{P}\\$\\+<=>\\^~\\|]+", GPT2, "\\p{N}+", "[0-9][0-9][0-9]"), false, false, true);
    private static final Spec LLAMA3_SPEC = new Spec(List.of(LLAMA3), true, true, true);
    private static final Spec GPT2_SPEC = new Spec(List.of(GPT2), false, false, true);
    private static final Spec QWEN2_SPEC = new Spec(List.of(QWEN2), false, false, false);
    private static final Spec STARCODER = new Spec(List.of("\\p{N}", GPT2), false, false, true);

    private static final Map<String, Spec> SPECS = Map.ofEntries(
            Map.entry("default", DEFAULT),
            Map.entry("llama3", LLAMA3_SPEC), Map.entry("llama-v3", LLAMA3_SPEC), Map.entry("llama-bpe", LLAMA3_SPEC),
            Map.entry("falcon3", LLAMA3_SPEC), Map.entry("falcon-h1", LLAMA3_SPEC), Map.entry("pixtral", LLAMA3_SPEC),
            Map.entry("midm-2.0", LLAMA3_SPEC), Map.entry("lfm2", LLAMA3_SPEC),
            Map.entry("dbrx", new Spec(List.of(LLAMA3), false, false, true)),
            Map.entry("smaug-bpe", new Spec(List.of(LLAMA3), false, false, true)),
            Map.entry("glm4", new Spec(List.of(LLAMA3), false, false, true)),
            Map.entry("chatglm-bpe", new Spec(List.of(LLAMA3), false, false, true)),
            Map.entry("gpt-2", GPT2_SPEC), Map.entry("phi-2", GPT2_SPEC), Map.entry("jina-es", GPT2_SPEC),
            Map.entry("jina-de", GPT2_SPEC), Map.entry("gigachat", GPT2_SPEC), Map.entry("jina-v2-es", GPT2_SPEC),
            Map.entry("jina-v2-de", GPT2_SPEC), Map.entry("a.x-4.0", GPT2_SPEC), Map.entry("mellum", GPT2_SPEC),
            Map.entry("modern-bert", GPT2_SPEC), Map.entry("mpt", GPT2_SPEC), Map.entry("olmo", GPT2_SPEC),
            Map.entry("jais", GPT2_SPEC), Map.entry("exaone4", GPT2_SPEC), Map.entry("roberta-bpe", GPT2_SPEC),
            Map.entry("jina-v1-en", GPT2_SPEC), Map.entry("jina-v2-code", GPT2_SPEC),
            Map.entry("trillion", new Spec(List.of(GPT2), false, false, false)),
            Map.entry("granite-docling", new Spec(List.of(GPT2), false, false, false)),
            Map.entry("qwen2", QWEN2_SPEC), Map.entry("deepseek-r1-qwen", QWEN2_SPEC), Map.entry("kormo", QWEN2_SPEC),
            Map.entry("f2llmv2", QWEN2_SPEC), Map.entry("hunyuan", QWEN2_SPEC), Map.entry("solar-open", QWEN2_SPEC),
            Map.entry("megrez", new Spec(List.of(QWEN2), false, false, true)),
            Map.entry("stablelm2", new Spec(List.of(QWEN2), false, false, true)),
            Map.entry("starcoder", STARCODER), Map.entry("refact", STARCODER), Map.entry("codeshell", STARCODER),
            Map.entry("exaone", STARCODER), Map.entry("minerva-7b", STARCODER), Map.entry("mellum2", STARCODER),
            Map.entry("command-r", new Spec(List.of("\\p{N}", GPT2), false, false, false)),
            Map.entry("smollm", new Spec(List.of("\\p{N}", GPT2), false, false, false)),
            Map.entry("falcon", new Spec(List.of("[\\p{P}\\$\\+<=>\\^~\\|`]+", GPT2, "[0-9][0-9][0-9]"), false, false, true)),
            Map.entry("gpt-4o", new Spec(List.of(GPT4O), false, false, false)),
            Map.entry("llama4", new Spec(List.of(GPT4O), false, false, false)),
            Map.entry("tekken", new Spec(List.of(TEKKEN), true, true, false)),
            Map.entry("seed-coder", new Spec(List.of("(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1}| ?[^\\s\\p{L}\\p{N}\\r\\n]+|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"), false, false, false)),
            Map.entry("grok-2", new Spec(List.of(QWEN2), false, false, false)),
            Map.entry("bloom", new Spec(List.of(" ?[^(\\s|.,!?…。，、।۔،)]+"), false, false, true)),
            Map.entry("gpt3-finnish", new Spec(List.of(" ?[^(\\s|.,!?…。，、।۔،)]+"), false, false, true)),
            Map.entry("poro-chat", new Spec(List.of(" ?[^(\\s|.,!?…。，、।۔،)]+"), false, false, false)));

    /** The pre-tokenizer for a name; null or empty means "default" (llama.cpp warns and degrades). Null when unknown. */
    static LlamaCppPreTokenizer forName(String name) {
        String key = name == null || name.isEmpty() ? "default" : name;
        Spec s = SPECS.get(key);
        if (s == null) return null;
        return new LlamaCppPreTokenizer(key, s.regexes.stream().map(RegexDialect::compile).toList(),
                s.ignoreMerges, s.addBos, s.cleanSpaces);
    }

    /** Cuts text into the pieces BPE then merges within. */
    List<String> split(String text) {
        return RegexSplitter.splitIsolatedAll(text, patterns);
    }
}
