package io.modelopt.core.chat;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Real model templates against the prompt formats their authors document (the second check
 * beside {@link LlamaCppChatTemplatesTest}). Template sources: the .jinja resources are
 * llama.cpp's models/templates/ copies of the Hugging Face tokenizer_config.json templates
 * (commit c392e5094deaf2d1a7c18683214f007fad3fe42b, fetched there with scripts/get_chat_template.py);
 * the Llama 2 and Llama 3 strings are meta-llama/Llama-2-7b-chat-hf's and
 * meta-llama/Meta-Llama-3-8B-Instruct's tokenizer_config.json chat_template.
 */
class DocumentedPromptFormatsTest {
    private static final List<ChatMessage> CHAT = List.of(
            ChatMessage.system("You are a helpful assistant"),
            ChatMessage.user("Hello"),
            ChatMessage.assistant("Hi there"),
            ChatMessage.user("Who are you"));

    static final String LLAMA2 = "{% if messages[0]['role'] == 'system' %}{% set loop_messages = messages[1:] %}{% set system_message = messages[0]['content'] %}"
            + "{% else %}{% set loop_messages = messages %}{% set system_message = false %}{% endif %}{% for message in loop_messages %}"
            + "{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}"
            + "{% if loop.index0 == 0 and system_message != false %}{% set content = '<<SYS>>\\n' + system_message + '\\n<</SYS>>\\n\\n' + message['content'] %}"
            + "{% else %}{% set content = message['content'] %}{% endif %}{% if message['role'] == 'user' %}{{ bos_token + '[INST] ' + content.strip() + ' [/INST]' }}"
            + "{% elif message['role'] == 'assistant' %}{{ ' '  + content.strip() + ' ' + eos_token }}{% endif %}{% endfor %}";

    static final String LLAMA3 = "{% set loop_messages = messages %}{% for message in loop_messages %}{% set content = '<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n'+ message['content'] | trim + '<|eot_id|>' %}"
            + "{% if loop.index0 == 0 %}{% set content = bos_token + content %}{% endif %}{{ content }}{% endfor %}"
            + "{% if add_generation_prompt %}{{ '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}{% endif %}";

