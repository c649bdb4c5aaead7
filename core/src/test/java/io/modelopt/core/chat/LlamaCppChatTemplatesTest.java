package io.modelopt.core.chat;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.modelopt.core.json.Json;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Someone else's expected renderings: every template of llama.cpp's tests/test-chat-template.cpp
 * (commit c392e5094deaf2d1a7c18683214f007fad3fe42b; resource llama-cpp-chat-templates.json,
 * extracted from that file as it stands) rendered with its fixed six-message conversation and
 * compared with the test's {@code expected_output_jinja} (or {@code expected_output} where that
 * is empty), which llama.cpp's own Jinja engine (minja, trim_blocks + lstrip_blocks) produces.
 *
 * <p>Two steps of llama.cpp's {@code common_chat_templates_apply} wrap the bare rendering, and are
 * reproduced here, not in {@link ChatTemplate}: minja's system-role polyfill (a template that
 * does not print a system message, probed as minja does, gets the system text prepended to the
 * first user message with "\n"; common/minja/chat-template.hpp) and the removal of one leading
 * BOS text and one trailing EOS text (common/chat.cpp, "To avoid double BOS / EOS tokens").
 * Where minja and Jinja2 disagree the case carries {@code expected_jinja2} (with the reason beside
 * it), and Jinja2, which transformers renders with, is followed: once, ChatGLM3.
 * The one case llama.cpp itself skips in Jinja mode (GigaChat, supported_with_jinja=false: it needs
 * additional_special_tokens) is skipped too.
 */
class LlamaCppChatTemplatesTest {

    @SuppressWarnings("unchecked")
    static Stream<Arguments> cases() throws IOException {
        Map<String, Object> doc;
        try (InputStream in = LlamaCppChatTemplatesTest.class.getResourceAsStream("llama-cpp-chat-templates.json")) {
            doc = Json.parseObject(new String(in.readAllBytes(), StandardCharsets.UTF_8));
        }
        List<ChatMessage> conversation = new ArrayList<>();
        for (Object o : (List<Object>) doc.get("conversation")) {
            List<String> m = (List<String>) o;
            conversation.add(new ChatMessage(m.get(0), m.get(1)));
        }
        return ((List<Object>) doc.get("cases")).stream()
                .map(o -> (Map<String, Object>) o)
                .filter(c -> Boolean.TRUE.equals(c.get("supported_with_jinja")))
                .map(c -> Arguments.of(c.get("name"), c, conversation));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void rendersAsLlamaCppExpects(String name, Map<String, Object> c, List<ChatMessage> conversation) {
        ChatTemplate t = ChatTemplate.parse((String) c.get("template"))
                .withSpecialTokens((String) c.get("bos_token"), (String) c.get("eos_token"));
        List<ChatMessage> messages = supportsSystemRole(t) ? conversation : mergeSystemIntoUser(conversation);
        String out = t.render(messages, true);
        if (!t.bosToken().isEmpty() && out.startsWith(t.bosToken())) out = out.substring(t.bosToken().length());
        if (!t.eosToken().isEmpty() && out.endsWith(t.eosToken())) out = out.substring(0, out.length() - t.eosToken().length());
        assertEquals(c.getOrDefault("expected_jinja2", c.get("expected_jinja")), out);
    }

    /** minja's probe: does rendering [system needle, user needle] print the system needle? (A raised error counts as no.) */
    static boolean supportsSystemRole(ChatTemplate t) {
        try {
            return t.render(List.of(ChatMessage.system("<System Needle>"), ChatMessage.user("<User Needle>")), false).contains("<System Needle>");
        } catch (ChatTemplateException e) {
            return false;
        }
    }

    /** minja's polyfill_system_role: pending system text goes before the next user message's content, joined by "\n". */
    static List<ChatMessage> mergeSystemIntoUser(List<ChatMessage> conversation) {
        List<ChatMessage> out = new ArrayList<>();
        String pending = "";
        for (ChatMessage m : conversation) {
            if (m.role().equals("system")) {
                pending = pending.isEmpty() ? m.content() : pending + "\n" + m.content();
            } else if (m.role().equals("user") && !pending.isEmpty()) {
                out.add(new ChatMessage("user", pending + (m.content().isEmpty() ? "" : "\n" + m.content())));
                pending = "";
            } else {
                if (!pending.isEmpty()) { out.add(ChatMessage.user(pending)); pending = ""; }
                out.add(m);
            }
        }
        return out;
    }
}
