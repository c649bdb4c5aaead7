/** An OpenAI-compatible HTTP server on the continuous-batching engine: {@code jdk.httpserver} on virtual threads, our own JSON. */
module io.modelopt.server {
    requires transitive io.modelopt.scheduler;
    requires jdk.httpserver;
    exports io.modelopt.server;
}