    static String resource(String name) throws IOException {
        try (InputStream in = DocumentedPromptFormatsTest.class.getResourceAsStream(name)) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    /** Meta's Llama 2 chat format (llama repo, generation.py chat_completion): [INST] <<SYS>>...<</SYS>> with BOS/EOS around each exchange. */
    @Test
    void llama2() {
        ChatTemplate t = ChatTemplate.parse(LLAMA2).withSpecialTokens("<s>", "</s>");
        assertEquals("<s>[INST] <<SYS>>\nYou are a helpful assistant\n<</SYS>>\n\nHello [/INST] Hi there </s><s>[INST] Who are you [/INST]",
                t.render(CHAT, true));
        ChatTemplateException e = assertThrows(ChatTemplateException.class,
                () -> t.render(List.of(ChatMessage.user("a"), ChatMessage.user("b")), true));
        assertTrue(e.raisedByTemplate());
        assertEquals("Conversation roles must alternate user/assistant/user/assistant/...", e.getMessage());
    }

    /** Meta's Llama 3 model card: <|begin_of_text|>, then <|start_header_id|>role<|end_header_id|>\n\ncontent<|eot_id|> per message. */
    @Test
    void llama3() {
        ChatTemplate t = ChatTemplate.parse(LLAMA3).withSpecialTokens("<|begin_of_text|>", "<|eot_id|>");
        assertEquals("<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nYou are a helpful assistant<|eot_id|>"
                + "<|start_header_id|>user<|end_header_id|>\n\nHello<|eot_id|>"
                + "<|start_header_id|>assistant<|end_header_id|>\n\nHi there<|eot_id|>"
                + "<|start_header_id|>user<|end_header_id|>\n\nWho are you<|eot_id|>"
                + "<|start_header_id|>assistant<|end_header_id|>\n\n", t.render(CHAT, true));
    }

    /** Meta's Llama 3.1 prompt format: the system header carries the knowledge cutoff and date (template default "26 Jul 2024"). */
    @Test
    void llama31() throws IOException {
        ChatTemplate t = ChatTemplate.parse(resource("llama-cpp-models-templates/meta-llama-Llama-3.1-8B-Instruct.jinja")).withSpecialTokens("<|begin_of_text|>", "<|eot_id|>");
        String expected = "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\n"
                + "Cutting Knowledge Date: December 2023\nToday Date: 26 Jul 2024\n\nYou are a helpful assistant<|eot_id|>"
                + "<|start_header_id|>user<|end_header_id|>\n\nHello<|eot_id|>"
                + "<|start_header_id|>assistant<|end_header_id|>\n\nHi there<|eot_id|>"
                + "<|start_header_id|>user<|end_header_id|>\n\nWho are you<|eot_id|>"
                + "<|start_header_id|>assistant<|end_header_id|>\n\n";
        assertEquals(expected, t.render(CHAT, true));
        // without a system message the system header still carries the dates; date_string can be passed in
        String noSystem = t.render(List.of(ChatMessage.user("Hi")), true, java.util.Map.of("date_string", "02 Dec 2026"));
        assertEquals("<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nCutting Knowledge Date: December 2023\nToday Date: 02 Dec 2026\n\n<|eot_id|>"
                + "<|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n", noSystem);
    }

    /** ChatML (OpenAI's format, Qwen2's documentation): <|im_start|>role\ncontent<|im_end|>\n, Qwen's default system prompt when none is given. */
    @Test
    void qwen25ChatMl() throws IOException {
        ChatTemplate t = ChatTemplate.parse(resource("llama-cpp-models-templates/Qwen-Qwen2.5-7B-Instruct.jinja")).withSpecialTokens("", "<|im_end|>");
        assertEquals("<|im_start|>system\nYou are a helpful assistant<|im_end|>\n<|im_start|>user\nHello<|im_end|>\n"
                + "<|im_start|>assistant\nHi there<|im_end|>\n<|im_start|>user\nWho are you<|im_end|>\n<|im_start|>assistant\n", t.render(CHAT, true));
        assertEquals("<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n"
                + "<|im_start|>user\nHello<|im_end|>\n", t.render(List.of(ChatMessage.user("Hello")), false));
    }

    /** Mistral's v3-tekken format: [INST]user[/INST]assistant</s>, the system prompt before the last user message. */
    @Test
    void mistralNemo() throws IOException {
        ChatTemplate t = ChatTemplate.parse(resource("llama-cpp-models-templates/mistralai-Mistral-Nemo-Instruct-2407.jinja")).withSpecialTokens("<s>", "</s>");
        assertEquals("<s>[INST]Hello[/INST]Hi there</s>[INST]You are a helpful assistant\n\nWho are you[/INST]", t.render(CHAT, true));
    }

    /** Gemma 2: <start_of_turn>user / model, no system role (the template rejects it). */
    @Test
    void gemma2() throws IOException {
        ChatTemplate t = ChatTemplate.parse(resource("llama-cpp-models-templates/google-gemma-2-2b-it.jinja")).withSpecialTokens("<bos>", "<eos>");
        assertEquals("<bos><start_of_turn>user\nHello<end_of_turn>\n<start_of_turn>model\nHi there<end_of_turn>\n<start_of_turn>user\nWho are you<end_of_turn>\n<start_of_turn>model\n",
                t.render(CHAT.subList(1, 4), true));
        ChatTemplateException e = assertThrows(ChatTemplateException.class, () -> t.render(CHAT, true));
        assertEquals(ChatTemplateException.Kind.RAISED, e.kind());
        assertEquals("System role not supported", e.getMessage());
    }
}
