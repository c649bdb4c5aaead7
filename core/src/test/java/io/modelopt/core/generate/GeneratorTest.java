package io.modelopt.core.generate;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.modelopt.core.engine.Batch;
import io.modelopt.core.sampling.SamplingParams;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/** The generator's control flow on a scripted stand-in model (the fixture-model tests are in GeneratorFixtureTest). */
class GeneratorTest {
    private static final FakeTokenizer TOK = new FakeTokenizer("▁Once", "▁upon", "▁a", "▁time", ",", "▁there", "▁was", ".", "▁the", "▁end");

    private static int id(String piece) {
        int i = TOK.idOf(piece);
        if (i < 0) throw new IllegalArgumentException(piece);
        return i;
    }

    private static final int[] PROMPT = {FakeTokenizer.BOS, id("▁Once"), id("▁upon"), id("▁a"), id("▁time")};
    private static final int[] CONTINUATION = {id(","), id("▁there"), id("▁was"), id("▁a"), id(".")};

    private static int[] script(int[] prompt, int... continuation) {
        return IntStream.concat(Arrays.stream(prompt), Arrays.stream(continuation)).toArray();
    }

    /** Records what a listener sees. */
    static final class Recorder implements TokenListener {
        final List<Integer> ids = new ArrayList<>();
        final List<String> pieces = new ArrayList<>();
        String finishText;
        FinishReason finish;

        @Override public void onToken(int tokenId, String text) {
            assertEquals(null, finish, "no token after the finish");
            ids.add(tokenId);
            pieces.add(text);
        }

        @Override public void onFinish(String text, FinishReason reason) {
            finishText = text;
            finish = reason;
        }

        String joined() { return String.join("", pieces) + finishText; }
    }

    private static GenerationResult run(ScriptedRunner runner, String prompt, GenerationOptions options, Recorder rec) {
        try (Generator g = new Generator(runner, TOK)) {
            return g.generate(prompt, options, rec);
        }
    }

    @Test
    void prefillsThePromptAsOneBatchThenDecodesOneTokenPerStep() {
        ScriptedRunner runner = new ScriptedRunner(TOK.vocabSize(), 64, 64, ScriptedRunner.following(script(PROMPT, CONTINUATION)));
        Recorder rec = new Recorder();
        GenerationResult r = run(runner, "Once upon a time", GenerationOptions.defaults(), rec);

        assertArrayEquals(PROMPT, r.promptTokenIds());
        assertArrayEquals(CONTINUATION, r.tokenIds());
        assertEquals(", there was a.", r.text());
        assertEquals(FinishReason.EOS, r.finishReason());

        Batch prefill = runner.batches.getFirst();
        assertEquals(PROMPT.length, prefill.size());
        assertEquals(1, prefill.logitsCount());
        assertEquals(PROMPT.length - 1, prefill.logitsTokenIndex(0));
        // one decode step per generated token after the first (the last one's step produced EOS)
        assertEquals(1 + CONTINUATION.length, runner.batches.size());
        for (int k = 1; k < runner.batches.size(); k++) {
            Batch b = runner.batches.get(k);
            assertEquals(1, b.size());
            assertEquals(PROMPT.length + k - 1, b.position(0));
            assertEquals(CONTINUATION[k - 1], b.token(0));
        }

        assertEquals(Arrays.stream(CONTINUATION).boxed().toList(), rec.ids);
        assertEquals(r.text(), rec.joined());
        assertEquals(FinishReason.EOS, rec.finish);

        GenerationTimings t = r.timings();
        assertEquals(PROMPT.length, t.promptTokens());
        assertEquals(CONTINUATION.length, t.decodeSteps());
        assertTrue(t.timeToFirstToken() >= t.prefillNanos() && t.prefillNanos() > 0);
    }

    @Test
    void longPromptsArePrefilledInChunksOfTheBatchSize() {
        ScriptedRunner runner = new ScriptedRunner(TOK.vocabSize(), 64, 2, ScriptedRunner.following(script(PROMPT, CONTINUATION)));
        GenerationResult r = run(runner, "Once upon a time", GenerationOptions.defaults(), new Recorder());
        assertArrayEquals(CONTINUATION, r.tokenIds());
        assertEquals(List.of(2, 2, 1), runner.batches.subList(0, 3).stream().map(Batch::size).toList());
        assertEquals(List.of(0, 0, 1), runner.batches.subList(0, 3).stream().map(Batch::logitsCount).toList());
    }

