package io.modelopt.core.chat;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

/**
 * The real (long, tool-calling) templates llama.cpp keeps in models/templates (resources
 * llama-cpp-models-templates/, see SOURCE.md there): every one parses, and renders a
 * conversation with an OpenAI-style tools list. No expected text here (llama.cpp's tests check
 * these through its tool-call parsers, not by full prompt); what they must not do is fail on a
 * construct the subset lacks.
 */
class ModelTemplatesTest {
    private static final List<ChatMessage> CHAT = List.of(ChatMessage.user("Hello"), ChatMessage.assistant("Hi there"), ChatMessage.user("Who are you"));

    static Map<String, Object> tools() {
        Map<String, Object> params = new LinkedHashMap<>();
        params.put("type", "object");
        params.put("properties", Map.of("city", Map.of("type", "string", "description", "the city")));
        params.put("required", List.of("city"));
        Map<String, Object> fn = new LinkedHashMap<>();
        fn.put("name", "get_weather");
        fn.put("description", "Get the weather");
        fn.put("parameters", params);
        Map<String, Object> tool = new LinkedHashMap<>();
        tool.put("type", "function");
        tool.put("function", fn);
        return Map.of("tools", List.of(tool));
    }

    private static ChatTemplate load(String name) throws IOException {
        return ChatTemplate.parse(DocumentedPromptFormatsTest.resource("llama-cpp-models-templates/" + name)).withSpecialTokens("<s>", "</s>");
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "CohereForAI-c4ai-command-r-plus-tool_use.jinja", "CohereForAI-c4ai-command-r7b-12-2024-tool_use.jinja", "NousResearch-Hermes-2-Pro-Llama-3-8B-tool_use.jinja",
        "NousResearch-Hermes-3-Llama-3.1-8B-tool_use.jinja", "Qwen-Qwen2.5-7B-Instruct.jinja", "deepseek-ai-DeepSeek-R1-Distill-Llama-8B.jinja",
        "deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja", "google-gemma-2-2b-it.jinja", "llama-cpp-deepseek-r1.jinja",
        "meetkai-functionary-medium-v3.1.jinja", "meetkai-functionary-medium-v3.2.jinja", "meta-llama-Llama-3.1-8B-Instruct.jinja",
        "meta-llama-Llama-3.2-3B-Instruct.jinja", "meta-llama-Llama-3.3-70B-Instruct.jinja", "microsoft-Phi-3.5-mini-instruct.jinja",
        "mistralai-Mistral-Nemo-Instruct-2407.jinja"})
    void rendersWithTools(String name) throws IOException {
        String out = load(name).render(CHAT, true, tools());
        assertTrue(out.contains("Who are you"), out);
    }

    /** firefunction-v2 wants its tools in a variable of its own ({@code functions}): it parses, and fails as Jinja2 does, naming it. */
    @Test
    void firefunctionWantsItsOwnVariable() throws IOException {
        ChatTemplate t = load("fireworks-ai-llama-3-firefunction-v2.jinja");
        ChatTemplateException e = assertThrows(ChatTemplateException.class, () -> t.render(CHAT, true, tools()));
        assertEquals(ChatTemplateException.Kind.RENDER, e.kind());
        assertTrue(e.problem().contains("'functions' is undefined"), e.problem());
    }

    /** Llama 3.2/3.3 print today's date through strftime_now: with a fixed clock they give the Llama 3.1 format. */
    @Test
    void llama32DateFromTheClock() throws IOException {
        ChatTemplate t = load("meta-llama-Llama-3.2-3B-Instruct.jinja").withSpecialTokens("<|begin_of_text|>", "<|eot_id|>")
                .withClock(Clock.fixed(Instant.parse("2024-07-26T12:00:00Z"), ZoneOffset.UTC));
        assertEquals("<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nCutting Knowledge Date: December 2023\nToday Date: 26 Jul 2024\n\n"
                + "You are a helpful assistant<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nHello<|eot_id|>"
                + "<|start_header_id|>assistant<|end_header_id|>\n\n",
                t.render(List.of(ChatMessage.system("You are a helpful assistant"), ChatMessage.user("Hello")), true));
    }
}
