package io.modelopt.core.generate;

import java.util.List;

/**
 * Cuts streamed text at the first stop string. Text that could still turn out to be the start of
 * a stop string is held back, so nothing of a stop string is ever released, and a stop string
 * split across tokens is still found.
 *
 * <p>Why holding back the longest suffix that is a prefix of some stop string suffices: a stop
 * string occurrence that began in text already released would have made that text's suffix a
 * prefix of the stop string at the time it was released, and it would have been held back.
 */
final class StopStringFilter {
    private final List<String> stops;
    private final StringBuilder held = new StringBuilder();
    private boolean stopped;

    StopStringFilter(List<String> stops) {
        this.stops = List.copyOf(stops);
    }

    /** Adds decoded text; returns the part that is now final (possibly empty). After a stop, returns "". */
    String push(String text) {
        if (stopped) return "";
        if (stops.isEmpty()) return text;
        held.append(text);
        int cut = -1;
        for (String s : stops) {
            int at = held.indexOf(s);
            if (at >= 0 && (cut < 0 || at < cut)) cut = at;
        }
        if (cut >= 0) {
            stopped = true;
            String out = held.substring(0, cut);
            held.setLength(0);
            return out;
        }
        int keep = longestSuffixThatStartsAStop();
        String out = held.substring(0, held.length() - keep);
        held.delete(0, held.length() - keep);
        return out;
    }

    /** Whether a stop string was found. */
    boolean stopped() { return stopped; }

    /** Releases text held back (generation ended without completing a stop string). */
    String flush() {
        String out = held.toString();
        held.setLength(0);
        return out;
    }

    private int longestSuffixThatStartsAStop() {
        int best = 0;
        int n = held.length();
        for (String s : stops) {
            for (int len = Math.min(n, s.length() - 1); len > best; len--) {
                if (matches(n - len, s, len)) {
                    best = len;
                    break;
                }
            }
        }
        return best;
    }

    private boolean matches(int from, String s, int len) {
        for (int i = 0; i < len; i++) if (held.charAt(from + i) != s.charAt(i)) return false;
        return true;
    }
}
