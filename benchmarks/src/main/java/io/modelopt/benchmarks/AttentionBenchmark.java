package io.modelopt.benchmarks;

import io.modelopt.core.kernel.AttentionKernel;
import io.modelopt.core.kernel.KernelMode;
import io.modelopt.core.kv.HostKvStorage;
import io.modelopt.core.kv.KvDtype;
import io.modelopt.core.kv.KvLayout;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
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

/**
 * Decode attention alone, one thread: one token's query heads over {@code positions} cached
 * positions of every layer, read in place from KV storage of the small125m shape (12 layers × 12
 * KV heads × head size 64), as the CPU runner's decode step does. One op is one token's attention
 * over all layers, so ops/s is the decode rate attention alone would allow; the storage (73.7 MB
 * of F16 at 2,000 positions) is far larger than the caches, so entries come from memory as in a
 * real decode. {@code bytesRead} counts the entries and scales read.
 *
 * <p>{@code blockSize} 0 is the contiguous cache (each head's positions one run); otherwise a
 * paged cache of that block size with the sequence's blocks at shuffled physical places.
 *
 * <pre>{@code
 * java -jar benchmarks/target/benchmarks.jar AttentionBenchmark -p kvDtype=F16,INT8 -p blockSize=0,16
 * }</pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Fork(value = 1, jvmArgsAppend = {"--add-modules", "jdk.incubator.vector", "--enable-native-access=ALL-UNNAMED", "-Djdk.incubator.vector.VECTOR_ACCESS_OOB_CHECK=0",
        "-XX:+UseParallelGC", "-Xmn64m", "-XX:PerBytecodeTrapLimit=1000", "-XX:PerMethodTrapLimit=100000"})
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class AttentionBenchmark {
    @Param({"F16", "INT8", "FP8_E4M3", "BF16"})
    public KvDtype kvDtype;

    /** Tokens per block; 0 = contiguous. */
    @Param({"0", "16"})
    public int blockSize;

    @Param({"2000"})
    public int positions;

    /** Whether the sequence's blocks lie at shuffled physical places (a pool after churn) or in order (a fresh pool). */
    @Param({"true"})
    public boolean shuffled;

    static final int LAYERS = 12, KV_HEADS = 12, HEAD_DIM = 64;

    private HostKvStorage storage;
    private long[] rowOffsets;
    private float[] q, scores, rows, out;
    private long bytesPerOp;

    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.OPERATIONS)
    public static class Traffic {
        public long bytesRead;

        @Setup(Level.Iteration)
        public void reset() { bytesRead = 0; }
    }

    @Setup(Level.Trial)
    public void setUp() {
        int bs = blockSize == 0 ? Integer.highestOneBit(positions - 1) << 1 : blockSize;
        int blocks = (positions + bs - 1) / bs;
        KvLayout layout = KvLayout.of(LAYERS, KV_HEADS, HEAD_DIM, blocks, bs, kvDtype);
        storage = new HostKvStorage(layout);
        List<Integer> order = new ArrayList<>();
        for (int b = 0; b < blocks; b++) order.add(b);
        if (shuffled) Collections.shuffle(order, new Random(7));
        Random r = new Random(42);
        float[] entry = new float[layout.kvDim()];
        long[] slots = new long[positions];
        for (int p = 0; p < positions; p++) slots[p] = (long) order.get(p / bs) * bs + p % bs;
        for (int l = 0; l < LAYERS; l++) {
            for (int p = 0; p < positions; p++) {
                for (int i = 0; i < entry.length; i++) entry[i] = (float) r.nextGaussian();
                storage.writeKey(l, slots[p], entry, 0);
                for (int i = 0; i < entry.length; i++) entry[i] = (float) r.nextGaussian();
                storage.writeValue(l, slots[p], entry, 0);
            }
        }
        rowOffsets = new long[positions];
        for (int p = 0; p < positions; p++) rowOffsets[p] = layout.entryOffset(slots[p]);
        q = new float[KV_HEADS * HEAD_DIM];
        for (int i = 0; i < q.length; i++) q[i] = (float) r.nextGaussian();
        scores = new float[positions];
        rows = new float[AttentionKernel.rowScratch(HEAD_DIM)];
        out = new float[KV_HEADS * HEAD_DIM];
        bytesPerOp = (long) (layout.bytesPerToken() * positions);
    }

    @TearDown(Level.Trial)
    public void tearDown() { storage.close(); }

    @Benchmark
    public float decodeToken(Traffic traffic) {
        long headStride = storage.layout().headStride();
        for (int l = 0; l < LAYERS; l++) {
            for (int h = 0; h < KV_HEADS; h++) {
                AttentionKernel.attend(KernelMode.VECTOR, q, h * HEAD_DIM, 1, HEAD_DIM, 0.125f, storage, l,
                        rowOffsets, h * headStride, positions, scores, positions, rows, out, h * HEAD_DIM);
            }
        }
        traffic.bytesRead += bytesPerOp;
        return out[0];
    }
}
