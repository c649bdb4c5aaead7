package io.modelopt.core.tokenizer;

import java.util.List;
import java.util.Map;

/**
 * The {@code model} of a tokenizer.json with {@code "type": "BPE"}, as HF tokenizers' BPE
 * encodes one pre-tokenized word: each character becomes its token, or with
 * {@code byte_fallback} its UTF-8 bytes' {@code <0xNN>} tokens, or else the unknown token (runs
 * of unknowns fused into one with {@code fuse_unk}); then merges apply by rank, lowest first,
 * ties leftmost ({@code Word::merge_all}). With {@code ignore_merges} a word that is itself a
 * token is emitted whole (Llama 3).
 */
final class HfBpeModel {
    private final Map<String, Integer> vocab;
    private final String[] idToToken;
    private final MergeTable merges;
    private final MergeBoundaries boundaries;
    private final int[] firstCp, lastCp;
    private final boolean byteFallback, fuseUnk, ignoreMerges;
    private final int unkId;
    private final int[] byteIds = new int[256];     // -1 where <0xNN> is missing
    private final int[] bmpIds = new int[0x10000];  // single-character tokens, -1 when none

    /** @param mergeResults the texts the merges produce (to know where merging can never cross) */
    HfBpeModel(Map<String, Integer> vocab, String[] idToToken, MergeTable merges, List<String> mergeResults,
               boolean byteFallback, boolean fuseUnk, boolean ignoreMerges, int unkId) {
        this.vocab = vocab;
        this.idToToken = idToToken;
        this.merges = merges;
        this.byteFallback = byteFallback;
        this.fuseUnk = fuseUnk;
        this.ignoreMerges = ignoreMerges;
        this.unkId = unkId;
        this.boundaries = new MergeBoundaries(mergeResults, MergeBoundaries.countPairs(mergeResults));
        firstCp = new int[idToToken.length];
        lastCp = new int[idToToken.length];
        for (int i = 0; i < idToToken.length; i++) {
            firstCp[i] = MergeBoundaries.firstCodePoint(idToToken[i]);
            lastCp[i] = MergeBoundaries.lastCodePoint(idToToken[i]);
        }
        java.util.Arrays.fill(bmpIds, -1);
        vocab.forEach((t, id) -> { if (t.length() == 1) bmpIds[t.charAt(0)] = id; });
        for (int b = 0; b < 256; b++) byteIds[b] = vocab.getOrDefault(String.format("<0x%02X>", b), -1);
    }

    int size() { return idToToken.length; }

    String token(int id) { return id >= 0 && id < idToToken.length ? idToToken[id] : null; }

    Integer id(String token) { return vocab.get(token); }

    /** Appends the ids of one word. */
    void tokenize(String word, IntList out) {
        if (word.isEmpty()) return;
        if (ignoreMerges) {
            Integer whole = vocab.get(word);
            if (whole != null) { out.add(whole); return; }
        }
        int[] sym = new int[word.length() * 4];
        int n = 0;
        int pendingUnk = 0;         // number of unknown characters waiting (fused when fuseUnk)
        byte[] buf = new byte[4];
        for (int i = 0; i < word.length(); ) {
            int cp = word.codePointAt(i);
            int len = Character.charCount(cp);
            int id = cp < 0x10000 ? bmpIds[cp] : vocab.getOrDefault(word.substring(i, i + len), -1);
            i += len;
            if (id >= 0) {
                if (pendingUnk > 0) { sym[n++] = unkId; pendingUnk = 0; }
                sym[n++] = id;
                continue;
            }
            if (byteFallback) {
                int blen = Utf8.encode(cp, buf);
                boolean all = true;
                for (int j = 0; j < blen; j++) all &= byteIds[buf[j] & 0xFF] >= 0;
                if (all) {
                    // as HF's merge_word: a pending unknown is not flushed here, it follows these bytes
                    for (int j = 0; j < blen; j++) sym[n++] = byteIds[buf[j] & 0xFF];
                    continue;
                }
            }
            if (unkId >= 0) {
                if (pendingUnk > 0 && !fuseUnk) { sym[n++] = unkId; pendingUnk = 0; }
                pendingUnk++;
            }
        }
        if (pendingUnk > 0) sym[n++] = unkId;
        n = PairMerger.merge(sym, n, merges, (l, r) -> boundaries.mayJoin(lastCp[l], firstCp[r]));
        out.addAll(sym, n);
    }
}
