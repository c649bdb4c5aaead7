package io.modelopt.benchmarks;

import io.modelopt.core.ProgressListener;
import io.modelopt.core.engine.Batch;
import io.modelopt.core.engine.Backend;
import io.modelopt.core.engine.Logits;
import io.modelopt.core.engine.ModelRunner;
import io.modelopt.core.engine.RunnerOptions;
import io.modelopt.core.kv.KvCache;
import io.modelopt.core.model.ModelSource;
import io.modelopt.core.loader.ModelSources;
import io.modelopt.core.synthetic.SyntheticFormat;
import io.modelopt.core.synthetic.SyntheticModel;
import io.modelopt.core.synthetic.SyntheticModelCache;
import io.modelopt.core.synthetic.SyntheticSpec;
import java.nio.file.Path;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Prefill and decode throughput of the CPU engine on a TinyLlama-1.1B-shaped synthetic model
 * ({@link SyntheticSpec#TINY_1B}: 2048 hidden, 22 layers, 32 heads, 4 KV heads, FFN 5632, vocab
 * 32000), the shape of the llama.cpp reference figures in {@code shared/fixtures/PERF.md}:
 * <ul>
 *   <li>{@link #prefill}: one op = a 128-token prompt prefilled as one batch into an emptied KV cache
 *       (llama-bench {@code pp128}); reported per token ({@code @OperationsPerInvocation(128)}), so
 *       the score in ops/s is prefill tokens/s.</li>
 *   <li>{@link #decode}: one op = one decode step of one token (llama-bench {@code tg64}): positions
 *       0..63 over and over; when 64 are done the cache is cleared (a length reset, no
 *       allocation) and decoding starts again at 0. The 64 step batches are built once in setup, so
 *       an op allocates nothing itself: with {@code -prof gc}, {@code gc.alloc.rate.norm} shows
 *       what the engine allocates per token (≈ 0 B/op expected).</li>
 * </ul>
 * The model is generated into the synthetic model cache on first use ({@link SyntheticModelCache}:
 * {@code -Dmodelopt.cache=DIR}, else {@code <modelopt.home>/.modelopt-cache}, else
 * {@code ~/.cache/modelopt}); tiny1b is 2.2 GB in F16, 1.17 GB in Q8_0, 0.62 GB in Q4_0, and takes
 * some tens of seconds per type to generate. Not part of the test command.
 *
 * <h2>HOW TO RUN</h2>
 * <pre>{@code
 * ./mvnw -q -B -o -DskipTests -pl benchmarks -am package
 * java -Dmodelopt.home=$PWD -jar benchmarks/target/benchmarks.jar InferenceBenchmark \
 *      -p type=Q4_0 -p threads=2                     # one type; omit -p type for F16, Q8_0 and Q4_0
 * java -Dmodelopt.home=$PWD -jar benchmarks/target/benchmarks.jar 'InferenceBenchmark.decode' \
 *      -p type=Q8_0 -prof gc                         # allocation per decoded token (gc.alloc.rate.norm)
 * # quicker, noisier: -f 1 -wi 2 -i 3; a small shape for a quick check of the harness: -p preset=micro
 * }</pre>
 * The forks get the Vector API and native access flags from {@code @Fork(jvmArgsAppend)}. Scores
 * are tokens/s ({@code thrpt}, ops/s). For llama.cpp on the same files:
 * {@code ./modelopt synth --preset tiny1b --type q4_0} prints the cached file to give
 * {@code llama-bench -m FILE -t 2 -p 128 -n 64}.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Fork(value = 1, jvmArgsAppend = {"--add-modules", "jdk.incubator.vector", "--enable-native-access=ALL-UNNAMED", "-Djdk.incubator.vector.VECTOR_ACCESS_OOB_CHECK=0",
        "-XX:+UseParallelGC"})
@Warmup(iterations = 3, time = 10)
@Measurement(iterations = 5, time = 10)
public class InferenceBenchmark {
    /** Prompt length of {@link #prefill} (llama-bench -p 128). */
    public static final int PROMPT = 128;
    /** Positions {@link #decode} cycles over (llama-bench -n 64). */
    public static final int DECODE_WINDOW = 64;
    private static final long TOKEN_SEED = 1234;

    /** Synthetic model shape: tiny1b (the PERF.md shape); small125m or micro for quick checks. */
    @Param({"tiny1b"})
    public String preset;

    /** Weight type of the synthetic model. */
    @Param({"F16", "Q8_0", "Q4_0"})
    public String type;

    /** Compute threads of the runner. */
    @Param({"2"})
    public int threads;

    /** Seed of the synthetic model (the cache keeps one file per seed). */
    @Param({"42"})
    public long seed;

    /** The backend to run on, by its registered name ({@code -p backend=cuda} with that module on the class path). */
    @Param({"cpu"})
    public String backend;

    private ModelSource source;
    private ModelRunner runner;
    private KvCache cache;
    private Batch promptBatch;
    private Batch[] decodeSteps;
    private int position;

    @Setup(Level.Trial)
    public void setUp() throws Exception {
        SyntheticModel model = SyntheticModel.of(SyntheticSpec.preset(preset), SyntheticModel.parseType(type), seed);
        Path file = SyntheticModelCache.atDefaultLocation().get(model, SyntheticFormat.GGUF, logEvery10Percent());
        source = ModelSources.open(file);
        int vocab = source.config().vocabSize();
        RunnerOptions options = RunnerOptions.builder().threads(threads).maxBatchTokens(PROMPT).maxLogitsRows(1)
                .contextLength(PROMPT + DECODE_WINDOW).build();
        runner = Backend.named(backend).load(source, options);
        cache = runner.newKvCache(1, PROMPT + DECODE_WINDOW);

        SplittableRandom random = new SplittableRandom(TOKEN_SEED);
        int[] prompt = new int[PROMPT];
        prompt[0] = Math.max(0, source.config().bosTokenId());
        for (int i = 1; i < PROMPT; i++) prompt[i] = random.nextInt(vocab);
        promptBatch = Batch.ofSequence(0, 0, prompt, false);
        decodeSteps = new Batch[DECODE_WINDOW];
        for (int p = 0; p < DECODE_WINDOW; p++) {
            int token = p == 0 ? prompt[0] : random.nextInt(vocab);
            decodeSteps[p] = Batch.decodeStep(new int[] {0}, new int[] {token}, new int[] {p});
        }
        position = 0;
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        if (cache != null) cache.close();
        if (runner != null) runner.close();
        if (source != null) source.close();
    }

    /** A 128-token prompt into an empty cache; the score is prefill tokens/s. */
    @Benchmark
    @OperationsPerInvocation(PROMPT)
    public float prefill() {
        cache.clear(0);
        Logits logits = runner.forward(promptBatch, cache);
        return logits.get(0, 0);
    }

    /** One decode step; the score is decode tokens/s. */
    @Benchmark
    public float decode() {
        if (position == DECODE_WINDOW) {
            cache.clear(0);
            position = 0;
        }
        Logits logits = runner.forward(decodeSteps[position++], cache);
        return logits.get(0, 0);
    }

    private static ProgressListener logEvery10Percent() {
        int[] last = {-1};
        return (stage, done, total) -> {
            int tenth = total > 0 ? (int) (done * 10 / total) : -1;
            if (tenth != last[0]) {
                last[0] = tenth;
                System.out.printf("%s: %d%%%n", stage, tenth * 10);
            }
        };
    }
}
