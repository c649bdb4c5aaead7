package io.modelopt.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.modelopt.core.ProgressListener;
import io.modelopt.core.json.Json;
import io.modelopt.core.synthetic.SyntheticModel;
import io.modelopt.core.synthetic.SyntheticSpec;
import io.modelopt.core.tensor.GgmlType;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The bounded load test the docs run on the 125M model ({@code scripts/ServeLoad.java}), here on
 * the small synthetic {@code micro} model to keep CI short: 32 concurrent streaming clients
 * against 4 seats and a queue of 8, so many are refused with 429 and retry; nothing else may
 * fail, every request is served in the end, and every KV block is free afterwards.
 */
class LoadTest {
    @Test @SuppressWarnings("unchecked")
    void thirtyTwoStreamingClientsGetTokensOr429AndLeaveNoBlockInUse(@TempDir Path dir) throws Exception {
        Path model = dir.resolve("micro-f32.gguf");
        SyntheticModel.of(SyntheticSpec.MICRO, GgmlType.F32, SyntheticModel.DEFAULT_SEED).writeGguf(model, ProgressListener.NONE);
        try (TestServer ts = TestServer.start(model, b -> b.maxNumSeqs(4).maxWaiting(8), o -> o)) {
            Path out = dir.resolve("load.json");
            Path script = Path.of(System.getProperty("modelopt.project.dir", "..")).resolve("scripts/ServeLoad.java");
            Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(), script.toString(),
                    "--url", ts.server.baseUri().toString(), "--clients", "32", "--requests", "48", "--prompt-tokens", "16", "--max-tokens", "16", "--warmup", "1",
                    "--json", out.toString()).redirectErrorStream(true).start();
            String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertTrue(p.waitFor(120, TimeUnit.SECONDS), output);
            assertEquals(0, p.exitValue(), output);
            Map<String, Object> r = Json.parseObject(Files.readString(out));
            long ok = (Long) r.get("ok"), rejected = (Long) r.get("rejected_429");
            assertEquals(0L, r.get("errors"), output);
            assertEquals(48, ok, "every request was served in the end (a 429 is retried after its Retry-After): " + output);
            // 32 at once against 4 seats and 8 places in the queue: some are refused (about 20 at first, then their retries)
            assertTrue(rejected >= 1, "429s beyond the queue limit: " + output);
            assertEquals(0L, r.get("kv_blocks_used_after"), output);
            assertEquals(rejected, ts.engine.metrics().rejected(), "the client's 429s are the engine's rejections");
            assertEquals((ok + 1) * 16, ts.engine.metrics().generatedTokens(), "every served request (and the warm-up) generated all its tokens");
            assertEquals(0, ts.awaitBlocksFree(Duration.ofSeconds(1)));
            Map<String, Object> ttft = (Map<String, Object>) r.get("server_ttft_ms");
            assertEquals(ok, ttft.get("count"), output);
            System.out.println(output);
        }
    }
}
