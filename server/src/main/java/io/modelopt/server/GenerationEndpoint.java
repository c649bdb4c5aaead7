package io.modelopt.server;

import io.modelopt.core.generate.FinishReason;
import io.modelopt.scheduler.Completion;
import io.modelopt.scheduler.Engine;
import io.modelopt.scheduler.EngineRequest;
import io.modelopt.scheduler.EngineResult;
import io.modelopt.scheduler.TokenEvent;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * What {@code /v1/completions} and {@code /v1/chat/completions} share: reading the request,
 * submitting it to the engine, and answering with one JSON body or a stream of chunks. The two
 * subclasses say how prompts are given and how a choice is written.
 */
abstract class GenerationEndpoint {
    /** A request ready for the engine: prompt token ids, the common parameters, and each prompt's max tokens. */
    record Prepared(List<int[]> prompts, GenerationParams params, int[] maxTokens) {}

    final Engine engine;
    final ServerOptions options;
    private final Server server;

    GenerationEndpoint(Engine engine, ServerOptions options, Server server) {
        this.engine = engine;
        this.options = options;
        this.server = server;
    }

    /** Reads the endpoint's own fields (the prompt or the messages) and the common ones. */
    abstract Prepared prepare(Fields f, Call call);

    abstract String idPrefix();

    abstract String objectName();

    abstract String chunkObjectName();

    /** A finished choice of the JSON response. */
    abstract Map<String, Object> choice(int index, String text, List<Object> logprobs, String finishReason, GenerationParams p);

    /** A streamed piece of a choice; {@code first} is the choice's first chunk, {@code textOffset} the characters streamed before it. */
    abstract Map<String, Object> chunkChoice(int index, String text, List<Object> logprobs, int textOffset, String finishReason, boolean first, GenerationParams p);

    /** One token's log probabilities in the endpoint's layout, or null when none were asked for or sent. */
    abstract Object tokenLogprobs(TokenEvent e, GenerationParams p);

    /** The log probabilities of a choice (or a chunk of it, {@code textOffset} characters in) from its tokens' entries. */
    abstract Object choiceLogprobs(List<Object> tokens, int textOffset);

    final void handle(Call call) throws InterruptedException {
        Fields f = call.jsonBody();
        String model = f.string("model");
        if (model != null && !model.equals(options.servedModelName())) throw ApiException.modelNotFound(model, options.servedModelName());
        refuseUnsupported(f);
        f.get("user"); // accepted and ignored, as the issue asks
        Prepared p = prepare(f, call);
        UnknownFields.note(f.unread());
        if (p.params().n() > engine.config().maxNumSeqs()) {
            throw ApiException.badRequest("n", "n = " + p.params().n() + " exceeds the sequences this server runs at once (" + engine.config().maxNumSeqs() + ", --max-num-seqs)");
        }
        List<EngineRequest> requests = new ArrayList<>();
        long promptTokens = 0;
        for (int i = 0; i < p.prompts().size(); i++) {
            int[] ids = p.prompts().get(i);
            promptTokens += ids.length;
            requests.add(EngineRequests.of(ids, p.maxTokens()[i], p.params(), engine.contextLength(), options.requestTimeout()));
        }
        call.promptTokens = promptTokens;
        Generation g = Generation.submit(engine, requests, p.params().n());
        server.track(g);
        try {
            if (p.params().stream()) stream(call, g, p.params());
            else respond(call, g, p.params());
        } catch (Call.ClientGone gone) {
            // the client left: end its requests now so that their KV blocks go back to the pool
            g.cancel();
            g.awaitEnd(5000);
            throw gone;
        } finally {
            g.cancel(); // a no-op for ended requests; ends any left by an error above
            server.untrack(g);
        }
    }

