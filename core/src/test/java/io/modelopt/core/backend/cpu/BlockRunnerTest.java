package io.modelopt.core.backend.cpu;

import io.modelopt.core.model.llama.TinyLlama;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.modelopt.core.engine.ActivationObserver;
import io.modelopt.core.engine.Backend;
import io.modelopt.core.engine.Batch;
import io.modelopt.core.engine.BlockPart;
import io.modelopt.core.engine.BlockRunner;
import io.modelopt.core.engine.Linear;
import io.modelopt.core.engine.LinearInput;
import io.modelopt.core.engine.Logits;
import io.modelopt.core.engine.ModelRunner;
import io.modelopt.core.engine.RunnerOptions;
import io.modelopt.core.engine.WeightSubstitution;
import io.modelopt.core.gguf.GgufModelSource;
import io.modelopt.core.kernel.KernelMode;
import io.modelopt.core.kernel.WeightMatrix;
import io.modelopt.core.kv.KvCache;
import io.modelopt.core.kv.KvDtype;
import io.modelopt.core.model.Architecture;
import io.modelopt.core.model.ModelConfig;
import io.modelopt.core.model.ModelSource;
import io.modelopt.core.model.RopeConvention;
import io.modelopt.core.synthetic.SyntheticModel;
import io.modelopt.core.synthetic.SyntheticSpec;
import io.modelopt.core.tensor.GgmlType;
import io.modelopt.core.tensor.TensorData;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The calibration plug points (activation observer, block runner, weight substitution) against
 * the plain forward pass, bit for bit: a tiny F32 GQA model with biases, and the synthetic micro
 * model in Q8_0 (repacked in vector mode), in both kernel modes and both KV dtypes.
 */
class BlockRunnerTest {
    /** Two calibration sequences of six tokens, interleaved in the batch as a scheduler might. */
    private static final int[][] SEQUENCES = {{1, 17, 5, 33, 2, 60}, {9, 41, 12, 7, 3, 11}};

    @TempDir static Path dir;

    static Stream<Arguments> cases() {
        Stream.Builder<Arguments> b = Stream.builder();
        for (KernelMode mode : KernelMode.values()) {
            for (KvDtype kv : KvDtype.values()) {
                b.add(Arguments.of("tiny qwen2 f32", mode, kv));
                b.add(Arguments.of("micro q8_0", mode, kv));
            }
        }
        return b.build();
    }

    private static ModelSource open(String model) {
        if (model.startsWith("tiny")) {
            return new TinyLlama(ModelConfig.builder().architecture(Architecture.QWEN2).hiddenSize(48).numLayers(3).numHeads(6).numKvHeads(2)
                    .intermediateSize(72).vocabSize(64).contextLength(32).rmsNormEps(1e-6f).ropeTheta(10000f).attentionBias(true)
                    .ropeConvention(RopeConvention.ROTATE_HALF).build(), 5);
        }
        Path p = dir.resolve("micro-q8_0.gguf");
        if (!p.toFile().exists()) SyntheticModel.of(SyntheticSpec.MICRO, GgmlType.Q8_0, 3).writeGguf(p, (s, d, t) -> {});
        return GgufModelSource.open(p);
    }

    private static ModelRunner load(ModelSource src, KernelMode mode, KvDtype kv) {
        return Backend.named("cpu").load(src, RunnerOptions.builder().threads(2).kernelMode(mode).kvDtype(kv).maxBatchTokens(16).maxSequences(2).build());
    }

    private static void assumeMode(KernelMode m) {
        assumeTrue(m == KernelMode.SCALAR || KernelMode.vectorApiAvailable(), "Vector API not in this JVM");
    }

    /** Both sequences from position 0, tokens alternating between them; logits for every token. */
    private static Batch calibrationBatch() {
        Batch.Builder b = Batch.builder();
        for (int p = 0; p < SEQUENCES[0].length; p++) {
            for (int s = 0; s < SEQUENCES.length; s++) b.add(SEQUENCES[s][p], p, s, true);
        }
        return b.build();
    }

    private static float[][] rows(Logits l) {
        float[][] r = new float[l.rows()][];
        for (int i = 0; i < r.length; i++) r[i] = l.row(i);
        return r;
    }

