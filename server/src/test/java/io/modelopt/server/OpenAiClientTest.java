package io.modelopt.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.openai.client.OpenAIClient;
import com.openai.client.okhttp.OpenAIOkHttpClient;
import com.openai.core.JsonValue;
import com.openai.core.http.StreamResponse;
import com.openai.models.chat.completions.ChatCompletionStreamOptions;
import com.openai.models.completions.Completion;
import com.openai.models.completions.CompletionChoice;
import com.openai.models.completions.CompletionCreateParams;
import com.openai.models.models.Model;
import io.modelopt.core.testing.Fixtures;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The official OpenAI Java SDK (test scope only) against the server on a loopback port. */
class OpenAiClientTest {
    /** llama.cpp's greedy 48 tokens for "Once upon a time" on stories260K (stories260K/reference.json). */
    static final String REFERENCE = ", there was a little girl named Lily. She loved to play outside in the park. "
            + "One day, she saw a big, red ball. She wanted to play with it,";

    static TestServer ts;
    static OpenAIClient client;

    @BeforeAll static void start() {
        ts = TestServer.start(Fixtures.storiesGguf("f32"), b -> b, o -> o.apiKey("sk-test"));
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

    @Test void modelsListsTheServedModel() {
        List<Model> models = client.models().list().data();
        assertEquals(1, models.size());
        assertEquals(TestServer.MODEL, models.getFirst().id());
    }
}
