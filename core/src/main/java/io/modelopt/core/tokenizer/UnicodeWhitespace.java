package io.modelopt.core.tokenizer;

/** Unicode's White_Space property (Rust's {@code char::is_whitespace}), which Java's {@code Character.isWhitespace} does not match (it excludes no-break spaces). */
final class UnicodeWhitespace {
    private UnicodeWhitespace() {}

    static boolean is(int c) {
        return (c >= 0x09 && c <= 0x0D) || c == 0x20 || c == 0x85 || c == 0xA0 || c == 0x1680
                || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
    }
}
