package io.modelopt.quantization.awq;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.modelopt.core.ModelOptimizer;
import io.modelopt.core.OptimizedModel;
import io.modelopt.core.QuantizationSpec;
import io.modelopt.core.backend.cpu.CpuLlamaRunner;
import io.modelopt.core.engine.Batch;
import io.modelopt.core.engine.Logits;
import io.modelopt.core.engine.ModelRunner;
import io.modelopt.core.engine.RunnerOptions;
import io.modelopt.core.hf.HfModelSource;
import io.modelopt.core.kv.KvCache;
import io.modelopt.core.kv.KvDtype;
import io.modelopt.core.model.ModelSource;
import io.modelopt.core.testing.Fixtures;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * AWQ on brown-llama with a small calibration set (8 × 64 tokens of the Brown training text):
 * found through the Quantizer SPI for {@code QuantizationSpec.awq()}, the norms carry folded
 * scales, and the checkpoint exports as AutoAWQ GEMM and imports with identical logits.
 */
class AwqQuantizerTest {
    static final int[] PROMPT = {1, 450, 1701, 310, 278, 427, 338, 263};

    @TempDir Path tmp;

    @Test void awqFoldsIntoNormsAndRoundTripsThroughAwqExport() {
        QuantizationSpec spec = QuantizationSpec.awq().calibration(calibration()).build();
        assertInstanceOf(AwqQuantizer.class, ModelOptimizer.quantizer(spec));
        foldsAndRoundTrips(spec, "blk.0.attn_norm.weight", "awq");
    }

    /**
     * AWQ then GPTQ: the norms carry AWQ's scales, GPTQ's solver quantizes the folded weights, and the
     * checkpoint exports in GPTQ's format (act-order's g_idx included) and imports with identical logits.
     */
    @Test void awqThenGptqRoundTripsThroughGptqExport() {
        QuantizationSpec spec = QuantizationSpec.awqGptq().actOrder(true).clipSearch(true).calibration(calibration()).build();
        foldsAndRoundTrips(spec, "blk.0.ffn_norm.weight", "gptq", "compressed-tensors");
    }

    /** 8 × 64 tokens of the Brown training text. */
    private static QuantizationSpec.CalibrationSpec calibration() {
        return new QuantizationSpec.CalibrationSpec(List.of(Fixtures.file("corpora/brown/train.txt")), 8, 64, 0);
    }

    /** Quantizes brown-llama: {@code norm} carries AWQ's scales, the logits stay near F32's, and each export reads back with identical logits. */
    private void foldsAndRoundTrips(QuantizationSpec spec, String norm, String... formats) {
        try (HfModelSource base = HfModelSource.open(Fixtures.brownHf());
             ModelSource q = ModelOptimizer.quantizer(spec).quantize(base, spec, null)) {
            assertFalse(java.util.Arrays.equals(AwqQuantizer.read(base, norm), AwqQuantizer.read(q, norm)), norm + " should carry AWQ's scales");
            float[] ours = logits(q);
            assertNearFloat(ours, logits(base));
            for (String format : formats) {
                Path out = tmp.resolve(spec.method() + "-" + format);
                OptimizedModel.exporter(format).export(q, out, null);
                try (ModelOptimizer back = ModelOptimizer.load(out)) {
                    assertArrayEquals(ours, logits(back.source()), format + ": export -> import changed the logits");
                }
            }
        }
    }

    /** W4 g128 logits within 1% relative squared error of the float model's. */
    private static void assertNearFloat(float[] ours, float[] f32) {
        double err = 0, ref = 0;
        for (int i = 0; i < ours.length; i++) {
            err += (ours[i] - f32[i]) * (ours[i] - f32[i]);
            ref += f32[i] * f32[i];
        }
        assertTrue(err < 0.01 * ref, "W4 g128 logits far from F32: relative squared error " + err / ref);
    }

    static float[] logits(ModelSource s) {
        RunnerOptions o = RunnerOptions.builder().threads(2).kvDtype(KvDtype.F32).maxBatchTokens(16).build();
        try (ModelRunner r = CpuLlamaRunner.load(s, o); KvCache cache = r.newKvCache()) {
            Logits l = r.forward(Batch.ofSequence(0, 0, PROMPT, true), cache);
            float[] all = new float[l.rows() * l.vocabSize()];
            for (int i = 0; i < l.rows(); i++) l.copyRow(i, all, i * l.vocabSize());
            return all;
        }
    }
}
