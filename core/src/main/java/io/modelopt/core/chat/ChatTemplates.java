package io.modelopt.core.chat;

import io.modelopt.core.ModelFormatException;
import io.modelopt.core.json.Json;
import io.modelopt.core.json.JsonException;
import io.modelopt.core.model.ModelSource;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Finds a model's chat template where the model files keep it, or reads one from a file. */
public final class ChatTemplates {
    private static final Logger log = LoggerFactory.getLogger(ChatTemplates.class);

    /** GGUF metadata key of the default template (llama.cpp's {@code LLM_KV_TOKENIZER_CHAT_TEMPLATE}). */
    public static final String GGUF_KEY = "tokenizer.chat_template";
    /** transformers ≥ 4.43 saves the template here, beside tokenizer_config.json; it wins over the config's. */
    public static final String JINJA_FILE = "chat_template.jinja";
    public static final String TOKENIZER_CONFIG = "tokenizer_config.json";

    /**
     * llama.cpp's fallback for models without a template (common/chat.cpp {@code CHATML_TEMPLATE_SRC}):
     * {@code <|im_start|>role\ncontent<|im_end|>\n} per message.
     */
    public static final String CHATML_SOURCE = """
            {%- for message in messages -%}
              {{- '<|im_start|>' + message.role + '
            ' + message.content + '<|im_end|>
            ' -}}
            {%- endfor -%}
            {%- if add_generation_prompt -%}
              {{- '<|im_start|>assistant
            ' -}}
            {%- endif -%}""";

    private ChatTemplates() {}

    /** The ChatML fallback ({@link #CHATML_SOURCE}), for a model without a template of its own. */
    public static ChatTemplate chatMl() { return ChatTemplate.parse(CHATML_SOURCE); }

    /**
     * The model's own template, with {@code bos_token}/{@code eos_token} set: from GGUF metadata
     * {@value #GGUF_KEY} (special tokens from the tokenizer), or from a Hugging Face directory's
     * {@value #JINJA_FILE} or {@value #TOKENIZER_CONFIG} {@code chat_template} (a string, or a
     * list of {@code {name, template}} of which "default" is taken; special tokens from the
     * config's {@code bos_token}/{@code eos_token}, else the tokenizer). Works for quantized
     * in-memory models too (their metadata and path are the input's). Empty when the model has none.
     *
     * @throws ChatTemplateException      the model's template does not parse
     * @throws ModelFormatException       tokenizer_config.json is not valid JSON or chat_template has the wrong shape
     */
    public static Optional<ChatTemplate> find(ModelSource source) {
        if (source.metadata().get(GGUF_KEY) instanceof String text) {
            log.debug("{}: chat template from GGUF {}", source.path(), GGUF_KEY);
            return Optional.of(ChatTemplate.parse(text).withSpecialTokens(source.tokenizer()));
        }
        Path dir = source.path();
        if (dir != null && !Files.isDirectory(dir)) dir = dir.toAbsolutePath().getParent();
        if (dir == null || !Files.isRegularFile(dir.resolve(TOKENIZER_CONFIG)) && !Files.isRegularFile(dir.resolve(JINJA_FILE))) {
            return Optional.empty();
        }
        Optional<ChatTemplate> t = fromHuggingFaceDirectory(dir);
        if (t.isPresent() && t.get().bosToken().isEmpty() && t.get().eosToken().isEmpty()) {
            return Optional.of(t.get().withSpecialTokens(source.tokenizer()));
        }
        return t;
    }

    /** A Hugging Face model directory's template ({@value #JINJA_FILE}, else tokenizer_config.json), special tokens from tokenizer_config.json. */
    public static Optional<ChatTemplate> fromHuggingFaceDirectory(Path dir) {
        Path cfgFile = dir.resolve(TOKENIZER_CONFIG);
        Map<String, Object> config = Files.isRegularFile(cfgFile) ? readJson(cfgFile) : Map.of();
        String text;
        Path jinja = dir.resolve(JINJA_FILE);
        if (Files.isRegularFile(jinja)) {
            text = read(jinja);
        } else {
            text = templateField(config, cfgFile);
            if (text == null) return Optional.empty();
        }
        return Optional.of(ChatTemplate.parse(text).withSpecialTokens(tokenText(config.get("bos_token")), tokenText(config.get("eos_token"))));
    }

    /**
     * A template from a file (for {@code --chat-template FILE}): Jinja text, or, for a
     * {@code .json} file, the {@code chat_template} of a tokenizer_config.json or
     * chat_template.json. Special tokens start empty: set them with
     * {@link ChatTemplate#withSpecialTokens(io.modelopt.core.tokenizer.Tokenizer)}.
     *
     * @throws UncheckedIOException  the file cannot be read
     * @throws ChatTemplateException it does not parse
     */
    public static ChatTemplate fromFile(Path file) {
        if (file.getFileName().toString().endsWith(".json")) {
            String text = templateField(readJson(file), file);
            if (text == null) throw new ModelFormatException(file, "no chat_template in this JSON file");
            return ChatTemplate.parse(text);
        }
        return ChatTemplate.parse(read(file));
    }

    /** {@code chat_template}: a string, or a list of {name, template} objects (the one named "default"). */
    private static String templateField(Map<String, Object> config, Path file) {
        Object t = config.get("chat_template");
        if (t == null) return null;
        if (t instanceof String s) return s;
        if (t instanceof List<?> list) {
            for (Object o : list) {
                if (o instanceof Map<?, ?> m && "default".equals(m.get("name"))) {
                    if (m.get("template") instanceof String s) return s;
                    throw new ModelFormatException(file, "chat_template entry 'default' has no string 'template'");
                }
            }
            throw new ModelFormatException(file, "chat_template is a list without an entry named 'default'");
        }
        throw new ModelFormatException(file, "chat_template must be a string or a list of {name, template} objects");
    }

    /** A special token in tokenizer_config.json: a string, or an AddedToken object with "content". */
    private static String tokenText(Object v) {
        if (v instanceof String s) return s;
        if (v instanceof Map<?, ?> m && m.get("content") instanceof String s) return s;
        return "";
    }

    private static Map<String, Object> readJson(Path p) {
        try {
            return Json.parseObject(read(p));
        } catch (JsonException e) {
            throw new ModelFormatException(p, "not valid JSON: " + e.getMessage(), e);
        }
    }

    private static String read(Path p) {
        try {
            return Files.readString(p);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read chat template file " + p + ": " + e.getMessage(), e);
        }
    }
}
