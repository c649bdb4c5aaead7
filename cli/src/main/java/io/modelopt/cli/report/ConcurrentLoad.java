package io.modelopt.cli.report;

import io.modelopt.cli.command.InferenceBench;
import io.modelopt.core.engine.ModelRunner;
import io.modelopt.core.engine.RunnerOptions;
import io.modelopt.core.kv.KvDtype;
import io.modelopt.core.kv.KvLayout;
import io.modelopt.core.model.ModelConfig;
import io.modelopt.core.tokenizer.Tokenizer;
import io.modelopt.scheduler.Engine;
import io.modelopt.scheduler.EngineConfig;
import io.modelopt.scheduler.EngineRequest;
import io.modelopt.scheduler.EngineResult;
import io.modelopt.scheduler.RequestHandle;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutionException;

/**
 * The concurrency columns: {@value #REQUESTS} requests that share a {@value #SYSTEM_PROMPT_TOKENS}-token
 * system prompt, each with its own {@value #USER_TOKENS}-token question, all submitted at once to
 * the scheduler module's {@link Engine}. A sequential stage runs the engine with one sequence at a
 * time and no prefix caching (requests served one after another, in order, as a single-stream
 * server would); the engine's stage runs them together (continuous batching) with prefix caching.
 *
 * <p>Both first run a warm-up round (the same system prompt, other questions, a few tokens): it
 * compiles the batched code paths, and in the engine's stage it leaves the system prompt's blocks
 * in the prefix cache, as earlier traffic would on a server. The questions differ between rounds,
 * so only the shared prefix can hit.
 */
final class ConcurrentLoad {
    static final int REQUESTS = 8, SYSTEM_PROMPT_TOKENS = 64, USER_TOKENS = 16, DEFAULT_GEN_TOKENS = 32;
    static final int BLOCK_SIZE = 16, MAX_BATCHED_TOKENS = 256, WARM_UP_TOKENS = 4;
    static final long SEED = 4321;

    private final int genTokens;

    ConcurrentLoad(int genTokens) {
        if (genTokens < 1) throw new IllegalArgumentException("concurrent generated tokens must be >= 1, got " + genTokens);
        this.genTokens = genTokens;
    }

    int genTokens() { return genTokens; }

    /** Positions one request needs: its prompt and what it generates. */
    int contextPerRequest() { return SYSTEM_PROMPT_TOKENS + USER_TOKENS + genTokens; }

    /** How the engine's runner is bound: a step of up to {@value #MAX_BATCHED_TOKENS} tokens and one logits row per request. */
    RunnerOptions runnerOptions(int threads, KvDtype kv) {
        return RunnerOptions.builder().threads(threads).kvDtype(kv).maxBatchTokens(MAX_BATCHED_TOKENS).maxLogitsRows(REQUESTS)
                .maxSequences(REQUESTS).contextLength(contextPerRequest()).build();
    }

    /** KV blocks of the pool: every request's full context at once (no preemption), one sequence's when sequential. */
    int kvBlocks(boolean concurrent) {
        int perRequest = (contextPerRequest() + BLOCK_SIZE - 1) / BLOCK_SIZE;
        return (concurrent ? REQUESTS : 1) * perRequest;
    }

    /** Bytes of the engine's KV pool for {@code kv} ({@link KvLayout}: entries and scales). */
    long poolBytes(ModelConfig config, KvDtype kv, boolean concurrent) {
        return KvLayout.of(config.numLayers(), config.numKvHeads(), config.headDim(), kvBlocks(concurrent), BLOCK_SIZE, kv).byteSize();
    }

    /** The measured round's prompts (round 1) or the warm-up's (round 0): the shared system prompt, then a question of the round. */
    static int[][] prompts(ModelConfig config, int round) {
        int[] system = InferenceBench.prompt(SYSTEM_PROMPT_TOKENS, config.vocabSize(), config.bosTokenId(), SEED);
        SplittableRandom r = new SplittableRandom(SEED + 1 + round);
        int[][] p = new int[REQUESTS][];
        for (int i = 0; i < REQUESTS; i++) {
            p[i] = Arrays.copyOf(system, SYSTEM_PROMPT_TOKENS + USER_TOKENS);
            for (int j = SYSTEM_PROMPT_TOKENS; j < p[i].length; j++) p[i][j] = r.nextInt(config.vocabSize());
        }
        return p;
    }

    /** Runs the warm-up and the measured round on {@code runner} (bound with {@link #runnerOptions}). */
    StageResult.Concurrency measure(ModelRunner runner, Tokenizer tokenizer, boolean concurrent) {
        EngineConfig config = EngineConfig.builder().maxNumSeqs(concurrent ? REQUESTS : 1).maxBatchedTokens(MAX_BATCHED_TOKENS)
                .kvBlocks(kvBlocks(concurrent)).kvBlockSize(BLOCK_SIZE).prefixCaching(concurrent).maxWaiting(4 * REQUESTS)
                .metricsLogInterval(Duration.ZERO).build();
        try (Engine engine = Engine.start(runner, tokenizer, config)) {
            round(engine, prompts(runner.config(), 0), Math.min(WARM_UP_TOKENS, genTokens));
            long start = System.nanoTime();
            List<EngineResult> results = round(engine, prompts(runner.config(), 1), genTokens);
            double wall = (System.nanoTime() - start) / 1e9;
            long tokens = results.stream().mapToLong(EngineResult::completionTokens).sum();
            double[] completion = results.stream().mapToDouble(r -> r.e2eNanos() / 1e9).toArray();
            double[] ttft = results.stream().mapToDouble(r -> r.ttftNanos() / 1e6).toArray();
            return new StageResult.Concurrency(REQUESTS, concurrent, tokens / wall, Arrays.stream(completion).average().orElseThrow(),
                    p95(completion), p95(ttft), tokens, engine.metrics().prefixCacheHitRate());
        }
    }

    private static List<EngineResult> round(Engine engine, int[][] prompts, int maxTokens) {
        List<RequestHandle> handles = new ArrayList<>();
        for (int[] p : prompts) handles.add(engine.submit(EngineRequest.builder().promptTokens(p).maxTokens(maxTokens).build()));
        List<EngineResult> out = new ArrayList<>();
        try {
            for (RequestHandle h : handles) out.add(h.await());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while the concurrent requests ran", e);
        } catch (ExecutionException e) {
            throw new IllegalStateException("a concurrent request failed: " + e.getCause(), e.getCause());
        }
        return out;
    }

    /** The 95th percentile by nearest rank (of 8 values: the largest). */
    static double p95(double[] v) {
        double[] s = v.clone();
        Arrays.sort(s);
        return s[Math.max(0, (int) Math.ceil(0.95 * s.length) - 1)];
    }

    /** The header's description of the method. */
    String describe() {
        return String.format(Locale.ROOT, "Concurrency (8x columns): %d requests submitted at once, a shared %d-token system prompt + a %d-token "
                + "question each, %d greedy tokens each (fewer at EOS), after a warm-up round with other questions; stages 1-3 through the "
                + "engine one request at a time without prefix caching, stage 4 all together with prefix caching (blocks of %d, up to %d tokens "
                + "a step); times from submission, p95 by nearest rank; tok/s = all generated tokens / wall time.",
                REQUESTS, SYSTEM_PROMPT_TOKENS, USER_TOKENS, genTokens, BLOCK_SIZE, MAX_BATCHED_TOKENS);
    }
}
