package io.modelopt.core.chat;

import java.util.Objects;

/**
 * One message of a conversation, as a chat template sees it: {@code messages[i].role} and
 * {@code messages[i].content}.
 *
 * @param role    {@code system}, {@code user}, {@code assistant} or {@code tool} (not checked here:
 *                templates decide which roles they accept, with {@code raise_exception})
 * @param content the text; never null (an empty string for none)
 */
public record ChatMessage(String role, String content) {
    public ChatMessage {
        Objects.requireNonNull(role, "role");
        Objects.requireNonNull(content, "content");
    }

    public static ChatMessage system(String content) { return new ChatMessage("system", content); }

    public static ChatMessage user(String content) { return new ChatMessage("user", content); }

    public static ChatMessage assistant(String content) { return new ChatMessage("assistant", content); }
}
