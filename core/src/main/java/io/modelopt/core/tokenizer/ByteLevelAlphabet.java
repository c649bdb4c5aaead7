package io.modelopt.core.tokenizer;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;

/**
 * GPT-2's byte ↔ printable-character table ({@code bytes_to_unicode} in openai/gpt-2
 * {@code encoder.py}, used by HF's ByteLevel pre-tokenizer/decoder and llama.cpp's
 * {@code unicode_byte_to_utf8}): the printable Latin-1 bytes map to themselves, the other 68
 * bytes to U+0100 upwards in byte order, so every byte string becomes a visible string (a space
 * becomes 'Ġ' U+0120, a newline 'Ċ' U+010A).
 */
public final class ByteLevelAlphabet {
    private static final char[] BYTE_TO_CHAR = new char[256];
    private static final int[] CHAR_TO_BYTE = new int[512];

    static {
        java.util.Arrays.fill(CHAR_TO_BYTE, -1);
        int n = 0;
        for (int b = 0; b < 256; b++) {
            boolean printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
            char c = printable ? (char) b : (char) (256 + n++);
            BYTE_TO_CHAR[b] = c;
            CHAR_TO_BYTE[c] = b;
        }
    }

    private ByteLevelAlphabet() {}

    /** The character byte {@code b} (0..255) is written as. */
    public static char charOf(int b) { return BYTE_TO_CHAR[b & 0xFF]; }

    /** The byte a character stands for, or -1 when it is not in the alphabet. */
    public static int byteOf(int ch) { return ch >= 0 && ch < CHAR_TO_BYTE.length ? CHAR_TO_BYTE[ch] : -1; }

    /** The text's UTF-8 bytes, each written as its character. */
    public static String encode(String text) {
        byte[] utf8 = text.getBytes(StandardCharsets.UTF_8);
        char[] out = new char[utf8.length];
        for (int i = 0; i < utf8.length; i++) out[i] = BYTE_TO_CHAR[utf8[i] & 0xFF];
        return new String(out);
    }

    /**
     * The bytes a byte-level string stands for, or null when some character is outside the
     * alphabet (HF's ByteLevel decoder then keeps that token's own UTF-8).
     */
    public static byte[] decodeOrNull(String s) {
        byte[] out = new byte[s.length()];
        for (int i = 0; i < s.length(); i++) {
            int b = byteOf(s.charAt(i));
            if (b < 0) return null;
            out[i] = (byte) b;
        }
        return out;
    }

    /** Like {@link #decodeOrNull}, but characters outside the alphabet keep their UTF-8 bytes. */
    public static byte[] decodeLenient(String s) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(s.length());
        for (int i = 0; i < s.length(); ) {
            int cp = s.codePointAt(i);
            int b = byteOf(cp);
            if (b >= 0) out.write(b);
            else out.writeBytes(new String(Character.toChars(cp)).getBytes(StandardCharsets.UTF_8));
            i += Character.charCount(cp);
        }
        return out.toByteArray();
    }
}
