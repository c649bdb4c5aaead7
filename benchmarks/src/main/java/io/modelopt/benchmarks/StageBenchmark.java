package io.modelopt.benchmarks;

import io.modelopt.core.OptimizedModel;
import io.modelopt.core.engine.Batch;
import io.modelopt.core.engine.Logits;
import io.modelopt.core.engine.ModelRunner;
import io.modelopt.core.kv.KvCache;
import io.modelopt.core.synthetic.SyntheticSpec;
import io.modelopt.core.synthetic.SyntheticVocabulary;
import io.modelopt.scheduler.Engine;
import io.modelopt.scheduler.EngineConfig;
import io.modelopt.scheduler.EngineRequest;
import io.modelopt.scheduler.EngineResult;
import io.modelopt.scheduler.RequestHandle;
import java.time.Duration;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.IterationParams;

/**
 * The stages of {@code ./modelopt report} ({@link Stage}) on the synthetic small125m model
 * (768 hidden, 12 layers, 12 heads = 12 KV heads of 64, FFN 2048, vocab 32000; F16 weights
 * generated into the synthetic model cache on first use):
 * <ul>
 *   <li>{@link #ttft}: time to first token of a {@code promptLength}-token prompt: the prompt
 *       prefilled as one batch into an emptied KV cache and the first token picked (argmax of
 *       the last row). Average time in ms.</li>
 *   <li>{@link #decode}: single-stream decode, one op = one token at positions 0..63 over and over
 *       (as {@link InferenceBenchmark#decode}); the score in ops/s is tokens/s.</li>
 *   <li>{@link #concurrent8}: one op = 8 requests submitted at once to the {@link Engine}, each a
 *       64-token system prompt they share plus 8 tokens of its own (new ones every op), 32 tokens
 *       generated each. Stages 1–3 run the engine with {@code maxNumSeqs = 1} and no prefix cache
 *       (requests served one at a time); stage 4 with 8 sequences a step and prefix caching. The
 *       aux counter {@code generatedTokens} (ops/s) is the aggregate tokens/s.</li>
 * </ul>
 * Every benchmark also reports, as {@code @AuxCounters(EVENTS)}, {@code weightBytes} (all tensors
 * of the stage's model) and {@code kvBytesPerToken} (keys and values of all layers, scales
 * included). JMH sums EVENTS counters over the measurement iterations, so each iteration adds
 * {@code value / iterations}: the reported number is the value itself (with one fork).
 *
 * <pre>{@code
 * ./mvnw -q -B -o -DskipTests -pl benchmarks -am package
 * java -Dmodelopt.home=$PWD -jar benchmarks/target/benchmarks.jar StageBenchmark -rf json -rff stages.json
 * java -Dmodelopt.home=$PWD -jar benchmarks/target/benchmarks.jar 'StageBenchmark.decode' -p stage=INT4_RTN
 * }</pre>
 * The forks get the launcher's JVM flags from {@code @Fork(jvmArgsAppend)}.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Fork(value = 1, jvmArgsAppend = {"--add-modules", "jdk.incubator.vector", "--enable-native-access=ALL-UNNAMED", "-Djdk.incubator.vector.VECTOR_ACCESS_OOB_CHECK=0",
        "-XX:+UseParallelGC", "-Xmn64m", "-XX:PerBytecodeTrapLimit=1000", "-XX:PerMethodTrapLimit=100000"})
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 3, time = 2)
public class StageBenchmark {
    /** Tokens of the system prompt the 8 concurrent requests share. */
    public static final int SYSTEM_PROMPT = 64;
    /** Tokens of each concurrent request's own part of the prompt. */
    public static final int USER_PROMPT = 8;
    /** Tokens each concurrent request generates. */
    public static final int CONCURRENT_TOKENS = 32;
    /** Requests of {@link #concurrent8}. */
    public static final int CONCURRENT = 8;
    /** Positions {@link #decode} cycles over. */
    public static final int DECODE_WINDOW = 64;
    /** Context of every stage's runner: the longest prompt plus room to decode. */
    public static final int CONTEXT = 256;
    private static final long TOKEN_SEED = 1234;

    /** The model, the stage and its sizes; the parent of the per-benchmark states. */
    @State(Scope.Benchmark)
    public static class StageModel {
        @Param({"BASELINE", "INT8_RTN", "INT4_RTN", "INT4_INT8KV_ENGINE"})
        public Stage stage;

        /** Synthetic preset (small125m; micro for a quick check of the harness). */
        @Param({"small125m"})
        public String preset;

        @Param({"2"})
        public int threads;

        @Param({"42"})
        public long seed;

        OptimizedModel model;
        long weightBytes;
        double kvBytesPerToken;
        int vocab;

        @Setup(Level.Trial)
        public void build() {
            model = stage.build(SyntheticSpec.preset(preset), seed, threads, CONTEXT);
            weightBytes = model.describe().totalBytes();
            kvBytesPerToken = stage.kvBytesPerToken(model.config(), 16);
            vocab = model.config().vocabSize();
        }

        @TearDown(Level.Trial)
        public void close() {
            if (model != null) model.close();
        }

        /** A random ordinary token (no control or byte token, so no EOS). */
        int token(SplittableRandom random) {
            return SyntheticVocabulary.MIN_SIZE + random.nextInt(vocab - SyntheticVocabulary.MIN_SIZE);
        }
    }

    /**
     * Weight and KV bytes of the stage. JMH zeroes aux counters at each iteration's start and sums
     * EVENTS over the measurement iterations, so every op sets each counter to its share,
     * {@code value / iterations}: the score is the value itself (with one fork; the raw data per
     * iteration is the share).
     */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.EVENTS)
    public static class Footprint {
        public double weightBytes;
        public double kvBytesPerToken;
        private double weightShare, kvShare;

        @Setup(Level.Iteration)
        public void share(StageModel m, IterationParams iteration) {
            weightShare = (double) m.weightBytes / iteration.getCount();
            kvShare = m.kvBytesPerToken / iteration.getCount();
        }

        void report() {
            weightBytes = weightShare;
            kvBytesPerToken = kvShare;
        }
    }

    /** Generated tokens, per second: the aggregate throughput of {@link #concurrent8}. */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.OPERATIONS)
    public static class Tokens {
        public long generatedTokens;

        @Setup(Level.Iteration)
        public void reset() { generatedTokens = 0; }
    }

    /** A KV cache of one sequence and the steps of {@link #decode}. */
    @State(Scope.Benchmark)
    public static class SingleStream {
        ModelRunner runner;
        KvCache cache;
        Batch[] decodeSteps;
        int position;

        @Setup(Level.Trial)
        public void setUp(StageModel m) {
            runner = m.model.runner();
            cache = runner.newKvCache(1, CONTEXT);
            SplittableRandom random = new SplittableRandom(TOKEN_SEED);
            decodeSteps = new Batch[DECODE_WINDOW];
            for (int p = 0; p < DECODE_WINDOW; p++) {
                int token = p == 0 ? Math.max(0, m.model.config().bosTokenId()) : m.token(random);
                decodeSteps[p] = Batch.decodeStep(new int[] {0}, new int[] {token}, new int[] {p});
            }
        }

        @TearDown(Level.Trial)
        public void close() {
            if (cache != null) cache.close();
        }
    }

    /** The prompt of {@link #ttft}. */
    @State(Scope.Benchmark)
    public static class Prompt {
        @Param({"32", "128"})
        public int promptLength;

        Batch batch;

        @Setup(Level.Trial)
        public void setUp(StageModel m) {
            SplittableRandom random = new SplittableRandom(TOKEN_SEED + promptLength);
            int[] tokens = new int[promptLength];
            tokens[0] = Math.max(0, m.model.config().bosTokenId());
            for (int i = 1; i < promptLength; i++) tokens[i] = m.token(random);
            batch = Batch.ofSequence(0, 0, tokens, false);
        }
    }

    /** The engine of {@link #concurrent8}, configured as the stage says. */
    @State(Scope.Benchmark)
    public static class Serving {
        Engine engine;
        int[] systemPrompt;
        SplittableRandom random;
        private StageModel model;

        @Setup(Level.Trial)
        public void start(StageModel m) {
            model = m;
            EngineConfig config = EngineConfig.builder().maxNumSeqs(m.stage.maxNumSeqs()).prefixCaching(m.stage.prefixCaching())
                    .kvBlockSize(16).metricsLogInterval(Duration.ZERO).build();
            engine = Engine.start(m.model, config);
            random = new SplittableRandom(TOKEN_SEED);
            systemPrompt = new int[SYSTEM_PROMPT];
            systemPrompt[0] = Math.max(0, m.model.config().bosTokenId());
            for (int i = 1; i < SYSTEM_PROMPT; i++) systemPrompt[i] = m.token(random);
        }

        /** The shared system prompt followed by new user tokens. */
        EngineRequest nextRequest() {
            int[] tokens = java.util.Arrays.copyOf(systemPrompt, SYSTEM_PROMPT + USER_PROMPT);
            for (int i = SYSTEM_PROMPT; i < tokens.length; i++) tokens[i] = model.token(random);
            return EngineRequest.builder().promptTokens(tokens).maxTokens(CONCURRENT_TOKENS).build();
        }

        @TearDown(Level.Trial)
        public void close() {
            if (engine != null) engine.close();
        }
    }

    /** Prefill of the prompt into an empty cache and the first token: time to first token. */
    @Benchmark
    @BenchmarkMode(Mode.AverageTime)
    @OutputTimeUnit(TimeUnit.MILLISECONDS)
    public int ttft(SingleStream s, Prompt prompt, Footprint footprint) {
        footprint.report();
        s.cache.clear(0);
        s.position = DECODE_WINDOW; // a decode after this starts again at 0
        Logits logits = s.runner.forward(prompt.batch, s.cache);
        return argmax(logits);
    }

    /** One decode step of one sequence; the score is tokens/s. */
    @Benchmark
    public float decode(SingleStream s, Footprint footprint) {
        footprint.report();
        if (s.position == DECODE_WINDOW) {
            s.cache.clear(0);
            s.position = 0;
        }
        Logits logits = s.runner.forward(s.decodeSteps[s.position++], s.cache);
        return logits.get(0, 0);
    }

    /** 8 requests at once through the engine; {@code generatedTokens} is the aggregate tokens/s. */
    @Benchmark
    public long concurrent8(Serving s, Footprint footprint, Tokens tokens) throws InterruptedException, ExecutionException {
        RequestHandle[] handles = new RequestHandle[CONCURRENT];
        for (int i = 0; i < CONCURRENT; i++) handles[i] = s.engine.submit(s.nextRequest());
        long generated = 0;
        for (RequestHandle h : handles) {
            EngineResult r = h.await();
            generated += r.completionTokens();
        }
        tokens.generatedTokens += generated;
        footprint.report();
        return generated;
    }

    private static int argmax(Logits logits) {
        int best = 0;
        float max = Float.NEGATIVE_INFINITY;
        for (int t = 0, n = logits.vocabSize(); t < n; t++) {
            float v = logits.get(0, t);
            if (v > max) {
                max = v;
                best = t;
            }
        }
        return best;
    }
}
