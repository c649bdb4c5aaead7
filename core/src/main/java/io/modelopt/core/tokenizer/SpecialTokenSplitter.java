package io.modelopt.core.tokenizer;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Finds special-token strings in raw text before tokenization, as llama.cpp's
 * {@code tokenizer_st_partition} does: special tokens are tried longest first, each one cutting
 * every text fragment left so far at its occurrences (left to right, not overlapping); the pieces
 * between become text fragments, the occurrences token fragments.
 *
 * <p>Control and unknown tokens are matched only when parsing specials; user-defined tokens
 * always. Tokens with the lstrip/rstrip attribute swallow the whitespace beside them.
 * Only tokens that occur in the text are tried at all (one scan by first character), so
 * vocabularies with thousands of special tokens cost little; the result is the same.
 */
final class SpecialTokenSplitter {
    /** A cut of the text: a token ({@code token >= 0}) or the text range [start, end). */
    record Fragment(int token, int start, int end) {
        boolean isText() { return token < 0; }
    }

    private record Special(int id, String text, boolean onlyWhenParsing, boolean lstrip, boolean rstrip) {}

    private final Special[] specials;              // longest first, then by id
    private final Map<Character, int[]> byFirstChar;

    /**
     * @param ids             the special-token cache (control, user-defined and unknown tokens)
     * @param texts           all token texts by id
     * @param onlyWhenParsing per id: matched only with parseSpecial (control and unknown tokens)
     * @param lstrip          per id, or null
     * @param rstrip          per id, or null
     */
    SpecialTokenSplitter(int[] ids, String[] texts, boolean[] onlyWhenParsing, boolean[] lstrip, boolean[] rstrip) {
        List<Special> list = new ArrayList<>();
        for (int id : ids) {
            String t = texts[id];
            if (t == null || t.isEmpty()) continue;
            list.add(new Special(id, t, onlyWhenParsing[id], lstrip != null && lstrip[id], rstrip != null && rstrip[id]));
        }
        list.sort(Comparator.comparingInt((Special s) -> -s.text.length()).thenComparingInt(Special::id));
        specials = list.toArray(new Special[0]);
        Map<Character, List<Integer>> tmp = new HashMap<>();
        for (int i = 0; i < specials.length; i++) tmp.computeIfAbsent(specials[i].text.charAt(0), k -> new ArrayList<>()).add(i);
        byFirstChar = new HashMap<>();
        tmp.forEach((c, l) -> byFirstChar.put(c, l.stream().mapToInt(Integer::intValue).toArray()));
    }

    /** Cuts {@code text}; an empty text gives no fragments (so SPM emits only BOS for ""). */
    List<Fragment> split(String text, boolean parseSpecial) {
        List<Fragment> frags = new ArrayList<>();
        if (text.isEmpty()) return frags;
        frags.add(new Fragment(-1, 0, text.length()));
        if (specials.length == 0) return frags;

        boolean[] present = new boolean[specials.length];
        boolean any = false;
        for (int i = 0; i < text.length(); i++) {
            int[] bucket = byFirstChar.get(text.charAt(i));
            if (bucket == null) continue;
            for (int s : bucket) {
                if (present[s]) continue;
                Special sp = specials[s];
                if (!parseSpecial && sp.onlyWhenParsing) continue;
                if (text.startsWith(sp.text, i)) { present[s] = true; any = true; }
            }
        }
        if (!any) return frags;

        for (int s = 0; s < specials.length; s++) {
            if (!present[s]) continue;
            Special sp = specials[s];
            List<Fragment> next = new ArrayList<>(frags.size() + 4);
            for (Fragment f : frags) {
                if (!f.isText()) { next.add(f); continue; }
                int offset = f.start;
                int end = f.end;
                while (true) {
                    int match = text.indexOf(sp.text, offset);
                    if (match < 0 || match + sp.text.length() > end) {
                        if (end > offset) next.add(new Fragment(-1, offset, end));
                        break;
                    }
                    int leftEnd = match;
                    if (sp.lstrip) while (leftEnd > offset && isCSpace(text.charAt(leftEnd - 1))) leftEnd--;
                    if (leftEnd > offset) next.add(new Fragment(-1, offset, leftEnd));
                    next.add(new Fragment(sp.id, match, match + sp.text.length()));
                    int rightStart = match + sp.text.length();
                    if (sp.rstrip) while (rightStart < end && isCSpace(text.charAt(rightStart))) rightStart++;
                    offset = rightStart;
                    if (offset >= end) break;
                }
            }
            frags = next;
        }
        return frags;
    }

    /** C's {@code isspace} in the "C" locale, which llama.cpp uses for lstrip/rstrip. */
    private static boolean isCSpace(char c) {
        return c == ' ' || c == '\t' || c == '\n' || c == 0x0B || c == '\f' || c == '\r';
    }

    int size() { return specials.length; }

    @Override
    public String toString() { return "SpecialTokenSplitter" + Arrays.toString(Arrays.stream(specials).map(Special::text).toArray()); }
}
