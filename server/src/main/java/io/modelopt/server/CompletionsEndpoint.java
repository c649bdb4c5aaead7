package io.modelopt.server;

import io.modelopt.core.tokenizer.Tokenizer;
import io.modelopt.scheduler.Engine;
import io.modelopt.scheduler.TokenEvent;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code POST /v1/completions}: {@code prompt} as a string, an array of strings, an array of token
 * ids or an array of such arrays; one choice per prompt and sample.
 */
final class CompletionsEndpoint extends GenerationEndpoint {
    private final LogprobsJson logprobs;

    CompletionsEndpoint(Engine engine, ServerOptions options, Server server) {
        super(engine, options, server);
        this.logprobs = new LogprobsJson(engine.tokenizer());
    }

    @Override Prepared prepare(Fields f, Call call) {
        Tokenizer tok = engine.tokenizer();
        Object prompt = f.get("prompt");
        if (prompt == null) throw ApiException.badRequest("prompt", "prompt is required");
        List<int[]> prompts = new ArrayList<>();
        List<String> texts = new ArrayList<>();
        switch (prompt) {
            case String s -> texts.add(s);
            case List<?> l when l.isEmpty() -> throw ApiException.badRequest("prompt", "prompt must not be an empty array");
            case List<?> l when l.getFirst() instanceof String -> {
                for (int i = 0; i < l.size(); i++) {
                    if (!(l.get(i) instanceof String s)) throw ApiException.badRequest("prompt", "prompt[" + i + "] must be a string like the first, got " + Fields.describe(l.get(i)));
                    texts.add(s);
                }
            }
            case List<?> l when l.getFirst() instanceof List<?> -> {
                for (int i = 0; i < l.size(); i++) {
                    if (!(l.get(i) instanceof List<?> ids)) throw ApiException.badRequest("prompt", "prompt[" + i + "] must be an array of token ids like the first, got " + Fields.describe(l.get(i)));
                    prompts.add(tokenIds(ids, "prompt[" + i + "]", tok.vocabSize()));
                }
            }
            case List<?> l -> prompts.add(tokenIds(l, "prompt", tok.vocabSize()));
            default -> throw f.wrongType("prompt", "a string, an array of strings, or token ids", prompt);
        }
        for (String t : texts) prompts.add(tok.encode(t, true, true));
        if (options.logPrompts()) call.promptText = String.join(" | ", texts);
        GenerationParams p = GenerationParams.read(f, false, tok.vocabSize());
        int[] max = new int[prompts.size()];
        for (int i = 0; i < max.length; i++) {
            if (prompts.get(i).length == 0) throw ApiException.badRequest("prompt", "the prompt has no tokens (an empty text, and this tokenizer adds no BOS)");
            max[i] = maxTokens(p, prompts.get(i).length, GenerationParams.COMPLETIONS_DEFAULT_MAX_TOKENS, "prompt");
        }
        return new Prepared(prompts, p, max);
    }

    private static int[] tokenIds(List<?> l, String param, int vocab) {
        if (l.isEmpty()) throw ApiException.badRequest("prompt", param + " must not be empty");
        int[] ids = new int[l.size()];
        for (int i = 0; i < ids.length; i++) {
            Object v = l.get(i);
            if (!(v instanceof Long x)) throw ApiException.badRequest("prompt", param + "[" + i + "] must be a token id (an integer), got " + Fields.describe(v));
            if (x < 0 || x >= vocab) throw ApiException.badRequest("prompt", param + "[" + i + "] = " + x + " is outside the vocabulary of " + vocab);
            ids[i] = (int) (long) x;
        }
        return ids;
    }

    @Override String idPrefix() { return "cmpl-"; }

    @Override String objectName() { return "text_completion"; }

    @Override String chunkObjectName() { return "text_completion"; }

    @Override Map<String, Object> choice(int index, String text, List<Object> logprobs, String finishReason, GenerationParams p) {
        Map<String, Object> c = new LinkedHashMap<>();
        c.put("index", index);
        c.put("text", text);
        c.put("logprobs", logprobs == null ? null : choiceLogprobs(logprobs, 0));
        c.put("finish_reason", finishReason);
        return c;
    }

    @Override Map<String, Object> chunkChoice(int index, String text, List<Object> lps, int textOffset, String finishReason, boolean first, GenerationParams p) {
        Map<String, Object> c = choice(index, text, null, finishReason, p);
        c.put("logprobs", lps == null ? null : choiceLogprobs(lps, textOffset));
        return c;
    }

    @Override Object tokenLogprobs(TokenEvent e, GenerationParams p) {
        return e.logprobs() == null ? null : logprobs.completionToken(e.logprobs());
    }

    @Override Object choiceLogprobs(List<Object> tokens, int textOffset) { return logprobs.completion(tokens, textOffset); }
}
