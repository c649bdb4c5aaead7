package io.modelopt.core.tokenizer;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * What a split does with the delimiters it found: HF tokenizers' {@code SplitDelimiterBehavior}.
 * For "the-final--countdown" split on '-': REMOVED [the, final, countdown], ISOLATED
 * [the, -, final, -, -, countdown], MERGED_WITH_PREVIOUS [the-, final-, -, countdown],
 * MERGED_WITH_NEXT [the, -final, -, -countdown], CONTIGUOUS [the, -, final, --, countdown].
 */
enum SplitBehavior {
    REMOVED, ISOLATED, MERGED_WITH_PREVIOUS, MERGED_WITH_NEXT, CONTIGUOUS;

    /** Parses the JSON spelling ("Isolated", "MergedWithNext", ...), or null when unknown. */
    static SplitBehavior parse(String s) {
        if (s == null) return null;
        return switch (s.toLowerCase(Locale.ROOT)) {
            case "removed" -> REMOVED;
            case "isolated" -> ISOLATED;
            case "mergedwithprevious" -> MERGED_WITH_PREVIOUS;
            case "mergedwithnext" -> MERGED_WITH_NEXT;
            case "contiguous" -> CONTIGUOUS;
            default -> null;
        };
    }

    /**
     * Applies this behavior to {@code spans}: consecutive [start, end) ranges covering the text
     * in order, each flagged as a delimiter match or not (as HF's {@code find_matches} returns
     * them). Returns the kept [start, end) ranges, empty ones included (callers drop those).
     */
    List<int[]> apply(List<int[]> spans, List<Boolean> isMatch) {
        List<int[]> out = new ArrayList<>(spans.size());
        switch (this) {
            case ISOLATED -> {
                for (int[] s : spans) out.add(s.clone());
            }
            case REMOVED -> {
                for (int i = 0; i < spans.size(); i++) if (!isMatch.get(i)) out.add(spans.get(i).clone());
            }
            case CONTIGUOUS -> {
                boolean previous = false;
                for (int i = 0; i < spans.size(); i++) {
                    boolean m = isMatch.get(i);
                    if (m == previous && !out.isEmpty()) out.getLast()[1] = spans.get(i)[1];
                    else out.add(spans.get(i).clone());
                    previous = m;
                }
            }
            case MERGED_WITH_PREVIOUS -> {
                boolean previous = false;
                for (int i = 0; i < spans.size(); i++) {
                    boolean m = isMatch.get(i);
                    if (m && !previous && !out.isEmpty()) out.getLast()[1] = spans.get(i)[1];
                    else out.add(spans.get(i).clone());
                    previous = m;
                }
            }
            case MERGED_WITH_NEXT -> {
                boolean previous = false;
                for (int i = spans.size() - 1; i >= 0; i--) {
                    boolean m = isMatch.get(i);
                    if (m && !previous && !out.isEmpty()) out.getLast()[0] = spans.get(i)[0];
                    else out.add(spans.get(i).clone());
                    previous = m;
                }
                java.util.Collections.reverse(out);
            }
        }
        return out;
    }
}
