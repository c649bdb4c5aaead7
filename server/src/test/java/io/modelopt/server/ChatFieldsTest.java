package io.modelopt.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.modelopt.core.chat.ChatTemplate;
import io.modelopt.core.json.Json;
import io.modelopt.core.testing.Fixtures;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** /v1/chat/completions by raw HTTP: messages as the template sees them, and the template's own refusals as 400s. */
class ChatFieldsTest {
    /** A Llama-2-style template that refuses a conversation not alternating user/assistant, as Meta's does. */
    static final String STRICT = """
            {%- for message in messages -%}
            {%- if (message['role'] == 'user') != (loop.index0 % 2 == 0) -%}
            {{- raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') -}}
            {%- endif -%}
            {%- if message['role'] == 'user' -%}{{- bos_token + '[INST] ' + message['content'] | trim + ' [/INST]' -}}
            {%- else -%}{{- ' ' + message['content'] | trim + ' ' + eos_token -}}{%- endif -%}
            {%- endfor -%}""";

    static TestServer ts;

    @BeforeAll static void start() {
        ts = TestServer.start(Fixtures.storiesGguf("f32"), b -> b, o -> o.chatTemplate(ChatTemplate.parse(STRICT).withSpecialTokens("<s>", "</s>")));
    }

    @AfterAll static void stop() { if (ts != null) ts.close(); }

    static HttpResponse<String> chat(String body) throws Exception { return Http.post(ts.uri("/v1/chat/completions"), body); }

    @Test @SuppressWarnings("unchecked")
    void textPartsAreJoinedAndTheRenderedPromptIsWhatRuns() throws Exception {
        HttpResponse<String> parts = chat("{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"Once upon \"},{\"type\":\"text\",\"text\":\"a time\"}]}],"
                + "\"max_tokens\":8,\"temperature\":0}");
        HttpResponse<String> plain = chat("{\"messages\":[{\"role\":\"user\",\"content\":\"Once upon a time\"}],\"max_completion_tokens\":8,\"temperature\":0}");
        assertEquals(200, parts.statusCode(), parts.body());
        Map<String, Object> a = Json.parseObject(parts.body()), b = Json.parseObject(plain.body());
        Map<String, Object> message = (Map<String, Object>) ((Map<String, Object>) ((List<Object>) a.get("choices")).getFirst()).get("message");
        assertEquals("assistant", message.get("role"));
        assertEquals(((Map<String, Object>) ((Map<String, Object>) ((List<Object>) b.get("choices")).getFirst()).get("message")).get("content"), message.get("content"));
        // "<s>[INST] Once upon a time [/INST]": the BOS the template writes is the only one
        int[] ids = ChatTemplate.encode(ts.model.tokenizer(), "<s>[INST] Once upon a time [/INST]");
        assertEquals((long) ids.length, ((Map<String, Object>) a.get("usage")).get("prompt_tokens"));
        assertEquals("chat.completion", a.get("object"));
    }

    @Test void aTemplatesRaiseExceptionIsA400WithItsMessage() throws Exception {
        HttpResponse<String> r = chat("{\"messages\":[{\"role\":\"user\",\"content\":\"a\"},{\"role\":\"user\",\"content\":\"b\"}]}");
        assertEquals(400, r.statusCode(), r.body());
        Map<String, Object> e = ProtectionTest.error(r);
        assertEquals("messages", e.get("param"));
        assertTrue(e.get("message").toString().contains("Conversation roles must alternate"), r.body());
    }

    @Test void malformedMessagesNameTheField() throws Exception {
        for (String bad : new String[] {"{}", "{\"messages\":[]}", "{\"messages\":\"hi\"}", "{\"messages\":[{\"content\":\"hi\"}]}",
                "{\"messages\":[{\"role\":\"user\",\"content\":5}]}", "{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"image_url\",\"image_url\":{}}]}]}",
                "{\"messages\":[{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":\"1\"}]}]}"}) {
            HttpResponse<String> r = chat(bad);
            assertEquals(400, r.statusCode(), bad + " -> " + r.body());
            assertEquals("messages", ProtectionTest.error(r).get("param"), bad + " -> " + r.body());
        }
        HttpResponse<String> top = chat("{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"top_logprobs\":2}");
        assertEquals(400, top.statusCode());
        assertEquals("top_logprobs", ProtectionTest.error(top).get("param"));
        HttpResponse<String> tools = chat("{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"tools\":[{\"type\":\"function\"}]}");
        assertEquals(400, tools.statusCode());
        assertEquals("tools", ProtectionTest.error(tools).get("param"));
    }

    @Test @SuppressWarnings("unchecked")
    void withoutMaxTokensAChatRunsToTheEndOfWhatTheKvPoolHolds() throws Exception {
        // 4 blocks of 16 tokens: less than the context of 128, as a small --kv-budget gives
        try (TestServer small = TestServer.start(Fixtures.storiesGguf("f32"), b -> b.kvBlocks(4),
                o -> o.chatTemplate(ChatTemplate.parse(STRICT).withSpecialTokens("<s>", "</s>")))) {
            HttpResponse<String> r = Http.post(small.uri("/v1/chat/completions"),
                    "{\"messages\":[{\"role\":\"user\",\"content\":\"Once upon a time\"}],\"temperature\":0,\"ignore_eos\":true}");
            assertEquals(200, r.statusCode(), r.body());
            Map<String, Object> usage = (Map<String, Object>) Json.parseObject(r.body()).get("usage");
            assertEquals(64L, (Long) usage.get("prompt_tokens") + (Long) usage.get("completion_tokens"), r.body());
        }
    }

    @Test void streamedChatChunksCarryTheRoleFirstAndEndWithDone() throws Exception {
        String sse = chat("{\"messages\":[{\"role\":\"user\",\"content\":\"Once upon a time\"}],\"max_tokens\":6,\"temperature\":0,\"stream\":true}").body();
        String[] events = sse.split("\n\n");
        assertTrue(events[0].startsWith("data: {") && events[0].contains("\"delta\":{\"role\":\"assistant\""), events[0]);
        assertTrue(events[0].contains("\"object\":\"chat.completion.chunk\""), events[0]);
        assertEquals("data: [DONE]", events[events.length - 1]);
        assertTrue(events[events.length - 2].contains("\"finish_reason\":\"length\""), sse);
    }
}