    /** Copies of every observed input, keyed "layer/input". */
    private static final class Recorder implements ActivationObserver {
        final Map<String, float[]> seen = new LinkedHashMap<>();
        final List<String> order = new ArrayList<>();

        @Override public void onInput(int layer, LinearInput input, float[] rows, int tokens, int cols) {
            String key = layer + "/" + input;
            order.add(key);
            seen.put(key, java.util.Arrays.copyOf(rows, tokens * cols));
        }
    }

    @ParameterizedTest(name = "{0} {1} KV {2}") @MethodSource("cases")
    void blockRangesComposeToTheFullForward(String model, KernelMode mode, KvDtype kv) {
        assumeMode(mode);
        try (ModelSource src = open(model); ModelRunner runner = load(src, mode, kv); KvCache cache = runner.newKvCache()) {
            Batch batch = calibrationBatch();
            float[][] full = rows(runner.forward(batch, cache));
            BlockRunner blocks = runner.blocks();
            int n = blocks.numBlocks(), h = blocks.hiddenSize();
            for (int k = 0; k <= n; k++) {
                float[] hidden = new float[batch.size() * h];
                blocks.embed(batch, hidden);
                blocks.forward(0, k, batch, hidden, hidden, WeightSubstitution.NONE);
                for (int l = k; l < n; l++) blocks.forwardBlock(l, batch, hidden, hidden, WeightSubstitution.NONE);
                assertArrayEquals(full, rows(blocks.logits(batch, hidden, WeightSubstitution.NONE)), "blocks [0, " + k + ") then one by one");
            }
        }
    }

    @ParameterizedTest(name = "{0} {1} KV {2}") @MethodSource("cases")
    void attentionThenMlpPartsEqualTheBlockAndSeeOnlyTheirInputs(String model, KernelMode mode, KvDtype kv) {
        assumeMode(mode);
        try (ModelSource src = open(model); ModelRunner runner = load(src, mode, kv)) {
            Batch batch = calibrationBatch();
            BlockRunner blocks = runner.blocks();
            int h = blocks.hiddenSize();
            float[] hidden = new float[batch.size() * h];
            blocks.embed(batch, hidden);
            for (int l = 0; l < blocks.numBlocks(); l++) {
                float[] whole = new float[hidden.length], mid = new float[hidden.length], parts = new float[hidden.length];
                blocks.forwardBlock(l, batch, hidden, whole, WeightSubstitution.NONE);
                Recorder seen = new Recorder();
                runner.observe(seen);
                blocks.forwardPart(l, BlockPart.ATTENTION, batch, hidden, mid, WeightSubstitution.NONE);
                assertEquals(List.of(l + "/QKV", l + "/ATTN_OUTPUT"), seen.order);
                blocks.forwardPart(l, BlockPart.MLP, batch, mid, parts, WeightSubstitution.NONE);
                assertEquals(List.of(l + "/QKV", l + "/ATTN_OUTPUT", l + "/GATE_UP", l + "/DOWN"), seen.order);
                runner.observe(null);
                assertArrayEquals(whole, parts, "block " + l + ": attention then MLP");
                assertFalse(java.util.Arrays.equals(hidden, mid), "the attention part changed the residual");
                hidden = whole;
            }
            assertThrows(IllegalArgumentException.class, () -> blocks.forwardPart(blocks.numBlocks(), BlockPart.MLP, batch, new float[batch.size() * h],
                    new float[batch.size() * h], WeightSubstitution.NONE));
        }
    }

