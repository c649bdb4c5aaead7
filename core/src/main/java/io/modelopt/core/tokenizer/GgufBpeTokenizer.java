package io.modelopt.core.tokenizer;

import io.modelopt.core.ModelFormatException;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The byte-level BPE tokenizer of a GGUF with {@code tokenizer.ggml.model = "gpt2"}, as
 * llama.cpp's {@code llm_tokenizer_bpe_session} runs it: special tokens are cut out first, the
 * rest is split by the pre-tokenizer regexes {@code tokenizer.ggml.pre} names, each piece's UTF-8
 * bytes are written in GPT-2's byte alphabet, and its characters are merged by the rank of
 * {@code tokenizer.ggml.merges} (lowest first, ties leftmost).
 *
 * <p>llama.cpp merges by text, so a merge whose result is not a token still happens; such a
 * symbol (and any character the vocabulary lacks) is finally written as the tokens of its
 * single-byte ASCII characters, the others dropped — llama.cpp's behaviour, kept for parity.
 */
final class GgufBpeTokenizer extends GgufTokenizer {
    private final LlamaCppPreTokenizer pre;
    private final MergeTable merges;
    private final List<String> extraSymbols = new ArrayList<>(); // id = texts.length + index
    private final int[] charIds;                                 // byte-alphabet char -> symbol id
    private final MergeBoundaries boundaries;
    private final int[] firstCp, lastCp;                         // by symbol id (tokens, then extra symbols)

    GgufBpeTokenizer(GgufVocabulary v) {
        this(v, requirePre(v.pre()));
    }

    private GgufBpeTokenizer(GgufVocabulary v, LlamaCppPreTokenizer pre) {
        super("BPE (gpt2, pre=" + pre.name() + ")", v, 11, 11, -1, pre.addBos(), false);
        this.pre = pre;
        List<String> list = v.merges();
        if (list == null) throw new ModelFormatException(null, "tokenizer.ggml.merges is missing (required for tokenizer.ggml.model = gpt2)");
        Map<String, Integer> extra = new HashMap<>();
        merges = new MergeTable(list.size());
        List<String> results = new ArrayList<>(list.size());
        for (int rank = 0; rank < list.size(); rank++) {
            String m = list.get(rank);
            int sp = m.indexOf(' ', 1);
            String a = sp < 0 ? "" : m.substring(0, sp);
            String b = sp < 0 ? "" : m.substring(sp + 1);
            merges.put(symbolFor(a, extra), symbolFor(b, extra), rank, symbolFor(a + b, extra), true);
            results.add(a + b);
        }
        boundaries = new MergeBoundaries(results, MergeBoundaries.countPairs(results));
        int total = texts.length + extraSymbols.size();
        firstCp = new int[total];
        lastCp = new int[total];
        for (int i = 0; i < total; i++) {
            String t = i < texts.length ? texts[i] : extraSymbols.get(i - texts.length);
            firstCp[i] = MergeBoundaries.firstCodePoint(t);
            lastCp[i] = MergeBoundaries.lastCodePoint(t);
        }
        charIds = new int[0x200];
        for (int c = 0; c < charIds.length; c++) {
            String s = String.valueOf((char) c);
            Integer id = ids.get(s);
            charIds[c] = id != null ? id : extra.containsKey(s) ? extra.get(s) : -(c + 1);
        }
    }

    private static LlamaCppPreTokenizer requirePre(String name) {
        LlamaCppPreTokenizer p = LlamaCppPreTokenizer.forName(name);
        if (p == null) throw new ModelFormatException(null, "unknown pre-tokenizer type: tokenizer.ggml.pre = '" + name + "'");
        return p;
    }

    private int symbolFor(String s, Map<String, Integer> extra) {
        Integer id = ids.get(s);
        if (id != null) return id;
        Integer e = extra.get(s);
        if (e != null) return e;
        int newId = texts.length + extraSymbols.size();
        extraSymbols.add(s);
        extra.put(s, newId);
        return newId;
    }

    @Override
    protected boolean cleanSpaces() { return pre.cleanSpaces(); }

    @Override
    public int[] encode(String text, boolean addSpecial, boolean parseSpecial) {
        IntList out = new IntList(text.length() / 3 + 4);
        if (addSpecial && addBos) out.add(bosId);
        for (SpecialTokenSplitter.Fragment f : splitter.split(text, parseSpecial)) {
            if (f.isText()) {
                for (String piece : pre.split(text.substring(f.start(), f.end()))) tokenizeWord(ByteLevelAlphabet.encode(Utf8.wellFormed(piece)), out);
            } else {
                out.add(f.token());
            }
        }
        if (addSpecial && addEos) out.add(eosId);
        return out.toArray();
    }

    private void tokenizeWord(String word, IntList out) {
        if (pre.ignoreMerges()) {
            Integer whole = ids.get(word);
            if (whole != null) { out.add(whole); return; }
        }
        int[] sym = new int[word.length()];
        for (int i = 0; i < word.length(); i++) sym[i] = charIds[word.charAt(i)];
        int n = PairMerger.merge(sym, word.length(), merges,
                (l, r) -> boundaries.mayJoin(l >= 0 ? lastCp[l] : -l - 1, r >= 0 ? firstCp[r] : -r - 1));
        for (int i = 0; i < n; i++) {
            int s = sym[i];
            if (s >= 0 && s < texts.length) { out.add(s); continue; }
            String t = s >= 0 ? extraSymbols.get(s - texts.length) : new String(Character.toChars(-s - 1));
            for (byte b : t.getBytes(StandardCharsets.UTF_8)) {
                if (b < 0) continue; // a lone non-ASCII byte is never a (valid UTF-8) token
                Integer id = ids.get(String.valueOf((char) b));
                if (id != null) out.add(id);
            }
        }
    }

    @Override
    protected void appendPiece(int id, boolean renderSpecial, ByteArrayOutputStream out) {
        int a = attrs[id];
        if ((a & (ATTR_CONTROL | ATTR_UNKNOWN)) != 0) {
            if (renderSpecial) out.writeBytes(texts[id].getBytes(StandardCharsets.UTF_8));
        } else if ((a & ATTR_USER_DEFINED) != 0) {
            out.writeBytes(texts[id].getBytes(StandardCharsets.UTF_8));
        } else if ((a & ATTR_NORMAL) != 0) {
            out.writeBytes(ByteLevelAlphabet.decodeLenient(texts[id]));
        } else if ((a & ATTR_BYTE) != 0) {
            String t = texts[id];
            try {
                out.write(Integer.parseInt(t.substring(3, 5), 16));
            } catch (RuntimeException e) {
                out.writeBytes(ByteLevelAlphabet.decodeLenient(t));
            }
        }
    }
}
