package io.modelopt.server;

import io.modelopt.core.sampling.TokenLogprobs;
import io.modelopt.core.tokenizer.Tokenizer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Token log probabilities in OpenAI's two layouts: the completions API's parallel lists
 * ({@code tokens}, {@code token_logprobs}, {@code top_logprobs}, {@code text_offset}) and the chat
 * API's {@code content} entries with {@code bytes}. A probability of 0 is written as -9999.0, as
 * OpenAI does, since JSON has no infinity.
 */
final class LogprobsJson {
    /** One token of a completion, kept until the choice's lists are assembled. */
    record CompletionToken(String token, double logprob, Map<String, Object> top) {}

    private final Tokenizer tokenizer;

    LogprobsJson(Tokenizer tokenizer) { this.tokenizer = tokenizer; }

    CompletionToken completionToken(TokenLogprobs lp) {
        Map<String, Object> top = new LinkedHashMap<>();
        for (TokenLogprobs.TopLogprob t : lp.top()) top.putIfAbsent(text(t.token()), finite(t.logprob()));
        return new CompletionToken(text(lp.token()), finite(lp.logprob()), top);
    }

    /** The completions layout for a choice (or one chunk of it, from {@code offset} characters into its text). */
    Map<String, Object> completion(List<Object> tokens, int offset) {
        List<Object> texts = new ArrayList<>(), logprobs = new ArrayList<>(), tops = new ArrayList<>(), offsets = new ArrayList<>();
        int at = offset;
        for (Object o : tokens) {
            CompletionToken t = (CompletionToken) o;
            texts.add(t.token());
            logprobs.add(t.logprob());
            tops.add(t.top());
            offsets.add(at);
            at += t.token().length();
        }
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("tokens", texts);
        m.put("token_logprobs", logprobs);
        m.put("top_logprobs", tops);
        m.put("text_offset", offsets);
        return m;
    }

    /** One entry of the chat layout's {@code content}. */
    Map<String, Object> chatToken(TokenLogprobs lp) {
        Map<String, Object> m = entry(lp.token(), lp.logprob());
        List<Object> top = new ArrayList<>();
        for (TokenLogprobs.TopLogprob t : lp.top()) top.add(entry(t.token(), t.logprob()));
        m.put("top_logprobs", top);
        return m;
    }

    Map<String, Object> chat(List<Object> entries) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("content", entries);
        m.put("refusal", null);
        return m;
    }

    private Map<String, Object> entry(int token, double logprob) {
        byte[] bytes = tokenizer.tokenBytes(token);
        List<Object> b = new ArrayList<>(bytes.length);
        for (byte x : bytes) b.add(x & 0xff);
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("token", new String(bytes, StandardCharsets.UTF_8));
        m.put("logprob", finite(logprob));
        m.put("bytes", b);
        return m;
    }

    /** A token's text (its bytes as UTF-8; a lone byte of a multi-byte character shows as U+FFFD, as OpenAI's do). */
    private String text(int token) { return new String(tokenizer.tokenBytes(token), StandardCharsets.UTF_8); }

    private static double finite(double logprob) { return logprob == Double.NEGATIVE_INFINITY || Double.isNaN(logprob) ? -9999.0 : logprob; }
}
