package io.modelopt.quantization.calib;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.modelopt.core.engine.Backend;
import io.modelopt.core.engine.ModelRunner;
import io.modelopt.core.engine.RunnerOptions;
import io.modelopt.core.gguf.GgufModelSource;
import io.modelopt.core.model.ModelSource;
import io.modelopt.core.testing.Fixtures;
import io.modelopt.quantization.gguf.ImatrixFile;
import io.modelopt.quantization.gguf.ImatrixWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Our imatrix collector run as the fixture's README ran llama-imatrix (brown-llama F32,
 * train.txt, c 256, 128 chunks) against the file it wrote; and the calibration data's errors.
 */
class ImatrixCollectorTest {
    @TempDir Path tmp;

    @Test
    void reproducesLlamaImatrixOnTheFixture() throws Exception {
        ImatrixFile reference = ImatrixFile.read(Fixtures.file("brown-llama/imatrix/brown-llama-train-c256-128chunks.imatrix"));
        // llama-imatrix tokenized the whole file and used its first 32,768 tokens; a prefix cut at a line end
        // (400 kB, ~90k tokens) tokenizes to the same first tokens and keeps the test short
        String all = Files.readString(Fixtures.file("corpora/brown/train.txt"));
        Path train = Files.writeString(tmp.resolve("train-prefix.txt"), all.substring(0, all.indexOf('\n', 400_000) + 1));
        try (ModelSource src = GgufModelSource.open(Fixtures.brownGguf("f32"));
             ModelRunner runner = Backend.named("cpu").load(src, RunnerOptions.builder().threads(2).maxBatchTokens(256).maxLogitsRows(1).contextLength(256).build())) {
            CalibrationData data = CalibrationData.load(List.of(train), src.tokenizer(), 128, 256, 0, CalibrationRecord.Sampling.SEQUENTIAL);
            assertEquals(128, data.size());
            ImatrixCollector c = new ImatrixCollector(src.tensors().keySet());
            c.run(runner, data, 256, null);
            Path out = tmp.resolve("ours.imatrix");
            ImatrixWriter.write(out, c.entries(), c.chunks(), "corpora/brown/train.txt");
            ImatrixFile ours = ImatrixFile.read(out);
            assertEquals(reference.weights().keySet(), ours.weights().keySet());
            assertEquals(reference.chunkCount(), ours.chunkCount());
            assertEquals(reference.dataset(), ours.dataset());
            double worst = 0;
            String where = "";
            for (Map.Entry<String, float[]> e : reference.weights().entrySet()) {
                float[] r = e.getValue(), o = ours.weights().get(e.getKey());
                assertEquals(r.length, o.length, e.getKey());
                assertEquals(reference.calls().get(e.getKey()), ours.calls().get(e.getKey()), e.getKey());
                for (int j = 0; j < r.length; j++) {
                    double rel = Math.abs(o[j] - r[j]) / Math.max(Math.abs(r[j]), 1e-30);
                    if (rel > worst) {
                        worst = rel;
                        where = e.getKey() + "[" + j + "] " + o[j] + " vs " + r[j];
                    }
                }
            }
            System.out.println("imatrix: worst relative difference " + worst + " at " + where);
            assertTrue(worst <= 1e-3, "worst relative difference " + worst + " at " + where);
        }
    }

    @Test
    void anImatrixOfAnotherModelIsRefusedNamingTheTensor() throws Exception {
        ImatrixCollector c = new ImatrixCollector(java.util.Set.of("blk.9.attn_q.weight"));
        float[] rows = new float[16 * 256];
        java.util.Arrays.fill(rows, 1f);
        c.onInput(9, io.modelopt.core.engine.LinearInput.QKV, rows, 16, 256);
        Path out = tmp.resolve("other.imatrix");
        ImatrixWriter.write(out, c.entries(), 1, "x.txt");
        try (GgufModelSource src = GgufModelSource.open(Fixtures.brownGguf("f32"))) {
            io.modelopt.quantization.gguf.GgufQuantizer q = io.modelopt.quantization.gguf.GgufQuantizer.forPreset("q4_k_m").imatrix(ImatrixFile.read(out));
            IllegalArgumentException ex = assertThrows(IllegalArgumentException.class, () -> q.plan(src.gguf()));
            assertTrue(ex.getMessage().contains("blk.9.attn_q.weight") && ex.getMessage().contains("does not match"), ex.getMessage());
        }
    }

    @Test
    void emptyFilesAndShortTextsAreRefusedWithTokenCounts() throws Exception {
        Path empty = Files.writeString(tmp.resolve("empty.txt"), "");
        Path shortText = Files.writeString(tmp.resolve("short.txt"), "The jury said it did find that the city.");
        try (ModelSource src = GgufModelSource.open(Fixtures.brownGguf("f32"))) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> CalibrationData.load(List.of(empty), src.tokenizer(), 4, 64, 0, CalibrationRecord.Sampling.RANDOM));
            assertTrue(e.getMessage().contains("empty"), e.getMessage());
            e = assertThrows(IllegalArgumentException.class,
                    () -> CalibrationData.load(List.of(shortText), src.tokenizer(), 4, 64, 0, CalibrationRecord.Sampling.RANDOM));
            assertTrue(e.getMessage().matches(".*gave \\d+ tokens, one sample needs 64.*"), e.getMessage());
            Path ids = Files.writeString(tmp.resolve("calib.ids"), "1 5 6 7 8 9 10 11 12 13");
            CalibrationData d = CalibrationData.load(List.of(ids), src.tokenizer(), 3, 4, 42, CalibrationRecord.Sampling.RANDOM);
            CalibrationData again = CalibrationData.load(List.of(ids), src.tokenizer(), 3, 4, 42, CalibrationRecord.Sampling.RANDOM);
            for (int i = 0; i < 3; i++) {
                assertEquals(java.util.Arrays.toString(d.sample(i)), java.util.Arrays.toString(again.sample(i)), "seeded: same samples");
                if (src.tokenizer().addsBos()) assertEquals(src.tokenizer().bosId(), d.sample(i)[0]);
            }
            assertTrue(d.record().summary().contains("3 x 4 tokens (random, seed 42"), d.record().summary());
        }
    }
}
