package io.modelopt.core.generate;

/** Why a generation ended. */
public enum FinishReason {
    /** The model produced an end-of-sequence token (the model config's or the tokenizer's). */
    EOS,
    /** The decoded text reached one of the stop strings; the text ends just before it. */
    STOP_STRING,
    /** The requested number of tokens was generated. */
    MAX_TOKENS,
    /** Prompt plus generated tokens filled the context length before {@code maxTokens} were reached. */
    CONTEXT_FULL,
    /** Ended by its caller (a cancelled request); used by the engine. */
    CANCELLED,
    /** Its deadline passed; what it produced so far is kept. Used by the engine. */
    EXPIRED
}
