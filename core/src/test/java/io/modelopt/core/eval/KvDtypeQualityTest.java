package io.modelopt.core.eval;

import io.modelopt.core.engine.Backend;
import io.modelopt.core.engine.ModelRunner;
import io.modelopt.core.engine.RunnerOptions;
import io.modelopt.core.kv.KvDtype;
import io.modelopt.core.model.ModelSource;
import io.modelopt.core.loader.ModelSources;
import io.modelopt.core.testing.Fixtures;
import io.modelopt.core.tokenizer.Tokenizer;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Perplexity of quantized KV caches against the F16 cache on the real fixture models, llama.cpp's
 * protocol (BOS per window, second half scored): INT8 within +0.1 %, FP8 within +1 %; KL
 * divergence and top-1 agreement of the next-token distributions against F16 KV are printed (the
 * table of docs/KVCACHE.md) and bounded. brown-llama on test.txt at n_ctx 256 (llama.cpp: F16
 * 131.6324, q8_0 K+V 131.6329), stories260K on fiction-test.txt at n_ctx 128 (head size 8:
 * llama.cpp cannot quantize its KV cache).
 */
class KvDtypeQualityTest {
    /**
     * Top-1 agreement with F16 KV below this is a broken cache, not rounding: measured 0.96 (INT8)
     * and 0.885 (FP8, 3 mantissa bits) on stories260K, whose tiny model has flat distributions.
     */
    private static double top1Floor(KvDtype d) { return d == KvDtype.FP8_E4M3 ? 0.85 : 0.95; }

    @Test
    void brownLlama() throws Exception {
        check("brown-llama f32", Fixtures.brownGguf("f32"), Fixtures.file("corpora/brown/test.txt"), 256);
    }

    @Test
    void stories260K() throws Exception {
        check("stories260K f32", Fixtures.storiesGguf("f32"), Fixtures.file("corpora/brown/fiction-test.txt"), 128);
    }

    private static void check(String name, Path model, Path text, int ctx) throws Exception {
        try (ModelSource source = ModelSources.open(model)) {
            Tokenizer tok = source.tokenizer();
            int[] tokens = tok.encode(Files.readString(text), true, false);
            WindowProtocol protocol = WindowProtocol.llamaCpp(ctx, tok.addsBos() ? tok.bosId() : -1);
            // the suite's budget: the first 64 windows and the two quantized types; -Dkv.quality.full=true for the docs' whole-text table
            boolean full = Boolean.getBoolean("kv.quality.full");
            if (!full) protocol = protocol.withMaxWindows(64);
            StringBuilder table = new StringBuilder(String.format(Locale.ROOT, "%s, %d tokens, n_ctx %d%n", name, tokens.length, ctx));
            StringBuilder failures = new StringBuilder();
            try (ModelRunner f16 = load(source, KvDtype.F16, ctx)) {
                for (KvDtype d : full ? new KvDtype[] {KvDtype.F32, KvDtype.BF16, KvDtype.INT8, KvDtype.FP8_E4M3} : new KvDtype[] {KvDtype.INT8, KvDtype.FP8_E4M3}) {
                    try (ModelRunner test = load(source, d, ctx)) {
                        PairedPass.Result r = PairedPass.run(f16, test, tokens, protocol, true, "kv " + d, null);
                        double base = r.base().perplexity(), ppl = r.test().perplexity(), change = (ppl / base - 1) * 100;
                        table.append(String.format(Locale.ROOT, "| %-8s | %.4f | %.4f | %+.4f %% | %.3e | %.3e | %.4f |%n", d.cliName(), base, ppl, change,
                                r.kl().meanKl(), r.kl().maxKl(), r.kl().top1Agreement()));
                        double limit = switch (d) {
                            case INT8 -> 0.1;
                            case FP8_E4M3 -> 1.0;
                            default -> 0.05;
                        };
                        failures.append(change <= limit ? "" : name + " " + d + ": perplexity " + ppl + " vs F16 KV " + base + " (" + change + " %, limit +" + limit + " %)\n");
                        if (r.kl().top1Agreement() < top1Floor(d)) failures.append(name + " " + d + " top-1 " + r.kl().top1Agreement() + "\n");
                    }
                }
            }
            System.out.print("| kv | F16 KV ppl | ppl | change | mean KL | max KL | top-1 |\n" + table);
            assertTrue(failures.isEmpty(), failures.toString());
        }
    }

    private static ModelRunner load(ModelSource source, KvDtype kv, int ctx) {
        return Backend.named("cpu").load(source, RunnerOptions.builder().threads(2).kvDtype(kv).contextLength(ctx).build());
    }
}
