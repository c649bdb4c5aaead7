package io.modelopt.cli.command;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.modelopt.core.testing.Fixtures;
import org.junit.jupiter.api.Test;

class GenerateCommandTest {
    /** llama.cpp's greedy 48 tokens for "Once upon a time" (stories260K/reference.json). */
    private static final String REFERENCE = ", there was a little girl named Lily. She loved to play outside in the park. "
            + "One day, she saw a big, red ball. She wanted to play with it,";

    private static String model() { return Fixtures.storiesGguf("f32").toString(); }

    @Test
    void greedyGenerationPrintsLlamaCppsTextAndStats() {
        CliRun r = CliRun.of("generate", "--model", model(), "--prompt", "Once upon a time", "--max-tokens", "48", "--threads", "2", "--kv", "f32");
        assertEquals(0, r.code(), r.toString());
        assertEquals(REFERENCE + "\n", r.out());
        assertTrue(r.err().matches("(?s)prompt 5 tokens, generated 48 tokens \\(max_tokens\\), TTFT [0-9.]+ ms, prefill [0-9.]+ tokens/s, decode [0-9.]+ tokens/s, greedy\\n"), r.err());
    }

    @Test
    void stopStringEchoAndSeededSampling() {
        CliRun stop = CliRun.of("generate", "--model", model(), "--prompt", "Once upon a time", "--stop", " Lily.", "--echo", "--threads", "2");
        assertEquals(0, stop.code(), stop.toString());
        assertEquals("Once upon a time, there was a little girl named\n", stop.out());
        assertTrue(stop.err().contains("(stop_string)"), stop.err());

        String[] sample = {"generate", "--model", model(), "--prompt", "The little dog", "--max-tokens", "30", "--temperature", "0.8",
                "--top-k", "20", "--top-p", "0.9", "--min-p", "0.02", "--repeat-penalty", "1.1", "--seed", "42", "--threads", "2"};
        CliRun a = CliRun.of(sample), b = CliRun.of(sample);
        assertEquals(0, a.code(), a.toString());
        assertEquals(a.out(), b.out());
        assertTrue(a.err().contains("seed 42"), a.err());
    }

    @Test
    void backendsAreChosenByName() {
        CliRun cpu = CliRun.of("generate", "--model", model(), "--prompt", "x", "--max-tokens", "2", "--backend", "cpu");
        assertEquals(0, cpu.code(), cpu.toString());
        CliRun none = CliRun.of("generate", "--model", model(), "--prompt", "x", "--backend", "tpu");
        assertEquals(2, none.code());
        assertTrue(none.err().contains("no backend named 'tpu'") && none.err().contains("[cpu"), none.err());
    }

    @Test
    void badInputIsAUsageError() {
        CliRun unknown = CliRun.of("generate", "--model", model(), "--prompt", "x", "--tempreature", "1");
        assertEquals(2, unknown.code());
        assertTrue(unknown.err().contains("unknown option --tempreature"), unknown.err());

        CliRun missing = CliRun.of("generate", "--model", "/no/such/model.gguf", "--prompt", "x");
        assertEquals(2, missing.code());
        assertTrue(missing.err().contains("/no/such/model.gguf"), missing.err());

        CliRun noPrompt = CliRun.of("generate", "--model", model());
        assertEquals(2, noPrompt.code());
        assertTrue(noPrompt.err().contains("--prompt"), noPrompt.err());

        CliRun topP = CliRun.of("generate", "--model", model(), "--prompt", "x", "--top-p", "1.5");
        assertEquals(2, topP.code());
        assertTrue(topP.err().contains("top-p must be in (0, 1]"), topP.err());

        CliRun ctx = CliRun.of("generate", "--model", model(), "--prompt", "x", "--ctx", "4096");
        assertEquals(2, ctx.code());
        assertTrue(ctx.err().contains("--ctx 4096 exceeds the model's trained context length 128"), ctx.err());

        CliRun kv = CliRun.of("generate", "--model", model(), "--prompt", "x", "--kv", "q8");
        assertEquals(2, kv.code());
        assertTrue(kv.err().contains("unknown KV cache type") && kv.err().contains("int8"), kv.err());

        // a prompt that does not leave room in the context: the numbers are named
        CliRun full = CliRun.of("generate", "--model", model(), "--prompt", "Once upon a time", "--ctx", "5", "--threads", "1");
        assertEquals(2, full.code(), full.toString());
        assertTrue(full.err().contains("the prompt has 5 tokens but the context length is 5"), full.err());
    }

    @Test
    void aFullContextEndsGenerationWithItsReason() {
        CliRun r = CliRun.of("generate", "--model", model(), "--prompt", "Once upon a time", "--ctx", "12", "--max-tokens", "48", "--threads", "1");
        assertEquals(0, r.code(), r.toString());
        assertTrue(r.err().startsWith("prompt 5 tokens, generated 7 tokens (context_full)"), r.err());
        assertTrue(REFERENCE.startsWith(r.out().strip()), r.out());
    }
}
