package io.modelopt.quantization.gptq;

import io.modelopt.core.QuantizationSpec;
import io.modelopt.core.engine.Backend;
import io.modelopt.core.engine.ModelRunner;
import io.modelopt.core.engine.RunnerOptions;
import io.modelopt.core.eval.Evaluation;
import io.modelopt.core.hf.HfModelSource;
import io.modelopt.core.model.ModelSource;
import io.modelopt.core.spi.Quantizer;
import io.modelopt.core.testing.Fixtures;
import io.modelopt.quantization.model.RtnModelQuantizer;
import java.nio.file.Files;
import java.util.List;
import java.util.Locale;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * Not a test: RTN vs GPTQ at schemes no file format holds (INT3), evaluated in memory exactly as
 * {@code modelopt evaluate} does (brown-llama, test.txt, c 256, the first 64 llama.cpp windows).
 * {@code flock /tmp/bench.lock ./mvnw -o -q -pl quantization -am test -Dtest=CalibratedQualityBench -Dmodelopt.bench=true
 * -Dmodelopt.bench.bits=3 -Dmodelopt.bench.group=128 -Dsurefire.failIfNoSpecifiedTests=false}
 */
@EnabledIfSystemProperty(named = "modelopt.bench", matches = "true")
class CalibratedQualityBench {
    @Test
    void rtnVersusGptq() throws Exception {
        int bits = Integer.getInteger("modelopt.bench.bits", 3), group = Integer.getInteger("modelopt.bench.group", 128);
        String text = Files.readString(Fixtures.file("corpora/brown/test.txt"));
        QuantizationSpec.CalibrationSpec cs = new QuantizationSpec.CalibrationSpec(List.of(Fixtures.file("corpora/brown/train.txt")), 128, 512, 0);
        QuantizationSpec rtn = QuantizationSpec.int4().bits(bits).groupSize(group).build();
        QuantizationSpec gptq = QuantizationSpec.gptq().bits(bits).groupSize(group).calibration(cs).build();
        Evaluation.Options eo = Evaluation.Options.builder().contextLength(256).maxWindows(64).prompts(0).newTokens(0).threads(2).build();
        try (HfModelSource base = HfModelSource.open(Fixtures.brownHf())) {
            for (Object[] m : new Object[][] {{"RTN", new RtnModelQuantizer(), rtn}, {"GPTQ", new GptqQuantizer(), gptq}}) {
                long t0 = System.nanoTime();
                try (ModelSource q = ((Quantizer) m[1]).quantize(base, (QuantizationSpec) m[2], null);
                     ModelRunner br = Backend.named("cpu").load(base, RunnerOptions.builder().threads(2).contextLength(256).build());
                     ModelRunner qr = Backend.named("cpu").load(q, RunnerOptions.builder().threads(2).contextLength(256).build())) {
                    double qs = (System.nanoTime() - t0) / 1e9;
                    Evaluation.Result r = Evaluation.run(new Evaluation.Subject("base", base, br), new Evaluation.Subject(m[0].toString(), q, qr), text, eo, null);
                    System.out.printf(Locale.ROOT, "BENCH %s INT%d g%d: base %.4f quant %.4f change %+.3f%% KL %.6f top-1 %.3f%% (quantized in %.1f s)%n", m[0], bits, group,
                            r.base().llamaCpp().perplexity(), r.quant().llamaCpp().perplexity(), r.llamaCppChangePercent(), r.kl().meanKl(),
                            100 * r.kl().top1Agreement(), qs);
                }
            }
        }
    }
}
