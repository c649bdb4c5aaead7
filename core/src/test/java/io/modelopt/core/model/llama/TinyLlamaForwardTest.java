package io.modelopt.core.model.llama;

import io.modelopt.core.backend.cpu.CpuLlamaRunner;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.modelopt.core.ModelFormatException;
import io.modelopt.core.engine.Batch;
import io.modelopt.core.engine.Logits;
import io.modelopt.core.engine.ModelRunner;
import io.modelopt.core.engine.RunnerOptions;
import io.modelopt.core.kernel.KernelMode;
import io.modelopt.core.kv.KvCache;
import io.modelopt.core.kv.KvDtype;
import io.modelopt.core.model.Architecture;
import io.modelopt.core.model.ModelConfig;
import io.modelopt.core.model.RopeConvention;
import io.modelopt.core.model.RopeScaling;
import io.modelopt.core.model.Rope;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The engine's forward pass on tiny random models against the float64 reference of {@link TinyLlama}. */
class TinyLlamaForwardTest {
    private static final int[] PROMPT = {1, 17, 5, 33, 2, 60, 9, 41, 12, 7, 3};
    private static final double TOL = 2e-4;

    static ModelConfig.Builder base() {
        return ModelConfig.builder().architecture(Architecture.LLAMA).hiddenSize(48).numLayers(2).numHeads(6).numKvHeads(6)
                .intermediateSize(72).vocabSize(64).contextLength(32).rmsNormEps(1e-5f).ropeTheta(10000f);
    }

    static Stream<Arguments> variants() {
        Stream.Builder<Arguments> b = Stream.builder();
        for (KernelMode mode : KernelMode.values()) {
            b.add(Arguments.of("llama MHA rotate_half untied", base().ropeConvention(RopeConvention.ROTATE_HALF).build(), mode));
            b.add(Arguments.of("llama GQA adjacent-pairs tied", base().numKvHeads(2).tieWordEmbeddings(true)
                    .ropeConvention(RopeConvention.ADJACENT_PAIRS).build(), mode));
            b.add(Arguments.of("qwen2 GQA bias", base().architecture(Architecture.QWEN2).numKvHeads(3).attentionBias(true)
                    .ropeTheta(1000000f).rmsNormEps(1e-6f).build(), mode));
            b.add(Arguments.of("mistral GQA 1 kv head, headDim 16 explicit", base().architecture(Architecture.MISTRAL).numHeads(4)
                    .numKvHeads(1).headDim(16).ropeConvention(RopeConvention.ADJACENT_PAIRS).build(), mode));
        }
        return b.build();
    }

    private static RunnerOptions options(KernelMode mode, KvDtype kv) {
        return RunnerOptions.builder().threads(2).kernelMode(mode).kvDtype(kv).maxBatchTokens(32).maxSequences(3).build();
    }

    private static void assumeMode(KernelMode m) {
        assumeTrue(m == KernelMode.SCALAR || KernelMode.vectorApiAvailable(), "Vector API not in this JVM");
    }

    @ParameterizedTest(name = "{0} {2}") @MethodSource("variants")
    void prefillAllLogitsMatchFloat64(String name, ModelConfig config, KernelMode mode) {
        assumeMode(mode);
        try (TinyLlama model = new TinyLlama(config, 42); ModelRunner runner = CpuLlamaRunner.load(model, options(mode, KvDtype.F32));
             KvCache cache = runner.newKvCache()) {
            double[][] ref = model.referenceLogits(PROMPT, TinyLlama.plainInvFreq(config.headDim(), config.ropeTheta()));
            Logits logits = runner.forward(Batch.ofSequence(0, 0, PROMPT, true), cache);
            assertEquals(PROMPT.length, logits.rows());
            double maxDiff = maxDiff(logits, ref, 0);
            assertTrue(maxDiff < TOL, name + ": max |logit diff| " + maxDiff);
            assertEquals(PROMPT.length, cache.length(0));
        }
    }

    @ParameterizedTest(name = "{0} {2}") @MethodSource("variants")
    void prefillThenDecodeMatchesFloat64(String name, ModelConfig config, KernelMode mode) {
        assumeMode(mode);
        try (TinyLlama model = new TinyLlama(config, 7); ModelRunner runner = CpuLlamaRunner.load(model, options(mode, KvDtype.F32));
             KvCache cache = runner.newKvCache()) {
            double[][] ref = model.referenceLogits(PROMPT, TinyLlama.plainInvFreq(config.headDim(), config.ropeTheta()));
            int split = 4;
            int[] head = java.util.Arrays.copyOf(PROMPT, split);
            Logits l = runner.forward(Batch.ofSequence(0, 0, head, false), cache);
            assertEquals(1, l.rows());
            assertEquals(split - 1, l.position(0));
            assertClose(l, 0, ref[split - 1], name + " prefill");
            for (int pos = split; pos < PROMPT.length; pos++) {
                l = runner.forward(Batch.decodeStep(new int[] {0}, new int[] {PROMPT[pos]}, new int[] {pos}), cache);
                assertClose(l, 0, ref[pos], name + " decode at " + pos);
            }
        }
    }

