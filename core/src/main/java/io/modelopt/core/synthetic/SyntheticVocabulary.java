package io.modelopt.core.synthetic;

import io.modelopt.core.json.Json;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * A synthetic SentencePiece-style vocabulary laid out like a real Llama SPM vocabulary, so the
 * files work with llama.cpp's and HF's tokenizers, not only with our engine:
 * <pre>
 *   0 &lt;unk&gt; (unknown)   1 &lt;s&gt;   2 &lt;/s&gt; (control)
 *   3 .. 258              &lt;0x00&gt; .. &lt;0xFF&gt; (byte fallback)
 *   259                   ▁w                      merged pieces, best score first
 *   260 .. size-13        ▁w0 ▁w1 ... ▁w9 ▁w10 ...
 *   size-12 .. size-1     ▁ w 0 1 ... 9           the single characters, last (as SentencePiece puts them)
 * </pre>
 * Scores are {@code -(id - 259)} for pieces and characters, 0 for control and byte tokens; so
 * SentencePiece's highest-score-first merging and the BPE merges of {@link #tokenizerJson()}
 * ({@code "▁ w"}, then {@code "▁w d"}, then {@code "▁wN d"} making {@code ▁wN·10+d}) both turn
 * the text {@code "w12 w7"} into {@code ▁w12 ▁w7}; any other character falls back to byte tokens.
 */
public final class SyntheticVocabulary {
    public static final int UNK = 0, BOS = 1, EOS = 2;
    /** First merged piece ({@code ▁w}): after 3 control tokens and 256 byte tokens. */
    public static final int FIRST_PIECE = 259;
    /** Single characters at the end: ▁, w and the ten digits. */
    private static final int SINGLES = 12;
    /** The smallest vocabulary: control, bytes, {@code ▁w}, {@code ▁w0..▁w9} and the single characters. */
    public static final int MIN_SIZE = FIRST_PIECE + 1 + 10 + SINGLES;

    /** GGUF {@code tokenizer.ggml.token_type} values (llama.cpp's {@code llama_token_type}). */
    public static final int TYPE_NORMAL = 1, TYPE_UNKNOWN = 2, TYPE_CONTROL = 3, TYPE_BYTE = 6;

    private static final String SPACE = "\u2581";

    private final List<String> tokens;
    private final float[] scores;
    private final int[] types;

    public SyntheticVocabulary(int size) {
        if (size < MIN_SIZE) throw new IllegalArgumentException("a synthetic vocabulary needs at least " + MIN_SIZE + " tokens, not " + size);
        String[] t = new String[size];
        scores = new float[size];
        types = new int[size];
        t[UNK] = "<unk>";
        t[BOS] = "<s>";
        t[EOS] = "</s>";
        types[UNK] = TYPE_UNKNOWN;
        types[BOS] = TYPE_CONTROL;
        types[EOS] = TYPE_CONTROL;
        for (int b = 0; b < 256; b++) {
            t[3 + b] = String.format(Locale.ROOT, "<0x%02X>", b);
            types[3 + b] = TYPE_BYTE;
        }
        int words = size - FIRST_PIECE - 1 - SINGLES;
        t[FIRST_PIECE] = SPACE + "w";
        for (int n = 0; n < words; n++) t[FIRST_PIECE + 1 + n] = SPACE + "w" + n;
        int s = size - SINGLES;
        t[s] = SPACE;
        t[s + 1] = "w";
        for (int d = 0; d < 10; d++) t[s + 2 + d] = Integer.toString(d);
        for (int id = FIRST_PIECE; id < size; id++) {
            types[id] = TYPE_NORMAL;
            scores[id] = -(id - FIRST_PIECE);
        }
        tokens = Collections.unmodifiableList(Arrays.asList(t));
    }

    public int size() { return tokens.size(); }

    public List<String> tokens() { return tokens; }

    public float[] scores() { return scores.clone(); }

    public int[] tokenTypes() { return types.clone(); }

    /** Id of the word piece {@code ▁w<n>}. */
    public int wordId(int n) {
        int words = size() - FIRST_PIECE - 1 - SINGLES;
        if (n < 0 || n >= words) throw new IndexOutOfBoundsException("word " + n + " of " + words);
        return FIRST_PIECE + 1 + n;
    }

