package io.modelopt.cli.command;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.modelopt.core.testing.Fixtures;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The serve command's options; the server itself is tested in the server module, the command end to end by scripts/serve-load.sh. */
class ServeCommandTest {
    @Test void isListedAndDocumentsItsOptions() {
        CliRun help = CliRun.of("--help");
        assertTrue(help.out().contains("serve"), help.out());
        CliRun usage = CliRun.of("serve", "--help");
        for (String o : new String[] {"--host", "--port", "--served-model-name", "--api-key", "--max-num-seqs", "--max-model-len", "--ctx",
                "--kv-cache", "--kv-budget", "--quantize", "--request-timeout", "--chat-template"}) {
            assertTrue(usage.out().contains(o), o + " in\n" + usage.out());
        }
    }

    @Test void badOptionsAreUsageErrorsNamingThem() {
        String model = Fixtures.storiesGguf("f32").toString();
        CliRun noModel = CliRun.of("serve", "--port", "0");
        assertEquals(2, noModel.code());
        assertTrue(noModel.err().contains("--model"), noModel.err());
        CliRun both = CliRun.of("serve", "--model", model, "--ctx", "64", "--max-model-len", "64");
        assertEquals(2, both.code());
        assertTrue(both.err().contains("--max-model-len and --ctx"), both.err());
        CliRun timeout = CliRun.of("serve", "--model", model, "--request-timeout", "soon");
        assertEquals(2, timeout.code());
        assertTrue(timeout.err().contains("--request-timeout"), timeout.err());
        CliRun tooLong = CliRun.of("serve", "--model", model, "--port", "0", "--max-model-len", "100000");
        assertEquals(2, tooLong.code(), tooLong.toString());
        assertTrue(tooLong.err().contains("--max-model-len must be in [2, 128]"), tooLong.err());
        CliRun kv = CliRun.of("serve", "--model", model, "--kv-cache", "int3");
        assertEquals(2, kv.code());
        assertTrue(kv.err().contains("--kv-cache"), kv.err());
    }

    /** The "same output": greedy text through the server equals what `./modelopt generate` prints for the same prompt. */
    @Test void serverGreedyOutputEqualsTheGenerateCommand() throws Exception {
        String model = Fixtures.storiesGguf("q8_0").toString();
        String[] prompts = {"Once upon a time", "The little dog", "Tom had a red ball. He"};
        try (io.modelopt.core.OptimizedModel m = io.modelopt.core.ModelOptimizer.load(Path.of(model)).withThreads(2).build();
             io.modelopt.scheduler.Engine engine = io.modelopt.scheduler.Engine.start(m, io.modelopt.scheduler.EngineConfig.builder().metricsLogInterval(Duration.ZERO).build());
             io.modelopt.server.Server server = io.modelopt.server.Server.start(engine, io.modelopt.server.ServerOptions.builder().port(0).build())) {
            java.net.http.HttpClient http = java.net.http.HttpClient.newHttpClient();
            for (String prompt : prompts) {
                CliRun cli = CliRun.of("generate", "--model", model, "--prompt", prompt, "--max-tokens", "40", "--threads", "2");
                assertEquals(0, cli.code(), cli.toString());
                String body = "{\"prompt\":" + io.modelopt.core.json.Json.write(prompt) + ",\"max_tokens\":40,\"temperature\":0}";
                var response = http.send(java.net.http.HttpRequest.newBuilder(server.baseUri().resolve("/v1/completions"))
                        .POST(java.net.http.HttpRequest.BodyPublishers.ofString(body)).build(), java.net.http.HttpResponse.BodyHandlers.ofString());
                assertEquals(200, response.statusCode(), response.body());
                @SuppressWarnings("unchecked")
                var choice = (java.util.Map<String, Object>) ((java.util.List<Object>) io.modelopt.core.json.Json.parseObject(response.body()).get("choices")).getFirst();
                assertEquals(choice.get("text") + "\n", cli.out(), prompt); // generate prints the text, then a newline
            }
        }
    }

