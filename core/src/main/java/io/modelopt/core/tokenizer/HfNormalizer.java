package io.modelopt.core.tokenizer;

import java.text.Normalizer;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A tokenizer.json {@code normalizer}: rewrites each text piece (the text between added tokens)
 * before pre-tokenization, as HF tokenizers' normalizers do (only the text matters here, not the
 * offset bookkeeping).
 */
sealed interface HfNormalizer {
    String normalize(String s);

    record Sequence(List<HfNormalizer> steps) implements HfNormalizer {
        public String normalize(String s) {
            for (HfNormalizer n : steps) s = n.normalize(s);
            return s;
        }
    }

    /** Prepends a string to non-empty text (SentencePiece's dummy prefix as LlamaConverter writes it). */
    record Prepend(String prefix) implements HfNormalizer {
        public String normalize(String s) { return s.isEmpty() ? s : prefix + s; }
    }

    /** Replaces every non-overlapping occurrence of a literal ({@code regex} null) or regex, left to right. */
    record Replace(String literal, Pattern regex, String content) implements HfNormalizer {
        public String normalize(String s) {
            if (regex == null) return literal.isEmpty() ? s : s.replace(literal, content);
            return regex.matcher(s).replaceAll(Matcher.quoteReplacement(content));
        }
    }

    record UnicodeForm(Normalizer.Form form) implements HfNormalizer {
        public String normalize(String s) { return Normalizer.normalize(s, form); }
    }

    /** Per-character lowercasing (Rust's {@code char::to_lowercase}: no final-sigma context, no locale). */
    record Lowercase() implements HfNormalizer {
        public String normalize(String s) {
            StringBuilder sb = new StringBuilder(s.length());
            for (int i = 0; i < s.length(); ) {
                int cp = s.codePointAt(i);
                sb.append(new String(Character.toChars(cp)).toLowerCase(Locale.ROOT));
                i += Character.charCount(cp);
            }
            return sb.toString();
        }
    }

    /** Removes leading and/or trailing Unicode whitespace. */
    record Strip(boolean left, boolean right) implements HfNormalizer {
        public String normalize(String s) {
            int a = 0, b = s.length();
            if (left) while (a < b && UnicodeWhitespace.is(s.codePointAt(a))) a += Character.charCount(s.codePointAt(a));
            if (right) while (b > a && UnicodeWhitespace.is(s.codePointBefore(b))) b -= Character.charCount(s.codePointBefore(b));
            return s.substring(a, b);
        }
    }
}
