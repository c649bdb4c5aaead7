package io.modelopt.cli.command;

import io.modelopt.core.engine.Batch;
import io.modelopt.core.engine.Logits;
import io.modelopt.core.engine.ModelRunner;
import io.modelopt.core.kv.KvCache;
import io.modelopt.core.kv.KvStorage;
import io.modelopt.kvcache.BlockManager;
import java.lang.management.ManagementFactory;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;

/**
 * One measured generation, as llama-bench's pp/tg tests but in one pass: the prompt prefilled as
 * a single batch (time to the last prompt token's logits = time to first token), then greedy
 * decode steps, each feeding back the argmax of the previous logits. The KV cache is cleared
 * before each run and reused, so runs allocate no cache. Public for the report (io.modelopt.cli.report),
 * which measures every stage exactly as {@code bench} does.
 */
public final class InferenceBench {
    private InferenceBench() {}

    private static final com.sun.management.ThreadMXBean THREADS = threadBean();

    /** Times of one run, and the heap bytes all threads allocated during the decode steps (-1 if unknown). */
    public record Run(long prefillNanos, int promptTokens, long decodeNanos, int decodeSteps, long decodeAllocatedBytes) {
        public double ttftMillis() { return prefillNanos / 1e6; }

        public double prefillTokensPerSecond() { return promptTokens / (prefillNanos / 1e9); }

        public double decodeTokensPerSecond() { return decodeSteps == 0 ? Double.NaN : decodeSteps / (decodeNanos / 1e9); }

        /** Heap bytes allocated per decode step by all threads, or -1 when the JVM cannot count them. */
        public double decodeAllocatedBytesPerToken() {
            return decodeAllocatedBytes < 0 || decodeSteps == 0 ? -1 : decodeAllocatedBytes / (double) decodeSteps;
        }
    }

    /** Median, minimum and maximum of some measurements. */
    public record Stats(double median, double min, double max, double[] values) {
        public static Stats of(List<Run> runs, java.util.function.ToDoubleFunction<Run> f) {
            return of(runs.stream().mapToDouble(f).toArray());
        }

        public static Stats of(double[] v) {
            double[] s = v.clone();
            Arrays.sort(s);
            int n = s.length;
            double median = n % 2 == 1 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
            return new Stats(median, s[0], s[n - 1], v);
        }
    }

    /**
     * A prompt of {@code n} token ids drawn uniformly from the vocabulary with a fixed seed, starting
     * with BOS when the model has one (llama-bench's prompt: BOS, then {@code rand() % n_vocab}).
     */
    public static int[] prompt(int n, int vocabSize, int bos, long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        int[] ids = new int[n];
        for (int i = 0; i < n; i++) ids[i] = i == 0 && bos >= 0 ? bos : r.nextInt(vocabSize);
        return ids;
    }

    /**
     * Prefills {@code prompt} into sequence 0 of {@code cache} (cleared first), then runs
     * {@code decodeSteps} greedy steps. Returns the times; {@code generated} (if not null) receives
     * the greedy tokens: the prefill's prediction then each step's.
     */
    public static Run run(ModelRunner runner, KvCache cache, Batch prompt, int decodeSteps, int[] generated) {
        cache.clear(0);
        Batch.Builder step = Batch.builder(1);
        long t0 = System.nanoTime();
        Logits logits = runner.forward(prompt, cache);
        long t1 = System.nanoTime();
        int token = logits.argmax(logits.rows() - 1);
        int position = prompt.size();
        if (generated != null && generated.length > 0) generated[0] = token;
        long a0 = allocatedBytes();
        long t2 = System.nanoTime();
        for (int i = 0; i < decodeSteps; i++) {
            // the one allocation here: the engine's immutable Batch (~100 B) per step
            logits = runner.forward(step.clear().add(token, position++, 0, true).build(), cache);
            token = logits.argmax(0);
            if (generated != null && i + 1 < generated.length) generated[i + 1] = token;
        }
        long t3 = System.nanoTime();
        long a1 = allocatedBytes();
        return new Run(t1 - t0, prompt.size(), t3 - t2, decodeSteps, a0 < 0 || a1 < 0 ? -1 : a1 - a0);
    }

    /**
     * {@link #run} on paged storage, as the engine runs it: sequence 0's blocks come from
     * {@code blocks} (freed and allocated again each run), each step's batch carries its block
     * table, and {@link ModelRunner#forward(Batch, KvStorage)} runs on the bare storage. With
     * prefix caching on, the prompt's blocks cached by an earlier run are not prefilled again
     * (the time to first token then covers only the rest).
     */
    public static Run runPaged(ModelRunner runner, KvStorage storage, BlockManager blocks, int[] prompt, int decodeSteps, int[] generated) {
        if (blocks.contains(0)) blocks.free(0);
        int cached = blocks.allocate(0, prompt); // with prefix caching: the blocks an earlier run left cached
        if (cached == BlockManager.OUT_OF_BLOCKS) {
            throw new IllegalStateException("the KV pool of " + blocks.numBlocks() + " blocks cannot hold a prompt of " + prompt.length + " tokens");
        }
        int bs = blocks.blockSize();
        Batch.Builder pb = Batch.builder(prompt.length - cached);
        for (int i = cached; i < prompt.length; i++) pb.add(prompt[i], i, 0, i == prompt.length - 1);
        Batch first = pb.blockSize(bs).blockTable(0, blocks.blockTable(0)).build();
        Batch.Builder step = Batch.builder(1);
        long t0 = System.nanoTime();
        Logits logits = runner.forward(first, storage);
        long t1 = System.nanoTime();
        blocks.markComputed(0, prompt.length);
        int token = logits.argmax(logits.rows() - 1);
        int position = prompt.length;
        if (generated != null && generated.length > 0) generated[0] = token;
        long a0 = allocatedBytes();
        long t2 = System.nanoTime();
        for (int i = 0; i < decodeSteps; i++) {
            if (!blocks.appendSlot(0, token)) throw new IllegalStateException("the KV pool of " + blocks.numBlocks() + " blocks is full at position " + position);
            logits = runner.forward(step.clear().add(token, position++, 0, true).blockSize(bs).blockTable(0, blocks.blockTable(0)).build(), storage);
            blocks.markComputed(0, position);
            token = logits.argmax(0);
            if (generated != null && i + 1 < generated.length) generated[i + 1] = token;
        }
        long t3 = System.nanoTime();
        long a1 = allocatedBytes();
        return new Run(t1 - t0, prompt.length, t3 - t2, decodeSteps, a0 < 0 || a1 < 0 ? -1 : a1 - a0);
    }

    /** Heap bytes allocated so far by all threads (including ended ones), or -1. */
    static long allocatedBytes() {
        return THREADS == null ? -1 : THREADS.getTotalThreadAllocatedBytes();
    }

    private static com.sun.management.ThreadMXBean threadBean() {
        if (ManagementFactory.getThreadMXBean() instanceof com.sun.management.ThreadMXBean b && b.isThreadAllocatedMemorySupported()) {
            if (!b.isThreadAllocatedMemoryEnabled()) b.setThreadAllocatedMemoryEnabled(true);
            return b;
        }
        return null;
    }
}
