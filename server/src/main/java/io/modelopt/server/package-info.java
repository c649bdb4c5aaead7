/**
 * An OpenAI-compatible HTTP server on the continuous-batching engine: {@link io.modelopt.server.Server}
 * and its {@link io.modelopt.server.ServerOptions}. Everything else is package-private, one job per class:
 * <ul>
 *   <li>{@code Server}: binding, routing, auth, the lifecycle (loading, serving, draining) and the access log;</li>
 *   <li>{@code Call}: one exchange (bounded body, JSON and error responses, the switch to a stream);
 *       {@code SseStream}: server-sent events, flushed per token;</li>
 *   <li>{@code Fields}: typed reads of a JSON body, each error naming its field; {@code GenerationParams}: the
 *       common generation fields; {@code UnknownFields}: extras accepted and logged once;</li>
 *   <li>{@code GenerationEndpoint} with {@code CompletionsEndpoint} and {@code ChatCompletionsEndpoint}: a request
 *       to the engine and back as one body or a stream; {@code ChatPrompts}: messages through the chat template;
 *       {@code EngineRequests}: the engine's request; {@code Generation}: one HTTP request's engine requests,
 *       their events merged; {@code LogprobsJson}: OpenAI's two logprobs layouts;</li>
 *   <li>{@code ApiException}: OpenAI's error body and status; {@code ApiKey}: the constant-time key check;
 *       {@code PrometheusMetrics}: {@code /metrics}.</li>
 * </ul>
 * See docs/SERVER.md.
 */
package io.modelopt.server;