    @Test
    void stopsAtMaxTokens() {
        ScriptedRunner runner = new ScriptedRunner(TOK.vocabSize(), 64, 64, ScriptedRunner.following(script(PROMPT, CONTINUATION)));
        Recorder rec = new Recorder();
        GenerationResult r = run(runner, "Once upon a time", GenerationOptions.builder().maxTokens(2).build(), rec);
        assertArrayEquals(new int[] {id(","), id("▁there")}, r.tokenIds());
        assertEquals(", there", r.text());
        assertEquals(FinishReason.MAX_TOKENS, r.finishReason());
        assertEquals(1, r.timings().decodeSteps());
        assertEquals(r.text(), rec.joined());
    }

    @Test
    void stopStringCutsTheTextAndIsNotEmittedEvenAcrossTokens() {
        ScriptedRunner runner = new ScriptedRunner(TOK.vocabSize(), 64, 64, ScriptedRunner.following(script(PROMPT, CONTINUATION)));
        Recorder rec = new Recorder();
        GenerationResult r = run(runner, "Once upon a time", GenerationOptions.builder().stopString("was a").stopString("zzz").build(), rec);
        assertEquals(", there ", r.text());
        assertEquals(FinishReason.STOP_STRING, r.finishReason());
        // the tokens up to the one completing the stop string
        assertArrayEquals(Arrays.copyOf(CONTINUATION, 4), r.tokenIds());
        // " was" was held back (it could start "was a"), so only its space came out with it
        assertEquals(List.of(",", " there", " ", ""), rec.pieces);
        assertEquals("", rec.finishText);
        assertEquals(r.text(), rec.joined());

        // "re w" spans two tokens; held-back text that turns out not to stop is released
        Recorder rec2 = new Recorder();
        GenerationResult r2 = run(new ScriptedRunner(TOK.vocabSize(), 64, 64, ScriptedRunner.following(script(PROMPT, CONTINUATION))),
                "Once upon a time", GenerationOptions.builder().stopString("re w").stopString("a.!").build(), rec2);
        assertEquals(", the", r2.text());
        assertEquals(FinishReason.STOP_STRING, r2.finishReason());
        Recorder rec3 = new Recorder();
        GenerationResult r3 = run(new ScriptedRunner(TOK.vocabSize(), 64, 64, ScriptedRunner.following(script(PROMPT, CONTINUATION))),
                "Once upon a time", GenerationOptions.builder().stopString("a.!").build(), rec3);
        assertEquals(", there was a.", r3.text());
        assertEquals(FinishReason.EOS, r3.finishReason());
        assertEquals("a.", rec3.finishText, "the held-back tail is released at the end");
        assertEquals(r3.text(), rec3.joined());
    }

    @Test
    void fullContextEndsGenerationWhenThePromptFits() {
        int[] longScript = script(PROMPT, CONTINUATION[0], CONTINUATION[1], CONTINUATION[2], CONTINUATION[3], CONTINUATION[4], id("▁the"), id("▁end"));
        ScriptedRunner runner = new ScriptedRunner(TOK.vocabSize(), 8, 64, ScriptedRunner.following(longScript));
        GenerationResult r = run(runner, "Once upon a time", GenerationOptions.builder().maxTokens(10).build(), new Recorder());
        assertEquals(8 - PROMPT.length, r.tokenIds().length);
        assertEquals(FinishReason.CONTEXT_FULL, r.finishReason());
        assertEquals(", there was", r.text());
        // exactly at the limit it is MAX_TOKENS
        GenerationResult exact = run(new ScriptedRunner(TOK.vocabSize(), 8, 64, ScriptedRunner.following(longScript)),
                "Once upon a time", GenerationOptions.builder().maxTokens(3).build(), new Recorder());
        assertEquals(FinishReason.MAX_TOKENS, exact.finishReason());
    }

    @Test
    void aPromptThatFillsTheContextIsRejectedWithTheNumbers() {
        ScriptedRunner runner = new ScriptedRunner(TOK.vocabSize(), 5, 64, ScriptedRunner.following(PROMPT));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> run(runner, "Once upon a time", GenerationOptions.builder().maxTokens(7).build(), new Recorder()));
        assertTrue(e.getMessage().contains("5 tokens") && e.getMessage().contains("context length is 5") && e.getMessage().contains("7 were requested"), e.getMessage());
        assertTrue(runner.batches.isEmpty());