    @ParameterizedTest(name = "{0} {1} KV {2}") @MethodSource("cases")
    void observerSeesTheSameInputsInBothPathsOncePerInput(String model, KernelMode mode, KvDtype kv) {
        assumeMode(mode);
        try (ModelSource src = open(model); ModelRunner runner = load(src, mode, kv); KvCache cache = runner.newKvCache()) {
            Batch batch = calibrationBatch();
            Recorder plain = new Recorder();
            runner.observe(plain);
            float[][] logits = rows(runner.forward(batch, cache));
            Recorder layered = new Recorder();
            runner.observe(layered);
            BlockRunner blocks = runner.blocks();
            float[] hidden = new float[batch.size() * blocks.hiddenSize()];
            blocks.embed(batch, hidden);
            blocks.forward(0, blocks.numBlocks(), batch, hidden, hidden, WeightSubstitution.NONE);
            blocks.logits(batch, hidden, WeightSubstitution.NONE);
            runner.observe(null);

            int layers = blocks.numBlocks();
            assertEquals(4 * layers + 1, plain.order.size(), "one call per distinct input: " + plain.order);
            assertEquals(List.of("0/QKV", "0/ATTN_OUTPUT", "0/GATE_UP", "0/DOWN"), plain.order.subList(0, 4));
            assertEquals(layers + "/OUTPUT", plain.order.getLast());
            assertEquals(plain.order, layered.order);
            for (String key : plain.order) assertArrayEquals(plain.seen.get(key), layered.seen.get(key), key);
            // the captured inputs are what the linears multiply: the classifier's input times the output matrix gives the logits
            assertEquals(src.config().hiddenSize() * batch.size(), plain.seen.get("0/QKV").length);
            assertEquals(src.config().intermediateSize() * batch.size(), plain.seen.get("0/DOWN").length);
            assertEquals(batch.size(), logits.length);
            TensorData out = src.tensors().containsKey("output.weight") ? src.tensors().get("output.weight") : src.tensors().get("token_embd.weight");
            WeightMatrix w = WeightMatrix.of(out);
            int hs = src.config().hiddenSize();
            float[] x = plain.seen.get(layers + "/OUTPUT"), row = new float[hs];
            // F32 weights: float rounding only; quantized ones multiply Q8_0-quantized activations (ggml's vec_dot), a few percent of a logit's scale
            double tol = out.type() == GgmlType.F32 ? 1e-4 : 3e-2;
            for (int v = 0; v < w.rows(); v++) {
                w.dequantizeRow(v, row, 0);
                for (int t = 0; t < batch.size(); t++) {
                    double dot = 0, scale = 0;
                    for (int c = 0; c < hs; c++) {
                        dot += (double) x[t * hs + c] * row[c];
                        scale += Math.abs((double) x[t * hs + c] * row[c]);
                    }
                    assertEquals(dot, logits[t][v], tol * Math.max(scale, 1e-3), "logit " + v + " of token " + t + " from the captured classifier input");
                }
            }
        }
    }

