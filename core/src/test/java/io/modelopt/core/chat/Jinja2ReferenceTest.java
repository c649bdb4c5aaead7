package io.modelopt.core.chat;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.modelopt.core.json.Json;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Our renderer against Jinja2 itself: resource jinja2-renders.json is what Jinja2 3.1.6 renders, in
 * the environment transformers uses for chat templates (scripts/chat-template-oracle.py, which
 * wrote it), for every llama.cpp test template, every real template in llama-cpp-models-templates/
 * (with tools, without, without generation prompt) 30 small corner-case templates and 145 single expressions. Where
 * Jinja2 raises, we must raise too (RAISED for its TemplateError from raise_exception).
 *
 * <p>Two known differences, both where Jinja2's Python objects show through, are asserted as such:
 * {@code "..."|safe + text} HTML-escapes the text in Jinja2 (MarkupSafe's Markup), not here
 * (functionary v3.1 with tools); {@code map(...)} is a generator that Jinja2's tojson cannot
 * serialize, a list here (llama.cpp's DeepSeek R1 template with tools).
 */
class Jinja2ReferenceTest {
    private static final Map<String, String> KNOWN_DIFFERENCES = Map.of(
            "tools meetkai-functionary-medium-v3.1.jinja", "Markup escaping of '...'|safe + str",
            "tools llama-cpp-deepseek-r1.jinja", "map() is a list here, a generator (not JSON serializable) in Jinja2");

    @SuppressWarnings("unchecked")
    static Stream<Arguments> jobs() throws IOException {
        Map<String, Object> doc = json("jinja2-renders.json");
        Map<String, String> caseTemplates = new HashMap<>();
        for (Object o : (List<Object>) json("llama-cpp-chat-templates.json").get("cases")) {
            Map<String, Object> c = (Map<String, Object>) o;
            caseTemplates.put((String) c.get("name"), (String) c.get("template"));
        }
        Map<String, Object> conversations = (Map<String, Object>) doc.get("conversations");
        Object tools = doc.get("tools");
        return ((List<Object>) doc.get("jobs")).stream().map(o -> {
            Map<String, Object> j = (Map<String, Object>) o;
            String template;
            try {
                template = j.containsKey("case") ? caseTemplates.get((String) j.get("case"))
                        : j.containsKey("file") ? DocumentedPromptFormatsTest.resource("llama-cpp-models-templates/" + j.get("file"))
                        : (String) j.get("template");
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
            return Arguments.of(j.get("name"), template, j, conversations.get((String) j.get("conversation")), tools);
        });
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> json(String resource) throws IOException {
        try (InputStream in = Jinja2ReferenceTest.class.getResourceAsStream(resource)) {
            return Json.parseObject(new String(in.readAllBytes(), StandardCharsets.UTF_8));
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("jobs")
    void rendersAsJinja2(String name, String template, Map<String, Object> job, List<?> messages, Object tools) {
        ChatTemplate t = ChatTemplate.parse(template)
                .withSpecialTokens((String) job.get("bos_token"), (String) job.get("eos_token"))
                .withClock(Clock.fixed(Instant.parse("2024-07-26T12:00:00Z"), ZoneOffset.UTC));
        boolean agp = (Boolean) job.get("add_generation_prompt");
        Map<String, Object> extra = Boolean.TRUE.equals(job.get("tools")) ? Map.of("tools", tools) : Map.of();
        if (KNOWN_DIFFERENCES.containsKey(name)) {
            String ours = t.renderMessages(messages, agp, extra);
            assertEquals(false, ours.equals(job.get("expected")), "known difference gone: " + KNOWN_DIFFERENCES.get(name));
            return;
        }
        if (job.containsKey("error")) {
            String jinjaError = (String) job.get("error");
            ChatTemplateException e = assertThrows(ChatTemplateException.class, () -> t.renderMessages(messages, agp, extra), jinjaError);
            if (jinjaError.startsWith("TemplateError: ")) {
                assertEquals(ChatTemplateException.Kind.RAISED, e.kind(), e.getMessage());
                assertEquals(jinjaError.substring("TemplateError: ".length()), e.getMessage());
            } else {
                assertEquals(ChatTemplateException.Kind.RENDER, e.kind(), jinjaError + " vs " + e.getMessage());
            }
            return;
        }
        assertEquals(job.get("expected"), t.renderMessages(messages, agp, extra));
    }
}
