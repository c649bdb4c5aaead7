package io.modelopt.core.tokenizer;

import java.util.regex.Pattern;

/**
 * Compiles the regular expressions tokenizer files carry (written for Oniguruma in HF tokenizers,
 * for Python's {@code regex} in tiktoken-style tokenizers, and llama.cpp's versions of them) as
 * {@link java.util.regex.Pattern}s with the same meaning.
 *
 * <p>Most constructs carry over unchanged: {@code \p{L}}, {@code \p{N}}, {@code (?i:...)},
 * possessive quantifiers, atomic groups and look-arounds all exist in Java. What differs:
 * <ul>
 *   <li>{@code \s}, {@code \d}, {@code \w} are Unicode-aware in Oniguruma/Python but ASCII in Java
 *       unless {@link Pattern#UNICODE_CHARACTER_CLASS} is set (so "\u00A0" or "\u3000" would not
 *       count as whitespace): always set here.</li>
 *   <li>Script names: Oniguruma writes {@code \p{Han}}, Java needs {@code \p{IsHan}}.</li>
 *   <li>{@code \h} is a hexadecimal digit in Oniguruma but horizontal whitespace in Java.</li>
 * </ul>
 */
final class RegexDialect {
    private RegexDialect() {}

    /** Compiles an Oniguruma/Python-style pattern; throws PatternSyntaxException when Java cannot express it. */
    static Pattern compile(String pattern) {
        return Pattern.compile(translate(pattern), Pattern.UNICODE_CHARACTER_CLASS);
    }

    static String translate(String p) {
        StringBuilder sb = new StringBuilder(p.length() + 16);
        boolean inClass = false;
        for (int i = 0; i < p.length(); i++) {
            char c = p.charAt(i);
            if (c == '\\' && i + 1 < p.length()) {
                char e = p.charAt(i + 1);
                if ((e == 'p' || e == 'P') && i + 2 < p.length() && p.charAt(i + 2) == '{') {
                    int close = p.indexOf('}', i + 3);
                    if (close > 0) {
                        String name = p.substring(i + 3, close);
                        sb.append('\\').append(e).append('{').append(javaPropertyName(name)).append('}');
                        i = close;
                        continue;
                    }
                }
                if (e == 'h') {
                    sb.append(inClass ? "0-9a-fA-F" : "[0-9a-fA-F]");
                    i++;
                    continue;
                }
                if (e == 'H' && !inClass) {
                    sb.append("[^0-9a-fA-F]");
                    i++;
                    continue;
                }
                sb.append(c).append(e);
                i++;
                continue;
            }
            if (c == '[') inClass = true;
            else if (c == ']') inClass = false;
            sb.append(c);
        }
        return sb.toString();
    }

    private static String javaPropertyName(String name) {
        if (name.startsWith("^")) return "^" + javaPropertyName(name.substring(1)); // not Java; left to fail loudly
        if (name.length() <= 2) return name; // general categories: L, Lu, N, Nd, P, S, M, Z, C ...
        if (name.startsWith("Is") || name.startsWith("In") || name.contains("=")) return name;
        return "Is" + name; // scripts (Han, Latin, Hiragana) and binary properties (Alphabetic)
    }
}
