package io.modelopt.benchmarks;

import io.modelopt.core.kernel.ComputePool;
import io.modelopt.core.kernel.MatMul;
import io.modelopt.core.kernel.WeightMatrix;
import io.modelopt.core.quant.F16;
import io.modelopt.core.quant.Q4_0;
import io.modelopt.core.quant.Q4_K;
import io.modelopt.core.quant.Q6_K;
import io.modelopt.core.quant.Q8_0;
import io.modelopt.quantization.gguf.BlockQuantizer;
import io.modelopt.core.tensor.GgmlType;
import io.modelopt.core.tensor.TensorData;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteOrder;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import jdk.incubator.vector.LongVector;
import jdk.incubator.vector.VectorOperators;
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
 * Weight-format matmuls at TinyLlama-1.1B shapes: {@code tokens=1} is a decode step (a GEMV),
 * {@code tokens=128} a prefill chunk. Besides time per call, the auxiliary counter
 * {@code weightBytes} reports the weight bytes read per second (its "ops/s" are bytes/s), the
 * figure to hold against the machine's read bandwidth.
 *
 * <p>So that a decode call reads its weights from memory, not from the (large) last-level cache,
 * each call uses the next of several copies of the matrix, {@code workingSetMiB} in all.
 *
 * <pre>
 * java --add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED -jar benchmarks/target/benchmarks.jar \
 *     MatMulBenchmark -f 1 -wi 3 -i 5 -w 1 -r 1 -p tokens=1
 * </pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
// the JVM flags of the modelopt launcher (Vector API, native access, no per-access vector bounds re-checks)
@Fork(value = 1, jvmArgsAppend = {"--add-modules", "jdk.incubator.vector", "--enable-native-access=ALL-UNNAMED", "-Djdk.incubator.vector.VECTOR_ACCESS_OOB_CHECK=0", "-Xmx4g",
        "-XX:+UseParallelGC"})
public class MatMulBenchmark {

    @Param({"F16", "Q8_0", "Q4_0", "Q4_K", "Q5_K", "Q6_K"})
    public String type;

    /** rows x cols: attention projection, FFN gate/up, FFN down. */
    @Param({"2048x2048", "5632x2048", "2048x5632"})
    public String shape;

    @Param({"1", "2"})
    public int threads;

    @Param({"1", "128"})
    public int tokens;

    /** Whether Q4_0 matrices are repacked for decode as the runner does ({@code WeightMatrix.repacked}); other types ignore it. */
    @Param({"true", "false"})
    public boolean repack;

    /** Total bytes of the matrix copies cycled through (decode: beyond the last-level cache). */
    @Param({"1024"})
    public int workingSetMiB;

    private ComputePool pool;
    private Arena arena;
    private WeightMatrix[] copies;
    private float[] x, out;
    private int next;
    long bytesPerCall;

    @Setup(Level.Trial)
    public void setUp() {
        GgmlType t = GgmlType.valueOf(type);
        String[] rc = shape.split("x");
        int rows = Integer.parseInt(rc[0]), cols = Integer.parseInt(rc[1]);
        MemorySegment one = quantized(t, rows, cols, new Random(42));
        bytesPerCall = one.byteSize();
        int n = tokens > 1 ? 1 : (int) Math.max(1, ((long) workingSetMiB << 20) / one.byteSize());
        Arena arena = Arena.ofShared();
        this.arena = arena;
        copies = new WeightMatrix[n];
        for (int i = 0; i < n; i++) {
            MemorySegment m = i == 0 ? one : arena.allocate(one.byteSize(), 64).copyFrom(one);
            copies[i] = WeightMatrix.of(new TensorData("w" + i, t, new long[]{cols, rows}, m));
            if (repack) copies[i] = copies[i].repacked(arena);
        }
        Random r = new Random(7);
        x = new float[tokens * cols];
        for (int i = 0; i < x.length; i++) x[i] = (float) r.nextGaussian();
        out = new float[tokens * rows];
        pool = new ComputePool(threads);
    }

