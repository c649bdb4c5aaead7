package io.modelopt.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.modelopt.core.ModelOptimizer;
import io.modelopt.core.OptimizedModel;
import io.modelopt.core.testing.Fixtures;
import io.modelopt.scheduler.Engine;
import io.modelopt.scheduler.EngineConfig;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** Health while loading and draining, the shutdown grace, and the per-request timeout. */
class LifecycleTest {
    static final String LONG = "{\"prompt\":\"Once upon a time\",\"max_tokens\":120,\"temperature\":0,\"ignore_eos\":true";
    /** Seconds of work on the long-context model: still running when the test closes the server. */
    static final String LONGER = "{\"prompt\":\"Once upon a time\",\"max_tokens\":2000,\"temperature\":0,\"ignore_eos\":true";

    @Test void healthAndRequestsAre503UntilTheEngineIsReady() throws Exception {
        Server server = Server.starting(ServerOptions.builder().port(0).build());
        try (OptimizedModel model = ModelOptimizer.load(Fixtures.storiesGguf("f32")).withThreads(2).build()) {
            HttpResponse<String> health = Http.get(server.baseUri().resolve("/health"));
            assertEquals(503, health.statusCode());
            assertTrue(health.body().contains("loading"), health.body());
            HttpResponse<String> early = Http.post(server.baseUri().resolve("/v1/completions"), "{\"prompt\":\"Once\"}");
            assertEquals(503, early.statusCode());
            assertTrue(early.headers().firstValue("Retry-After").isPresent());
            assertTrue(ProtectionTest.error(early).get("message").toString().contains("loading"), early.body());
            try (Engine engine = Engine.start(model, EngineConfig.builder().metricsLogInterval(Duration.ZERO).build())) {
                server.ready(engine);
                assertEquals(200, Http.get(server.baseUri().resolve("/health")).statusCode());
                assertEquals(200, Http.post(server.baseUri().resolve("/v1/completions"), "{\"prompt\":\"Once\",\"max_tokens\":2}").statusCode());
                server.close();
            }
        } finally {
            server.close();
        }
    }

    @Test void drainingAnswers503ToNewWorkWhileRunningRequestsFinishWithinTheGrace() throws Exception {
        try (TestServer ts = TestServer.start(TestServer.longModel(), b -> b, o -> o.shutdownGrace(Duration.ofSeconds(60)))) {
            CompletableFuture<HttpResponse<Stream<String>>> running = Http.CLIENT.sendAsync(post(ts, LONGER + ",\"stream\":true}"), HttpResponse.BodyHandlers.ofLines());
            HttpResponse<Stream<String>> response = running.get(); // headers come with the first token: it runs now
            assertEquals(200, response.statusCode());
            Thread closer = Thread.ofVirtual().start(ts.server::close);
            awaitHealth(ts, 503);
            HttpResponse<String> refused = Http.post(ts.uri("/v1/completions"), "{\"prompt\":\"Once\",\"max_tokens\":2}");
            assertEquals(503, refused.statusCode());
            assertTrue(ProtectionTest.error(refused).get("message").toString().contains("shutting down"), refused.body());
            String all = String.join("\n", response.body().toList()).strip();
            assertTrue(all.contains("\"finish_reason\":\"length\"") && all.endsWith("data: [DONE]"), "the running request finished: " + all);
            closer.join();
            assertEquals(0, ts.engine.metrics().cancelled());
        }
    }

    @Test void pastTheGraceRunningStreamsAreCancelledWithAnErrorEvent() throws Exception {
        try (TestServer ts = TestServer.start(TestServer.longModel(), b -> b, o -> o.shutdownGrace(Duration.ZERO))) {
            HttpResponse<Stream<String>> response = Http.CLIENT.send(post(ts, LONGER + ",\"stream\":true}"), HttpResponse.BodyHandlers.ofLines());
            assertEquals(200, response.statusCode());
            ts.server.close();
            String all = String.join("\n", response.body().toList()).strip();
            assertTrue(all.contains("\"code\":\"service_unavailable\"") && all.endsWith("data: [DONE]"), all);
            assertEquals(1, ts.engine.metrics().cancelled());
            assertEquals(0, ts.awaitBlocksFree(Duration.ofSeconds(5)));
        }
    }

    @Test void aRequestPastItsTimeoutEndsWith408OrAnErrorEvent() throws Exception {
        // 1 ms: past before the first token on any machine (a longer one raced a fast machine's 120 tokens)
        try (TestServer ts = TestServer.start(Fixtures.storiesGguf("f32"), b -> b, o -> o.requestTimeout(Duration.ofMillis(1)))) {
            HttpResponse<String> plain = Http.post(ts.uri("/v1/completions"), LONG + "}");
            assertEquals(408, plain.statusCode(), plain.body());
            assertEquals("request_timeout", ProtectionTest.error(plain).get("code"));
            // streamed: before the first token the headers are not sent yet, so it is a 408 too; after it, an error event
            HttpResponse<String> streamed = Http.post(ts.uri("/v1/completions"), LONG + ",\"stream\":true}");
            if (streamed.statusCode() == 408) assertEquals("request_timeout", ProtectionTest.error(streamed).get("code"));
            else assertTrue(streamed.body().contains("\"code\":\"request_timeout\"") && streamed.body().endsWith("data: [DONE]\n\n"), streamed.body());
            assertEquals(2, ts.engine.metrics().expired());
            assertEquals(0, ts.awaitBlocksFree(Duration.ofSeconds(5)));
        }
    }

    private static HttpRequest post(TestServer ts, String body) {
        return HttpRequest.newBuilder(ts.uri("/v1/completions")).POST(HttpRequest.BodyPublishers.ofString(body)).timeout(Duration.ofSeconds(60)).build();
    }

    private static void awaitHealth(TestServer ts, int status) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        int got;
        while ((got = Http.get(ts.uri("/health")).statusCode()) != status && System.nanoTime() < deadline) Thread.sleep(10);
        assertEquals(status, got);
    }
}
