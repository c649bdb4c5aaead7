package io.modelopt.core.sampling;

import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ThreadLocalRandom;

/**
 * How the next token is chosen from a row of logits. Immutable; build with {@link #builder()} or
 * take {@link #greedy()}.
 *
 * <p>Order of the stages: logit bias → repetition penalty → frequency and presence penalties →
 * (greedy: argmax) → top-k → top-p → min-p → temperature → draw. The first three follow vLLM's
 * sampler (bias, then repetition, frequency, presence), so that an OpenAI-style request means the
 * same here; the truncation stages after them keep llama.cpp's default chain. A stage at its
 * neutral value is skipped ({@code topK 0}, {@code topP 1}, {@code minP 0},
 * {@code repetitionPenalty 1}, both OpenAI penalties 0, an empty bias). The bias and the penalties
 * come before the argmax, so greedy decoding honours them too.
 *
 * @param temperature       0 = greedy (the largest logit after the bias and penalties, the lowest id on
 *                          ties; the other truncation stages cannot change it); above 0 the
 *                          kept logits are divided by it before the softmax draw
 * @param topK              keep the {@code topK} largest logits; 0 = keep all
 * @param topP              nucleus: keep the smallest prefix of the sorted candidates whose
 *                          probability mass reaches {@code topP}; 1 = keep all
 * @param minP              keep tokens whose probability is at least {@code minP} × that of
 *                          the most likely one; 0 = keep all
 * @param repetitionPenalty llama.cpp's {@code repeat_penalty}: the logit of every token that
 *                          occurs in the last {@code penaltyWindow} tokens is divided by it when
 *                          positive and multiplied by it otherwise; 1 = off
 * @param penaltyWindow     how many of the most recent tokens the penalty looks at
 *                          (llama.cpp's {@code repeat_last_n}, default 64); it counts the prompt
 *                          too, as llama.cpp does
 * @param presencePenalty   OpenAI's {@code presence_penalty}, in [-2, 2]; 0 = off: subtracted once
 *                          from the logit of every token that the sequence has generated so far
 * @param frequencyPenalty  OpenAI's {@code frequency_penalty}, in [-2, 2]; 0 = off: subtracted from
 *                          the logit of every token as many times as the sequence has generated it.
 *                          Together: {@code logit[t] -= frequencyPenalty * count(t) + presencePenalty
 *                          * (count(t) > 0)}, where {@code count} runs over the generated tokens only,
 *                          never the prompt (vLLM's {@code apply_penalties} does the same)
 * @param logitBias         OpenAI's {@code logit_bias}: token id → a value in [-100, 100] added to
 *                          that token's logit before anything else; empty = off. Immutable; ids are
 *                          checked against the vocabulary by {@link Sampler}
 * @param seed              seed of the sampler's random generator; the same seed, parameters and
 *                          logits give the same tokens
 */
