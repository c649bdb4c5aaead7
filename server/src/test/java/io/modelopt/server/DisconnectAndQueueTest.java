package io.modelopt.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.modelopt.scheduler.MetricsSnapshot;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.Socket;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/** A client that leaves mid-stream frees its KV blocks; a full queue answers 429 with Retry-After (on the long-context synthetic model). */
class DisconnectAndQueueTest {
    static final int LONG_TOKENS = 2000;
    static final String LONG_STREAM = "{\"prompt\":\"Once upon a time\",\"max_tokens\":" + LONG_TOKENS + ",\"temperature\":0,\"ignore_eos\":true,\"stream\":true}";

    @Test void aClientClosingItsSocketMidStreamCancelsTheRequestAndFreesItsBlocks() throws Exception {
        try (TestServer ts = TestServer.start(TestServer.longModel())) {
            byte[] body = LONG_STREAM.getBytes(StandardCharsets.UTF_8);
            int blocksWhileStreaming;
            try (Socket s = new Socket("127.0.0.1", ts.server.port())) {
                OutputStream out = s.getOutputStream();
                out.write(("POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: " + body.length + "\r\n\r\n")
                        .getBytes(StandardCharsets.US_ASCII));
                out.write(body);
                out.flush();
                BufferedReader in = new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.UTF_8));
                String status = in.readLine();
                assertTrue(status.startsWith("HTTP/1.1 200"), status);
                String line;
                while ((line = in.readLine()) != null && !line.startsWith("data: {")) { /* headers, chunk sizes */ }
                assertTrue(line != null && line.contains("\"text\""), "a first chunk: " + line);
                // the gauge is counted by the step loop after its step: wait for the count that follows this token
                long until = System.nanoTime() + 2_000_000_000L;
                while ((blocksWhileStreaming = ts.engine.metrics().kvBlocksUsed()) == 0 && System.nanoTime() < until) Thread.sleep(2);
            } // closed after the first chunk
            assertTrue(blocksWhileStreaming > 0, "the request held blocks while it streamed");
            assertEquals(0, ts.awaitBlocksFree(Duration.ofSeconds(10)), "every KV block is free once the server saw the client leave");
            MetricsSnapshot m = ts.engine.metrics();
            assertEquals(1, m.cancelled(), "the request was cancelled, not run to its end");
            assertTrue(m.generatedTokens() < LONG_TOKENS, "generation stopped early: " + m.generatedTokens() + " tokens");
            // and the server goes on
            assertEquals(200, Http.post(ts.uri("/v1/completions"), "{\"prompt\":\"Once\",\"max_tokens\":2}").statusCode());
        }
    }

    @Test void aFullQueueIs429WithRetryAfterAndEveryBlockIsFreeAfterwards() throws Exception {
        try (TestServer ts = TestServer.start(TestServer.longModel(), b -> b.maxNumSeqs(1).maxWaiting(1), o -> o)) {
            List<CompletableFuture<HttpResponse<String>>> calls = new ArrayList<>();
            String body = LONG_STREAM.replace(":" + LONG_TOKENS + ",", ":300,"); // 2 x 300 tokens in turn keep this test short
            for (int i = 0; i < 6; i++) {
                HttpRequest r = HttpRequest.newBuilder(ts.uri("/v1/completions")).POST(HttpRequest.BodyPublishers.ofString(body))
                        .header("Content-Type", "application/json").timeout(Duration.ofSeconds(60)).build();
                calls.add(Http.CLIENT.sendAsync(r, HttpResponse.BodyHandlers.ofString()));
                if (i == 0) {
                    // the first must be running before the rest arrive: while it still waits for the step loop it
                    // holds the one waiting seat, and the second would be refused too
                    long until = System.nanoTime() + 10_000_000_000L;
                    while (ts.engine.metrics().running() == 0 && !calls.get(0).isDone() && System.nanoTime() < until) Thread.sleep(1);
                }
            }
            int ok = 0, rejected = 0;
            for (var c : calls) {
                HttpResponse<String> r = c.get();
                if (r.statusCode() == 200) {
                    ok++;
                    assertTrue(r.body().endsWith("data: [DONE]\n\n"), r.body());
                    assertTrue(r.body().contains("\"finish_reason\":\"length\""), r.body());
                } else {
                    assertEquals(429, r.statusCode(), r.body());
                    assertEquals("1", r.headers().firstValue("Retry-After").orElse(null));
                    assertEquals("rate_limit_exceeded", ProtectionTest.error(r).get("code"));
                    rejected++;
                }
            }
            assertTrue(rejected >= 1 && ok >= 2, ok + " served, " + rejected + " rejected: one runs, one waits, the rest are refused");
            assertEquals(rejected, ts.engine.metrics().rejected());
            assertEquals(0, ts.awaitBlocksFree(Duration.ofSeconds(5)));
            String metrics = Http.get(ts.uri("/metrics")).body();
            assertTrue(metrics.contains("modelopt_requests_total{outcome=\"rejected\"} " + rejected), metrics);
            assertTrue(metrics.contains("modelopt_http_responses_total{path=\"/v1/completions\",status=\"429\"} " + rejected), metrics);
        }
    }
}
