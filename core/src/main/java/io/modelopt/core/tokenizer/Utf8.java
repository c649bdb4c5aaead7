package io.modelopt.core.tokenizer;

/** UTF-8 helpers with one rule for unpaired surrogates (which a Java String may hold but UTF-8 cannot): they become U+FFFD. */
final class Utf8 {
    private Utf8() {}

    /** Writes the UTF-8 bytes of one code point into {@code buf} and returns how many (1..4). */
    static int encode(int cp, byte[] buf) {
        if (cp >= 0xD800 && cp <= 0xDFFF) cp = 0xFFFD;
        if (cp < 0x80) { buf[0] = (byte) cp; return 1; }
        if (cp < 0x800) { buf[0] = (byte) (0xC0 | cp >> 6); buf[1] = (byte) (0x80 | cp & 0x3F); return 2; }
        if (cp < 0x10000) {
            buf[0] = (byte) (0xE0 | cp >> 12); buf[1] = (byte) (0x80 | cp >> 6 & 0x3F); buf[2] = (byte) (0x80 | cp & 0x3F);
            return 3;
        }
        buf[0] = (byte) (0xF0 | cp >> 18); buf[1] = (byte) (0x80 | cp >> 12 & 0x3F);
        buf[2] = (byte) (0x80 | cp >> 6 & 0x3F); buf[3] = (byte) (0x80 | cp & 0x3F);
        return 4;
    }

    /** Replaces unpaired surrogates by U+FFFD so that the string has a UTF-8 form. */
    static String wellFormed(String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (Character.isSurrogate(c)) {
                StringBuilder sb = new StringBuilder(s.length());
                for (int j = 0; j < s.length(); ) {
                    int cp = s.codePointAt(j);
                    sb.appendCodePoint(cp >= 0xD800 && cp <= 0xDFFF ? 0xFFFD : cp);
                    j += Character.charCount(cp);
                }
                return sb.toString();
            }
        }
        return s;
    }
}
