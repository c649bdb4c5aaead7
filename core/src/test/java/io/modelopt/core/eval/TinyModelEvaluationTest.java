package io.modelopt.core.eval;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.modelopt.core.engine.ModelRunner;
import io.modelopt.core.kernel.ComputePool;
import io.modelopt.core.engine.RunnerOptions;
import io.modelopt.core.kv.KvDtype;
import io.modelopt.core.model.ModelConfig;
import io.modelopt.core.model.RopeConvention;
import io.modelopt.core.backend.cpu.CpuLlamaRunner;
import io.modelopt.core.model.llama.TinyLlama;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** Perplexity and KL divergence on a tiny random model against NLLs computed from its float64 reference forward. */
class TinyModelEvaluationTest {
    static final ModelConfig CONFIG = ModelConfig.builder().hiddenSize(32).numLayers(2).numHeads(4).numKvHeads(2).intermediateSize(48)
            .vocabSize(50).contextLength(64).ropeConvention(RopeConvention.ADJACENT_PAIRS).build();
    static final int BOS = 1;

    static int[] stream(int n, long seed) {
        Random r = new Random(seed);
        int[] t = new int[n];
        t[0] = BOS;
        for (int i = 1; i < n; i++) t[i] = 3 + r.nextInt(47);
        return t;
    }

    /** Mean NLL and NLL² under the protocol, from the float64 reference, window by window. */
    static double[] reference(TinyLlama model, int[] tokens, WindowProtocol p) {
        int n = p.contextLength(), windows = tokens.length / n;
        if (p.maxWindows() > 0) windows = Math.min(windows, p.maxWindows());
        double sum = 0, sumSq = 0;
        long count = 0;
        double[] invFreq = TinyLlama.plainInvFreq(CONFIG.headDim(), CONFIG.ropeTheta());
        for (int w = 0; w < windows; w++) {
            int[] win = java.util.Arrays.copyOfRange(tokens, w * n, (w + 1) * n);
            if (p.bosToken() >= 0) win[0] = p.bosToken();
            double[][] logits = model.referenceLogits(win, invFreq);
            for (int j = p.firstScoredPosition(); j <= n - 2; j++) {
                double max = Double.NEGATIVE_INFINITY, s = 0;
                for (double v : logits[j]) max = Math.max(max, v);
                for (double v : logits[j]) s += Math.exp(v - max);
                double nll = Math.log(s) + max - logits[j][tokens[w * n + j + 1]];
                sum += nll;
                sumSq += nll * nll;
                count++;
            }
        }
        return new double[] {sum / count, sumSq / count, count};
    }

    static RunnerOptions opts(int batch, int rows) {
        return RunnerOptions.builder().threads(2).kvDtype(KvDtype.F32).maxBatchTokens(batch).maxLogitsRows(rows).build();
    }

    @Test
    void llamaCppProtocolMatchesFloat64ReferenceWhateverTheBatchLayout() {
        int[] tokens = stream(16 * 7 + 5, 1);
        WindowProtocol p = WindowProtocol.llamaCpp(16, BOS);
        try (TinyLlama model = new TinyLlama(CONFIG, 9)) {
            double[] ref = reference(model, tokens, p);
            double refPpl = Math.exp(ref[0]);
            double refErr = refPpl * Math.sqrt((ref[1] - ref[0] * ref[0]) / (ref[2] - 1));
            // 64 tokens: 4 windows per forward; 16: one window per forward; 5 tokens/5 rows: windows in pieces
            for (int[] limits : new int[][] {{64, 64}, {16, 16}, {5, 5}, {64, 7}}) {
                try (ModelRunner runner = CpuLlamaRunner.load(model, opts(limits[0], limits[1]))) {
                    List<long[]> progress = new ArrayList<>();
                    Perplexity.Result r = Perplexity.evaluate(runner, tokens, p, (stage, done, total) -> progress.add(new long[] {done, total}));
                    assertEquals(7, r.windows());
                    assertEquals(7 * 7, r.tokensScored());
                    assertEquals(ref[0], r.meanNll(), 1e-5, "limits " + limits[0] + "/" + limits[1]);
                    assertEquals(refPpl, r.perplexity(), 1e-5 * refPpl);
                    assertEquals(refErr, r.error(), 1e-4 * refErr);
                    assertEquals(0, progress.getFirst()[0]);
                    assertEquals(7, progress.getLast()[0]);
                    assertEquals(7, progress.getLast()[1]);
                    for (int i = 1; i < progress.size(); i++) assertTrue(progress.get(i)[0] > progress.get(i - 1)[0]);
                }
            }
        }
    }