    /**
     * Chunked prefill with a tiny batch limit: the first chunks' sequences fit the dense float
     * copies of the cache (2 × maxBatchTokens positions), the last one does not and reads the
     * cache directly; every position must still match the reference, in both KV types.
     */
    @ParameterizedTest @org.junit.jupiter.params.provider.EnumSource(KvDtype.class)
    void chunkedPrefillUsesBothAttentionPaths(KvDtype kv) {
        ModelConfig config = base().numKvHeads(2).build();
        try (TinyLlama model = new TinyLlama(config, 21);
             ModelRunner runner = CpuLlamaRunner.load(model, RunnerOptions.builder().threads(2).kvDtype(kv).maxBatchTokens(4).build());
             KvCache cache = runner.newKvCache()) {
            double[][] ref = model.referenceLogits(PROMPT, TinyLlama.plainInvFreq(config.headDim(), config.ropeTheta()));
            double tol = kv == KvDtype.F32 ? TOL : kv == KvDtype.FP8_E4M3 ? 0.25 : 2e-2; // FP8 keeps 3 mantissa bits (its kernel: KvDtypeAttentionTest)
            for (int start = 0; start < PROMPT.length; start += 4) {
                int end = Math.min(PROMPT.length, start + 4);
                Logits l = runner.forward(Batch.ofSequence(0, start, java.util.Arrays.copyOfRange(PROMPT, start, end), true), cache);
                for (int r = 0; r < l.rows(); r++) {
                    double m = 0;
                    for (int v = 0; v < l.vocabSize(); v++) m = Math.max(m, Math.abs(l.get(r, v) - ref[start + r][v]));
                    assertTrue(m < tol, kv + " chunk at " + start + " row " + r + ": max |logit diff| " + m);
                }
            }
        }
    }

    @Test
    void mixedPrefillAndDecodeBatchMatchesSeparateSteps() {
        ModelConfig config = base().numKvHeads(3).build();
        int[] a = {1, 4, 8, 15, 16, 23, 42}, b = {1, 2, 3};
        try (TinyLlama model = new TinyLlama(config, 8); ModelRunner runner = CpuLlamaRunner.load(model, options(KernelMode.DEFAULT, KvDtype.F16));
             KvCache mixed = runner.newKvCache(); KvCache alone = runner.newKvCache()) {
            runner.forward(Batch.ofSequence(1, 0, b, false), mixed);
            // one step: b decodes one token (direct cache reads), a prefills 7 tokens (dense copies)
            Batch step = Batch.builder().add(9, b.length, 1, true).addSequence(0, 0, a, 0, a.length, false).build();
            Logits l = runner.forward(step, mixed);
            float[] bMixed = l.row(0), aMixed = l.row(1);
            float[] aAlone = runner.forward(Batch.ofSequence(0, 0, a, false), alone).row(0);
            runner.forward(Batch.ofSequence(1, 0, b, false), alone);
            float[] bAlone = runner.forward(Batch.ofSequence(1, b.length, new int[] {9}, false), alone).row(0);
            assertArrayClose(aAlone, aMixed, 1e-5f, "prefill in a mixed step");
            assertArrayClose(bAlone, bMixed, 1e-5f, "decode in a mixed step");
        }
    }

    @Test
    void llama3RopeScalingMatchesFloat64() {
        RopeScaling s = new RopeScaling("llama3", 8, 1, 4, 16);
        ModelConfig config = base().ropeScaling(s).ropeTheta(500000f).build();
        double[] invFreq = TinyLlama.plainInvFreq(config.headDim(), config.ropeTheta());
        for (int i = 0; i < invFreq.length; i++) {   // transformers' _compute_llama3_parameters
            double wavelen = 2 * Math.PI / invFreq[i];
            if (wavelen > 16 / 1.0) invFreq[i] /= 8;
            else if (wavelen >= 16 / 4.0) {
                double smooth = (16 / wavelen - 1) / 3;
                invFreq[i] = (1 - smooth) * invFreq[i] / 8 + smooth * invFreq[i];
            }
        }
        assertTrue(invFreq[1] < TinyLlama.plainInvFreq(config.headDim(), 500000)[1], "the scaling must change some frequency");
        try (TinyLlama model = new TinyLlama(config, 3); ModelRunner runner = CpuLlamaRunner.load(model, options(KernelMode.DEFAULT, KvDtype.F32));
             KvCache cache = runner.newKvCache()) {
            double[][] ref = model.referenceLogits(PROMPT, invFreq);
            double d = maxDiff(runner.forward(Batch.ofSequence(0, 0, PROMPT, true), cache), ref, 0);
            assertTrue(d < TOL, "max diff " + d);
        }
    }

