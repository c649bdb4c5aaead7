package io.modelopt.core.synthetic;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.modelopt.core.engine.Batch;
import io.modelopt.core.backend.cpu.CpuBackend;
import io.modelopt.core.engine.Logits;
import io.modelopt.core.engine.ModelRunner;
import io.modelopt.core.engine.RunnerOptions;
import io.modelopt.core.gguf.GgufModelSource;
import io.modelopt.core.hf.HfModelSource;
import io.modelopt.core.kv.KvCache;
import io.modelopt.core.kv.KvDtype;
import io.modelopt.core.model.ModelSource;
import io.modelopt.core.tensor.GgmlType;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** The synthetic micro model runs in the CPU engine, and its GGUF and HF forms are the same model. */
class SyntheticModelEngineTest {
    private static final int[] PROMPT = {1, 260, 300, 17, 511, 42, 263, 3};

    @TempDir Path dir;

    private static float[][] logits(ModelSource source) {
        RunnerOptions o = RunnerOptions.builder().threads(2).kvDtype(KvDtype.F32).maxBatchTokens(16).build();
        try (ModelRunner runner = new CpuBackend().load(source, o); KvCache cache = runner.newKvCache(1, 32)) {
            Logits l = runner.forward(Batch.ofSequence(0, 0, PROMPT, true), cache);
            float[][] rows = new float[l.rows()][];
            for (int r = 0; r < l.rows(); r++) rows[r] = l.row(r);
            return rows;
        }
    }

    @ParameterizedTest @EnumSource(value = GgmlType.class, names = {"F32", "F16", "Q8_0", "Q4_0"})
    void ggufRunsAndGivesFiniteVaryingLogits(GgmlType type) {
        Path p = dir.resolve("m.gguf");
        SyntheticModel.of(SyntheticSpec.MICRO, type, 11).writeGguf(p, (s, d, t) -> {});
        try (GgufModelSource src = GgufModelSource.open(p)) {
            float[][] rows = logits(src);
            assertEquals(PROMPT.length, rows.length);
            for (float[] row : rows) {
                double min = Double.MAX_VALUE, max = -Double.MAX_VALUE;
                for (float x : row) {
                    assertTrue(Float.isFinite(x));
                    min = Math.min(min, x);
                    max = Math.max(max, x);
                }
                // random N(0, 0.02) weights: small but not constant logits
                assertTrue(max - min > 1e-3 && max - min < 10, "logit range " + min + " .. " + max);
            }
        }
    }

    /**
     * The HF directory keeps Q/K in rotate_half order and the GGUF in adjacent-pair order; the
     * engine applies the matching RoPE convention, so both give the same logits when the
     * generator permuted the rows right.
     */
    @Test
    void hfAndGgufOfOneSeedGiveTheSameLogits() {
        Path gguf = dir.resolve("m.gguf"), hf = dir.resolve("hf");
        SyntheticModel m = SyntheticModel.of(SyntheticSpec.MICRO, GgmlType.F32, 5);
        m.writeGguf(gguf, (s, d, t) -> {});
        m.writeHuggingFace(hf, (s, d, t) -> {});
        float[][] a, b;
        try (GgufModelSource g = GgufModelSource.open(gguf)) { a = logits(g); }
        try (HfModelSource h = HfModelSource.open(hf)) { b = logits(h); }
        double maxDiff = 0, range = 0;
        for (int r = 0; r < a.length; r++) {
            for (int i = 0; i < a[r].length; i++) {
                maxDiff = Math.max(maxDiff, Math.abs(a[r][i] - b[r][i]));
                range = Math.max(range, Math.abs(a[r][i]));
            }
        }
        assertTrue(maxDiff < 1e-5, "max |logit difference| " + maxDiff + " (logits up to " + range + ")");
        assertTrue(range > 1e-3);
    }
}
