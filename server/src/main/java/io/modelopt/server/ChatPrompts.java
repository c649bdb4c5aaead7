package io.modelopt.server;

import io.modelopt.core.tokenizer.Tokenizer;
import java.util.List;

/**
 * Chat messages to one prompt through the model's chat template (or the one given with
 * {@code --chat-template}). A model without a template cannot take {@code messages}: 400.
 */
final class ChatPrompts {
    record Message(String role, String content) {}

    record Rendered(String text, int[] tokens) {}

    private final String templateSource;
    private final Tokenizer tokenizer;

    ChatPrompts(String templateSource, Tokenizer tokenizer) {
        this.templateSource = templateSource;
        this.tokenizer = tokenizer;
    }

    Rendered render(List<Message> messages) {
        if (templateSource == null) {
            throw ApiException.badRequest("messages", "this model has no chat template (no tokenizer.chat_template in its GGUF, none in tokenizer_config.json): "
                    + "start the server with --chat-template FILE, or use /v1/completions");
        }
        throw ApiException.unsupported("messages", "chat templates are not implemented yet");
    }
}
