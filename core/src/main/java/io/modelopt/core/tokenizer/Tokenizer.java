package io.modelopt.core.tokenizer;

/**
 * Text ↔ token ids. Implementations are immutable and thread-safe; per-call work state lives in
 * the call (as llama.cpp's tokenizer sessions do).
 */
public interface Tokenizer {
    int vocabSize();

    /**
     * Encodes {@code text}. With {@code addSpecial} the tokenizer's own BOS/EOS settings apply
     * ({@code add_bos_token}, {@code tokenizer.ggml.add_bos_token}); with {@code parseSpecial},
     * special/added token strings in the text (e.g. {@code "</s>"}) become their ids instead of
     * being tokenized as text.
     */
    int[] encode(String text, boolean addSpecial, boolean parseSpecial);

    /** {@code encode(text, true, true)}: what llama.cpp's {@code llama_tokenize(..., true, true)} does. */
    default int[] encode(String text) { return encode(text, true, true); }

    /** Decodes ids to text as the tokenizer's decoder does (special tokens skipped when {@code skipSpecial}). */
    String decode(int[] ids, boolean skipSpecial);

    default String decode(int[] ids) { return decode(ids, true); }

    /**
     * The raw bytes one token contributes to the text, for streaming: byte-fallback tokens give
     * their byte, {@code ▁} becomes a space, byte-level tokens map back to bytes. A streaming
     * decoder joins these and emits whole UTF-8 characters. (The leading space a SentencePiece
     * decoder strips from the first token is the caller's business.)
     */
    byte[] tokenBytes(int id);

    /** The vocabulary string of a token, as stored in the file. */
    String piece(int id);

    /** Token id of a vocabulary string, or -1. */
    int idOf(String piece);

    /** BOS id, or -1 when the vocabulary has none. */
    int bosId();

    /** EOS id, or -1. */
    int eosId();

    /** Whether {@link #encode(String)} prepends BOS. */
    boolean addsBos();

    boolean isSpecial(int id);

    /** One line for {@code describe()}: kind, vocab size, special ids. */
    String describe();
}
