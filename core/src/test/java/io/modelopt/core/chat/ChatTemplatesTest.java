package io.modelopt.core.chat;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.modelopt.core.gguf.GgufModelSource;
import io.modelopt.core.hf.HfModelSource;
import io.modelopt.core.model.ModelConfig;
import io.modelopt.core.model.ModelSource;
import io.modelopt.core.tensor.TensorData;
import io.modelopt.core.testing.Fixtures;
import io.modelopt.core.tokenizer.Tokenizer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Finding a model's template and turning the rendered prompt into ids, on the fixture models' tokenizers. */
class ChatTemplatesTest {
    private static final List<ChatMessage> CHAT = List.of(ChatMessage.system("Be brief."), ChatMessage.user("Once upon a time"),
            ChatMessage.assistant("there was a cat."), ChatMessage.user("And then?"));

    @Test
    void ggufMetadataTemplateWithTheTokenizersSpecialTokens() {
        try (GgufModelSource gguf = GgufModelSource.open(Fixtures.storiesGguf("f32"))) {
            assertTrue(ChatTemplates.find(gguf).isEmpty(), "the fixture GGUF has no tokenizer.chat_template");
            ModelSource withTemplate = new MetadataOverlay(gguf, Map.of(ChatTemplates.GGUF_KEY, DocumentedPromptFormatsTest.LLAMA2));
            ChatTemplate t = ChatTemplates.find(withTemplate).orElseThrow();
            assertEquals("<s>", t.bosToken());
            assertEquals("</s>", t.eosToken());
        }
    }

    @Test
    void huggingFaceConfigStringListAndJinjaFile(@TempDir Path dir) throws IOException {
        try (HfModelSource hf = HfModelSource.open(Fixtures.storiesHf())) {
            assertTrue(ChatTemplates.find(hf).isEmpty(), "the fixture tokenizer_config.json has no chat_template");
        }
        Files.writeString(dir.resolve("tokenizer_config.json"), "{\"bos_token\": {\"content\": \"<s>\"}, \"eos_token\": \"</s>\", \"chat_template\": \"{{ bos_token }}A{{ eos_token }}\"}");
        assertEquals("<s>A</s>", ChatTemplates.fromHuggingFaceDirectory(dir).orElseThrow().render(List.of(), false));
        Files.writeString(dir.resolve("tokenizer_config.json"), "{\"chat_template\": [{\"name\": \"tool_use\", \"template\": \"T\"}, {\"name\": \"default\", \"template\": \"D\"}]}");
        assertEquals("D", ChatTemplates.fromHuggingFaceDirectory(dir).orElseThrow().render(List.of(), false));
        Files.writeString(dir.resolve("chat_template.jinja"), "J\n");
        assertEquals("J", ChatTemplates.fromHuggingFaceDirectory(dir).orElseThrow().render(List.of(), false));
        assertEquals("D", ChatTemplates.fromFile(dir.resolve("tokenizer_config.json")).render(List.of(), false));
        assertEquals("J", ChatTemplates.fromFile(dir.resolve("chat_template.jinja")).render(List.of(), false));
    }

    /** The ChatML fallback renders as llama.cpp's LLM_CHAT_TEMPLATE_CHATML formatter does (test-chat-template.cpp, fmt_sys/"chatml"). */
    @Test
    void chatMlFallback() {
        assertEquals("<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nOnce upon a time<|im_end|>\n<|im_start|>assistant\nthere was a cat.<|im_end|>\n"
                + "<|im_start|>user\nAnd then?<|im_end|>\n<|im_start|>assistant\n", ChatTemplates.chatMl().render(CHAT, true));
        assertEquals("<|im_start|>system\nYou are a helpful assistant<|im_end|>\n",
                ChatTemplates.chatMl().render(List.of(ChatMessage.system("You are a helpful assistant")), false));
    }

    /**
     * The rendered Llama 2 prompt starts with "<s>": encode gives exactly one BOS (id 1) at the
     * start, "</s>" becomes EOS (id 2), and the ids equal llama.cpp's way (strip the BOS text, let
     * the tokenizer add BOS) on both fixture vocabularies, GGUF and HF.
     */
    @Test
    void encodeRecognizesSpecialTokensAndAddsNoSecondBos() {
        for (String model : List.of("stories260K", "brown-llama")) {
            try (GgufModelSource gguf = GgufModelSource.open(Fixtures.file(model + "/gguf/" + model + "-f32.gguf"));
                 HfModelSource hf = HfModelSource.open(Fixtures.file(model + "/hf"))) {
                for (Tokenizer tok : List.of(gguf.tokenizer(), hf.tokenizer())) {
                    ChatTemplate t = ChatTemplate.parse(DocumentedPromptFormatsTest.LLAMA2).withSpecialTokens(tok);
                    String prompt = t.render(CHAT, true);
                    assertTrue(prompt.startsWith("<s>[INST] <<SYS>>"), prompt);
                    int[] ids = ChatTemplate.encode(tok, prompt);
                    assertEquals(tok.bosId(), ids[0], model + " " + tok.describe());
                    assertFalse(ids[1] == tok.bosId(), "a second BOS");
                    assertEquals(2, Arrays.stream(ids).filter(id -> id == tok.bosId()).count(), "one BOS per [INST] turn");
                    assertEquals(1, Arrays.stream(ids).filter(id -> id == tok.eosId()).count(), "</s> after the assistant turn");
                    assertArrayEquals(tok.encode(prompt.substring("<s>".length()), true, true), ids, "llama.cpp's way gives the same ids");
                }
            }
        }
    }

    /** A source whose metadata is another's plus some keys (a GGUF written with a chat template, without writing one). */
    private record MetadataOverlay(ModelSource base, Map<String, Object> extra) implements ModelSource {
        @Override public Path path() { return base.path(); }
        @Override public String format() { return base.format(); }
        @Override public ModelConfig config() { return base.config(); }
        @Override public Tokenizer tokenizer() { return base.tokenizer(); }
        @Override public Map<String, TensorData> tensors() { return base.tensors(); }
        @Override public Map<String, Object> metadata() {
            Map<String, Object> m = new java.util.LinkedHashMap<>(base.metadata());
            m.putAll(extra);
            return m;
        }
        @Override public String fileTensorName(String canonicalName) { return base.fileTensorName(canonicalName); }
        @Override public void close() { }
    }
}
