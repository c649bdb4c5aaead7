package io.modelopt.core.generate;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.modelopt.core.backend.cpu.CpuBackend;
import io.modelopt.core.engine.ModelRunner;
import io.modelopt.core.engine.RunnerOptions;
import io.modelopt.core.json.Json;
import io.modelopt.core.kv.KvDtype;
import io.modelopt.core.model.ModelSource;
import io.modelopt.core.loader.ModelSources;
import io.modelopt.core.sampling.SamplingParams;
import io.modelopt.core.testing.Fixtures;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Generation with the real stories260K model and its real tokenizer (GGUF f32 and the HF
 * directory) against llama.cpp's greedy generations in the fixtures' {@code reference.json}
 * (F32 KV cache, prompt with BOS, 48 tokens).
 */
class GeneratorFixtureTest {

    private static Path model(String format) {
        return format.equals("gguf") ? Fixtures.storiesGguf("f32") : Fixtures.storiesHf();
    }

    private static RunnerOptions options() {
        return RunnerOptions.builder().threads(2).kvDtype(KvDtype.F32).build();
    }

    @SuppressWarnings("unchecked")
    private static List<Map<String, Object>> prompts() throws Exception {
        Map<String, Object> ref = Json.parseObject(Files.readString(Fixtures.file("stories260K/reference.json")));
        return (List<Map<String, Object>>) ref.get("prompts");
    }

    private static int[] ints(Object list) {
        return ((List<?>) list).stream().mapToInt(o -> ((Number) o).intValue()).toArray();
    }

    @ParameterizedTest @ValueSource(strings = {"gguf", "hf"})
    void greedyGenerationMatchesLlamaCppTextAndIds(String format) throws Exception {
        try (ModelSource src = ModelSources.open(model(format)); ModelRunner runner = new CpuBackend().load(src, options());
             Generator g = new Generator(runner, src.tokenizer())) {
            for (Map<String, Object> p : prompts()) {
                String prompt = (String) p.get("prompt");
                Map<?, ?> llama = (Map<?, ?>) p.get("llama_cpp");
                int[] expectedIds = ints(llama.get("gen_ids"));
                GeneratorTest.Recorder rec = new GeneratorTest.Recorder();
                GenerationResult r = g.generate(prompt, GenerationOptions.builder().maxTokens(expectedIds.length).build(), rec);
                assertArrayEquals(ints(p.get("prompt_ids")), r.promptTokenIds(), format + " prompt ids of '" + prompt + "'");
                assertArrayEquals(expectedIds, r.tokenIds(), format + " greedy ids of '" + prompt + "'");
                assertEquals(llama.get("gen_text"), r.text(), format + " text of '" + prompt + "'");
                assertEquals(FinishReason.MAX_TOKENS, r.finishReason());
                assertEquals(r.text(), rec.joined(), "streamed pieces concatenate to the text");
                assertEquals(Arrays.stream(expectedIds).boxed().toList(), rec.ids);
                assertEquals(expectedIds.length - 1, r.timings().decodeSteps());
            }
        }
    }

    @ParameterizedTest @ValueSource(strings = {"gguf"})
    void stopStringsSamplingAndTheDefaultF16Cache(String format) throws Exception {
        try (ModelSource src = ModelSources.open(model(format));
             ModelRunner runner = new CpuBackend().load(src, RunnerOptions.builder().threads(2).build());
             Generator g = new Generator(runner, src.tokenizer())) {
            // reference: ", there was a little girl named Lily. She loved to play outside in the park. ..."
            GeneratorTest.Recorder rec = new GeneratorTest.Recorder();
            GenerationResult stop = g.generate("Once upon a time", GenerationOptions.builder().maxTokens(48).stopString(" Lily.").build(), rec);
            assertEquals(", there was a little girl named", stop.text());
            assertEquals(FinishReason.STOP_STRING, stop.finishReason());
            assertEquals(stop.text(), rec.joined());
            assertFalse(String.join("", rec.pieces).contains("Lily"), "no part of the stop string was streamed");

            SamplingParams sp = SamplingParams.builder().temperature(0.9f).seed(31337).build();
            GenerationOptions opts = GenerationOptions.builder().maxTokens(40).sampling(sp).build();
            GenerationResult a = g.generate("The little dog", opts, TokenListener.NONE);
            GenerationResult b = g.generate("The little dog", opts, TokenListener.NONE);
            assertArrayEquals(a.tokenIds(), b.tokenIds());
            assertEquals(a.text(), b.text());
            GenerationResult c = g.generate("The little dog", GenerationOptions.builder().maxTokens(40)
                    .sampling(sp.toBuilder().seed(31338).build()).build(), TokenListener.NONE);
            assertFalse(Arrays.equals(a.tokenIds(), c.tokenIds()), "another seed gives another story");
            assertTrue(a.text().length() > 20, a.text());

            // empty prompt: BOS only; the first token's leading space is dropped
            GenerationResult fresh = g.generate("", GenerationOptions.builder().maxTokens(10).build(), TokenListener.NONE);
            assertArrayEquals(new int[] {1}, fresh.promptTokenIds());
            assertEquals(src.tokenizer().decode(fresh.tokenIds(), true), fresh.text());
            assertFalse(fresh.text().startsWith(" "), fresh.text());
        }
    }
}