    /** Refuses what this server does not do, naming the field (tools, functions, structured output, echo). */
    private static void refuseUnsupported(Fields f) {
        for (String name : List.of("tools", "functions")) {
            Object v = f.get(name);
            if (v != null && !(v instanceof List<?> l && l.isEmpty())) {
                throw ApiException.unsupported(name, name + " (function calling) is not supported by this server");
            }
        }
        Fields rf = f.object("response_format");
        if (rf != null) {
            String type = rf.string("type");
            if (type != null && !type.equals("text")) {
                throw ApiException.unsupported("response_format", "response_format of type '" + type + "' is not supported by this server; only 'text'");
            }
            UnknownFields.note(rf.unread());
        }
        Boolean echo = f.bool("echo");
        if (echo != null && echo) throw ApiException.unsupported("echo", "echo: true is not supported by this server");
    }

    // ---- one JSON response ----

    private void respond(Call call, Generation g, GenerationParams p) throws InterruptedException {
        List<List<Object>> logprobs = new ArrayList<>();
        for (int c = 0; c < g.choices(); c++) logprobs.add(new ArrayList<>());
        EngineResult[] results = new EngineResult[g.prompts()];
        Throwable error = null;
        Generation.Item item;
        while ((item = g.next(Long.MAX_VALUE)) != null) {
            switch (item) {
                case Generation.Token t -> {
                    if (call.firstTokenNanos < 0 && !t.event().isFinish()) call.firstTokenNanos = System.nanoTime();
                    Object lp = tokenLogprobs(t.event(), p);
                    if (lp != null) logprobs.get(t.choice()).add(lp);
                }
                case Generation.Ended e -> {
                    if (e.error() != null) error = e.error();
                    else results[e.prompt()] = e.result();
                }
            }
        }
        if (error != null) throw ApiException.internal("generation failed: " + error.getMessage());
        List<Object> choices = new ArrayList<>();
        long completion = 0;
        for (int r = 0; r < results.length; r++) {
            EngineResult res = results[r];
            completion += res.completionTokens();
            for (Completion c : res.completions()) {
                int index = r * p.n() + c.index();
                String finish = finishReason(c.finishReason());
                choices.add(choice(index, c.text(), p.logprobs() == null ? null : logprobs.get(index), finish, p));
            }
        }
        call.completionTokens = completion;
        Map<String, Object> body = envelope(objectName(), newId(), choices);
        body.put("usage", usage(call.promptTokens, completion));
        call.sendJson(200, body);
    }

    /**
     * The finish reason OpenAI names; a request the engine cut short (timeout, shutdown) has none
     * and is answered with an error instead.
     */
    private String finishReason(FinishReason r) {
        return switch (r) {
            case EOS, STOP_STRING -> "stop";
            case MAX_TOKENS, CONTEXT_FULL -> "length";
            case EXPIRED -> throw ApiException.timeout(options.requestTimeout());
            case CANCELLED -> throw ApiException.unavailable("the server is shutting down; the request was cancelled");
        };
    }

    // ---- a stream of chunks ----

