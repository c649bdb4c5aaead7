package io.modelopt.core.tokenizer;

import io.modelopt.core.ModelFormatException;
import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the two GGUF tokenizers share, following llama.cpp's {@code llama_vocab}: token texts and
 * attributes from {@code tokenizer.ggml.tokens/token_type}, the special-token cache and its
 * partition of the input, BOS/EOS handling and the detokenizer's token pieces.
 */
abstract sealed class GgufTokenizer implements Tokenizer permits GgufSpmTokenizer, GgufBpeTokenizer {
    private static final Logger LOG = LoggerFactory.getLogger(GgufTokenizer.class);

    // llama_token_attr bits (llama.h)
    static final int ATTR_UNKNOWN = 1, ATTR_UNUSED = 1 << 1, ATTR_NORMAL = 1 << 2, ATTR_CONTROL = 1 << 3,
            ATTR_USER_DEFINED = 1 << 4, ATTR_BYTE = 1 << 5;

    /** Texts llama.cpp treats as control (end-of-generation and FIM markers) whatever the file says. */
    private static final List<String> CONTROL_LOOKING = List.of(
            "<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<|end_of_text|>", "<EOT>", "_<EOT>",
            "<|eom_id|>", "<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>", "<PRE>", "▁<PRE>", "<|fim_suffix|>", "<fim-suffix>",
            "<fim_suffix>", "<SUF>", "▁<SUF>", "<|fim_middle|>", "<fim-middle>", "<fim_middle>", "<MID>", "▁<MID>",
            "<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>",
            "<|file_sep|>", "<end_of_utterance>", "<|return|>", "<|call|>");

    protected final String kind;
    protected final String[] texts;
    protected final int[] attrs;
    protected final Map<String, Integer> ids;
    protected final int bosId, eosId, unkId;
    protected final boolean addBos, addEos, addSpacePrefix;
    protected final SpecialTokenSplitter splitter;

    GgufTokenizer(String kind, GgufVocabulary v, int defaultBos, int defaultEos, int defaultUnk,
                  boolean defaultAddBos, boolean defaultAddSpacePrefix) {
        this.kind = kind;
        List<String> tokens = v.tokens();
        if (tokens == null || tokens.isEmpty()) throw new ModelFormatException(null, "tokenizer.ggml.tokens is missing or empty");
        int n = tokens.size();
        if (v.scores() != null && v.scores().length < n)
            throw new ModelFormatException(null, "tokenizer.ggml.scores has " + v.scores().length + " entries for " + n + " tokens");
        if (v.tokenTypes() != null && v.tokenTypes().length < n)
            throw new ModelFormatException(null, "tokenizer.ggml.token_type has " + v.tokenTypes().length + " entries for " + n + " tokens");
        texts = new String[n];
        attrs = new int[n];
        ids = new HashMap<>(n * 2);
        for (int i = 0; i < n; i++) {
            String t = tokens.get(i);
            if (t == null || t.isEmpty()) {
                LOG.warn("empty token at index {}", i);
                t = "[EMPTY_" + i + "]";
            }
            texts[i] = t;
            Integer dup = ids.putIfAbsent(t, i);
            if (dup != null) throw new ModelFormatException(null, "duplicate token in vocabulary: '" + t + "' has ids " + dup + " and " + i);
            attrs[i] = v.tokenTypes() == null ? ATTR_NORMAL : switch (v.tokenTypes()[i]) {
                case 1 -> ATTR_NORMAL;
                case 2 -> ATTR_UNKNOWN;
                case 3 -> ATTR_CONTROL;
                case 4 -> ATTR_USER_DEFINED;
                case 5 -> ATTR_UNUSED;
                case 6 -> ATTR_BYTE;
                default -> 0;
            };
        }
        for (String t : CONTROL_LOOKING) {
            Integer id = ids.get(t);
            if (id != null && (attrs[id] & ATTR_CONTROL) == 0) {
                LOG.warn("control-looking token {} '{}' was not control-type; treating it as control (as llama.cpp does)", id, t);
                attrs[id] |= ATTR_CONTROL;
            }
        }
        bosId = specialId(v.bosId(), defaultBos, n, "bos");
        eosId = specialId(v.eosId(), defaultEos, n, "eos");
        unkId = specialId(v.unkId(), defaultUnk, n, "unknown");
        addBos = v.addBos() != null ? v.addBos() : defaultAddBos;
        addEos = v.addEos() != null && v.addEos();
        addSpacePrefix = v.addSpacePrefix() != null ? v.addSpacePrefix() : defaultAddSpacePrefix;
        if (addBos && bosId < 0) throw new ModelFormatException(null, "tokenizer.ggml.add_bos_token is true, but tokenizer.ggml.bos_token_id is not set");
        if (addEos && eosId < 0) throw new ModelFormatException(null, "tokenizer.ggml.add_eos_token is true, but tokenizer.ggml.eos_token_id is not set");

        List<Integer> cache = new ArrayList<>();
        boolean[] onlyWhenParsing = new boolean[n];
        for (int i = 0; i < n; i++) {
            if ((attrs[i] & (ATTR_CONTROL | ATTR_USER_DEFINED | ATTR_UNKNOWN)) != 0) cache.add(i);
            onlyWhenParsing[i] = (attrs[i] & (ATTR_CONTROL | ATTR_UNKNOWN)) != 0;
        }
        splitter = new SpecialTokenSplitter(cache.stream().mapToInt(Integer::intValue).toArray(), texts, onlyWhenParsing, null, null);
    }

