package io.modelopt.core.tokenizer;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Finds added tokens in text as HF tokenizers' {@code AddedVocabulary::split_with_indices} does:
 * leftmost-longest, non-overlapping matches; a special token is skipped (left as text) when
 * specials are not parsed; {@code single_word} tokens only count between non-word characters;
 * {@code lstrip}/{@code rstrip} extend the match over adjacent whitespace.
 *
 * <p>One instance holds the tokens of one pass: the non-normalized ones (matched on the raw
 * input) or the normalized ones (matched, by their normalized content, on normalized text).
 */
final class AddedVocabulary {
    /** A cut of the text: an added token ({@code id >= 0}) or text, with its start in the text that was cut. */
    record Segment(int id, String text, int start) {}

    private final Map<Character, AddedToken[]> byFirstChar = new HashMap<>();
    private final Map<Integer, String> matchText = new HashMap<>();

    /** @param tokens the tokens of this pass; {@code texts} gives the string to match for each (its normalized content for the normalized pass) */
    AddedVocabulary(List<AddedToken> tokens, Map<Integer, String> texts) {
        Map<Character, List<AddedToken>> tmp = new HashMap<>();
        for (AddedToken t : tokens) {
            String m = texts.get(t.id());
            if (m == null || m.isEmpty()) continue;
            matchText.put(t.id(), m);
            tmp.computeIfAbsent(m.charAt(0), k -> new ArrayList<>()).add(t);
        }
        tmp.forEach((c, l) -> {
            l.sort(Comparator.comparingInt((AddedToken t) -> -matchText.get(t.id()).length()));
            byFirstChar.put(c, l.toArray(new AddedToken[0]));
        });
    }

    boolean isEmpty() { return byFirstChar.isEmpty(); }

    List<Segment> split(String s, boolean parseSpecial) {
        List<Segment> out = new ArrayList<>();
        if (byFirstChar.isEmpty()) {
            if (!s.isEmpty()) out.add(new Segment(-1, s, 0));
            return out;
        }
        int startOffset = 0;
        int i = 0;
        while (i < s.length()) {
            AddedToken[] cands = byFirstChar.get(s.charAt(i));
            AddedToken hit = null;
            if (cands != null) {
                for (AddedToken t : cands) if (s.startsWith(matchText.get(t.id()), i)) { hit = t; break; }
            }
            if (hit == null) { i++; continue; }
            int start = i;
            int stop = i + matchText.get(hit.id()).length();
            i = stop; // the matcher moves past this match whether or not it is used
            if (start < startOffset) continue;
            if (!parseSpecial && hit.special()) continue;
            if (hit.singleWord()) {
                boolean startOk = start == 0 || !isWordChar(s.codePointBefore(start));
                boolean stopOk = stop == s.length() || !isWordChar(s.codePointAt(stop));
                if (!startOk || !stopOk) continue;
            }
            if (hit.lstrip()) {
                int ns = start;
                while (ns > 0 && UnicodeWhitespace.is(s.codePointBefore(ns))) ns -= Character.charCount(s.codePointBefore(ns));
                start = Math.max(ns, startOffset);
            }
            if (hit.rstrip()) {
                while (stop < s.length() && UnicodeWhitespace.is(s.codePointAt(stop))) stop += Character.charCount(s.codePointAt(stop));
            }
            if (startOffset < start) out.add(new Segment(-1, s.substring(startOffset, start), startOffset));
            out.add(new Segment(hit.id(), s.substring(start, stop), start));
            startOffset = stop;
        }
        if (startOffset < s.length()) out.add(new Segment(-1, s.substring(startOffset), startOffset));
        return out;
    }

    /** HF's word characters for {@code single_word}: alphanumeric or '_'. */
    private static boolean isWordChar(int cp) {
        return Character.isLetterOrDigit(cp) || cp == '_';
    }
}
