package io.modelopt.server;

import io.modelopt.scheduler.EngineRequest;
import java.time.Duration;

/** Turns a prompt and the request's parameters into the engine's request. */
final class EngineRequests {
    private EngineRequests() {}

    /** @throws ApiException 400 with the engine's or the sampler's message for a combination the fields' own checks let through */
    static EngineRequest of(int[] prompt, int maxTokens, GenerationParams p, int contextLength, Duration timeout) {
        try {
            return build(prompt, maxTokens, p, contextLength, timeout);
        } catch (IllegalArgumentException e) {
            throw ApiException.badRequest(null, e.getMessage());
        }
    }

    private static EngineRequest build(int[] prompt, int maxTokens, GenerationParams p, int contextLength, Duration timeout) {
        EngineRequest.Builder b = EngineRequest.builder().promptTokens(prompt).options(p.options(maxTokens, contextLength)).n(p.n()).timeout(timeout)
                .ignoreEos(p.ignoreEos());
        if (p.logprobs() != null) b.logprobs(p.logprobs());
        return b.build();
    }
}
