package io.modelopt.core.generate;

import io.modelopt.core.sampling.Sampler;
import io.modelopt.core.tokenizer.Tokenizer;
import java.util.Arrays;
import java.util.Objects;

/**
 * Everything that decides what one sequence's next token is and when it ends, apart from the
 * model: its sampler (with the repetition history, the prompt included), the streaming text
 * decoder, the stop-string filter, the EOS ids and the token budget. {@link Generator} drives one
 * of these for a single prompt; a scheduler drives many, one per running sequence, with the same
 * code, so a sequence finishes for the same reasons with the same text either way.
 *
 * <p>Use: after each forward step that produced this sequence's logits, {@link #sample} a token,
 * then {@link #accept} it; {@code accept} streams the token and its text to the listener and
 * returns whether the sequence goes on. Once it returns false the sequence is
 * {@link #finished()} with a {@link #finishReason()}, and the listener has had its
 * {@code onFinish}. {@link #stop} ends it from outside (a cancelled or expired request).
 *
 * <p>Budget: at most {@code min(maxTokens, contextLength − promptLength)} tokens; reaching it
 * ends with {@link FinishReason#MAX_TOKENS} when that is {@code maxTokens}, else
 * {@link FinishReason#CONTEXT_FULL}. An end-of-sequence token is neither reported nor part of the
 * result. Not thread-safe: one step at a time, on the thread that runs the model.
 */
public final class SequenceState {
    private final int[] prompt;
    private final int maxTokens;
    private final int budget;
    private final int[] eosIds;
    private final Sampler sampler;
    private final StreamingDecoder decoder;
    private final StopStringFilter stops;
    private final StringBuilder text = new StringBuilder();
    private final int[] generated;
    private int count;
    private FinishReason reason;

    /**
     * @param prompt        the prompt's token ids (checked by the caller against the vocabulary and context)
     * @param options       max tokens, sampling, stop strings
     * @param tokenizer     decodes the generated tokens to text
     * @param eosIds        ids that end the sequence
     * @param vocabSize     the logits' width
     * @param contextLength positions available to prompt plus generated tokens; must exceed the prompt's length
     */
    public SequenceState(int[] prompt, GenerationOptions options, Tokenizer tokenizer, int[] eosIds, int vocabSize, int contextLength) {
        this.prompt = prompt.clone();
        Objects.requireNonNull(options, "options");
        if (prompt.length >= contextLength) {
            throw new IllegalArgumentException("the prompt has " + prompt.length + " tokens but the context length is " + contextLength);
        }
        this.maxTokens = options.maxTokens();
        this.budget = Math.min(maxTokens, contextLength - prompt.length);
        this.eosIds = eosIds.clone();
        this.sampler = new Sampler(options.sampling(), vocabSize);
        sampler.acceptPrompt(prompt); // llama.cpp lets the repetition penalty see the prompt; OpenAI's penalties do not
        this.decoder = new StreamingDecoder(tokenizer, !hasText(tokenizer, prompt));
        this.stops = new StopStringFilter(options.stopStrings());
        this.generated = new int[budget];
    }

    /** Chooses the next token from this sequence's logits row {@code logits[offset .. offset + vocab)}. */
    public int sample(float[] logits, int offset) {
        return sampler.sample(logits, offset);
    }

    /**
     * Takes the sampled {@code token}: an EOS ends the sequence; any other is recorded, given to
     * the sampler's history and streamed with its text; a stop string or the budget then ends it.
     * On the end the held-back text is flushed and {@link TokenListener#onFinish} called.
     *
     * @return whether the sequence goes on (its {@link #lastToken()} is then to be fed to the model
     *         at {@link #nextPosition()})
     */
    public boolean accept(int token, TokenListener listener) {
        if (reason != null) throw new IllegalStateException("the sequence has already finished (" + reason + ")");
        if (isEos(token)) return end(FinishReason.EOS, listener);
        generated[count++] = token;
        sampler.accept(token);
        String piece = stops.push(decoder.push(token));
        text.append(piece);
        listener.onToken(token, piece);
        if (stops.stopped()) return end(FinishReason.STOP_STRING, listener);
        if (count == budget) return end(count == maxTokens ? FinishReason.MAX_TOKENS : FinishReason.CONTEXT_FULL, listener);
        return true;
    }

    /** Ends the sequence from outside with {@code why} (e.g. cancelled), flushing what text is held back. No-op once finished. */
    public void stop(FinishReason why, TokenListener listener) {
        if (reason == null) end(Objects.requireNonNull(why, "why"), listener);
    }

    private boolean end(FinishReason why, TokenListener listener) {
        reason = why;
        String tail = why == FinishReason.STOP_STRING ? "" : stops.push(decoder.flush()) + stops.flush();
        text.append(tail);
        listener.onFinish(tail, why);
        return false;
    }

    public boolean finished() { return reason != null; }

    /** Why it ended; null while it runs. */
    public FinishReason finishReason() { return reason; }

    public int promptLength() { return prompt.length; }

    public int[] prompt() { return prompt.clone(); }

    /** Tokens generated so far (an EOS not counted). */
    public int generatedCount() { return count; }

    public int[] generated() { return Arrays.copyOf(generated, count); }

    /** The most recently accepted token, the next input of the model. */
    public int lastToken() {
        if (count == 0) throw new IllegalStateException("no token accepted yet");
        return generated[count - 1];
    }

    /** Position at which {@link #lastToken()} is fed to the model. */
    public int nextPosition() { return prompt.length + count - 1; }

    /** The most tokens this sequence may still generate, counting the ones it has. */
    public int budget() { return budget; }

    /** The text released so far (the whole text once finished). */
    public String text() { return text.toString(); }

    private boolean isEos(int token) {
        for (int e : eosIds) if (e == token) return true;
        return false;
    }

    /** Whether the prompt holds any text (anything but special tokens such as BOS). */
    private static boolean hasText(Tokenizer tokenizer, int[] prompt) {
        for (int t : prompt) if (!tokenizer.isSpecial(t)) return true;
        return false;
    }
}
