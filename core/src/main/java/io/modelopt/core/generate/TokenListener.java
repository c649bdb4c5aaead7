package io.modelopt.core.generate;

import java.util.Objects;
import java.util.function.Consumer;

/**
 * Receives a generation as it happens. The text pieces of all calls, in order, concatenate to
 * {@link GenerationResult#text()}.
 *
 * <p>Text can lag behind tokens: bytes of an incomplete UTF-8 character, and text that could be
 * the beginning of a stop string, are held back until they are decided, so a token's call may
 * carry an empty string and a later call more text. Called on the generating thread; a slow
 * listener slows generation.
 */
public interface TokenListener {
    /**
     * One generated token (an end-of-sequence token is not reported) with the text that became
     * final with it (possibly empty).
     */
    void onToken(int tokenId, String text);

    /** Generation ended: {@code text} is what was still held back (often empty), then nothing more comes. */
    void onFinish(String text, FinishReason reason);

    /** A listener that ignores everything. */
    TokenListener NONE = text(s -> {});

    /** A listener that passes every non-empty text piece, from tokens and the finish alike, to {@code sink}. */
    static TokenListener text(Consumer<String> sink) {
        Objects.requireNonNull(sink, "sink");
        return new TokenListener() {
            @Override public void onToken(int tokenId, String text) {
                if (!text.isEmpty()) sink.accept(text);
            }

            @Override public void onFinish(String text, FinishReason reason) {
                if (!text.isEmpty()) sink.accept(text);
            }
        };
    }
}
