package io.modelopt.core.chat;

import io.modelopt.core.chat.JinjaAst.Node;
import io.modelopt.core.tokenizer.Tokenizer;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * A model's chat template: Jinja source, as Hugging Face ships it in {@code tokenizer_config.json}
 * and llama.cpp in GGUF {@code tokenizer.chat_template}, rendered by our own Jinja subset (see
 * docs/CHAT.md for what it covers) with Hugging Face's options {@code trim_blocks=True,
 * lstrip_blocks=True}. Immutable and thread-safe; parse once, render per request.
 *
 * <p>A render sees: {@code messages} (list of {@code {role, content}} maps),
 * {@code add_generation_prompt}, {@code bos_token}, {@code eos_token}, {@code tools} and
 * {@code documents} (none, as transformers passes them without tools), the functions
 * {@code raise_exception(msg)}, {@code namespace(...)}, {@code range(...)}, {@code dict(...)},
 * {@code strftime_now(fmt)} (this template's clock), and the caller's extra variables.
 */
public final class ChatTemplate {
    private final String source;
    private final List<Node> nodes;
    private final String bosToken;
    private final String eosToken;
    private final Clock clock;

    private ChatTemplate(String source, List<Node> nodes, String bosToken, String eosToken, Clock clock) {
        this.source = source;
        this.nodes = nodes;
        this.bosToken = bosToken;
        this.eosToken = eosToken;
        this.clock = clock;
    }

    /**
     * Parses a template; special tokens start empty (see {@link #withSpecialTokens}).
     *
     * @throws ChatTemplateException of kind SYNTAX, with line, column and what is wrong
     */
    public static ChatTemplate parse(String source) {
        Objects.requireNonNull(source, "source");
        return new ChatTemplate(source, JinjaParser.parse(source), "", "", Clock.systemDefaultZone());
    }

    /** This template with {@code bos_token} and {@code eos_token} set to these texts (null → ""). */
    public ChatTemplate withSpecialTokens(String bosToken, String eosToken) {
        return new ChatTemplate(source, nodes, bosToken == null ? "" : bosToken, eosToken == null ? "" : eosToken, clock);
    }

    /** This template with {@code bos_token}/{@code eos_token} set to the tokenizer's BOS and EOS token texts ("" where it has none). */
    public ChatTemplate withSpecialTokens(Tokenizer tokenizer) {
        return withSpecialTokens(tokenizer.bosId() >= 0 ? tokenizer.piece(tokenizer.bosId()) : "",
                tokenizer.eosId() >= 0 ? tokenizer.piece(tokenizer.eosId()) : "");
    }

    /** This template with {@code strftime_now} reading {@code clock} (Llama 3.x templates print today's date). */
    public ChatTemplate withClock(Clock clock) {
        return new ChatTemplate(source, nodes, bosToken, eosToken, Objects.requireNonNull(clock, "clock"));
    }

    public String source() { return source; }

    public String bosToken() { return bosToken; }

    public String eosToken() { return eosToken; }

    /** {@link #render(List, boolean, Map)} without extra variables. */
    public String render(List<ChatMessage> messages, boolean addGenerationPrompt) {
        return render(messages, addGenerationPrompt, Map.of());
    }

    /**
     * Renders the conversation to the prompt text.
     *
     * @param extraVariables more template variables (e.g. {@code tools}, {@code date_string}, or
     *                       {@code bos_token} to override); values are String, Number, Boolean,
     *                       null, List, Map or {@link ChatMessage}; {@code messages} and
     *                       {@code add_generation_prompt} cannot be overridden
     * @throws ChatTemplateException of kind RAISED when the template calls {@code raise_exception}
     *         (its message is the template's), RENDER for any other failure (with the position)
     */
    public String render(List<ChatMessage> messages, boolean addGenerationPrompt, Map<String, Object> extraVariables) {
        Objects.requireNonNull(messages, "messages");
        return renderMessages(new ArrayList<Object>(messages), addGenerationPrompt, extraVariables);
    }

    /**
     * As {@link #render(List, boolean, Map)}, for messages with more than role and content
     * (OpenAI's {@code tool_calls}, {@code tool_call_id}, {@code name}): each message a map of
     * template-visible keys, or a {@link ChatMessage}.
     */
    public String renderMessages(List<?> messages, boolean addGenerationPrompt, Map<String, Object> extraVariables) {
        Objects.requireNonNull(messages, "messages");
        Objects.requireNonNull(extraVariables, "extraVariables");
        if (extraVariables.containsKey("messages") || extraVariables.containsKey("add_generation_prompt")) {
            throw new IllegalArgumentException("extraVariables cannot set 'messages' or 'add_generation_prompt' (they are render's arguments)");
        }
        JinjaBuiltins builtins = new JinjaBuiltins(clock);
        JinjaRenderer.Scope globals = new JinjaRenderer.Scope(null);
        builtins.globals().forEach(globals::set);
        globals.set("bos_token", bosToken);
        globals.set("eos_token", eosToken);
        globals.set("tools", null);
        globals.set("documents", null);
        extraVariables.forEach((k, v) -> globals.set(k, JinjaValues.fromJava(v)));
        List<Object> msgs = new ArrayList<>(messages.size());
        for (Object m : messages) {
            if (!(m instanceof ChatMessage) && !(m instanceof Map<?, ?>)) {
                throw new IllegalArgumentException("a message must be a ChatMessage or a Map, not " + (m == null ? "null" : m.getClass().getName()));
            }
            msgs.add(JinjaValues.fromJava(m));
        }
        globals.set("messages", msgs);
        globals.set("add_generation_prompt", addGenerationPrompt);
        try {
            return new JinjaRenderer(builtins).render(nodes, globals);
        } catch (StackOverflowError e) {
            throw ChatTemplateException.render("recursion too deep (a macro calling itself without end?)", 0, 0);
        }
    }

    /**
     * Token ids for a rendered prompt, as transformers' {@code apply_chat_template(tokenize=True)}
     * and vLLM's chat endpoint do it: special-token text in the prompt ({@code <s>},
     * {@code <|im_start|>}, ...) becomes its id, and the tokenizer adds nothing of its own, so the
     * BOS that the template writes (most write {@code {{ bos_token }}}) is the only one.
     * (llama.cpp instead strips a leading BOS text and lets the tokenizer add BOS: the same ids
     * for templates that write the BOS, one more BOS for templates that do not.)
     */
    public static int[] encode(Tokenizer tokenizer, String rendered) {
        return tokenizer.encode(rendered, false, true);
    }

    @Override public String toString() {
        return "ChatTemplate[" + source.length() + " chars, bos=" + JinjaValues.repr(bosToken) + ", eos=" + JinjaValues.repr(eosToken) + "]";
    }
}
