package io.modelopt.server;

import io.modelopt.core.chat.ChatMessage;
import io.modelopt.core.chat.ChatTemplate;
import io.modelopt.core.chat.ChatTemplateException;
import io.modelopt.core.tokenizer.Tokenizer;
import java.util.List;

/**
 * Chat messages to one prompt: rendered by the model's chat template (or the one given with
 * {@code --chat-template}) with the generation prompt added, then tokenized as transformers does
 * ({@link ChatTemplate#encode}: special-token text becomes its id, no second BOS). A model without
 * a template cannot take {@code messages}: 400, naming the problem and the way out.
 */
final class ChatPrompts {
    record Rendered(String text, int[] tokens) {}

    private final ChatTemplate template;
    private final Tokenizer tokenizer;

    /** @param template null when the model has none */
    ChatPrompts(ChatTemplate template, Tokenizer tokenizer) {
        this.template = template;
        this.tokenizer = tokenizer;
    }

    Rendered render(List<ChatMessage> messages) {
        if (template == null) {
            throw ApiException.badRequest("messages", "this model has no chat template (no tokenizer.chat_template in its GGUF, none in tokenizer_config.json "
                    + "or chat_template.jinja): start the server with --chat-template FILE, or use /v1/completions");
        }
        String text;
        try {
            text = template.render(messages, true);
        } catch (ChatTemplateException e) {
            // raise_exception in the template is how it refuses a conversation (roles out of order, say): the client's error
            throw ApiException.badRequest("messages", e.raisedByTemplate() ? "the chat template refused the messages: " + e.problem()
                    : "the chat template failed on these messages: " + e.getMessage());
        }
        int[] ids = ChatTemplate.encode(tokenizer, text);
        if (ids.length == 0) throw ApiException.badRequest("messages", "the chat template rendered these messages to an empty prompt");
        return new Rendered(text, ids);
    }
}