    /**
     * BPE merges in priority order, as an HF tokenizer.json lists them: {@code "▁ w"}, then for each
     * word piece {@code ▁wN} the merge that makes it ({@code "▁w d"} for one digit, else
     * {@code "▁w<N/10> <N%10>"}). The rank of a merge is the id order of its result, as HF's
     * converter derives merges from SentencePiece scores.
     */
    public List<String> merges() {
        List<String> m = new ArrayList<>();
        m.add(SPACE + " w");
        int words = size() - FIRST_PIECE - 1 - SINGLES;
        for (int n = 0; n < words; n++) m.add((n < 10 ? SPACE + "w" : SPACE + "w" + n / 10) + " " + n % 10);
        return m;
    }

    /**
     * A {@code tokenizer.json} as HF's {@code LlamaTokenizerFast} (legacy, SentencePiece-converted)
     * writes it: BPE with byte fallback, a Prepend("▁") + Replace(" ", "▁") normalizer, no
     * pre-tokenizer, BOS added by the template post-processor, and the matching decoder.
     */
    public String tokenizerJson() {
        Map<String, Object> root = new LinkedHashMap<>();
        root.put("version", "1.0");
        root.put("truncation", null);
        root.put("padding", null);
        List<Object> added = new ArrayList<>();
        for (int id : new int[] {UNK, BOS, EOS}) {
            Map<String, Object> a = new LinkedHashMap<>();
            a.put("id", id);
            a.put("content", tokens.get(id));
            a.put("single_word", false);
            a.put("lstrip", false);
            a.put("rstrip", false);
            a.put("normalized", false);
            a.put("special", true);
            added.add(a);
        }
        root.put("added_tokens", added);
        root.put("normalizer", Map.of("type", "Sequence", "normalizers", List.of(
                ordered("type", "Prepend", "prepend", SPACE),
                ordered("type", "Replace", "pattern", Map.of("String", " "), "content", SPACE))));
        root.put("pre_tokenizer", null);
        Map<String, Object> bos = Map.of("SpecialToken", ordered("id", "<s>", "type_id", 0));
        root.put("post_processor", ordered(
                "type", "TemplateProcessing",
                "single", List.of(bos, Map.of("Sequence", ordered("id", "A", "type_id", 0))),
                "pair", List.of(bos, Map.of("Sequence", ordered("id", "A", "type_id", 0)),
                        Map.of("SpecialToken", ordered("id", "<s>", "type_id", 1)), Map.of("Sequence", ordered("id", "B", "type_id", 1))),
                "special_tokens", Map.of("<s>", ordered("id", "<s>", "ids", List.of(BOS), "tokens", List.of("<s>")))));
        root.put("decoder", ordered("type", "Sequence", "decoders", List.of(
                ordered("type", "Replace", "pattern", Map.of("String", SPACE), "content", " "),
                Map.of("type", "ByteFallback"),
                Map.of("type", "Fuse"),
                ordered("type", "Strip", "content", " ", "start", 1, "stop", 0))));
        Map<String, Object> vocab = new LinkedHashMap<>();
        for (int id = 0; id < tokens.size(); id++) vocab.put(tokens.get(id), id);
        Map<String, Object> model = new LinkedHashMap<>();
        model.put("type", "BPE");
        model.put("dropout", null);
        model.put("unk_token", "<unk>");
        model.put("continuing_subword_prefix", null);
        model.put("end_of_word_suffix", null);
        model.put("fuse_unk", true);
        model.put("byte_fallback", true);
        model.put("vocab", vocab);
        model.put("merges", merges());
        root.put("model", model);
        return Json.writePretty(root);
    }

    /** {@code tokenizer_config.json} for {@code LlamaTokenizer}: add BOS, not EOS; the special tokens. */
    public String tokenizerConfigJson(int modelMaxLength) {
        Map<String, Object> decoder = new LinkedHashMap<>();
        for (int id : new int[] {UNK, BOS, EOS}) {
            decoder.put(Integer.toString(id), ordered("content", tokens.get(id), "lstrip", false, "normalized", false,
                    "rstrip", false, "single_word", false, "special", true));
        }
        Map<String, Object> c = new LinkedHashMap<>();
        c.put("add_bos_token", true);
        c.put("add_eos_token", false);
        c.put("added_tokens_decoder", decoder);
        c.put("bos_token", "<s>");
        c.put("eos_token", "</s>");
        c.put("unk_token", "<unk>");
        c.put("pad_token", null);
        c.put("clean_up_tokenization_spaces", false);
        c.put("legacy", true);
        c.put("model_max_length", modelMaxLength);
        c.put("tokenizer_class", "LlamaTokenizer");
        return Json.writePretty(c);
    }

    private static Map<String, Object> ordered(Object... kv) {
        Map<String, Object> m = new LinkedHashMap<>();
        for (int i = 0; i < kv.length; i += 2) m.put((String) kv[i], kv[i + 1]);
        return m;
    }
}