    @ParameterizedTest(name = "{0} {1} KV {2}") @MethodSource("cases")
    void substitutingTheOriginalWeightsChangesNothingAndAReplacementActsForOneCallOnly(String model, KernelMode mode, KvDtype kv) {
        assumeMode(mode);
        try (ModelSource src = open(model); ModelRunner runner = load(src, mode, kv); KvCache cache = runner.newKvCache()) {
            Batch batch = calibrationBatch();
            BlockRunner blocks = runner.blocks();
            int h = blocks.hiddenSize(), n = batch.size();
            float[] in = new float[n * h];
            blocks.embed(batch, in);
            float[] plain = new float[n * h];
            blocks.forward(0, blocks.numBlocks(), batch, in, plain, WeightSubstitution.NONE);

            // the runner's own matrices handed back, and fresh in-place views of the file's tensors (the
            // same values; in vector mode the runner reads repacked copies of the Q8_0 ones)
            List<String> asked = new ArrayList<>();
            float[] same = new float[n * h];
            blocks.forward(0, blocks.numBlocks(), batch, in, same, (layer, linear, original) -> {
                asked.add(layer + "/" + linear);
                return original;
            });
            assertArrayEquals(plain, same);
            assertEquals(blocks.numBlocks() * 7, asked.size(), "each linear of each block asked once: " + asked);
            float[] fresh = new float[n * h];
            blocks.forward(0, blocks.numBlocks(), batch, in, fresh,
                    (layer, linear, original) -> WeightMatrix.of(src.tensors().get(linear.tensorName(layer))));
            // a repacked copy sums in another order than the in-place kernel: equal only where nothing is repacked
            if (mode == KernelMode.SCALAR || !model.contains("q8_0")) assertArrayEquals(plain, fresh, "in-place views of the same tensors");
            assertArrayEquals(rows(runner.forward(batch, cache)), rows(blocks.logits(batch, plain, WeightSubstitution.NONE)));

            // a zeroed down projection of block 1 changes its output, for that call only
            try (Arena arena = Arena.ofShared()) { // shared: the compute pool's workers read it
                TensorData down = src.tensors().get(Linear.DOWN.tensorName(1));
                MemorySegment zeros = arena.allocate(4L * down.elementCount(), 64);
                WeightMatrix zero = WeightMatrix.of(new TensorData("zero", GgmlType.F32, down.shape(), zeros));
                float[] changed = new float[n * h];
                blocks.forward(0, blocks.numBlocks(), batch, in, changed, WeightSubstitution.of(1, Linear.DOWN, zero));
                assertFalse(java.util.Arrays.equals(plain, changed));
                float[] after = new float[n * h];
                blocks.forward(0, blocks.numBlocks(), batch, in, after, WeightSubstitution.NONE);
                assertArrayEquals(plain, after);
                // block 1 alone with it: x + attention(x), since the FFN adds W_down · h = 0
                float[] mid = new float[n * h];
                blocks.forward(0, 1, batch, in, mid, WeightSubstitution.NONE);
                float[] b1 = new float[n * h];
                blocks.forwardBlock(1, batch, mid, b1, WeightSubstitution.of(1, Linear.DOWN, zero));
                float[] b1Plain = new float[n * h];
                blocks.forwardBlock(1, batch, mid, b1Plain, WeightSubstitution.NONE);
                assertFalse(java.util.Arrays.equals(b1Plain, b1));
            }
        }
    }

    @ParameterizedTest(name = "{0} {1} KV {2}") @MethodSource("cases")
    void blockRunnerLeavesTheModelsCacheAlone(String model, KernelMode mode, KvDtype kv) {
        assumeMode(mode);
        try (ModelSource src = open(model); ModelRunner runner = load(src, mode, kv); KvCache a = runner.newKvCache(); KvCache b = runner.newKvCache()) {
            Batch prompt = Batch.ofSequence(0, 0, SEQUENCES[0], false);
            Batch step = Batch.decodeStep(new int[] {0}, new int[] {4}, new int[] {SEQUENCES[0].length});
            runner.forward(prompt, a);
            float[][] expected = rows(runner.forward(step, a));
            runner.forward(prompt, b);
            Batch calib = calibrationBatch();
            BlockRunner blocks = runner.blocks();
            float[] hidden = new float[calib.size() * blocks.hiddenSize()];
            blocks.embed(calib, hidden);
            blocks.forward(0, blocks.numBlocks(), calib, hidden, hidden, WeightSubstitution.NONE);
            assertEquals(SEQUENCES[0].length, b.length(0));
            assertArrayEquals(expected, rows(runner.forward(step, b)));
        }
    }

    @ParameterizedTest(name = "{0} {1} KV {2}") @MethodSource("cases")
    void blockRunnerNeedsSequencesFromPositionZero(String model, KernelMode mode, KvDtype kv) {
        assumeMode(mode);
        assumeTrue(kv == KvDtype.F32 && model.startsWith("tiny"));
        try (ModelSource src = open(model); ModelRunner runner = load(src, mode, kv)) {
            BlockRunner blocks = runner.blocks();
            Batch late = Batch.ofSequence(0, 3, new int[] {1, 2}, false);
            float[] hidden = new float[2 * blocks.hiddenSize()];
            var e = assertThrows(IllegalArgumentException.class, () -> blocks.forward(0, 1, late, hidden, hidden, WeightSubstitution.NONE));
            assertTrue(e.getMessage().contains("position 3"), e.getMessage());
            assertThrows(IllegalArgumentException.class, () -> blocks.forward(1, 5, Batch.ofSequence(0, 0, new int[] {1}, false), hidden, hidden, null));
        }
    }

    private static void assertTrue(boolean c, String m) { org.junit.jupiter.api.Assertions.assertTrue(c, m); }
}
