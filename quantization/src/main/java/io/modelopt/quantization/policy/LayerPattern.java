package io.modelopt.quantization.policy;

import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

/**
 * A rule's tensor-name pattern. A glob ({@code *} any run of characters, dots included, so
 * {@code blk.*.attn_*} takes every attention weight; {@code ?} one character) must match the
 * whole canonical name or the name without its {@code .weight} suffix ({@code token_embd} names
 * {@code token_embd.weight}). {@code re:REGEX} is found anywhere in the name, as llama.cpp's
 * {@code --tensor-type} does with {@code std::regex_search}; llm-compressor writes the same prefix.
 */
record LayerPattern(String text, Pattern regex, boolean anywhere) {

    static LayerPattern of(String text) {
        try {
            if (text.startsWith("re:")) return new LayerPattern(text, Pattern.compile(text.substring(3)), true);
        } catch (PatternSyntaxException e) {
            throw new IllegalArgumentException("layer rule pattern '" + text + "' is not a valid regular expression: " + e.getDescription(), e);
        }
        StringBuilder re = new StringBuilder();
        for (char c : text.toCharArray()) {
            if (c == '*') re.append(".*");
            else if (c == '?') re.append('.');
            else re.append(Pattern.quote(String.valueOf(c)));
        }
        return new LayerPattern(text, Pattern.compile(re.toString()), false);
    }

    boolean matches(String name) {
        if (anywhere) return regex.matcher(name).find();
        if (regex.matcher(name).matches()) return true;
        return name.endsWith(".weight") && regex.matcher(name.substring(0, name.length() - ".weight".length())).matches();
    }
}