    private static int specialId(int given, int dflt, int n, String what) {
        if (given >= 0) {
            if (given < n) return given;
            LOG.warn("bad special token: tokenizer.ggml.{}_token_id = {} (vocabulary has {}), using default {}", what, given, n, dflt);
        }
        return dflt >= 0 && dflt < n ? dflt : -1;
    }

    /** The text of a token as llama.cpp's {@code token_to_piece} gives it, as bytes; empty for tokens it hides. */
    protected abstract void appendPiece(int id, boolean renderSpecial, ByteArrayOutputStream out);

    /** Whether the detokenizer cleans spaces before punctuation (llama.cpp's {@code clean_spaces}). */
    protected boolean cleanSpaces() { return false; }

    /**
     * llama.cpp's detokenizer: control/unknown tokens are dropped (or rendered as their text when
     * {@code skipSpecial} is false), '▁' reads as a space, byte tokens as their byte; with
     * {@code add_space_prefix} the first piece that produces text loses one leading space (the
     * dummy prefix the encoder added), so {@code decode(encode(x)) == x}. llama.cpp itself keeps
     * that space when it removes a leading BOS; we strip it as sentencepiece and HF do.
     * Invalid UTF-8 (a partial character) becomes U+FFFD.
     */
    @Override
    public String decode(int[] ids, boolean skipSpecial) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(ids.length * 4);
        boolean first = true;
        for (int id : ids) {
            if (id < 0 || id >= texts.length) continue;
            if (skipSpecial && isSpecial(id)) continue;
            int before = out.size();
            appendPiece(id, !skipSpecial, out);
            if (out.size() == before) continue;
            if (first && addSpacePrefix) {
                // the space the encoder prefixed to the text (sentencepiece's dummy prefix)
                byte[] all = out.toByteArray();
                if (all[before] == ' ') {
                    out.reset();
                    out.write(all, 0, before);
                    out.write(all, before + 1, all.length - before - 1);
                }
            }
            first = false;
        }
        byte[] bytes = out.toByteArray();
        if (cleanSpaces()) bytes = CleanSpaces.apply(bytes);
        return new String(bytes, java.nio.charset.StandardCharsets.UTF_8);
    }

    @Override
    public byte[] tokenBytes(int id) {
        if (id < 0 || id >= texts.length) return new byte[0];
        ByteArrayOutputStream out = new ByteArrayOutputStream(8);
        appendPiece(id, false, out);
        return out.toByteArray();
    }

    @Override public int vocabSize() { return texts.length; }
    @Override public String piece(int id) { return id >= 0 && id < texts.length ? texts[id] : null; }
    @Override public int idOf(String piece) { return ids.getOrDefault(piece, -1); }
    @Override public int bosId() { return bosId; }
    @Override public int eosId() { return eosId; }
    @Override public boolean addsBos() { return addBos; }

    /** Control and unknown tokens: the ones llama.cpp's detokenizer hides unless asked to render specials. */
    @Override
    public boolean isSpecial(int id) {
        return id >= 0 && id < attrs.length && (attrs[id] & (ATTR_CONTROL | ATTR_UNKNOWN)) != 0;
    }

    @Override
    public String describe() {
        return "GGUF " + kind + " tokenizer, " + texts.length + " tokens, bos=" + bosId + " eos=" + eosId + " unk=" + unkId
                + ", add_bos=" + addBos + " add_eos=" + addEos + " add_space_prefix=" + addSpacePrefix
                + ", " + splitter.size() + " special/user-defined tokens";
    }
}
