package io.modelopt.core.generate;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** One sequence's stopping rules, driven token by token as a scheduler drives many. */
class SequenceStateTest {
    private static final FakeTokenizer TOK = new FakeTokenizer("▁Once", "▁upon", "▁a", "▁time", ",", "▁the", "▁end", "▁END");
    private static final int VOCAB = TOK.vocabSize();
    private static final int[] PROMPT = {FakeTokenizer.BOS, TOK.idOf("▁Once"), TOK.idOf("▁upon")};

    private static SequenceState state(GenerationOptions o, int ctx) {
        return new SequenceState(PROMPT, o, TOK, new int[] {FakeTokenizer.EOS}, VOCAB, ctx);
    }

    /** Logits that make {@code token} the greedy choice. */
    private static float[] peak(int token) {
        float[] l = new float[VOCAB];
        l[token] = 10f;
        return l;
    }

    @Test
    void eosEndsWithoutBeingReported() {
        SequenceState s = state(GenerationOptions.builder().maxTokens(8).build(), 64);
        GeneratorTest.Recorder rec = new GeneratorTest.Recorder();
        assertTrue(s.accept(s.sample(peak(TOK.idOf("▁a")), 0), rec));
        assertEquals(PROMPT.length, s.nextPosition(), "the first generated token is fed right after the prompt");
        assertFalse(s.accept(FakeTokenizer.EOS, rec));
        assertEquals(FinishReason.EOS, s.finishReason());
        assertEquals(FinishReason.EOS, rec.finish);
        assertArrayEquals(new int[] {TOK.idOf("▁a")}, s.generated());
        assertEquals(" a", s.text());
        assertThrows(IllegalStateException.class, () -> s.accept(TOK.idOf("▁a"), rec), "nothing after the end");
    }

    @Test
    void stopStringSplitAcrossTokensCutsTheText() {
        SequenceState s = state(GenerationOptions.builder().maxTokens(8).stopString("the end").build(), 64);
        GeneratorTest.Recorder rec = new GeneratorTest.Recorder();
        assertTrue(s.accept(TOK.idOf("▁a"), rec));
        assertTrue(s.accept(TOK.idOf("▁the"), rec));
        assertFalse(s.accept(TOK.idOf("▁end"), rec));
        assertEquals(FinishReason.STOP_STRING, s.finishReason());
        assertEquals(" a ", s.text());
        assertEquals(" a ", rec.joined());
    }

    @Test
    void budgetIsMaxTokensOrWhatTheContextLeaves() {
        SequenceState byTokens = state(GenerationOptions.builder().maxTokens(2).build(), 64);
        GeneratorTest.Recorder rec = new GeneratorTest.Recorder();
        assertTrue(byTokens.accept(TOK.idOf("▁a"), rec));
        assertFalse(byTokens.accept(TOK.idOf("▁a"), rec));
        assertEquals(FinishReason.MAX_TOKENS, byTokens.finishReason());

        SequenceState byContext = state(GenerationOptions.builder().maxTokens(100).build(), PROMPT.length + 1);
        assertEquals(1, byContext.budget());
        assertFalse(byContext.accept(TOK.idOf("▁a"), new GeneratorTest.Recorder()));
        assertEquals(FinishReason.CONTEXT_FULL, byContext.finishReason());

        assertThrows(IllegalArgumentException.class, () -> state(GenerationOptions.defaults(), PROMPT.length));
    }

    @Test
    void stopFromOutsideFlushesHeldText() {
        SequenceState s = state(GenerationOptions.builder().maxTokens(8).stopString("the end").build(), 64);
        GeneratorTest.Recorder rec = new GeneratorTest.Recorder();
        assertTrue(s.accept(TOK.idOf("▁the"), rec)); // "the" could start the stop string: held back
        assertEquals(" ", s.text());
        assertNull(s.finishReason());
        s.stop(FinishReason.MAX_TOKENS, rec);
        assertEquals(" the", s.text(), "held-back text is released when the sequence is ended from outside");
        assertEquals(FinishReason.MAX_TOKENS, rec.finish);
        s.stop(FinishReason.EOS, rec);
        assertEquals(FinishReason.MAX_TOKENS, s.finishReason(), "a second stop changes nothing");
    }

    @Test
    void samplerSeesThePromptForTheRepetitionPenalty() {
        var sampling = io.modelopt.core.sampling.SamplingParams.builder().repetitionPenalty(100f).build();
        SequenceState s = state(GenerationOptions.builder().sampling(sampling).build(), 64);
        float[] l = new float[VOCAB];
        l[TOK.idOf("▁upon")] = 2f; // in the prompt: penalized to 0.02
        l[TOK.idOf("▁a")] = 1f;
        assertEquals(TOK.idOf("▁a"), s.sample(l, 0));
    }

    @Test
    void presenceAndFrequencyPenaltiesCountGeneratedTokensNotThePrompt() {
        var sampling = io.modelopt.core.sampling.SamplingParams.builder().presencePenalty(2f).frequencyPenalty(2f).build();
        SequenceState s = state(GenerationOptions.builder().sampling(sampling).maxTokens(8).build(), 64);
        int upon = TOK.idOf("▁upon"), a = TOK.idOf("▁a");
        float[] l = new float[VOCAB];
        l[upon] = 2f; // in the prompt, never generated: not penalized
        l[a] = 1f;
        assertEquals(upon, s.sample(l, 0), "the prompt does not count for OpenAI's penalties");
        GeneratorTest.Recorder rec = new GeneratorTest.Recorder();
        assertTrue(s.accept(upon, rec)); // generated once: 2 - (2 * 1 + 2) = -2 < 1
        assertEquals(a, s.sample(l, 0));
    }
}
