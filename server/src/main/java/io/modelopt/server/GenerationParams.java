package io.modelopt.server;

import io.modelopt.core.generate.GenerationOptions;
import io.modelopt.core.sampling.SamplingParams;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The generation fields common to {@code /v1/completions} and {@code /v1/chat/completions}, read
 * and range-checked once, with OpenAI's defaults: temperature 1, top_p 1, no top_k or min_p (the
 * extensions), n 1; completions generate 16 tokens unless told, chat up to the context's end.
 *
 * @param maxTokens  the requested maximum, or null for the endpoint's default
 * @param logprobs   top alternatives to report per token (0: the chosen token only), or null for no log probabilities
 * @param logitBias  token id → bias added to its logit
 */
record GenerationParams(Integer maxTokens, double temperature, double topP, int topK, double minP, double repetitionPenalty,
                        double presencePenalty, double frequencyPenalty, Map<Integer, Float> logitBias, Long seed, List<String> stop,
                        int n, boolean stream, boolean includeUsage, Integer logprobs, boolean ignoreEos) {

    /** OpenAI's completions default. */
    static final int COMPLETIONS_DEFAULT_MAX_TOKENS = 16;
    /** Most alternatives per token (OpenAI's chat limit). */
    static final int MAX_LOGPROBS = 20;

    /**
     * Reads the common fields; {@code chat} selects the chat forms of {@code logprobs}
     * ({@code logprobs: true} with {@code top_logprobs}) and {@code max_completion_tokens}.
     */
    static GenerationParams read(Fields f, boolean chat, int vocabSize) {
        Long max;
        if (chat && f.has("max_completion_tokens")) {
            max = f.integer("max_completion_tokens", 1, Integer.MAX_VALUE);
            f.get("max_tokens"); // the deprecated alias: the newer field wins
        } else {
            max = f.integer("max_tokens", 1, Integer.MAX_VALUE);
        }
        double temperature = orElse(f.number("temperature", 0, 100), 1.0);
        double topP = orElse(f.number("top_p", 0, 1), 1.0);
        if (topP == 0) throw ApiException.badRequest("top_p", "top_p must be in (0, 1], got 0");
        Long topK = f.integer("top_k", -1, Integer.MAX_VALUE); // -1 or 0: off (vLLM takes -1)
        double minP = orElse(f.number("min_p", 0, 1), 0.0);
        double repetition = orElse(f.number("repetition_penalty", Double.MIN_VALUE, 100), 1.0);
        double presence = orElse(f.number("presence_penalty", -2, 2), 0.0);
        double frequency = orElse(f.number("frequency_penalty", -2, 2), 0.0);
        Map<Integer, Float> bias = logitBias(f, vocabSize);
        Long seed = f.integer("seed", Long.MIN_VALUE, Long.MAX_VALUE);
        List<String> stop = stop(f);
        int n = (int) (long) orElse(f.integer("n", 1, 128), 1L);
        boolean stream = orElse(f.bool("stream"), false);
        boolean includeUsage = false;
        Fields so = f.object("stream_options");
        if (so != null) {
            includeUsage = orElse(so.bool("include_usage"), false);
            logUnread(so);
        }
        Integer logprobs;
        if (chat) {
            boolean want = orElse(f.bool("logprobs"), false);
            Long top = f.integer("top_logprobs", 0, MAX_LOGPROBS);
            if (top != null && !want) throw ApiException.badRequest("top_logprobs", "top_logprobs needs logprobs: true");
            logprobs = want ? (int) (long) orElse(top, 0L) : null;
        } else {
            Long lp = f.integer("logprobs", 0, MAX_LOGPROBS);
            logprobs = lp == null ? null : (int) (long) lp;
        }
        boolean ignoreEos = orElse(f.bool("ignore_eos"), false);
        return new GenerationParams(max == null ? null : (int) (long) max, temperature, topP, topK == null || topK < 0 ? 0 : (int) (long) topK,
                minP, repetition, presence, frequency, bias, seed, stop, n, stream, includeUsage, logprobs, ignoreEos);
    }

    /** The sampler's parameters; the repetition penalty looks at the whole sequence (vLLM's and HF's meaning), hence {@code window}. */
    SamplingParams sampling(int window) {
        SamplingParams.Builder b = SamplingParams.builder().temperature((float) temperature).topP((float) topP).topK(topK).minP((float) minP)
                .repetitionPenalty((float) repetitionPenalty).penaltyWindow(repetitionPenalty == 1 ? SamplingParams.DEFAULT_PENALTY_WINDOW : window)
                .presencePenalty((float) presencePenalty).frequencyPenalty((float) frequencyPenalty).logitBias(logitBias);
        if (seed != null) b.seed(seed);
        return b.build();
    }

    GenerationOptions options(int maxTokens, int window) {
        return GenerationOptions.builder().maxTokens(maxTokens).sampling(sampling(window)).stopStrings(stop).build();
    }

    private static Map<Integer, Float> logitBias(Fields f, int vocabSize) {
        Fields lb = f.object("logit_bias");
        if (lb == null) return Map.of();
        Map<Integer, Float> out = new LinkedHashMap<>();
        @SuppressWarnings("unchecked") Map<String, Object> raw = (Map<String, Object>) f.get("logit_bias");
        for (String key : raw.keySet()) {
            int id;
            try {
                id = Integer.parseInt(key.trim());
            } catch (NumberFormatException e) {
                throw ApiException.badRequest("logit_bias", "logit_bias keys must be token ids, got \"" + key + "\"");
            }
            if (id < 0 || id >= vocabSize) throw ApiException.badRequest("logit_bias", "logit_bias token " + id + " is outside the vocabulary of " + vocabSize);
            out.put(id, (float) (double) lb.number(key, -100, 100));
        }
        return Map.copyOf(out);
    }

    private static List<String> stop(Fields f) {
        Object v = f.get("stop");
        if (v == null) return List.of();
        List<String> out = new ArrayList<>();
        if (v instanceof String s) out.add(s);
        else if (v instanceof List<?> l) {
            for (int i = 0; i < l.size(); i++) {
                if (!(l.get(i) instanceof String s)) throw ApiException.badRequest("stop", "stop[" + i + "] must be a string, got " + Fields.describe(l.get(i)));
                out.add(s);
            }
        } else throw f.wrongType("stop", "a string or an array of strings", v);
        for (String s : out) if (s.isEmpty()) throw ApiException.badRequest("stop", "a stop string must not be empty");
        return List.copyOf(out);
    }

    private static <T> T orElse(T v, T def) { return v == null ? def : v; }

    private static void logUnread(Fields f) { UnknownFields.note(f.unread()); }
}
