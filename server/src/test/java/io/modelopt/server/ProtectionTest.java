package io.modelopt.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.modelopt.core.json.Json;
import io.modelopt.core.testing.Fixtures;
import java.net.http.HttpResponse;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Raw HTTP: the API key, body limit, malformed and unsupported requests, each answered with OpenAI's error body naming the field. */
class ProtectionTest {
    static final String KEY = "Bearer sk-right";
    static TestServer ts;

    @BeforeAll static void start() { ts = TestServer.start(Fixtures.storiesGguf("f32"), b -> b, o -> o.apiKey("sk-right").maxBodyBytes(64 * 1024)); }

    @AfterAll static void stop() { if (ts != null) ts.close(); }

    static HttpResponse<String> complete(String body) throws Exception {
        return Http.post(ts.uri("/v1/completions"), body, "Authorization", KEY);
    }

    /** The error object of a response, checked for OpenAI's four fields. */
    @SuppressWarnings("unchecked")
    static Map<String, Object> error(HttpResponse<String> r) {
        Map<String, Object> e = (Map<String, Object>) Json.parseObject(r.body()).get("error");
        assertTrue(e != null && e.containsKey("message") && e.containsKey("type") && e.containsKey("param") && e.containsKey("code"), r.body());
        return e;
    }

    @Test void apiKeyIsRequiredOnTheApiButNotOnHealthOrMetrics() throws Exception {
        String body = "{\"prompt\":\"Once\",\"max_tokens\":2}";
        HttpResponse<String> none = Http.post(ts.uri("/v1/completions"), body);
        assertEquals(401, none.statusCode(), none.body());
        assertEquals("invalid_api_key", error(none).get("code"));
        assertEquals(401, Http.post(ts.uri("/v1/completions"), body, "Authorization", "Bearer sk-wrong").statusCode());
        assertEquals(401, Http.post(ts.uri("/v1/completions"), body, "Authorization", "Bearer sk-right-but-longer").statusCode());
        assertEquals(401, Http.post(ts.uri("/v1/completions"), body, "Authorization", "sk-right").statusCode());
        assertEquals(401, Http.get(ts.uri("/v1/models")).statusCode());
        assertEquals(200, complete(body).statusCode());
        assertEquals(200, Http.get(ts.uri("/health")).statusCode());
        assertEquals(200, Http.get(ts.uri("/metrics")).statusCode());
    }

    @Test void malformedJsonIsA400() throws Exception {
        for (String bad : new String[] {"{\"prompt\": \"x\",", "not json", "[1, 2]", ""}) {
            HttpResponse<String> r = complete(bad);
            assertEquals(400, r.statusCode(), bad + " -> " + r.body());
            assertEquals("invalid_request_error", error(r).get("type"));
        }
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            "max_tokens|\"16\"", "max_tokens|1.5", "max_tokens|0", "temperature|\"hot\"", "temperature|-1", "top_p|2", "stream|\"yes\"",
            "n|0", "stop|5", "seed|\"x\"", "logit_bias|[1]", "prompt|12.5", "prompt|{}", "stream_options|true", "presence_penalty|3",
            "top_k|\"many\"", "min_p|7", "repetition_penalty|0", "logprobs|99", "model|\"other-model\""})
    void wrongTypesAndValuesNameTheField(String field, String value) throws Exception {
        String body = field.equals("prompt") ? "{\"prompt\":" + value + "}" : "{\"prompt\":\"Once\",\"max_tokens\":2,\"" + field + "\":" + value + "}";
        HttpResponse<String> r = complete(body);
        int expected = field.equals("model") ? 404 : 400;
        assertEquals(expected, r.statusCode(), body + " -> " + r.body());
        assertEquals(field, error(r).get("param"), r.body());
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            "tools|[{\"type\":\"function\",\"function\":{\"name\":\"f\"}}]", "functions|[{\"name\":\"f\"}]",
            "response_format|{\"type\":\"json_object\"}", "echo|true"})
    void unsupportedFieldsAreRefusedByName(String field, String value) throws Exception {
        HttpResponse<String> r = complete("{\"prompt\":\"Once\",\"max_tokens\":2,\"" + field + "\":" + value + "}");
        assertEquals(400, r.statusCode(), r.body());
        assertEquals(field, error(r).get("param"));
        assertEquals("unsupported_parameter", error(r).get("code"));
        assertTrue(((String) error(r).get("message")).contains(field), r.body());
    }

    @Test void ignoredAndUnknownFieldsAreAccepted() throws Exception {
        HttpResponse<String> r = complete("{\"prompt\":\"Once\",\"max_tokens\":2,\"user\":\"u1\",\"echo\":false,\"response_format\":{\"type\":\"text\"},"
                + "\"tools\":[],\"some_future_field\":{\"a\":1},\"store\":false}");
        assertEquals(200, r.statusCode(), r.body());
    }

    @Test void bodiesOverTheLimitAre413() throws Exception {
        String big = "{\"prompt\":\"" + "a".repeat(100 * 1024) + "\"}";
        HttpResponse<String> r = complete(big);
        assertEquals(413, r.statusCode(), r.body());
        assertEquals("request_too_large", error(r).get("code"));
        assertEquals(200, complete("{\"prompt\":\"Once\",\"max_tokens\":1}").statusCode(), "the server goes on");
    }

    @Test void contextOverflowUnknownPathsAndMethods() throws Exception {
        HttpResponse<String> r = complete("{\"prompt\":\"Once\",\"max_tokens\":1000}");
        assertEquals(400, r.statusCode(), r.body());
        assertEquals("max_tokens", error(r).get("param"));
        assertTrue(((String) error(r).get("message")).contains("context length of 128"), r.body());
        assertEquals(404, Http.get(ts.uri("/v1/nothing"), "Authorization", KEY).statusCode());
        HttpResponse<String> get = Http.get(ts.uri("/v1/completions"), "Authorization", KEY);
        assertEquals(405, get.statusCode());
        assertEquals("POST", get.headers().firstValue("Allow").orElse(""));
        HttpResponse<String> ids = complete("{\"prompt\":[1, 99999]}");
        assertEquals(400, ids.statusCode());
        assertEquals("prompt", error(ids).get("param"));
    }

    @Test void chatWithoutATemplateIsA400NamingTheProblem() throws Exception {
        HttpResponse<String> r = Http.post(ts.uri("/v1/chat/completions"), "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}", "Authorization", KEY);
        assertEquals(400, r.statusCode(), r.body());
        assertEquals("messages", error(r).get("param"));
        assertTrue(((String) error(r).get("message")).contains("no chat template"), r.body());
    }
}