    /** `./modelopt serve` as its own process: it listens, serves, and on SIGTERM drains and closes the engine and the model. */
    @Test void theCommandServesAndDrainsOnSigterm() throws Exception {
        String javaBin = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process p = new ProcessBuilder(javaBin, "--add-modules", "jdk.incubator.vector", "--enable-native-access=ALL-UNNAMED", "-cp", System.getProperty("java.class.path"),
                "io.modelopt.cli.Main", "serve", "--model", Fixtures.storiesGguf("f32").toString(), "--port", "0", "--threads", "1", "--served-model-name", "stories")
                .redirectErrorStream(true).start();
        StringBuilder log = new StringBuilder();
        java.util.concurrent.CompletableFuture<String> address = new java.util.concurrent.CompletableFuture<>();
        Thread reader = Thread.ofVirtual().start(() -> {
            try (var in = new java.io.BufferedReader(new java.io.InputStreamReader(p.getInputStream(), java.nio.charset.StandardCharsets.UTF_8))) {
                for (String line; (line = in.readLine()) != null; ) {
                    synchronized (log) { log.append(line).append('\n'); }
                    var m = java.util.regex.Pattern.compile("serving 'stories' on (http://\\S+)/v1").matcher(line);
                    if (m.find()) address.complete(m.group(1));
                }
            } catch (java.io.IOException e) {
                address.completeExceptionally(e);
            }
            address.completeExceptionally(new IllegalStateException("the server exited"));
        });
        try {
            java.net.URI base = java.net.URI.create(address.get(60, java.util.concurrent.TimeUnit.SECONDS));
            var http = java.net.http.HttpClient.newHttpClient();
            var r = http.send(java.net.http.HttpRequest.newBuilder(base.resolve("/v1/completions"))
                    .POST(java.net.http.HttpRequest.BodyPublishers.ofString("{\"model\":\"stories\",\"prompt\":\"Once upon a time\",\"max_tokens\":8,\"temperature\":0}")).build(),
                    java.net.http.HttpResponse.BodyHandlers.ofString());
            assertEquals(200, r.statusCode(), r.body());
            assertTrue(r.body().contains("\"text\":\", there was a little girl\""), r.body());
            p.toHandle().destroy(); // SIGTERM (Process.destroy would also close our end of its output)
            assertTrue(p.waitFor(60, java.util.concurrent.TimeUnit.SECONDS), "exited after SIGTERM");
            reader.join();
            String all;
            synchronized (log) { all = log.toString(); }
            assertEquals(143, p.exitValue(), all); // 128 + SIGTERM, after the shutdown hook ran
            assertTrue(all.contains("server: shutting down (signal)") && all.contains("server: stopped"), all);
            assertTrue(all.contains("engine closed") && all.contains("KV blocks 0 used"), all);
            assertTrue(all.contains("POST /v1/completions 200 prompt_tokens=5 completion_tokens=8"), all);
        } finally {
            p.destroyForcibly();
        }
    }

    @Test void durationsAndNames() {
        assertEquals(Duration.ofSeconds(600), ServeCommand.duration(io.modelopt.cli.Args.parse(new String[0], java.util.Set.of(), java.util.Set.of()), "t", "600s"));
        for (String[] c : new String[][] {{"500ms", "PT0.5S"}, {"10m", "PT10M"}, {"1h", "PT1H"}, {"90", "PT1M30S"}, {"1.5s", "PT1.5S"}}) {
            var args = io.modelopt.cli.Args.parse(new String[] {"--t", c[0]}, java.util.Set.of("t"), java.util.Set.of());
            assertEquals(Duration.parse(c[1]), ServeCommand.duration(args, "t", "1s"), c[0]);
        }
        assertEquals("stories260K-f32", ServeCommand.defaultName(Path.of("/x/stories260K-f32.gguf")));
        assertEquals("hf", ServeCommand.defaultName(Path.of("/models/hf/")));
    }
}
