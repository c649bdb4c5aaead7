package io.modelopt.core.tokenizer;

/**
 * Where merging can never cross: a merged symbol's text is the concatenation of the texts it
 * joined, so two adjacent symbols can only ever be joined if the last character of the left one
 * followed by the first character of the right one occurs somewhere inside a merge result.
 * This index holds those adjacent character pairs; {@link PairMerger} cuts the input at every
 * other boundary (for SentencePiece vocabularies: before nearly every '▁').
 */
final class MergeBoundaries {
    private final MergeTable pairs; // used as a set of (code point, code point)

    /** @param results every text a merge can produce (over-inclusion only costs speed) */
    MergeBoundaries(Iterable<String> results, int expected) {
        pairs = new MergeTable(Math.max(16, expected));
        for (String s : results) {
            if (s == null) continue;
            int prev = -1;
            for (int i = 0; i < s.length(); ) {
                int cp = s.codePointAt(i);
                if (prev >= 0) pairs.put(prev, cp, 0, 0, true);
                prev = cp;
                i += Character.charCount(cp);
            }
        }
    }

    /** Counts the adjacent code point pairs of the texts, to size the index. */
    static int countPairs(Iterable<String> texts) {
        int c = 0;
        for (String s : texts) if (s != null) c += Math.max(0, s.codePointCount(0, s.length()) - 1);
        return c;
    }

    /** Whether a symbol ending with {@code lastOfLeft} may ever merge with one starting with {@code firstOfRight}. */
    boolean mayJoin(int lastOfLeft, int firstOfRight) {
        if (lastOfLeft < 0 || firstOfRight < 0) return true; // text unknown: never cut
        return pairs.find(lastOfLeft, firstOfRight) >= 0;
    }

    static int firstCodePoint(String s) { return s == null || s.isEmpty() ? -1 : s.codePointAt(0); }

    static int lastCodePoint(String s) { return s == null || s.isEmpty() ? -1 : s.codePointBefore(s.length()); }
}
