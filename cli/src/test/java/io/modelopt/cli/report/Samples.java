package io.modelopt.cli.report;

import java.util.List;
import java.util.Optional;

/** Hand-made stage results and reports, so output and recommendation tests need no model. */
final class Samples {
    private Samples() {}

    static final long MIB = 1024 * 1024;

    /** A measured stage: decode median {@code decode} t/s, {@code totalMib} MiB in all, the given quality. */
    static StageResult stage(Stage stage, double decode, long totalMib, double kl, double top1, double ppl, double pplChange) {
        StageResult.Speed speed = new StageResult.Speed(3, Spread.of(110, 100, 120), Spread.of(1000, 900, 1100),
                Spread.of(decode * 0.98, decode, decode * 1.01));
        long kv = stage == Stage.INT4_KV8_ENGINE ? 32 * MIB : 8 * MIB;
        StageResult.Memory mem = new StageResult.Memory(totalMib * MIB - 4 * MIB - kv, kv, 4 * MIB, (totalMib + 100) * MIB, (totalMib + 90) * MIB,
                stage == Stage.INT4_KV8_ENGINE ? 18_432 : 36_864);
        boolean engine = stage == Stage.INT4_KV8_ENGINE;
        StageResult.Concurrency conc = new StageResult.Concurrency(8, engine, engine ? 3 * decode : decode * 0.9, engine ? 1.5 : 4.5,
                engine ? 1.8 : 8.0, engine ? 300 : 7000, 256, engine ? 0.4 : 0);
        return new StageResult(stage, "configuration of " + stage.key(), null, speed, mem, 16.0 / stage.number(),
                new StageResult.Quality(252, kl, kl * 10, top1, ppl, pplChange), conc, List.of());
    }

    static List<StageResult> fourStages(boolean perplexity) {
        double n = Double.NaN;
        return List.of(
                stage(Stage.BASELINE, 40, 300, 0, 1, perplexity ? 20.0 : n, perplexity ? 0 : n),
                stage(Stage.INT8, 70, 170, 0.002, 0.98, perplexity ? 20.1 : n, perplexity ? 0.5 : n),
                stage(Stage.INT4, 110, 100, 0.04, 0.93, perplexity ? 21.0 : n, perplexity ? 5.0 : n),
                StageResult.unavailable(Stage.INT4_KV8_ENGINE, "INT4 + INT8 KV + engine", "needs the engine, with a \"quote\", a comma & <angle>"));
    }

    /** Four measured stages, the fourth through the engine (its KV the pool of 8 requests). */
    static List<StageResult> fourMeasured() {
        double n = Double.NaN;
        return List.of(stage(Stage.BASELINE, 40, 300, 0, 1, n, n), stage(Stage.INT8, 70, 170, 0.002, 0.98, n, n),
                stage(Stage.INT4, 110, 100, 0.04, 0.93, n, n), stage(Stage.INT4_KV8_ENGINE, 100, 124, 0.041, 0.93, n, n));
    }

    static Report report(List<StageResult> stages, Bounds bounds) {
        ReportHeader h = new ReportHeader("synthetic test model", 134_000_000, 128, 64, 3, 5, 2, "OpenJDK 25", "Test CPU", "vector", 256,
                "2026-12-02 10:00 UTC", "4 windows of 128 random tokens",
                List.of("Concurrency (8x columns): test line."));
        return new Report(h, stages, Recommendation.choose(stages, bounds));
    }

    static Optional<Recommendation.Verdict> verdict(Recommendation r, Stage s) {
        return r.verdicts().stream().filter(v -> v.stage() == s).findFirst();
    }
}
