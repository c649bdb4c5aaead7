package io.modelopt.core.eval;

import io.modelopt.core.engine.Backend;
import io.modelopt.core.engine.ModelRunner;
import io.modelopt.core.engine.RunnerOptions;
import io.modelopt.core.kv.KvDtype;
import io.modelopt.core.loader.ModelSources;
import io.modelopt.core.model.ModelSource;
import io.modelopt.core.synthetic.SyntheticFormat;
import io.modelopt.core.synthetic.SyntheticModel;
import io.modelopt.core.synthetic.SyntheticModelCache;
import io.modelopt.core.synthetic.SyntheticSpec;
import io.modelopt.core.tensor.GgmlType;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.util.Locale;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * KV quantization error where it accumulates: the next-token distributions at positions
 * 1500–1999 of one 2,000-token sequence on the TinyLlama-1.1B-shaped synthetic model (Q4_0
 * weights, 22 layers, 4 KV heads of 64), each KV dtype against F32 KV (the long-context
 * evidence; the fixture contexts of 128 and 256 tokens accumulate little). The tokens are
 * uniformly random ids (the synthetic model has no text of its own); the same ids for every
 * dtype. Opt-in, it loads 1.1B parameters twice and prefills 2,000 tokens eight times (about
 * two minutes on 2 cores): {@code -Dkv.longcontext=true}, with {@code -Dkv.longcontext.model=FILE}
 * to use an existing GGUF of that preset instead of the synthetic model cache.
 */
class KvLongContextTest {
    static final int CONTEXT = 2001, FIRST_SCORED = 1500; // scored: positions 1500..1999

    @Test
    void quantizedKvAgainstF32AtPositions1500To2000() throws Exception {
        assumeTrue(Boolean.getBoolean("kv.longcontext"), "opt-in: -Dkv.longcontext=true");
        String given = System.getProperty("kv.longcontext.model");
        Path model = given != null ? Path.of(given)
                : SyntheticModelCache.atDefaultLocation().get(SyntheticModel.of(SyntheticSpec.preset("tiny1b"), GgmlType.Q4_0, SyntheticModel.DEFAULT_SEED),
                        SyntheticFormat.GGUF, null);
        try (ModelSource source = ModelSources.open(model)) {
            int vocab = source.tokenizer().vocabSize();
            Random r = new Random(2000);
            int[] tokens = new int[CONTEXT];
            tokens[0] = source.tokenizer().bosId();
            for (int i = 1; i < CONTEXT; i++) tokens[i] = 3 + r.nextInt(vocab - 3);
            WindowProtocol protocol = new WindowProtocol(CONTEXT, FIRST_SCORED, -1, 1);
            StringBuilder table = new StringBuilder("| KV | mean KL vs F32 KV | max KL | top-1 agreement | perplexity (F32 KV) |\n| --- | --- | --- | --- | --- |\n");
            double[] meanKl = new double[KvDtype.values().length];
            try (ModelRunner f32 = load(source, KvDtype.F32)) {
                for (KvDtype d : new KvDtype[] {KvDtype.F16, KvDtype.BF16, KvDtype.INT8, KvDtype.FP8_E4M3}) {
                    try (ModelRunner test = load(source, d)) {
                        PairedPass.Result res = PairedPass.run(f32, test, tokens, protocol, true, "kv " + d, null);
                        meanKl[d.ordinal()] = res.kl().meanKl();
                        table.append(String.format(Locale.ROOT, "| %s | %.3e | %.3e | %.4f | %.4f (%.4f) |%n", d.cliName(), res.kl().meanKl(),
                                res.kl().maxKl(), res.kl().top1Agreement(), res.test().perplexity(), res.base().perplexity()));
                    }
                }
            }
            System.out.print(table);
            // the order of precision must show: 16-bit caches below INT8 (8 bits with a per-token scale) below FP8 (3 mantissa bits)
            double f16 = meanKl[KvDtype.F16.ordinal()], bf16 = meanKl[KvDtype.BF16.ordinal()], int8 = meanKl[KvDtype.INT8.ordinal()], fp8 = meanKl[KvDtype.FP8_E4M3.ordinal()];
            assertTrue(f16 < int8 && int8 < fp8 && bf16 < fp8, table.toString());
        }
    }

    private static ModelRunner load(ModelSource source, KvDtype kv) {
        return Backend.named("cpu").load(source, RunnerOptions.builder().threads(2).kvDtype(kv).contextLength(CONTEXT).build());
    }
}