        try (Generator g = new Generator(new ScriptedRunner(TOK.vocabSize(), 16, 64, ScriptedRunner.following(PROMPT)), TOK)) {
            assertThrows(IllegalArgumentException.class, () -> g.generate(new int[0], GenerationOptions.defaults(), TokenListener.NONE));
            IllegalArgumentException bad = assertThrows(IllegalArgumentException.class,
                    () -> g.generate(new int[] {1, 9999}, GenerationOptions.defaults(), TokenListener.NONE));
            assertTrue(bad.getMessage().contains("9999"), bad.getMessage());
        }
        assertThrows(IllegalArgumentException.class, () -> GenerationOptions.builder().maxTokens(0).build());
        assertThrows(IllegalArgumentException.class, () -> GenerationOptions.builder().stopString("").build());
    }

    @Test
    void multiByteCharactersSplitAcrossByteTokensComeOutWhole() {
        // é = C3 A9, € = E2 82 AC, as byte-fallback tokens
        int[] cont = {TOK.byteToken(0xC3), TOK.byteToken(0xA9), TOK.byteToken(0xE2), TOK.byteToken(0x82), TOK.byteToken(0xAC), id(".")};
        ScriptedRunner runner = new ScriptedRunner(TOK.vocabSize(), 64, 64, ScriptedRunner.following(script(PROMPT, cont)));
        Recorder rec = new Recorder();
        GenerationResult r = run(runner, "Once upon a time", GenerationOptions.defaults(), rec);
        assertEquals("é€.", r.text());
        assertEquals(List.of("", "é", "", "", "€", "."), rec.pieces);
        // cut in the middle of a character: the dangling byte comes out as U+FFFD at the end
        Recorder cut = new Recorder();
        GenerationResult half = run(new ScriptedRunner(TOK.vocabSize(), 64, 64, ScriptedRunner.following(script(PROMPT, cont))),
                "Once upon a time", GenerationOptions.builder().maxTokens(4).build(), cut);
        assertEquals("é\uFFFD", half.text());
        assertEquals("\uFFFD", cut.finishText);
    }

    @Test
    void onlyTheFirstTokenOfAWholeTextLosesItsSentencePieceSpace() {
        int[] fromScratch = {FakeTokenizer.BOS, id("▁Once"), id("▁upon")};
        GenerationResult r = run(new ScriptedRunner(TOK.vocabSize(), 64, 64, ScriptedRunner.following(fromScratch)), "", GenerationOptions.defaults(), new Recorder());
        assertArrayEquals(new int[] {id("▁Once"), id("▁upon")}, r.tokenIds());
        assertEquals("Once upon", r.text());

        int[] continuation = {FakeTokenizer.BOS, id("▁Once"), id("▁upon")};
        GenerationResult c = run(new ScriptedRunner(TOK.vocabSize(), 64, 64, ScriptedRunner.following(continuation)), "Once", GenerationOptions.defaults(), new Recorder());
        assertEquals(" upon", c.text());

        // a byte-level tokenizer (its decoder keeps the space) keeps it even at the start
        FakeTokenizer byteLevel = new FakeTokenizer(false, "▁Once", "▁upon");
        try (Generator g = new Generator(new ScriptedRunner(byteLevel.vocabSize(), 64, 64,
                ScriptedRunner.following(new int[] {1, byteLevel.idOf("▁Once"), byteLevel.idOf("▁upon")})), byteLevel)) {
            assertEquals(" Once upon", g.generate("", GenerationOptions.defaults(), TokenListener.NONE).text());
        }
    }

    @Test
    void seededSamplingIsReproducible() {
        int vocab = TOK.vocabSize();
        // a different, fairly flat distribution at every position; EOS never
        java.util.function.BiConsumer<Integer, float[]> rows = (pos, row) -> {
            SplittableRandom rnd = new SplittableRandom(pos * 31L + 7);
            for (int i = 0; i < row.length; i++) row[i] = (float) rnd.nextGaussian();
            row[FakeTokenizer.EOS] = Float.NEGATIVE_INFINITY;
        };
        SamplingParams sp = SamplingParams.builder().temperature(1f).topK(0).topP(0.95f).seed(2718).build();
        GenerationOptions opts = GenerationOptions.builder().maxTokens(30).sampling(sp).build();
        Recorder rec = new Recorder();
        GenerationResult a = run(new ScriptedRunner(vocab, 64, 64, rows), "Once upon a time", opts, rec);
        GenerationResult b = run(new ScriptedRunner(vocab, 64, 64, rows), "Once upon a time", opts, new Recorder());
        assertEquals(30, a.tokenIds().length);
        assertArrayEquals(a.tokenIds(), b.tokenIds());
        assertEquals(a.text(), b.text());
        assertEquals(a.text(), rec.joined());
        GenerationOptions other = GenerationOptions.builder().maxTokens(30).sampling(sp.toBuilder().seed(2719).build()).build();
        assertFalse(Arrays.equals(a.tokenIds(), run(new ScriptedRunner(vocab, 64, 64, rows), "Once upon a time", other, new Recorder()).tokenIds()));
        // and not simply the argmax
        assertNotEquals(Arrays.toString(a.tokenIds()),
                Arrays.toString(run(new ScriptedRunner(vocab, 64, 64, rows), "Once upon a time", GenerationOptions.builder().maxTokens(30).build(), new Recorder()).tokenIds()));
    }
}
