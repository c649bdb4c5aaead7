package io.modelopt.benchmarks;

import io.modelopt.core.kernel.ComputePool;
import io.modelopt.core.kernel.MatMul;
import io.modelopt.core.kernel.WeightMatrix;
import io.modelopt.core.tensor.GgmlType;
import io.modelopt.core.tensor.TensorData;
import io.modelopt.quantization.format.IntScheme;
import io.modelopt.quantization.format.PackedIntTensors;
import io.modelopt.quantization.rtn.RtnQuantizer;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
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
 * The decode kernel (a GEMV: one token against a weight matrix) of each weight format, as the
 * runner holds it: llama.cpp's F16, Q8_0, Q4_0, Q4_K, Q6_K, and our RTN formats {@code INT8}
 * (per-channel symmetric, F16 scales) and {@code INT4} (g128 asymmetric, F16 scales and zero
 * points: the storage of AWQ and GPTQ checkpoints). Matrices are repacked or transcoded at setup
 * as the CPU runner does at load ({@link WeightMatrix#repacked}), and each call uses the next of
 * several copies, {@code workingSetMiB} in all, so that it reads its weights from memory rather
 * than from the last-level cache.
 *
 * <p>The aux counter {@code weightBytes} (ops/s) is the weight bytes the kernel reads per second:
 * the bytes of the repacked copy when there is one, else of the stored tensors. Held against
 * {@link MemoryBandwidthBenchmark} at the same thread count it is the fraction of the decode
 * roofline the format reaches (docs/BENCHMARKS.md).
 *
 * <pre>{@code
 * java -jar benchmarks/target/benchmarks.jar WeightFormatBenchmark -rf json -rff formats.json
 * java -jar benchmarks/target/benchmarks.jar WeightFormatBenchmark -p format=INT4,Q4_0 -p threads=2
 * }</pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Fork(value = 1, jvmArgsAppend = {"--add-modules", "jdk.incubator.vector", "--enable-native-access=ALL-UNNAMED", "-Djdk.incubator.vector.VECTOR_ACCESS_OOB_CHECK=0",
        "-XX:+UseParallelGC", "-Xmn64m", "-XX:PerBytecodeTrapLimit=1000", "-XX:PerMethodTrapLimit=100000"})
// 3 warm-ups: the first second of a fork is spent compiling the kernel (measured at 1 warm-up: Q4_0 0.5% of its speed)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 3, time = 1)
public class WeightFormatBenchmark {

    @Param({"F16", "Q8_0", "Q4_0", "Q4_K", "Q6_K", "INT8", "INT4"})
    public String format;

    /** rows x cols; the default is TinyLlama-1.1B's FFN gate/up projection. */
    @Param({"5632x2048"})
    public String shape;

    @Param({"1", "2"})
    public int threads;

    /** Total bytes of the matrix copies cycled through: above the last-level cache. */
    @Param({"1024"})
    public int workingSetMiB;

    private ComputePool pool;
    private Arena arena;
    private WeightMatrix[] copies;
    private float[] x, out;
    private int next;
    private long bytesPerCall;

    /** Weight bytes read, reported per second. */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.OPERATIONS)
    public static class Traffic {
        public long weightBytes;
    }

    @Setup(Level.Trial)
    public void setUp() {
        String[] rc = shape.split("x");
        int rows = Integer.parseInt(rc[0]), cols = Integer.parseInt(rc[1]);
        arena = Arena.ofShared();
        pool = new ComputePool(threads);
        WeightMatrix one = matrix(format, rows, cols, arena);
        WeightMatrix first = one.canRepack() ? one.repacked(arena, pool) : one;
        bytesPerCall = bytesRead(first);
        int n = (int) Math.max(1, ((long) workingSetMiB << 20) / bytesPerCall);
        copies = new WeightMatrix[n];
        copies[0] = first;
        for (int i = 1; i < n; i++) {
            // a repacked copy is what the kernel reads: repack the one matrix again; else copy its tensors
            copies[i] = first.isRepacked() || first.isTranscoded() ? one.repacked(arena, pool) : copyOf(one, arena);
        }
        Random r = new Random(7);
        x = new float[cols];
        for (int i = 0; i < cols; i++) x[i] = (float) r.nextGaussian();
        out = new float[rows];
    }

    /** A matrix of N(0, 0.02) weights in {@code format}: a llama.cpp type's reference quantizer, or RTN. */
    static WeightMatrix matrix(String format, int rows, int cols, Arena arena) {
        IntScheme scheme = switch (format) {
            case "INT8" -> IntScheme.int8();
            case "INT4" -> IntScheme.of(4, 128, false);
            default -> null;
        };
        if (scheme == null) {
            GgmlType t = GgmlType.valueOf(format);
            return WeightMatrix.of(new TensorData("w", t, new long[] {cols, rows}, MatMulBenchmark.quantized(t, rows, cols, new Random(42))));
        }
        Random random = new Random(42);
        float[] w = new float[rows * cols];
        for (int i = 0; i < w.length; i++) w[i] = (float) (random.nextGaussian() * 0.02);
        PackedIntTensors t = RtnQuantizer.quantize("w", w, rows, cols, scheme, false, arena);
        return t.matrix();
    }

    /** The bytes a decode call reads: the repacked (or transcoded) copy when there is one, else every stored tensor. */
    static long bytesRead(WeightMatrix m) {
        return m.residentBytes() > 0 ? m.residentBytes() : m.byteSize();
    }

    private static WeightMatrix copyOf(WeightMatrix m, Arena arena) {
        TensorData main = copyOf(m.tensor(), arena);
        TensorData[] parts = new TensorData[m.partCount()];
        for (int i = 0; i < parts.length; i++) parts[i] = copyOf(m.part(i), arena);
        return WeightMatrix.of(m.format(), m.rows(), m.cols(), main, parts);
    }

    private static TensorData copyOf(TensorData t, Arena arena) {
        MemorySegment s = arena.allocate(t.byteSize(), 64).copyFrom(t.data());
        return new TensorData(t.name(), t.type(), t.shape(), s);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        pool.close();
        arena.close();
    }

    /** One decode GEMV on the next copy. */
    @Benchmark
    public float gemv(Traffic traffic) {
        WeightMatrix w = copies[next];
        next = next + 1 == copies.length ? 0 : next + 1;
        MatMul.matmul(pool, w, x, 1, out);
        traffic.weightBytes += bytesPerCall;
        return out[0];
    }
}
