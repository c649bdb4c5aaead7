package io.modelopt.server;

import io.modelopt.scheduler.EngineRequest;
import java.time.Duration;

/** Turns a prompt and the request's parameters into the engine's request. */
final class EngineRequests {
    private EngineRequests() {}

    static EngineRequest of(int[] prompt, int maxTokens, GenerationParams p, int contextLength, Duration timeout) {
        if (p.presencePenalty() != 0 || p.frequencyPenalty() != 0) {
            throw ApiException.unsupported(p.presencePenalty() != 0 ? "presence_penalty" : "frequency_penalty", "presence and frequency penalties are not implemented yet");
        }
        if (!p.logitBias().isEmpty()) throw ApiException.unsupported("logit_bias", "logit_bias is not implemented yet");
        if (p.logprobs() != null) throw ApiException.unsupported("logprobs", "logprobs are not implemented yet");
        return EngineRequest.builder().promptTokens(prompt).options(p.options(maxTokens, contextLength)).n(p.n()).timeout(timeout)
                .ignoreEos(p.ignoreEos()).build();
    }
}
