package io.modelopt.core.generate;

import io.modelopt.core.tokenizer.Tokenizer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Objects;

/**
 * Turns a stream of token ids into text as it arrives: joins each token's bytes
 * ({@link Tokenizer#tokenBytes(int)}) and returns only whole UTF-8 characters, holding back the
 * bytes of a character split across tokens (byte-fallback and byte-level BPE tokens split
 * multi-byte characters routinely). Malformed bytes become U+FFFD, as {@link String} decoding
 * does.
 *
 * <p>Special (control) tokens contribute no text, as llama.cpp renders them without
 * {@code special=true}.
 *
 * <p>Leading space: a SentencePiece decoder drops the space its {@code ▁} prefix puts in front
 * of the first word of a text. That applies to the first text of the <em>whole</em> text only:
 * a generation that continues a prompt keeps the space of its first token ("Once upon a time" →
 * " there"), one that starts a text (empty prompt, just BOS) loses it. Whether a tokenizer
 * strips at all is asked of the tokenizer itself: the space is dropped when
 * {@code decode([id])} of that first token does not start with the space its bytes do (true for
 * SentencePiece, false for byte-level BPE).
 */
public final class StreamingDecoder {
    private final Tokenizer tokenizer;
    private boolean atTextStart;
    private byte[] pending = new byte[16];
    private int pendingLength;

    /**
     * @param atTextStart whether the first token's text begins the whole text (no prompt text
     *                    before it), so a SentencePiece leading space is dropped
     */
    public StreamingDecoder(Tokenizer tokenizer, boolean atTextStart) {
        this.tokenizer = Objects.requireNonNull(tokenizer, "tokenizer");
        this.atTextStart = atTextStart;
    }

    /** Adds one token; returns the text completed by it (possibly empty). */
    public String push(int tokenId) {
        if (tokenizer.isSpecial(tokenId)) return "";
        byte[] bytes = tokenizer.tokenBytes(tokenId);
        int from = 0;
        if (atTextStart && bytes.length > 0) {
            atTextStart = false;
            if (bytes[0] == ' ' && !tokenizer.decode(new int[] {tokenId}, true).startsWith(" ")) from = 1;
        }
        append(bytes, from);
        int complete = completePrefix(pending, pendingLength);
        if (complete == 0) return "";
        String s = new String(pending, 0, complete, StandardCharsets.UTF_8);
        System.arraycopy(pending, complete, pending, 0, pendingLength - complete);
        pendingLength -= complete;
        return s;
    }

    /** Returns the held-back bytes of an unfinished character (as U+FFFD) and empties the decoder. */
    public String flush() {
        String s = new String(pending, 0, pendingLength, StandardCharsets.UTF_8);
        pendingLength = 0;
        return s;
    }

    /** Bytes held back (an unfinished UTF-8 character). */
    public int pendingBytes() { return pendingLength; }

    private void append(byte[] bytes, int from) {
        int n = bytes.length - from;
        if (pendingLength + n > pending.length) pending = Arrays.copyOf(pending, Math.max(pending.length * 2, pendingLength + n));
        System.arraycopy(bytes, from, pending, pendingLength, n);
        pendingLength += n;
    }

    /**
     * Length of the prefix of {@code b[0..n)} that does not end inside a UTF-8 character: only a
     * final lead byte followed by fewer continuation bytes than it announces is held back; any
     * other malformation is left for the decoder to replace.
     */
    static int completePrefix(byte[] b, int n) {
        // A character is at most 4 bytes, so only the last 3 can start an unfinished one.
        for (int i = n - 1; i >= Math.max(0, n - 3); i--) {
            int v = b[i] & 0xff;
            if ((v & 0xC0) == 0x80) continue;       // continuation byte: keep looking for its lead
            int need = (v & 0xE0) == 0xC0 ? 2 : (v & 0xF0) == 0xE0 ? 3 : (v & 0xF8) == 0xF0 ? 4 : 1;
            return n - i < need ? i : n;
        }
        return n;
    }
}
