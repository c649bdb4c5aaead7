package io.modelopt.server;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.modelopt.core.ModelOptimizer;
import io.modelopt.core.OptimizedModel;
import io.modelopt.core.generate.GenerationOptions;
import io.modelopt.core.generate.Generator;
import io.modelopt.core.generate.TokenListener;
import io.modelopt.core.json.Json;
import io.modelopt.core.kv.KvDtype;
import io.modelopt.core.testing.Fixtures;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Greedy output through the server, plain and streamed, is what the single-sequence
 * {@code Generator} (on a contiguous KV cache, no engine) gives for the same prompt.
 */
class SameOutputTest {
    static final List<String> PROMPTS = List.of("Once upon a time", "The little dog", "Lily and Tom went to the park. They", "One day");

    @ParameterizedTest(name = "stories260K {0}")
    @ValueSource(strings = {"f32", "q8_0", "q4_0"})
    @SuppressWarnings("unchecked")
    void greedyServerOutputEqualsGenerate(String type) throws Exception {
        Path file = Fixtures.storiesGguf(type);
        GenerationOptions greedy = GenerationOptions.builder().maxTokens(40).build();
        String[] expected = new String[PROMPTS.size()];
        try (OptimizedModel model = ModelOptimizer.load(file).withKvCache(KvDtype.F32).withThreads(2).build()) {
            try (Generator g = new Generator(model.runner(), model.tokenizer())) {
                for (int i = 0; i < expected.length; i++) expected[i] = g.generate(PROMPTS.get(i), greedy, TokenListener.NONE).text();
            }
        }
        try (TestServer ts = TestServer.start(file)) {
            for (int i = 0; i < expected.length; i++) {
                String body = "{\"prompt\":" + Json.write(PROMPTS.get(i)) + ",\"max_tokens\":40,\"temperature\":0";
                HttpResponse<String> r = Http.post(ts.uri("/v1/completions"), body + "}");
                assertEquals(200, r.statusCode(), r.body());
                Map<String, Object> c = (Map<String, Object>) ((List<Object>) Json.parseObject(r.body()).get("choices")).getFirst();
                assertEquals(expected[i], c.get("text"), PROMPTS.get(i));
                assertEquals(expected[i], streamedText(Http.post(ts.uri("/v1/completions"), body + ",\"stream\":true}").body()), PROMPTS.get(i) + " (streamed)");
            }
        }
    }

    @SuppressWarnings("unchecked")
    static String streamedText(String sse) {
        StringBuilder sb = new StringBuilder();
        for (String event : sse.split("\n\n")) {
            if (!event.startsWith("data: {")) continue;
            for (Object c : (List<Object>) Json.parseObject(event.substring(6)).get("choices")) sb.append(((Map<String, Object>) c).get("text"));
        }
        return sb.toString();
    }
}
