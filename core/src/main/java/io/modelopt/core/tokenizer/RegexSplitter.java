package io.modelopt.core.tokenizer;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Cuts text into pieces where a pattern matches, keeping both the matches and the text between
 * them (HF's {@code Pattern::find_matches} followed by a {@link SplitBehavior}; llama.cpp's
 * {@code unicode_regex_split} is the ISOLATED case). The pattern only sees the piece it is
 * applied to: look-arounds do not reach past its ends, as in both reference implementations.
 */
final class RegexSplitter {
    private RegexSplitter() {}

    /**
     * Splits {@code text} by {@code pattern} (or, with {@code literal} non-null, by every
     * occurrence of that string) and returns the non-empty pieces.
     */
    static List<String> split(String text, Pattern pattern, String literal, SplitBehavior behavior, boolean invert) {
        List<int[]> spans = new ArrayList<>();
        List<Boolean> flags = new ArrayList<>();
        if (text.isEmpty()) return List.of();
        int prev = 0;
        if (literal != null) {
            if (!literal.isEmpty()) {
                for (int at = text.indexOf(literal); at >= 0; at = text.indexOf(literal, at + literal.length())) {
                    if (at > prev) { spans.add(new int[] {prev, at}); flags.add(false); }
                    spans.add(new int[] {at, at + literal.length()});
                    flags.add(true);
                    prev = at + literal.length();
                }
            }
        } else {
            Matcher m = pattern.matcher(text);
            while (m.find()) {
                if (m.start() > prev) { spans.add(new int[] {prev, m.start()}); flags.add(false); }
                spans.add(new int[] {m.start(), m.end()});
                flags.add(true);
                prev = m.end();
            }
        }
        if (prev < text.length()) { spans.add(new int[] {prev, text.length()}); flags.add(false); }
        if (invert) flags.replaceAll(f -> !f);
        List<String> out = new ArrayList<>();
        for (int[] r : behavior.apply(spans, flags)) if (r[1] > r[0]) out.add(text.substring(r[0], r[1]));
        return out;
    }

    /** llama.cpp's sequential splitting: each pattern further cuts every piece the previous ones left. */
    static List<String> splitIsolatedAll(String text, List<Pattern> patterns) {
        List<String> pieces = new ArrayList<>();
        if (!text.isEmpty()) pieces.add(text);
        for (Pattern p : patterns) {
            List<String> next = new ArrayList<>(pieces.size() * 2);
            for (String piece : pieces) next.addAll(split(piece, p, null, SplitBehavior.ISOLATED, false));
            pieces = next;
        }
        return pieces;
    }
}