    /**
     * Streams chunks as tokens arrive. The response headers wait for the first token, so that a
     * client's time to first byte is the time to first token (and an error before it, a time-out
     * in the queue say, is still an HTTP error status).
     */
    private void stream(Call call, Generation g, GenerationParams p) throws InterruptedException {
        String id = newId();
        long created = System.currentTimeMillis() / 1000;
        boolean[] started = new boolean[g.choices()], finished = new boolean[g.choices()];
        int[] offsets = new int[g.choices()];
        EngineResult[] results = new EngineResult[g.prompts()];
        SseStream sse = null;
        ApiException failure = null;
        Generation.Item item;
        while ((item = g.next(Long.MAX_VALUE)) != null) {
            switch (item) {
                case Generation.Token t -> {
                    TokenEvent e = t.event();
                    int c = t.choice();
                    String finish = null;
                    if (e.isFinish()) {
                        try {
                            finish = finishReason(e.finishReason());
                        } catch (ApiException cut) {
                            failure = cut;
                            finished[c] = true;
                            continue;
                        }
                        finished[c] = true;
                    }
                    Object lp = tokenLogprobs(e, p);
                    if (finish == null && e.text().isEmpty() && lp == null) continue; // nothing to tell yet (held-back text)
                    if (sse == null) {
                        sse = call.startStream();
                        call.firstTokenNanos = System.nanoTime();
                    }
                    List<Object> lps = lp == null ? null : List.of(lp);
                    sse.send(chunk(id, created, chunkChoice(c, e.text(), lps, offsets[c], finish, !started[c], p), p));
                    started[c] = true;
                    offsets[c] += e.text().length();
                }
                case Generation.Ended e -> {
                    if (e.error() != null) failure = ApiException.internal("generation failed: " + e.error().getMessage());
                    else results[e.prompt()] = e.result();
                }
            }
        }
        if (sse == null) {
            if (failure != null) throw failure;
            sse = call.startStream();
            call.firstTokenNanos = System.nanoTime();
        }
        long completion = 0;
        for (int r = 0; r < results.length; r++) {
            if (results[r] == null) continue;
            completion += results[r].completionTokens();
            for (Completion c : results[r].completions()) {
                int index = r * p.n() + c.index();
                if (finished[index] || failure != null) continue;
                // a sample that never started (its request ended first) still gets its finish chunk
                try {
                    sse.send(chunk(id, created, chunkChoice(index, "", null, offsets[index], finishReason(c.finishReason()), !started[index], p), p));
                } catch (ApiException cut) {
                    failure = cut;
                }
            }
        }
        call.completionTokens = completion;
        if (failure != null) {
            sse.send(failure.body());
        } else if (p.includeUsage()) {
            Map<String, Object> last = envelope(chunkObjectName(), id, List.of());
            last.put("created", created);
            last.put("usage", usage(call.promptTokens, completion));
            sse.send(last);
        }
        sse.done();
    }

    private Map<String, Object> chunk(String id, long created, Map<String, Object> choice, GenerationParams p) {
        Map<String, Object> m = envelope(chunkObjectName(), id, List.of(choice));
        m.put("created", created);
        if (p.includeUsage()) m.put("usage", null); // OpenAI: every chunk but the last has "usage": null
        return m;
    }

    private Map<String, Object> envelope(String object, String id, List<Object> choices) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("id", id);
        m.put("object", object);
        m.put("created", System.currentTimeMillis() / 1000);
        m.put("model", options.servedModelName());
        m.put("system_fingerprint", null);
        m.put("choices", choices);
        return m;
    }

    private String newId() { return idPrefix() + UUID.randomUUID().toString().replace("-", ""); }

    static Map<String, Object> usage(long prompt, long completion) {
        Map<String, Object> u = new LinkedHashMap<>();
        u.put("prompt_tokens", prompt);
        u.put("completion_tokens", completion);
        u.put("total_tokens", prompt + completion);
        return u;
    }

    /** Max tokens for a prompt: the request's (checked against the context) or {@code fallback}. */
    int maxTokens(GenerationParams p, int promptLength, int fallback, String param) {
        int ctx = engine.contextLength();
        if (promptLength >= ctx) {
            throw ApiException.badRequest(param, "the prompt has " + promptLength + " tokens; this model's context holds " + ctx + " (prompt and completion)");
        }
        if (p.maxTokens() == null) {
            // the default also fits the KV pool (a --kv-budget may hold less than one full context), as vLLM caps it
            // (the pool's size, not the gauges: those are counted by the step loop, and read 0 before its first step)
            long poolTokens = (long) engine.kvPoolBlocks() * engine.config().kvBlockSize();
            long room = Math.min(ctx, poolTokens) - promptLength;
            return (int) Math.max(1, Math.min(fallback, room));
        }
        if ((long) promptLength + p.maxTokens() > ctx) {
            throw ApiException.badRequest("max_tokens", "the prompt (" + promptLength + " tokens) plus max_tokens ("
                    + p.maxTokens() + ") exceed this model's context length of " + ctx + " tokens");
        }
        return p.maxTokens();
    }
}
