package io.modelopt.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.openai.client.OpenAIClient;
import com.openai.client.okhttp.OpenAIOkHttpClient;
import com.openai.core.JsonValue;
import com.openai.core.http.StreamResponse;
import com.openai.models.chat.completions.ChatCompletion;
import com.openai.models.chat.completions.ChatCompletionChunk;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import com.openai.models.chat.completions.ChatCompletionStreamOptions;
import com.openai.models.completions.Completion;
import com.openai.models.completions.CompletionChoice;
import com.openai.models.completions.CompletionCreateParams;
import com.openai.models.models.Model;
import io.modelopt.core.chat.ChatMessage;
import io.modelopt.core.chat.ChatTemplate;
import io.modelopt.core.chat.ChatTemplates;
import io.modelopt.core.testing.Fixtures;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The official OpenAI Java SDK (test scope only) against the server on a loopback port: completions, chat (ChatML template), streaming. */
class OpenAiClientTest {
    /** llama.cpp's greedy 48 tokens for "Once upon a time" on stories260K (stories260K/reference.json). */
    static final String REFERENCE = ", there was a little girl named Lily. She loved to play outside in the park. "
            + "One day, she saw a big, red ball. She wanted to play with it,";

    static TestServer ts;
    static OpenAIClient client;

    @BeforeAll static void start() {
        ts = TestServer.start(Fixtures.storiesGguf("f32"), b -> b, o -> o.apiKey("sk-test"), true);
        client = OpenAIOkHttpClient.builder().baseUrl(ts.server.baseUri() + "/v1").apiKey("sk-test").maxRetries(0).build();
    }

    @AfterAll static void stop() {
        if (client != null) client.close();
        if (ts != null) ts.close();
    }

    private static CompletionCreateParams.Builder greedy(int maxTokens) {
        return CompletionCreateParams.builder().model(TestServer.MODEL).prompt("Once upon a time").maxTokens(maxTokens).temperature(0.0);
    }

    @Test void completionIsLlamaCppsGreedyText() {
        Completion c = client.completions().create(greedy(48).build());
        assertEquals(REFERENCE, c.choices().getFirst().text());
        assertEquals(CompletionChoice.FinishReason.LENGTH, c.choices().getFirst().finishReason());
        var usage = c.usage().orElseThrow();
        assertEquals(5, usage.promptTokens());
        assertEquals(48, usage.completionTokens());
        assertEquals(TestServer.MODEL, c.model());
    }

    @Test void streamedCompletionJoinsToTheSameTextWithUsageLast() {
        StringBuilder text = new StringBuilder();
        long[] usage = {-1};
        int[] chunks = {0};
        try (StreamResponse<Completion> s = client.completions().createStreaming(greedy(48)
                .streamOptions(ChatCompletionStreamOptions.builder().includeUsage(true).build()).build())) {
            s.stream().forEach(c -> {
                chunks[0]++;
                for (var choice : c.choices()) text.append(choice.text());
                c.usage().ifPresent(u -> usage[0] = u.completionTokens());
            });
        }
        assertEquals(REFERENCE, text.toString());
        assertEquals(48, usage[0]);
        assertTrue(chunks[0] >= 48, "one chunk per token at least, got " + chunks[0]);
    }

    @Test void samplesAndPromptArraysGiveOneChoiceEach() {
        Completion c = client.completions().create(CompletionCreateParams.builder().model(TestServer.MODEL)
                .prompt(CompletionCreateParams.Prompt.ofArrayOfStrings(List.of("Once upon a time", "The little dog")))
                .maxTokens(8).temperature(0.9).seed(7).n(2).putAdditionalBodyProperty("ignore_eos", JsonValue.from(true)).build());
        assertEquals(4, c.choices().size());
        for (int i = 0; i < 4; i++) assertEquals(i, c.choices().get(i).index());
        int promptTokens = ts.model.tokenizer().encode("Once upon a time").length + ts.model.tokenizer().encode("The little dog").length;
        assertEquals(promptTokens, c.usage().orElseThrow().promptTokens(), "each prompt counted once");
        assertEquals(4 * 8, c.usage().orElseThrow().completionTokens());
    }

    private static ChatCompletionCreateParams.Builder chat() {
        return ChatCompletionCreateParams.builder().model(TestServer.MODEL).addSystemMessage("You tell stories.").addUserMessage("Tell me about a cat.")
                .maxCompletionTokens(24).temperature(0.0);
    }

    @Test void chatIsTheGreedyContinuationOfTheRenderedConversation() throws Exception {
        ChatCompletion c = client.chat().completions().create(chat().build());
        String content = c.choices().getFirst().message().content().orElseThrow();
        // the same prompt as token ids through /v1/completions: what the template rendered, tokenized without a second BOS
        var template = ChatTemplates.chatMl().withSpecialTokens(ts.model.tokenizer());
        String rendered = template.render(List.of(ChatMessage.system("You tell stories."), ChatMessage.user("Tell me about a cat.")), true);
        int[] ids = ChatTemplate.encode(ts.model.tokenizer(), rendered);
        Completion plain = client.completions().create(CompletionCreateParams.builder().model(TestServer.MODEL)
                .prompt(CompletionCreateParams.Prompt.ofArrayOfTokens(java.util.Arrays.stream(ids).mapToObj(i -> (long) i).toList()))
                .maxTokens(24).temperature(0.0).build());
        assertEquals(plain.choices().getFirst().text(), content);
        assertEquals(ids.length, c.usage().orElseThrow().promptTokens());
        assertEquals(ChatCompletion.Choice.FinishReason.LENGTH, c.choices().getFirst().finishReason());
    }

    @Test void streamedChatJoinsToTheSameContent() {
        String content = client.chat().completions().create(chat().build()).choices().getFirst().message().content().orElseThrow();
        StringBuilder streamed = new StringBuilder();
        String[] role = {null};
        long[] usage = {-1};
        try (StreamResponse<ChatCompletionChunk> s = client.chat().completions().createStreaming(chat()
                .streamOptions(ChatCompletionStreamOptions.builder().includeUsage(true).build()).build())) {
            s.stream().forEach(chunk -> {
                for (var choice : chunk.choices()) {
                    choice.delta().content().ifPresent(streamed::append);
                    if (role[0] == null) choice.delta().role().ifPresent(r -> role[0] = r.asString());
                }
                chunk.usage().ifPresent(u -> usage[0] = u.completionTokens());
            });
        }
        assertEquals(content, streamed.toString());
        assertEquals("assistant", role[0]);
        assertEquals(24, usage[0]);
    }

    @Test void chatLogprobsCarryTokensBytesAndAlternatives() {
        ChatCompletion c = client.chat().completions().create(chat().logprobs(true).topLogprobs(2).build());
        var content = c.choices().getFirst().logprobs().orElseThrow().content().orElseThrow();
        assertEquals(24, content.size());
        for (var t : content) {
            assertEquals(2, t.topLogprobs().size());
            assertTrue(t.logprob() <= 0);
            assertEquals(t.topLogprobs().getFirst().logprob(), t.logprob(), 1e-9, "greedy takes the most likely token");
            assertTrue(t.bytes().isPresent());
        }
    }

    @Test void modelsListsTheServedModel() {
        List<Model> models = client.models().list().data();
        assertEquals(1, models.size());
        assertEquals(TestServer.MODEL, models.getFirst().id());
    }
}
