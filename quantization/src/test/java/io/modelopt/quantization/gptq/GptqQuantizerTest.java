package io.modelopt.quantization.gptq;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

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
import io.modelopt.quantization.calib.CalibratedModelQuantizer;
import io.modelopt.quantization.model.QuantizedModelSource;
import io.modelopt.quantization.model.RtnModelQuantizer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * GPTQ end to end on brown-llama: through the Quantizer SPI with a small calibration set, the
 * record in the metadata, closer logits than RTN, and the GPTQ checkpoint (with g_idx, act-order)
 * exports and imports with identical logits.
 */
class GptqQuantizerTest {
    static final int[] PROMPT = {1, 15, 300, 7, 42, 1000, 5, 77, 12, 900, 3, 64};

    @TempDir Path tmp;

    static float[] logits(ModelSource s) {
        RunnerOptions o = RunnerOptions.builder().threads(2).kvDtype(KvDtype.F32).maxBatchTokens(16).build();
        try (ModelRunner r = CpuLlamaRunner.load(s, o); KvCache cache = r.newKvCache()) {
            Logits l = r.forward(Batch.ofSequence(0, 0, PROMPT, true), cache);
            float[] all = new float[l.rows() * l.vocabSize()];
            for (int i = 0; i < l.rows(); i++) l.copyRow(i, all, i * l.vocabSize());
            return all;
        }
    }

    static double mse(float[] a, float[] b) {
        double e = 0;
        for (int i = 0; i < a.length; i++) e += (a[i] - b[i]) * (double) (a[i] - b[i]);
        return e / a.length;
    }

    @Test
    void gptqWithActOrderBeatsRtnAndRoundTripsThroughTheGptqCheckpoint() throws Exception {
        String text = Files.readString(Fixtures.file("corpora/brown/train.txt"));
        Path calib = Files.writeString(tmp.resolve("calib.txt"), text.substring(0, 60_000));
        QuantizationSpec.CalibrationSpec cs = new QuantizationSpec.CalibrationSpec(List.of(calib), 16, 128, 0);
        QuantizationSpec spec = QuantizationSpec.gptq().bits(4).groupSize(128).actOrder(true).calibration(cs).build();
        assertTrue(new GptqQuantizer().supports(spec));
        try (HfModelSource src = HfModelSource.open(Fixtures.brownHf());
             QuantizedModelSource q = new GptqQuantizer().quantize(src, spec, null);
             QuantizedModelSource rtn = new RtnModelQuantizer().quantize(src, QuantizationSpec.int4().groupSize(128).build(), null)) {
            assertTrue(q.metadata().get(CalibratedModelQuantizer.CALIBRATION_KEY).toString().startsWith("16 x 128 tokens (random, seed 0"),
                    q.metadata().toString());
            float[] base = logits(src), ours = logits(q), nearest = logits(rtn);
            double eg = mse(base, ours), er = mse(base, nearest);
            assertTrue(eg < er, "GPTQ logit MSE " + eg + " vs RTN " + er);
            Path out = tmp.resolve("gptq");
            OptimizedModel.exporter("gptq").export(q, out, null);
            assertTrue(Files.readString(out.resolve("config.json")).contains("\"modelopt_calibration\": \"16 x 128 tokens"), "calibration record in quantization_config");
            try (HfModelSource back = HfModelSource.open(out)) {
                assertArrayEquals(ours, logits(back), "exported GPTQ checkpoint, imported");
            }
            assertNotEquals(0, eg);
        }
    }

    @Test
    void withoutCalibrationDataTheErrorSaysWhatToGive() {
        try (HfModelSource src = HfModelSource.open(Fixtures.brownHf())) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new GptqQuantizer().quantize(src, QuantizationSpec.gptq().build(), null));
            assertTrue(e.getMessage().contains("--calib"), e.getMessage());
        }
        assertTrue(assertThrows(IllegalArgumentException.class, () -> QuantizationSpec.gptq().damp(0).build()).getMessage().contains("damp must be positive"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> QuantizationSpec.int4().actOrder(true).build()).getMessage().contains("GPTQ option"));
        assertEquals(0.05, GptqQuantizer.config(QuantizationSpec.gptq().damp(0.05).build()).damp());
    }
}