    @Test
    void twoSequencesInOneBatchGiveTheSameLogitsAsEachAlone() {
        ModelConfig config = base().numKvHeads(2).build();
        int[] a = {1, 5, 9, 13, 22, 40}, b = {1, 30, 31};
        try (TinyLlama model = new TinyLlama(config, 11); ModelRunner runner = CpuLlamaRunner.load(model, options(KernelMode.DEFAULT, KvDtype.F32));
             KvCache together = runner.newKvCache(); KvCache alone = runner.newKvCache()) {
            // prefill both prompts in one batch, interleaved, as two sequences
            Batch.Builder bb = Batch.builder();
            for (int i = 0; i < Math.max(a.length, b.length); i++) {
                if (i < a.length) bb.add(a[i], i, 2, i == a.length - 1);
                if (i < b.length) bb.add(b[i], i, 0, i == b.length - 1);
            }
            Logits l = runner.forward(bb.build(), together);
            assertEquals(2, l.rows());
            float[] bTogether = l.row(0), aTogether = l.row(1);   // b's last token comes first in batch order
            assertEquals(0, l.sequenceId(0));
            assertEquals(2, l.sequenceId(1));
            float[] aAlone = runner.forward(Batch.ofSequence(0, 0, a, false), alone).row(0);
            alone.clear(0);
            float[] bAlone = runner.forward(Batch.ofSequence(0, 0, b, false), alone).row(0);
            assertArrayClose(aAlone, aTogether, 1e-5f, "sequence a prefill");
            assertArrayClose(bAlone, bTogether, 1e-5f, "sequence b prefill");
            // a decode step of both sequences together vs each alone
            l = runner.forward(Batch.decodeStep(new int[] {2, 0}, new int[] {7, 8}, new int[] {a.length, b.length}), together);
            float[] aStep = l.row(0), bStep = l.row(1);
            float[] bStepAlone = runner.forward(Batch.ofSequence(0, b.length, new int[] {8}, false), alone).row(0);
            alone.clear(0);
            runner.forward(Batch.ofSequence(0, 0, a, false), alone);
            float[] aStepAlone = runner.forward(Batch.ofSequence(0, a.length, new int[] {7}, false), alone).row(0);
            assertArrayClose(aStepAlone, aStep, 1e-5f, "sequence a decode");
            assertArrayClose(bStepAlone, bStep, 1e-5f, "sequence b decode");
        }
    }

    @Test
    void f16CacheStaysCloseToF32() {
        ModelConfig config = base().numKvHeads(3).build();
        try (TinyLlama model = new TinyLlama(config, 5);
             ModelRunner r32 = CpuLlamaRunner.load(model, options(KernelMode.DEFAULT, KvDtype.F32));
             ModelRunner r16 = CpuLlamaRunner.load(model, options(KernelMode.DEFAULT, KvDtype.F16));
             KvCache c32 = r32.newKvCache(); KvCache c16 = r16.newKvCache()) {
            assertEquals(KvDtype.F16, c16.dtype());
            assertEquals(c32.byteSize(), 2 * c16.byteSize());
            float[] x = r32.forward(Batch.ofSequence(0, 0, PROMPT, false), c32).row(0);
            float[] y = r16.forward(Batch.ofSequence(0, 0, PROMPT, false), c16).row(0);
            assertArrayClose(x, y, 5e-3f, "F16 vs F32 KV");
        }
    }

