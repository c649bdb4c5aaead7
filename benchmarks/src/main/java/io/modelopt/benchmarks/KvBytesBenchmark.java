package io.modelopt.benchmarks;

import io.modelopt.core.kv.KvDtype;
import io.modelopt.core.kv.KvLayout;
import io.modelopt.core.synthetic.SyntheticSpec;
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
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.IterationParams;

/**
 * KV bytes per token per KV dtype, for a synthetic preset's shape, as an aux counter: keys and
 * values of all layers, scales included ({@link KvLayout#bytesPerToken()}, per-token scales as
 * stored, per-block scales amortized over the block). The timed op (the slot offset arithmetic
 * of a paged cache) is only there to carry the counter; read {@code kvBytesPerToken}.
 *
 * <pre>{@code
 * java -jar benchmarks/target/benchmarks.jar KvBytesBenchmark -rf json -rff kv.json
 * java -jar benchmarks/target/benchmarks.jar KvBytesBenchmark -p preset=tiny1b
 * }</pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Fork(value = 1, jvmArgsAppend = {"--add-modules", "jdk.incubator.vector", "--enable-native-access=ALL-UNNAMED", "-XX:+UseParallelGC"})
@Warmup(iterations = 1, time = 1)
@Measurement(iterations = 1, time = 1)
public class KvBytesBenchmark {
    @Param({"F16", "BF16", "INT8", "FP8_E4M3", "F32"})
    public KvDtype kvDtype;

    @Param({"small125m"})
    public String preset;

    /** Tokens per block of the paged cache. */
    @Param({"16"})
    public int blockSize;

    private KvLayout layout;
    private long slot;
    private double bytesPerToken;

    /**
     * The bytes per token. JMH zeroes aux counters at each iteration's start and sums EVENTS over
     * the measurement iterations, so every op sets the counter to its share, {@code value / iterations}:
     * the score is the value itself (with one fork).
     */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.EVENTS)
    public static class Footprint {
        public double kvBytesPerToken;
        private double share;

        @Setup(Level.Iteration)
        public void share(KvBytesBenchmark b, IterationParams iteration) {
            share = b.bytesPerToken / iteration.getCount();
        }
    }

    @Setup(Level.Trial)
    public void setUp() {
        layout = layout(SyntheticSpec.preset(preset), kvDtype, blockSize);
        bytesPerToken = layout.bytesPerToken();
    }

    /** The paged KV layout of {@code spec}'s shape: one block (the bytes per token do not depend on the count). */
    static KvLayout layout(SyntheticSpec spec, KvDtype dtype, int blockSize) {
        return KvLayout.of(spec.numLayers(), spec.numKvHeads(), spec.headDim(), 1, blockSize, dtype);
    }

    /** The byte offset of the next slot's entry. */
    @Benchmark
    public long entryOffset(Footprint footprint) {
        footprint.kvBytesPerToken = footprint.share;
        slot = slot + 1 == layout.slots() ? 0 : slot + 1;
        return layout.entryOffset(slot);
    }
}
