package io.modelopt.benchmarks;

import io.modelopt.core.kernel.ComputePool;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.concurrent.TimeUnit;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;
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
 * The machine's read bandwidth: one op sums a large float array ({@code arrayMiB}, default 1 GiB,
 * above the 480 MiB L3 of the machine this was written on) with {@code threads} threads, each
 * summing its contiguous share with the widest float vectors and four accumulators. The aux
 * counter {@code bytesRead} (ops/s) is bytes/s.
 *
 * <p>This is the decode roofline: a decode step reads every weight once, so no weight format can
 * beat {@code bytesRead} of the same thread count; {@link WeightFormatBenchmark}'s
 * {@code weightBytes} over this number is the fraction of the roofline a kernel reaches
 * (docs/BENCHMARKS.md).
 *
 * <pre>{@code
 * java -jar benchmarks/target/benchmarks.jar MemoryBandwidthBenchmark -p threads=1,16 -rf json -rff bandwidth.json
 * }</pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Fork(value = 1, jvmArgsAppend = {"--add-modules", "jdk.incubator.vector", "--enable-native-access=ALL-UNNAMED",
        "-XX:+UseParallelGC", "-Xmn64m", "-XX:PerBytecodeTrapLimit=1000", "-XX:PerMethodTrapLimit=100000"})
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 1)
public class MemoryBandwidthBenchmark {
    private static final VectorSpecies<Float> F = FloatVector.SPECIES_PREFERRED;

    /** Threads summing; 1 and the core count are the two rooflines (single-stream kernels run on all cores). */
    @Param({"1", "2"})
    public int threads;

    /** Size of the array; keep it several times the last-level cache. */
    @Param({"1024"})
    public int arrayMiB;

    private Arena arena;
    private MemorySegment data;
    private ComputePool pool;
    private final float[] partial = new float[256];
    private final ComputePool.RangeTask sum = this::sumRange;

    /** Bytes read, reported per second. */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.OPERATIONS)
    public static class Traffic {
        public long bytesRead;
    }

    @Setup(Level.Trial)
    public void setUp() {
        arena = Arena.ofShared();
        long bytes = (long) arrayMiB << 20;
        data = arena.allocate(bytes, 64);
        // written, so that every page is mapped before timing (and not the shared zero page)
        for (long o = 0; o < bytes; o += 4) data.set(ValueLayout.JAVA_FLOAT_UNALIGNED, o, (o & 0xfff) * 1e-6f);
        pool = new ComputePool(threads);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        pool.close();
        arena.close();
    }

    /** Sums the whole array once. */
    @Benchmark
    public float sum(Traffic traffic) {
        pool.parallelFor(threads, sum);
        traffic.bytesRead += data.byteSize();
        float s = 0;
        for (int w = 0; w < threads; w++) s += partial[w];
        return s;
    }

    private void sumRange(int start, int end, int worker) {
        long step = 4L * F.vectorByteSize();
        long size = data.byteSize() / step * step;
        long from = size * start / threads / step * step, to = size * end / threads / step * step;
        FloatVector a0 = FloatVector.zero(F), a1 = a0, a2 = a0, a3 = a0;
        long vb = F.vectorByteSize();
        for (long o = from; o < to; o += step) {
            a0 = a0.add(FloatVector.fromMemorySegment(F, data, o, ByteOrder.LITTLE_ENDIAN));
            a1 = a1.add(FloatVector.fromMemorySegment(F, data, o + vb, ByteOrder.LITTLE_ENDIAN));
            a2 = a2.add(FloatVector.fromMemorySegment(F, data, o + 2 * vb, ByteOrder.LITTLE_ENDIAN));
            a3 = a3.add(FloatVector.fromMemorySegment(F, data, o + 3 * vb, ByteOrder.LITTLE_ENDIAN));
        }
        partial[worker] = a0.add(a1).add(a2).add(a3).reduceLanes(jdk.incubator.vector.VectorOperators.ADD);
    }
}
