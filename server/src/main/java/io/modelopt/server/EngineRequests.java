package io.modelopt.server;

import io.modelopt.scheduler.EngineRequest;
import java.time.Duration;

/** Turns a prompt and the request's parameters into the engine's request. */
final class EngineRequests {
    private EngineRequests() {}

    static EngineRequest of(int[] prompt, int maxTokens, GenerationParams p, int contextLength, Duration timeout) {
        EngineRequest.Builder b = EngineRequest.builder().promptTokens(prompt).options(p.options(maxTokens, contextLength)).n(p.n()).timeout(timeout)
                .ignoreEos(p.ignoreEos());
        if (p.logprobs() != null) b.logprobs(p.logprobs());
        return b.build();
    }
}
