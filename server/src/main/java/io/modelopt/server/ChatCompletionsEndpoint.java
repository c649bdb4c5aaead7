package io.modelopt.server;

import io.modelopt.core.chat.ChatMessage;
import io.modelopt.scheduler.Engine;
import io.modelopt.scheduler.TokenEvent;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code POST /v1/chat/completions}: {@code messages} rendered by the chat template into one
 * prompt, then generated as a completion is; the choices carry an assistant message.
 */
final class ChatCompletionsEndpoint extends GenerationEndpoint {
    private final ChatPrompts prompts;
    private final LogprobsJson logprobs;

    ChatCompletionsEndpoint(Engine engine, ServerOptions options, Server server, ChatPrompts prompts) {
        super(engine, options, server);
        this.prompts = prompts;
        this.logprobs = new LogprobsJson(engine.tokenizer());
    }

    @Override Prepared prepare(Fields f, Call call) {
        List<ChatMessage> messages = messages(f);
        ChatPrompts.Rendered r = prompts.render(messages);
        if (options.logPrompts()) call.promptText = r.text();
        GenerationParams p = GenerationParams.read(f, true, engine.tokenizer().vocabSize());
        int max = maxTokens(p, r.tokens().length, Integer.MAX_VALUE, "messages");
        return new Prepared(List.of(r.tokens()), p, new int[] {max});
    }

    private static List<ChatMessage> messages(Fields f) {
        List<?> l = f.list("messages");
        if (l == null) throw ApiException.badRequest("messages", "messages is required");
        if (l.isEmpty()) throw ApiException.badRequest("messages", "messages must not be empty");
        List<ChatMessage> out = new ArrayList<>();
        for (int i = 0; i < l.size(); i++) {
            String at = "messages[" + i + "]";
            if (!(l.get(i) instanceof Map<?, ?> m)) throw ApiException.badRequest("messages", at + " must be an object, got " + Fields.describe(l.get(i)));
            if (!(m.get("role") instanceof String role)) throw ApiException.badRequest("messages", at + ".role must be a string, got " + Fields.describe(m.get("role")));
            out.add(new ChatMessage(role, content(m.get("content"), at)));
            for (Object k : m.keySet()) {
                if (k.equals("tool_calls") || k.equals("function_call")) {
                    if (m.get(k) != null) throw ApiException.unsupported("messages", at + "." + k + ": function calling is not supported by this server");
                } else if (!k.equals("role") && !k.equals("content") && !k.equals("name")) {
                    UnknownFields.note(java.util.Set.of("messages[]." + k));
                }
            }
        }
        return out;
    }

    /** A message's content: a string, null, or an array of {@code {"type": "text", "text": ...}} parts (joined). */
    private static String content(Object c, String at) {
        if (c == null) return "";
        if (c instanceof String s) return s;
        if (c instanceof List<?> parts) {
            StringBuilder sb = new StringBuilder();
            for (int j = 0; j < parts.size(); j++) {
                if (!(parts.get(j) instanceof Map<?, ?> part)) throw ApiException.badRequest("messages", at + ".content[" + j + "] must be an object");
                Object type = part.get("type");
                if (!"text".equals(type)) {
                    throw ApiException.unsupported("messages", at + ".content[" + j + "] is of type " + Fields.describe(type) + "; this server takes text parts only");
                }
                if (!(part.get("text") instanceof String t)) throw ApiException.badRequest("messages", at + ".content[" + j + "].text must be a string");
                sb.append(t);
            }
            return sb.toString();
        }
        throw ApiException.badRequest("messages", at + ".content must be a string or an array of text parts, got " + Fields.describe(c));
    }

    @Override String idPrefix() { return "chatcmpl-"; }

    @Override String objectName() { return "chat.completion"; }

    @Override String chunkObjectName() { return "chat.completion.chunk"; }

    @Override Map<String, Object> choice(int index, String text, List<Object> logprobs, String finishReason, GenerationParams p) {
        Map<String, Object> message = new LinkedHashMap<>();
        message.put("role", "assistant");
        message.put("content", text);
        Map<String, Object> c = new LinkedHashMap<>();
        c.put("index", index);
        c.put("message", message);
        c.put("logprobs", logprobs == null ? null : choiceLogprobs(logprobs, 0));
        c.put("finish_reason", finishReason);
        return c;
    }

    @Override Map<String, Object> chunkChoice(int index, String text, List<Object> logprobs, int textOffset, String finishReason, boolean first, GenerationParams p) {
        Map<String, Object> delta = new LinkedHashMap<>();
        if (first) delta.put("role", "assistant");
        if (!text.isEmpty() || first) delta.put("content", text);
        Map<String, Object> c = new LinkedHashMap<>();
        c.put("index", index);
        c.put("delta", delta);
        c.put("logprobs", logprobs == null ? null : choiceLogprobs(logprobs, 0));
        c.put("finish_reason", finishReason);
        return c;
    }

    @Override Object tokenLogprobs(TokenEvent e, GenerationParams p) { return e.logprobs() == null ? null : logprobs.chatToken(e.logprobs()); }

    @Override Object choiceLogprobs(List<Object> tokens, int textOffset) { return logprobs.chat(tokens); }
}
