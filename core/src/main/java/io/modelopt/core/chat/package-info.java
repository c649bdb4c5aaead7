/**
 * Chat templates: a model's Jinja template ({@link io.modelopt.core.chat.ChatTemplates#find}) turns
 * a list of {@link io.modelopt.core.chat.ChatMessage}s into the prompt text the model was trained on
 * ({@link io.modelopt.core.chat.ChatTemplate#render}) and then token ids
 * ({@link io.modelopt.core.chat.ChatTemplate#encode}). The Jinja subset is our own (no third-party
 * engine): lexer with trim_blocks/lstrip_blocks, parser with Jinja2's precedence, renderer with
 * Jinja's scoping and Undefined, Python value semantics. See docs/CHAT.md.
 */
package io.modelopt.core.chat;
