package io.modelopt.quantization.calib;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.modelopt.core.engine.Backend;
import io.modelopt.core.engine.Batch;
import io.modelopt.core.engine.LinearInput;
import io.modelopt.core.engine.ModelRunner;
import io.modelopt.core.engine.RunnerOptions;
import io.modelopt.core.gguf.GgufModelSource;
import io.modelopt.core.kv.KvCache;
import io.modelopt.core.model.ModelSource;
import io.modelopt.core.synthetic.SyntheticModel;
import io.modelopt.core.synthetic.SyntheticSpec;
import io.modelopt.core.tensor.GgmlType;
import java.lang.foreign.Arena;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The block-by-block driver against the plain forward pass, and its bookkeeping. */
class BlockwiseCalibratorTest {
    @TempDir Path dir;

    /** Records every input the driver's collect pass shows, and quantizes nothing. */
    private static final class Recording implements BlockMethod {
        final Map<String, float[]> seen = new HashMap<>();
        final List<Integer> blocks = new ArrayList<>();

        @Override public String name() { return "record"; }

        @Override public InputStatistics statistics(int block, LinearInput input, int cols) {
            return (rows, tokens, c) -> {
                String key = block + "/" + input;
                float[] prev = seen.getOrDefault(key, new float[0]);
                float[] all = Arrays.copyOf(prev, prev.length + tokens * c);
                System.arraycopy(rows, 0, all, prev.length, tokens * c);
                seen.put(key, all);
            };
        }

        @Override public BlockResult quantizeBlock(BlockContext context) {
            blocks.add(context.block());
            assertTrue(context.quantizedLinears().isEmpty());
            return BlockResult.of(Map.of());
        }
    }

    @Test
    void blockByBlockInputsEqualTheFullForwardPass() {
        Path p = dir.resolve("micro-f32.gguf");
        SyntheticModel.of(SyntheticSpec.MICRO, GgmlType.F32, 7).writeGguf(p, (s, d, t) -> {});
        int[][] samples = {{1, 17, 5, 33, 2, 60, 8, 9}, {1, 41, 12, 7, 3, 11, 40, 2}, {1, 4, 4, 4, 50, 51, 52, 53}};
        CalibrationData data = CalibrationData.of(samples);
        try (ModelSource src = GgufModelSource.open(p);
             ModelRunner runner = Backend.named("cpu").load(src, RunnerOptions.builder().threads(1).maxBatchTokens(16).maxSequences(2).build());
             Arena arena = Arena.ofConfined()) {
            Recording method = new Recording();
            List<String> stages = new ArrayList<>();
            BlockwiseCalibrator.Result r = new BlockwiseCalibrator(src, runner, data, name -> null, arena, (s, d, t) -> stages.add(s), 2).run(method);
            assertEquals(List.of(0, 1), method.blocks);
            assertTrue(r.quantized().isEmpty());
            assertTrue(stages.contains("record blk 1/2 collect") && stages.getLast().equals("record blk 2/2 done"), stages.toString());

            // the same batches through the plain forward pass, inputs recorded the same way
            Recording full = new Recording();
            for (Batch b : BlockwiseCalibrator.batches(data, 2)) {
                runner.observe((layer, input, rows, tokens, cols) -> {
                    if (input != LinearInput.OUTPUT) full.statistics(layer, input, cols).accept(rows, tokens, cols);
                });
                Batch withLogits = withLastLogits(b);
                try (KvCache cache = runner.newKvCache()) {
                    runner.forward(withLogits, cache);
                }
            }
            runner.observe(null);
            assertEquals(full.seen.keySet(), method.seen.keySet());
            for (String key : full.seen.keySet()) assertArrayEquals(full.seen.get(key), method.seen.get(key), key);
            // block 0's inputs equal block-0 inputs of the full pass: the assertion above covers "0/QKV" explicitly
            assertTrue(method.seen.containsKey("0/QKV") && method.seen.get("0/QKV").length == 3 * 8 * 64);
        }
    }

    private static Batch withLastLogits(Batch b) {
        Batch.Builder out = Batch.builder(b.size());
        for (int i = 0; i < b.size(); i++) out.add(b.token(i), b.position(i), b.sequenceId(i), i == b.size() - 1);
        return out.build();
    }

    @Test
    void peakMemoryOfThe1BShapeAtTheDefaults() {
        // TinyLlama-1.1B: hidden 2048, intermediate 5632; 128 x 512 tokens in batches of 2048. GPTQ true-sequential holds
        // q/k/v's H (2048² doubles, from the collect pass, kept to the block's end) and collects one more Hessian at a
        // time, the largest ffn_down's: 5632² doubles + its float GEMM product + a transposed batch (its sum then
        // becomes H in place, and down's one linear needs no copy)
        long hessian = 8L * 2048 * 2048 + 8L * 5632 * 5632 + 4L * 5632 * 5632 + 4L * 2048 * 5632;
        long peak = BlockwiseCalibrator.peakBytes(2048, 128, 512, 2048, hessian);
        assertEquals(536_870_912L + 16_777_216L + 460_324_864L, peak); // 1.01 GB: 537 MB hidden states, 460 MB statistics
    }
}