    @Test
    void contextOverflowNamesPositionAndLimit() {
        try (TinyLlama model = new TinyLlama(base().contextLength(8).build(), 1);
             ModelRunner runner = CpuLlamaRunner.load(model, options(KernelMode.DEFAULT, KvDtype.F32)); KvCache cache = runner.newKvCache()) {
            assertEquals(8, runner.contextLength());
            runner.forward(Batch.ofSequence(0, 0, new int[] {1, 2, 3, 4, 5, 6, 7, 8}, false), cache);
            var e = assertThrows(IllegalArgumentException.class,
                    () -> runner.forward(Batch.ofSequence(0, 8, new int[] {9}, false), cache));
            assertTrue(e.getMessage().contains("position 8") && e.getMessage().contains("context length 8"), e.getMessage());
        }
        try (TinyLlama model = new TinyLlama(base().contextLength(8).build(), 1);
             ModelRunner runner = CpuLlamaRunner.load(model, options(KernelMode.DEFAULT, KvDtype.F32).toBuilder().contextLength(12).build());
             KvCache cache = runner.newKvCache()) {
            assertEquals(12, runner.contextLength());
            runner.forward(Batch.ofSequence(0, 0, new int[] {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, false), cache);
        }
    }

    @Test
    void invalidStepsAreRejectedClearly() {
        try (TinyLlama model = new TinyLlama(base().build(), 1);
             ModelRunner runner = CpuLlamaRunner.load(model, options(KernelMode.DEFAULT, KvDtype.F32)); KvCache cache = runner.newKvCache()) {
            var gap = assertThrows(IllegalArgumentException.class, () -> runner.forward(Batch.ofSequence(0, 3, new int[] {1}, false), cache));
            assertTrue(gap.getMessage().contains("holds only 0 positions"), gap.getMessage());
            var vocab = assertThrows(IllegalArgumentException.class, () -> runner.forward(Batch.ofSequence(0, 0, new int[] {64}, false), cache));
            assertTrue(vocab.getMessage().contains("token id 64") && vocab.getMessage().contains("vocabulary of 64"), vocab.getMessage());
            var seq = assertThrows(IllegalArgumentException.class, () -> runner.forward(Batch.ofSequence(3, 0, new int[] {1}, false), cache));
            assertTrue(seq.getMessage().contains("sequence id 3"), seq.getMessage());
            var big = assertThrows(IllegalArgumentException.class, () -> runner.forward(Batch.ofSequence(0, 0, new int[33], false), cache));
            assertTrue(big.getMessage().contains("maxBatchTokens 32"), big.getMessage());
            try (KvCache small = runner.newKvCache(1, 4)) {
                var cap = assertThrows(IllegalArgumentException.class, () -> runner.forward(Batch.ofSequence(0, 0, new int[5], false), small));
                assertTrue(cap.getMessage().contains("capacity of 4"), cap.getMessage());
            }
            assertEquals(0, cache.length(0), "a rejected step must not touch the cache");
        }
    }

    @Test
    void missingOrMisshapedTensorsAreNamed() {
        ModelConfig config = base().build();
        try (TinyLlama model = new TinyLlama(config, 1)) {
            model.tensors().remove("blk.1.ffn_up.weight");
            var e = assertThrows(ModelFormatException.class, () -> CpuLlamaRunner.load(model, options(KernelMode.SCALAR, KvDtype.F32)));
            assertTrue(e.getMessage().contains("blk.1.ffn_up.weight"), e.getMessage());
        }
        try (TinyLlama model = new TinyLlama(config, 1)) {
            var wrong = model.tensors().get("blk.0.attn_k.weight");
            model.tensors().put("blk.0.attn_k.weight", new io.modelopt.core.tensor.TensorData(wrong.name(), wrong.type(),
                    new long[] {config.hiddenSize() / 2, config.kvDim() * 2}, wrong.data()));
            var e = assertThrows(ModelFormatException.class, () -> CpuLlamaRunner.load(model, options(KernelMode.SCALAR, KvDtype.F32)));
            assertTrue(e.getMessage().contains("blk.0.attn_k.weight") && e.getMessage().contains("[24, 96]"), e.getMessage());
        }
    }

    @Test
    void ropeOfTheRunnerIsTheKernelsRope() {
        // guards the reference: the plain frequencies the test uses are the kernel's
        Rope r = new Rope(8, 10000, null, null);
        double[] f = TinyLlama.plainInvFreq(8, 10000);
        for (int i = 0; i < 4; i++) assertEquals(f[i], r.inverseFrequency(i), 0);
    }

    static double maxDiff(Logits l, double[][] ref, int firstRef) {
        double m = 0;
        for (int r = 0; r < l.rows(); r++)
            for (int v = 0; v < l.vocabSize(); v++) m = Math.max(m, Math.abs(l.get(r, v) - ref[firstRef + r][v]));
        return m;
    }

    static void assertClose(Logits l, int row, double[] ref, String what) {
        double m = 0;
        for (int v = 0; v < l.vocabSize(); v++) m = Math.max(m, Math.abs(l.get(row, v) - ref[v]));
        assertTrue(m < TOL, what + ": max |logit diff| " + m);
    }

    static void assertArrayClose(float[] a, float[] b, float tol, String what) {
        assertEquals(a.length, b.length);
        for (int i = 0; i < a.length; i++) assertEquals(a[i], b[i], tol, what + " logit " + i);
    }
}
