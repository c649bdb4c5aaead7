package io.modelopt.cli.command;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.modelopt.core.testing.Fixtures;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PerplexityCommandTest {
    private static String model() { return Fixtures.storiesGguf("f32").toString(); }

    private static String fiction() { return Fixtures.file("corpora/brown/fiction-test.txt").toString(); }

    private static double value(String line, String key) {
        assertTrue(line.startsWith(key + ": "), line);
        return Double.parseDouble(line.substring(key.length() + 2).trim());
    }

    @Test
    void llamaCppMethodMatchesLlamaPerplexity() {
        // llama-perplexity -m stories260K-f32.gguf -f fiction-test.txt -c 128: 24.6898 +/- 0.50541 (F16 KV), 293 windows, 18,459 scored
        CliRun r = CliRun.of("perplexity", "--model", model(), "--text", fiction(), "--ctx", "128", "--threads", "2");
        assertEquals(0, r.code(), r.toString());
        double ppl = value(r.lastLine(), "perplexity");
        assertEquals(24.6898, ppl, 24.6898 * 1e-3, r.out());
        assertTrue(r.out().contains("tokens: 37528\n"), r.out());
        assertTrue(r.out().contains("windows: 293 x 128 tokens (llama.cpp method, KV f16)\n"), r.out());
        assertTrue(r.out().contains("scored tokens: 18459\n"), r.out());
        String pm = r.out().lines().filter(l -> l.startsWith("+/-: ")).findFirst().orElseThrow();
        assertEquals(0.50541, value(pm, "+/-"), 0.005, r.out());
        assertTrue(r.err().contains("perplexity 293/293 (100%)"), "progress on stderr (plain lines off a terminal): " + r.err());
    }

    @Test
    void windowsMethodAndChunks() {
        CliRun r = CliRun.of("perplexity", "--model", model(), "--text", fiction(), "--ctx", "64", "--method", "windows", "--chunks", "20",
                "--kv", "f32", "--threads", "2");
        assertEquals(0, r.code(), r.toString());
        assertTrue(r.out().contains("windows: 20 x 64 tokens (windows method, KV f32)\n"), r.out());
        assertTrue(r.out().contains("scored tokens: " + 20 * 63 + "\n"), r.out());
        double ppl = value(r.lastLine(), "perplexity");
        assertTrue(ppl > 5 && ppl < 200, r.out());
    }

    @Test
    void badInputIsAUsageError(@TempDir Path tmp) throws Exception {
        CliRun missing = CliRun.of("perplexity", "--model", model(), "--text", tmp.resolve("nope.txt").toString());
        assertEquals(2, missing.code(), missing.toString());
        assertTrue(missing.err().contains("no such file") && missing.err().contains("nope.txt"), missing.err());

        CliRun unknown = CliRun.of("perplexity", "--model", model(), "--text", fiction(), "--context", "128");
        assertEquals(2, unknown.code());
        assertTrue(unknown.err().contains("unknown option --context"), unknown.err());

        CliRun big = CliRun.of("perplexity", "--model", model(), "--text", fiction(), "--ctx", "1024");
        assertEquals(2, big.code());
        assertTrue(big.err().contains("--ctx 1024 exceeds the model's trained context length 128"), big.err());

        Path small = Files.writeString(tmp.resolve("small.txt"), "Once upon a time there was a dog.");
        CliRun shortText = CliRun.of("perplexity", "--model", model(), "--text", small.toString(), "--ctx", "128");
        assertEquals(2, shortText.code());
        assertTrue(shortText.err().contains("fewer than one window of --ctx 128"), shortText.err());

        Path binary = Files.write(tmp.resolve("bin.txt"), new byte[] {(byte) 0xff, (byte) 0xfe, 0x41});
        CliRun notText = CliRun.of("perplexity", "--model", model(), "--text", binary.toString());
        assertEquals(2, notText.code());
        assertTrue(notText.err().contains("is not UTF-8 text"), notText.err());

        CliRun method = CliRun.of("perplexity", "--model", model(), "--text", fiction(), "--method", "gptq");
        assertEquals(2, method.code());
        assertTrue(method.err().contains("--method must be llama.cpp or windows"), method.err());

        CliRun noModel = CliRun.of("perplexity", "--text", fiction());
        assertEquals(2, noModel.code());
        assertTrue(noModel.err().contains("missing required option --model"), noModel.err());
    }
}