    /** A matrix of N(0, 0.02) weights written by the format's reference quantizer. */
    static MemorySegment quantized(GgmlType t, int rows, int cols, Random r) {
        MemorySegment m = Arena.ofAuto().allocate(t.bytesFor((long) rows * cols), 64);
        float[] row = new float[cols];
        long rowBytes = t.bytesFor(cols);
        // quantize a few distinct rows and repeat them: the contents do not change the speed
        int distinct = Math.min(rows, 64);
        for (int i = 0; i < rows; i++) {
            if (i < distinct) {
                for (int k = 0; k < cols; k++) row[k] = (float) (r.nextGaussian() * 0.02);
                long off = i * rowBytes;
                switch (t) {
                    case F16 -> F16.quantizeReference(row, 0, cols, m, off);
                    case Q8_0 -> Q8_0.quantizeReference(row, 0, cols, m, off);
                    case Q4_0 -> Q4_0.quantizeReference(row, 0, cols, m, off);
                    case Q4_K -> Q4_K.quantizeReference(row, 0, cols, m, off);
                    case Q5_K -> { // core has no Q5_K quantizer: the quantization module's llama.cpp one
                        byte[] b = new byte[(int) rowBytes];
                        BlockQuantizer.of(t).quantizeRow(row, 0, cols, null, b, 0);
                        MemorySegment.copy(MemorySegment.ofArray(b), 0, m, off, rowBytes);
                    }
                    case Q6_K -> Q6_K.quantizeReference(row, 0, cols, m, off);
                    default -> throw new IllegalArgumentException("no benchmark data for " + t);
                }
            } else {
                MemorySegment.copy(m, (i % distinct) * rowBytes, m, i * rowBytes, rowBytes);
            }
        }
        return m;
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        pool.close();
        arena.close();
    }

    /** Weight bytes read, reported per second. */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.OPERATIONS)
    public static class Traffic {
        public long weightBytes;
    }

    /**
     * The roofline under the same conditions: the same bytes (same copies, same threads) only
     * read, with 512-bit loads and a XOR. Compare {@code weightBytes} of {@link #matmul} with it.
     */
    @Benchmark
    public long readOnly(Traffic traffic) {
        MemorySegment m = copies[next].tensor().data(); // (the repacked copy, when there is one, is as large within 4%)
        next = next + 1 == copies.length ? 0 : next + 1;
        reading = m;
        pool.parallelFor(threads, readTask);
        traffic.weightBytes += bytesPerCall;
        long r = 0;
        for (long v : readSums) r ^= v;
        return r;
    }

    private MemorySegment reading;
    private final long[] readSums = new long[8];
    private final ComputePool.RangeTask readTask = (start, end, worker) -> {
        MemorySegment m = reading;
        long size = m.byteSize() / 256 * 256;
        long from = size * start / threads / 256 * 256, to = size * end / threads / 256 * 256;
        LongVector a0 = LongVector.zero(LongVector.SPECIES_512), a1 = a0, a2 = a0, a3 = a0;
        for (long o = from; o < to; o += 256) {
            a0 = a0.lanewise(VectorOperators.XOR, LongVector.fromMemorySegment(LongVector.SPECIES_512, m, o, ByteOrder.LITTLE_ENDIAN));
            a1 = a1.lanewise(VectorOperators.XOR, LongVector.fromMemorySegment(LongVector.SPECIES_512, m, o + 64, ByteOrder.LITTLE_ENDIAN));
            a2 = a2.lanewise(VectorOperators.XOR, LongVector.fromMemorySegment(LongVector.SPECIES_512, m, o + 128, ByteOrder.LITTLE_ENDIAN));
            a3 = a3.lanewise(VectorOperators.XOR, LongVector.fromMemorySegment(LongVector.SPECIES_512, m, o + 192, ByteOrder.LITTLE_ENDIAN));
        }
        readSums[worker] = a0.lanewise(VectorOperators.XOR, a1).lanewise(VectorOperators.XOR, a2).lanewise(VectorOperators.XOR, a3).reduceLanes(VectorOperators.XOR);
    };

    @Benchmark
    public float matmul(Traffic traffic) {
        WeightMatrix w = copies[next];
        next = next + 1 == copies.length ? 0 : next + 1;
        MatMul.matmul(pool, w, x, tokens, out);
        traffic.weightBytes += bytesPerCall;
        return out[0];
    }
}