    @Test
    void nonOverlappingProtocolScoresAllButTheFirstToken() {
        int[] tokens = stream(12 * 5, 2);
        WindowProtocol p = WindowProtocol.nonOverlapping(12);
        assertEquals(11, p.scoredPerWindow());
        try (TinyLlama model = new TinyLlama(CONFIG, 4); ModelRunner runner = CpuLlamaRunner.load(model, opts(32, 32))) {
            double[] ref = reference(model, tokens, p);
            Perplexity.Result r = Perplexity.evaluate(runner, tokens, p, null);
            assertEquals(5 * 11, r.tokensScored());
            assertEquals(ref[0], r.meanNll(), 1e-5);
            Perplexity.Result two = Perplexity.evaluate(runner, tokens, p.withMaxWindows(2), null);
            assertEquals(2, two.windows());
            assertEquals(reference(model, tokens, p.withMaxWindows(2))[0], two.meanNll(), 1e-5);
        }
    }

    @Test
    void badProtocolsAreRejected() {
        assertThrows(IllegalArgumentException.class, () -> new WindowProtocol(1, 0, -1, 0));
        assertThrows(IllegalArgumentException.class, () -> new WindowProtocol(8, 7, -1, 0));
        try (TinyLlama model = new TinyLlama(CONFIG, 4); ModelRunner runner = CpuLlamaRunner.load(model, opts(32, 32))) {
            var e = assertThrows(IllegalArgumentException.class, () -> Perplexity.evaluate(runner, stream(200, 1), WindowProtocol.llamaCpp(128, 1), null));
            assertTrue(e.getMessage().contains("context length 64"), e.getMessage());
            e = assertThrows(IllegalArgumentException.class, () -> Perplexity.evaluate(runner, stream(10, 1), WindowProtocol.llamaCpp(16, 1), null));
            assertTrue(e.getMessage().contains("at least one window"), e.getMessage());
        }
    }

    @Test
    void klDivergenceOfAModelWithItselfIsZeroAndGrowsWithDifference() {
        int[] tokens = stream(16 * 4, 3);
        WindowProtocol p = WindowProtocol.llamaCpp(16, BOS);
        try (TinyLlama model = new TinyLlama(CONFIG, 9); TinyLlama other = new TinyLlama(CONFIG, 10);
             ComputePool shared = new ComputePool(2);
             ModelRunner a = CpuLlamaRunner.load(model, opts(64, 64).toBuilder().computePool(shared).build());
             ModelRunner b = CpuLlamaRunner.load(model, opts(16, 5).toBuilder().computePool(shared).build());
             ModelRunner f16 = CpuLlamaRunner.load(model, opts(64, 64).toBuilder().kvDtype(KvDtype.F16).build());
             ModelRunner c = CpuLlamaRunner.load(other, opts(64, 64))) {
            KlDivergence.Result same = KlDivergence.compare(a, b, tokens, p, null);
            assertEquals(4 * 7, same.positions());
            assertEquals(0, same.meanKl(), 1e-9);
            assertEquals(1.0, same.top1Agreement());
            KlDivergence.Result half = KlDivergence.compare(a, f16, tokens, p, null);
            assertTrue(half.meanKl() > 0 && half.meanKl() < 1e-4, half.toString());
            KlDivergence.Result diff = KlDivergence.compare(a, c, tokens, p, null);
            assertTrue(diff.meanKl() > 0.05, diff.toString());
            assertTrue(diff.top1Agreement() < 1.0, diff.toString());
        }
    }

    @Test
    void accumulatorMatchesHandComputedKl() {
        float[] p = {0f, (float) Math.log(3)}, q = {(float) Math.log(3), 0f};   // P = (1/4, 3/4), Q = (3/4, 1/4)
        KlDivergence.Accumulator acc = new KlDivergence.Accumulator();
        acc.add(p, 0, q, 0, 2);
        acc.add(p, 0, p, 0, 2);
        double kl = 0.25 * Math.log(0.25 / 0.75) + 0.75 * Math.log(0.75 / 0.25);
        KlDivergence.Result r = acc.result();
        assertEquals(kl / 2, r.meanKl(), 1e-7);
        assertEquals(kl, r.maxKl(), 1e-7);
        assertEquals(0.5, r.top1Agreement());
    }

    @Test
    void logSumExpIsStable() {
        assertEquals(1000 + Math.log(2), Perplexity.logSumExp(new float[] {1000, 1000}, 0, 2), 1e-9);
        assertEquals(Math.log(3), Perplexity.negativeLogLikelihood(new float[] {5, 5, 5}, 0, 3, 1), 1e-12);
        assertTrue(Double.isNaN(Perplexity.logSumExp(new float[] {1, Float.NaN}, 0, 2)));
    }
}
