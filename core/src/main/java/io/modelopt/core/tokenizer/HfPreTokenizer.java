package io.modelopt.core.tokenizer;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/**
 * A tokenizer.json {@code pre_tokenizer}: cuts normalized text into the words BPE merges within,
 * with HF tokenizers' semantics. Each {@link Piece} remembers whether it begins the original
 * input, which Metaspace's {@code prepend_scheme: first} needs.
 */
sealed interface HfPreTokenizer {
    record Piece(String text, boolean atStart) {}

    /** GPT-2's pattern as HF's ByteLevel pre-tokenizer uses it (note the final {@code |\s+}). */
    Pattern GPT2_PATTERN = RegexDialect.compile("'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+");

    List<Piece> apply(List<Piece> pieces);

    /** Splits each piece by a pattern (regex, or literal when {@code literal} is set). */
    private static List<Piece> split(List<Piece> pieces, Pattern regex, String literal, SplitBehavior behavior, boolean invert) {
        List<Piece> out = new ArrayList<>(pieces.size() * 2);
        for (Piece p : pieces) {
            boolean first = true;
            int consumed = 0;
            for (String s : RegexSplitter.split(p.text(), regex, literal, behavior, invert)) {
                // a sub-piece begins the input only if its parent did and nothing before it was kept or dropped
                int at = p.text().indexOf(s, consumed);
                out.add(new Piece(s, p.atStart() && first && at == 0));
                consumed = at + s.length();
                first = false;
            }
        }
        return out;
    }

    record Sequence(List<HfPreTokenizer> steps) implements HfPreTokenizer {
        public List<Piece> apply(List<Piece> pieces) {
            for (HfPreTokenizer p : steps) pieces = p.apply(pieces);
            return pieces;
        }
    }

    /** {@code Split}: a regex or literal pattern with a delimiter behavior, optionally inverted. */
    record Split(Pattern regex, String literal, SplitBehavior behavior, boolean invert) implements HfPreTokenizer {
        public List<Piece> apply(List<Piece> pieces) { return split(pieces, regex, literal, behavior, invert); }
    }

    /**
     * {@code ByteLevel}: optional leading space, optional GPT-2 regex split, then every piece's
     * UTF-8 bytes written in GPT-2's byte alphabet.
     */
    record ByteLevel(boolean addPrefixSpace, boolean useRegex) implements HfPreTokenizer {
        public List<Piece> apply(List<Piece> pieces) {
            List<Piece> in = new ArrayList<>(pieces.size());
            for (Piece p : pieces) in.add(addPrefixSpace && !p.text().startsWith(" ") ? new Piece(" " + p.text(), p.atStart()) : p);
            List<Piece> cut = useRegex ? split(in, GPT2_PATTERN, null, SplitBehavior.ISOLATED, false) : in;
            List<Piece> out = new ArrayList<>(cut.size());
            for (Piece p : cut) out.add(new Piece(ByteLevelAlphabet.encode(Utf8.wellFormed(p.text())), p.atStart()));
            return out;
        }
    }

    enum PrependScheme { ALWAYS, FIRST, NEVER }

    /** {@code Metaspace}: spaces become the replacement character, which is prepended per the scheme and split on (merged with the next word). */
    record Metaspace(char replacement, PrependScheme scheme, boolean split) implements HfPreTokenizer {
        public List<Piece> apply(List<Piece> pieces) {
            List<Piece> replaced = new ArrayList<>(pieces.size());
            for (Piece p : pieces) {
                String t = p.text().replace(' ', replacement);
                boolean prepend = switch (scheme) {
                    case ALWAYS -> !t.isEmpty() && t.charAt(0) != replacement;
                    case FIRST -> !t.isEmpty() && t.charAt(0) != replacement && p.atStart();
                    case NEVER -> false;
                };
                replaced.add(new Piece(prepend ? replacement + t : t, p.atStart()));
            }
            return split ? HfPreTokenizer.split(replaced, null, String.valueOf(replacement), SplitBehavior.MERGED_WITH_NEXT, false) : replaced;
        }
    }

    /** {@code Whitespace}: keeps the runs of {@code \w+} and of {@code [^\w\s]+}. */
    record Whitespace() implements HfPreTokenizer {
        private static final Pattern WORDS = RegexDialect.compile("\\w+|[^\\w\\s]+");
        public List<Piece> apply(List<Piece> pieces) { return split(pieces, WORDS, null, SplitBehavior.REMOVED, true); }
    }

    /** {@code WhitespaceSplit}: splits on whitespace, dropping it. */
    record WhitespaceSplit() implements HfPreTokenizer {
        private static final Pattern SPACE = RegexDialect.compile("\\s");
        public List<Piece> apply(List<Piece> pieces) { return split(pieces, SPACE, null, SplitBehavior.REMOVED, false); }
    }

    /** {@code Digits}: each numeric character alone, or runs of them. */
    record Digits(boolean individual) implements HfPreTokenizer {
        private static final Pattern NUMERIC = Pattern.compile("\\p{N}");
        public List<Piece> apply(List<Piece> pieces) {
            return split(pieces, NUMERIC, null, individual ? SplitBehavior.ISOLATED : SplitBehavior.CONTIGUOUS, false);
        }
    }

    /** {@code Punctuation}: ASCII or Unicode punctuation characters, one at a time, with a behavior. */
    record Punctuation(SplitBehavior behavior) implements HfPreTokenizer {
        private static final Pattern PUNCT = Pattern.compile("[\\p{P}!-/:-@\\[-`{-~]");
        public List<Piece> apply(List<Piece> pieces) { return split(pieces, PUNCT, null, behavior, false); }
    }
}
