package io.modelopt.core.tokenizer;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The SentencePiece-BPE tokenizer of a GGUF with {@code tokenizer.ggml.model = "llama"}, as
 * llama.cpp's {@code llm_tokenizer_spm_session} runs it: the text (with a leading space when
 * {@code add_space_prefix} and the previous fragment was a special token or the start) has its
 * spaces replaced by '▁', is split into characters, and the adjacent pair whose concatenation is
 * the vocabulary token with the highest score is merged until none is left (ties: leftmost).
 * Characters that never became a token are written as their UTF-8 bytes' {@code <0xNN>} tokens.
 *
 * <p>The merge runs on ids: a table built once from the vocabulary says, for every token and
 * every way to cut it into two symbols (tokens, or single characters the vocabulary lacks),
 * which pair forms it; the token's score becomes a dense rank so {@link PairMerger} can order by it.
 */
final class GgufSpmTokenizer extends GgufTokenizer {
    private static final char SPACE_MARK = '▁';

    private final MergeTable pairs;
    private final MergeBoundaries boundaries;
    private final int[] firstCp, lastCp;
    private final Map<Integer, Integer> singleCodePointIds;
    private final int[] byteIds = new int[256];

    GgufSpmTokenizer(GgufVocabulary v) {
        super("SPM (llama)", v, 1, 2, 0, true, true);
        int n = texts.length;
        singleCodePointIds = new HashMap<>();
        for (int i = 0; i < n; i++) {
            String t = texts[i];
            if (t.codePointCount(0, t.length()) == 1) singleCodePointIds.putIfAbsent(t.codePointAt(0), i);
        }
        for (int b = 0; b < 256; b++) {
            Integer id = ids.get(String.format("<0x%02X>", b));
            if (id == null && b < 0x80) id = ids.get(String.valueOf((char) b)); // llama.cpp's fallback: the byte itself
            byteIds[b] = id != null ? id : unkId;
        }
        firstCp = new int[n];
        lastCp = new int[n];
        for (int i = 0; i < n; i++) {
            firstCp[i] = MergeBoundaries.firstCodePoint(texts[i]);
            lastCp[i] = MergeBoundaries.lastCodePoint(texts[i]);
        }
        List<String> all = Arrays.asList(texts); // every token can be a merge result
        boundaries = new MergeBoundaries(all, MergeBoundaries.countPairs(all));
        int[] rank = scoreRanks(v.scores(), n);
        pairs = new MergeTable(countSplits());
        for (int id = 0; id < n; id++) {
            String t = texts[id];
            for (int cut = t.offsetByCodePoints(0, 1); cut < t.length(); cut = t.offsetByCodePoints(cut, 1)) {
                int left = symbolOf(t.substring(0, cut));
                int right = left == Integer.MIN_VALUE ? Integer.MIN_VALUE : symbolOf(t.substring(cut));
                if (right != Integer.MIN_VALUE) pairs.put(left, right, rank[id], id, true);
            }
        }
    }

    private int countSplits() {
        int c = 0;
        for (String t : texts) c += Math.max(0, t.codePointCount(0, t.length()) - 1);
        return c;
    }

    /** A symbol id for a piece of a token: its token id, -(cp+1) for a lone character it lacks, MIN_VALUE if neither. */
    private int symbolOf(String s) {
        Integer id = ids.get(s);
        if (id != null) return id;
        return s.codePointCount(0, s.length()) == 1 ? -(s.codePointAt(0) + 1) : Integer.MIN_VALUE;
    }

    /** Scores → dense ranks, highest score = rank 0; equal scores share a rank (then position decides, as in llama.cpp). */
    private static int[] scoreRanks(float[] scores, int n) {
        int[] rank = new int[n];
        if (scores == null) return rank;
        float[] distinct = new float[n];
        for (int i = 0; i < n; i++) distinct[i] = norm(scores[i]);
        Arrays.sort(distinct);
        int m = 0;
        for (int i = 0; i < n; i++) if (m == 0 || Float.compare(distinct[m - 1], distinct[i]) != 0) distinct[m++] = distinct[i];
        for (int i = 0; i < n; i++) {
            int pos = Arrays.binarySearch(distinct, 0, m, norm(scores[i]));
            rank[i] = m - 1 - pos;
        }
        return rank;
    }

    private static float norm(float s) {
        if (Float.isNaN(s)) return Float.NEGATIVE_INFINITY;
        return s == 0f ? 0f : s; // -0.0 and 0.0 compare equal in llama.cpp
    }

    @Override
    public int[] encode(String text, boolean addSpecial, boolean parseSpecial) {
        IntList out = new IntList(text.length() / 3 + 4);
        if (addSpecial && addBos) out.add(bosId);
        boolean prevSpecial = true;
        for (SpecialTokenSplitter.Fragment f : splitter.split(text, parseSpecial)) {
            if (f.isText()) {
                String s = text.substring(f.start(), f.end());
                if (addSpacePrefix && prevSpecial) s = " " + s;
                tokenize(s.replace(' ', SPACE_MARK), out);
                prevSpecial = false;
            } else {
                out.add(f.token());
                prevSpecial = true;
            }
        }
        if (addSpecial && addEos) out.add(eosId);
        return out.toArray();
    }

    private void tokenize(String s, IntList out) {
        int[] sym = new int[s.length()];
        int n = 0;
        for (int i = 0; i < s.length(); ) {
            int cp = s.codePointAt(i);
            Integer id = singleCodePointIds.get(cp);
            sym[n++] = id != null ? id : -(cp + 1);
            i += Character.charCount(cp);
        }
        n = PairMerger.merge(sym, n, pairs, (l, r) -> boundaries.mayJoin(l >= 0 ? lastCp[l] : -l - 1, r >= 0 ? firstCp[r] : -r - 1));
        byte[] buf = new byte[4];
        for (int i = 0; i < n; i++) {
            int id = sym[i];
            if (id >= 0) {
                out.add(id);
            } else {
                int len = Utf8.encode(-id - 1, buf);
                for (int j = 0; j < len; j++) {
                    int b = byteIds[buf[j] & 0xFF];
                    if (b >= 0) out.add(b); // no <0xNN>, no byte piece, no unknown token: llama.cpp would abort; we drop it
                }
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
            out.writeBytes(texts[id].replace(SPACE_MARK, ' ').getBytes(StandardCharsets.UTF_8));
        } else if ((a & ATTR_BYTE) != 0) {
            out.write(byteOfToken(texts[id]));
        }
        // unused/undefined tokens render as nothing, as in llama.cpp
    }

    private static int byteOfToken(String t) {
        // "<0xNN>": llama.cpp reads the two hex digits at offset 3
        if (t.length() >= 5) {
            try {
                return Integer.parseInt(t.substring(3, 5), 16);
            } catch (NumberFormatException e) {
                // fall through
            }
        }
        return '?';
    }
}
