package io.modelopt.server;

import io.modelopt.core.chat.ChatTemplate;
import java.time.Duration;
import java.util.Objects;

/**
 * How a {@link Server} listens and protects itself. Immutable; build with {@link #builder()}.
 *
 * @param host             address to bind; loopback ({@code 127.0.0.1}) unless told otherwise
 * @param port             TCP port; 0 picks a free one ({@link Server#port()} tells which)
 * @param servedModelName  the model id of {@code /v1/models} and of every response; requests naming another model get 404
 * @param apiKey           when set, {@code /v1/*} requires {@code Authorization: Bearer <apiKey>} (401 otherwise); null: no key
 * @param maxBodyBytes     largest request body; a larger one gets 413
 * @param requestTimeout   how long one request may wait and run in the engine before it ends (408, or an error event when streaming)
 * @param shutdownGrace    on {@link Server#close()}: how long running requests may finish before they are cancelled
 * @param chatTemplate     the chat template of {@code /v1/chat/completions} (its special tokens set), e.g.
 *                         {@code ChatTemplates.find(model.source())}; null: chat requests get 400 (no template)
 * @param logPrompts       also log each request's prompt text (off: access lines carry counts and times only)
 */
public record ServerOptions(String host, int port, String servedModelName, String apiKey, long maxBodyBytes, Duration requestTimeout,
                            Duration shutdownGrace, ChatTemplate chatTemplate, boolean logPrompts) {

    public ServerOptions {
        Objects.requireNonNull(host, "host");
        Objects.requireNonNull(servedModelName, "servedModelName");
        Objects.requireNonNull(requestTimeout, "requestTimeout");
        Objects.requireNonNull(shutdownGrace, "shutdownGrace");
        if (host.isBlank()) throw new IllegalArgumentException("host must not be blank");
        if (port < 0 || port > 65535) throw new IllegalArgumentException("port must be in [0, 65535], got " + port);
        if (servedModelName.isBlank()) throw new IllegalArgumentException("servedModelName must not be blank");
        if (apiKey != null && apiKey.isEmpty()) throw new IllegalArgumentException("apiKey must not be empty (null: no key)");
        if (maxBodyBytes < 1) throw new IllegalArgumentException("maxBodyBytes must be >= 1, got " + maxBodyBytes);
        if (requestTimeout.isNegative() || requestTimeout.isZero()) throw new IllegalArgumentException("requestTimeout must be positive, got " + requestTimeout);
        if (shutdownGrace.isNegative()) throw new IllegalArgumentException("shutdownGrace must not be negative, got " + shutdownGrace);
    }

    /** Default body limit: 8 MiB holds a prompt far beyond any context this engine runs. */
    public static final long DEFAULT_MAX_BODY_BYTES = 8L << 20;

    public static Builder builder() { return new Builder(); }

    public Builder toBuilder() {
        return builder().host(host).port(port).servedModelName(servedModelName).apiKey(apiKey).maxBodyBytes(maxBodyBytes)
                .requestTimeout(requestTimeout).shutdownGrace(shutdownGrace).chatTemplate(chatTemplate).logPrompts(logPrompts);
    }

    /** Defaults: 127.0.0.1:8000, model name "model", no key, 8 MiB bodies, 600 s per request, 30 s shutdown grace. */
    public static final class Builder {
        private String host = "127.0.0.1", servedModelName = "model", apiKey;
        private ChatTemplate chatTemplate;
        private int port = 8000;
        private long maxBodyBytes = DEFAULT_MAX_BODY_BYTES;
        private Duration requestTimeout = Duration.ofSeconds(600), shutdownGrace = Duration.ofSeconds(30);
        private boolean logPrompts;

        private Builder() {}

        public Builder host(String v) { host = v; return this; }
        public Builder port(int v) { port = v; return this; }
        public Builder servedModelName(String v) { servedModelName = v; return this; }
        public Builder apiKey(String v) { apiKey = v; return this; }
        public Builder maxBodyBytes(long v) { maxBodyBytes = v; return this; }
        public Builder requestTimeout(Duration v) { requestTimeout = v; return this; }
        public Builder shutdownGrace(Duration v) { shutdownGrace = v; return this; }
        /** The chat template (null: none; see {@code io.modelopt.core.chat.ChatTemplates}). */
        public Builder chatTemplate(ChatTemplate v) { chatTemplate = v; return this; }
        public Builder logPrompts(boolean v) { logPrompts = v; return this; }

        /** @throws IllegalArgumentException naming the bad value */
        public ServerOptions build() {
            return new ServerOptions(host, port, servedModelName, apiKey, maxBodyBytes, requestTimeout, shutdownGrace, chatTemplate, logPrompts);
        }
    }
}
