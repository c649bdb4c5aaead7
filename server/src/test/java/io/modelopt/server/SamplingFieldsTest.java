package io.modelopt.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.modelopt.core.json.Json;
import io.modelopt.core.testing.Fixtures;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** logprobs, logit_bias, the OpenAI penalties, seeds and stop strings reach the engine and come back in OpenAI's layout. */
class SamplingFieldsTest {
    static TestServer ts;

    @BeforeAll static void start() { ts = TestServer.start(Fixtures.storiesGguf("f32")); }

    @AfterAll static void stop() { if (ts != null) ts.close(); }

    @SuppressWarnings("unchecked")
    static Map<String, Object> choice(String body) throws Exception {
        HttpResponse<String> r = Http.post(ts.uri("/v1/completions"), body);
        assertEquals(200, r.statusCode(), r.body());
        return (Map<String, Object>) ((List<Object>) Json.parseObject(r.body()).get("choices")).getFirst();
    }

    static final String GREEDY = "{\"prompt\":\"Once upon a time\",\"max_tokens\":12,\"temperature\":0";

    @Test @SuppressWarnings("unchecked")
    void logprobsListTheChosenTokenAndTheTopAlternatives() throws Exception {
        Map<String, Object> c = choice(GREEDY + ",\"logprobs\":3}");
        Map<String, Object> lp = (Map<String, Object>) c.get("logprobs");
        List<Object> tokens = (List<Object>) lp.get("tokens"), chosen = (List<Object>) lp.get("token_logprobs"),
                tops = (List<Object>) lp.get("top_logprobs"), offsets = (List<Object>) lp.get("text_offset");
        assertEquals(12, tokens.size());
        assertEquals(c.get("text"), String.join("", tokens.stream().map(Object::toString).toList()).replaceFirst("^ ", " "));
        for (int i = 0; i < tokens.size(); i++) {
            Map<String, Object> top = (Map<String, Object>) tops.get(i);
            assertEquals(3, top.size());
            double best = top.values().stream().mapToDouble(v -> ((Number) v).doubleValue()).max().orElseThrow();
            double got = ((Number) chosen.get(i)).doubleValue();
            assertTrue(got <= 0, "a log probability");
            assertEquals(best, got, 1e-9, "greedy takes the most likely token");
            assertEquals(top.get(tokens.get(i)), chosen.get(i));
        }
        assertEquals(0L, offsets.getFirst());
        // streamed: one token's lists per chunk, with running offsets
        String sse = Http.post(ts.uri("/v1/completions"), GREEDY + ",\"logprobs\":0,\"stream\":true}").body();
        int chunks = 0;
        for (String line : sse.split("\n\n")) {
            if (!line.startsWith("data: {")) continue;
            Map<String, Object> ch = (Map<String, Object>) ((List<Object>) Json.parseObject(line.substring(6)).get("choices")).getFirst();
            if (ch.get("logprobs") instanceof Map<?, ?> m) {
                chunks++;
                assertEquals(1, ((List<?>) m.get("tokens")).size());
                assertTrue(((Map<?, ?>) ((List<?>) m.get("top_logprobs")).getFirst()).isEmpty(), "logprobs 0: the chosen token only");
            }
        }
        assertEquals(12, chunks);
    }

    @Test @SuppressWarnings("unchecked")
    void logitBiasAndPenaltiesChangeTheGreedyOutput() throws Exception {
        String plain = (String) choice(GREEDY + "}").get("text");
        int forced = ts.model.tokenizer().encode(" dog", false, false)[0];
        Map<String, Object> biased = choice(GREEDY + ",\"logprobs\":0,\"logit_bias\":{\"" + forced + "\":100}}");
        List<Object> tokens = (List<Object>) ((Map<String, Object>) biased.get("logprobs")).get("tokens");
        for (Object t : tokens) assertEquals(new String(ts.model.tokenizer().tokenBytes(forced), java.nio.charset.StandardCharsets.UTF_8), t);
        String plain40 = (String) choice(GREEDY + ",\"max_tokens\":40}").get("text");
        String penalized = (String) choice(GREEDY + ",\"max_tokens\":40,\"frequency_penalty\":2,\"presence_penalty\":2}").get("text");
        assertNotEquals(plain40, penalized, "penalties move the greedy path");
        String banned = (String) choice(GREEDY + ",\"logit_bias\":{\"" + ts.model.tokenizer().idOf(",") + "\":-100}}").get("text");
        assertTrue(!banned.startsWith(","), banned);
    }

    @Test void seedsRepeatAndStopStringsCut() throws Exception {
        String sampled = "{\"prompt\":\"The little dog\",\"max_tokens\":16,\"temperature\":0.9,\"top_p\":0.95,\"top_k\":40,\"min_p\":0.02,\"repetition_penalty\":1.1,\"seed\":42}";
        assertEquals(choice(sampled).get("text"), choice(sampled).get("text"));
        Map<String, Object> stopped = choice(GREEDY + ",\"max_tokens\":48,\"stop\":[\" Lily.\", \"zzz\"]}");
        assertEquals(", there was a little girl named", stopped.get("text"));
        assertEquals("stop", stopped.get("finish_reason"));
    }
}