public record SamplingParams(float temperature, int topK, float topP, float minP, float repetitionPenalty,
                             int penaltyWindow, float presencePenalty, float frequencyPenalty,
                             Map<Integer, Float> logitBias, long seed) {

    /** Default top-k when sampling (llama.cpp's). */
    public static final int DEFAULT_TOP_K = 40;
    /** Default top-p when sampling (llama.cpp's). */
    public static final float DEFAULT_TOP_P = 0.95f;
    /** Default min-p when sampling (llama.cpp's). */
    public static final float DEFAULT_MIN_P = 0.05f;
    /** Default penalty window (llama.cpp's {@code repeat_last_n}). */
    public static final int DEFAULT_PENALTY_WINDOW = 64;
    /** Largest magnitude of the presence and frequency penalties (OpenAI's range). */
    public static final float MAX_OPENAI_PENALTY = 2f;
    /** Largest magnitude of a logit bias value (OpenAI's range). */
    public static final float MAX_LOGIT_BIAS = 100f;

    public SamplingParams {
        if (!(temperature >= 0f) || Float.isInfinite(temperature)) {
            throw new IllegalArgumentException("temperature must be a finite number >= 0 (0 = greedy), got " + temperature);
        }
        if (topK < 0) throw new IllegalArgumentException("top-k must be >= 0 (0 = off), got " + topK);
        if (!(topP > 0f && topP <= 1f)) throw new IllegalArgumentException("top-p must be in (0, 1] (1 = off), got " + topP);
        if (!(minP >= 0f && minP <= 1f)) throw new IllegalArgumentException("min-p must be in [0, 1] (0 = off), got " + minP);
        if (!(repetitionPenalty > 0f) || Float.isInfinite(repetitionPenalty)) {
            throw new IllegalArgumentException("repetition penalty must be a finite number > 0 (1 = off), got " + repetitionPenalty);
        }
        if (penaltyWindow < 0) throw new IllegalArgumentException("repetition penalty window must be >= 0, got " + penaltyWindow);
        if (!(Math.abs(presencePenalty) <= MAX_OPENAI_PENALTY)) {
            throw new IllegalArgumentException("presence penalty must be in [-2, 2] (0 = off), got " + presencePenalty);
        }
        if (!(Math.abs(frequencyPenalty) <= MAX_OPENAI_PENALTY)) {
            throw new IllegalArgumentException("frequency penalty must be in [-2, 2] (0 = off), got " + frequencyPenalty);
        }
        Objects.requireNonNull(logitBias, "logitBias (empty = off)");
        for (Map.Entry<Integer, Float> e : logitBias.entrySet()) {
            Integer id = e.getKey();
            Float v = e.getValue();
            if (id == null) throw new IllegalArgumentException("logit bias has a null token id");
            if (id < 0) throw new IllegalArgumentException("logit bias token id must be >= 0, got " + id);
            if (v == null || !(Math.abs(v) <= MAX_LOGIT_BIAS)) {
                throw new IllegalArgumentException("logit bias for token " + id + " must be in [-100, 100], got " + v);
            }
        }
        logitBias = Map.copyOf(logitBias);
    }

    /** Greedy decoding: argmax, no penalty (seed 0: it draws nothing). */
    public static SamplingParams greedy() { return builder().seed(0).build(); }

    /** Whether the token is the argmax (temperature 0). */
    public boolean isGreedy() { return temperature == 0f; }

    /** Whether the repetition penalty does anything. */
    public boolean penalizes() { return repetitionPenalty != 1f && penaltyWindow > 0; }

    /** Whether the presence or the frequency penalty does anything. */
    public boolean penalizesGenerated() { return presencePenalty != 0f || frequencyPenalty != 0f; }

    /** Whether any logit is biased. */
    public boolean biases() { return !logitBias.isEmpty(); }

    public static Builder builder() { return new Builder(); }

    public Builder toBuilder() {
        return new Builder().temperature(temperature).topK(topK).topP(topP).minP(minP)
                .repetitionPenalty(repetitionPenalty).penaltyWindow(penaltyWindow)
                .presencePenalty(presencePenalty).frequencyPenalty(frequencyPenalty).logitBias(logitBias).seed(seed);
    }

    /**
     * Mutable builder; {@link #build()} validates. Defaults: temperature 0 (greedy), and for when a
     * temperature is set llama.cpp's defaults top-k 40, top-p 0.95, min-p 0.05; repetition penalty
     * 1 (off) over a window of 64; presence and frequency penalties 0 and no logit bias (off); a
     * random seed drawn at {@code build()} unless one is set (the
     * record then carries it, so a run can be repeated).
     */
    public static final class Builder {
        private float temperature = 0f;
        private int topK = DEFAULT_TOP_K;
        private float topP = DEFAULT_TOP_P;
        private float minP = DEFAULT_MIN_P;
        private float repetitionPenalty = 1f;
        private int penaltyWindow = DEFAULT_PENALTY_WINDOW;
        private float presencePenalty = 0f;
        private float frequencyPenalty = 0f;
        private Map<Integer, Float> logitBias = Map.of();
        private Long seed;

        public Builder temperature(float v) { temperature = v; return this; }
        public Builder topK(int v) { topK = v; return this; }
        public Builder topP(float v) { topP = v; return this; }
        public Builder minP(float v) { minP = v; return this; }
        public Builder repetitionPenalty(float v) { repetitionPenalty = v; return this; }
        public Builder penaltyWindow(int v) { penaltyWindow = v; return this; }
        public Builder presencePenalty(float v) { presencePenalty = v; return this; }
        public Builder frequencyPenalty(float v) { frequencyPenalty = v; return this; }
        /** Token id → bias; copied at {@link #build()}. */
        public Builder logitBias(Map<Integer, Float> v) { logitBias = Objects.requireNonNull(v, "logitBias (empty = off)"); return this; }
        public Builder seed(long v) { seed = v; return this; }

        public SamplingParams build() {
            long s = seed != null ? seed : ThreadLocalRandom.current().nextLong();
            return new SamplingParams(temperature, topK, topP, minP, repetitionPenalty, penaltyWindow,
                    presencePenalty, frequencyPenalty, logitBias, s);
        }
    }
}
