package io.modelopt.core.kernel;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.modelopt.core.quant.ActivationRef;
import io.modelopt.core.quant.Q4_0;
import io.modelopt.core.quant.Q8_0;
import io.modelopt.core.tensor.GgmlType;
import io.modelopt.core.tensor.TensorData;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A format outside core's table that transcodes into Q4_0 or Q8_0 ({@link Transcoding}) runs on
 * their interleaved kernels plus its affine terms: the same numbers as those kernels on the
 * transcoded blocks, plus the offsets times the activations' group sums, for decode, the
 * few-token path, the prefill GEMM and the fused shared-input call; and scalar mode keeps the
 * format's own kernel over its stored tensors.
 */
class TranscodingTest {
    static ComputePool pool1, pool2;
    Arena arena;

    @BeforeAll static void pools() { pool1 = new ComputePool(1); pool2 = new ComputePool(2); }

    @AfterAll static void closePools() { pool1.close(); pool2.close(); }

    @BeforeEach void vectorApi() {
        assumeTrue(KernelMode.vectorApiAvailable(), "the interleaved kernels are Vector API only");
        arena = Arena.ofShared();
    }

    @AfterEach void free() { if (arena != null) arena.close(); }

    static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED;

    /**
     * A test format: one code per I8 byte ({@code {cols, rows}}, codes 0..15), an F16 scale and an
     * I8 zero per group of {@code group} weights; {@code w = s·(code − zero)}. Transcodes into Q4_0
     * with nibble = code and offset {@code −s·(zero − 8)}.
     */
    static WeightFormat groupedFormat(int group) {
        Transcoding t = new Transcoding() {
            @Override public WeightFormat target() { return WeightFormats.forFileType(GgmlType.Q4_0).orElseThrow(); }
            @Override public boolean applies(WeightMatrix w) { return w.cols() % 32 == 0; }
            @Override public void transcodeRow(WeightMatrix w, int row, MemorySegment dst, long offset) {
                int cols = w.cols();
                for (int b = 0; b < cols / 32; b++) {
                    long blk = offset + b * 18L;
                    dst.set(ValueLayout.JAVA_SHORT_UNALIGNED, blk, scaleBits(w, row, b * 32 / g(w)));
                    for (int j = 0; j < 16; j++) {
                        int lo = code(w, row, b * 32 + j), hi = code(w, row, b * 32 + j + 16);
                        dst.set(ValueLayout.JAVA_BYTE, blk + 2 + j, (byte) (lo | hi << 4));
                    }
                }
            }
            @Override public int offsetGroupSize() { return group; }
            @Override public void rowOffsets(WeightMatrix w, int row, float[] dst) {
                for (int gi = 0; gi < w.cols() / group; gi++) dst[gi] = -scale(w, row, gi) * (zero(w, row, gi) - 8);
            }
            int g(WeightMatrix w) { return group; }
        };
        return WeightFormat.builder("TEST_GROUPED_U4_G" + group).geometry(1, 1)
                .decoder((w, row, dst, off) -> {
                    for (int k = 0; k < w.cols(); k++) dst[off + k] = scale(w, row, k / group) * (code(w, row, k) - zero(w, row, k / group));
                })
                .scalar(DecodedRowKernel.scalar()).vector(DecodedRowKernel::vector).transcoding(t).build();
    }

    static int code(WeightMatrix w, int row, int k) { return w.tensor().data().get(ValueLayout.JAVA_BYTE, (long) row * w.cols() + k); }

    static short scaleBits(WeightMatrix w, int row, int g) {
        int groups = (int) w.part(0).rowLength();
        return w.part(0).data().get(ValueLayout.JAVA_SHORT_UNALIGNED, 2L * ((long) row * groups + g));
    }

    static float scale(WeightMatrix w, int row, int g) { return Float.float16ToFloat(scaleBits(w, row, g)); }

    static int zero(WeightMatrix w, int row, int g) {
        int groups = (int) w.part(1).rowLength();
        return w.part(1).data().get(ValueLayout.JAVA_BYTE, (long) row * groups + g);
    }

    WeightMatrix grouped(WeightFormat f, int group, int rows, int cols, long seed, boolean zeroAtEight) {
        Random rnd = new Random(seed);
        int groups = cols / group;
        MemorySegment codes = arena.allocate((long) rows * cols), scales = arena.allocate(2L * rows * groups), zeros = arena.allocate((long) rows * groups);
        for (long i = 0; i < (long) rows * cols; i++) codes.set(ValueLayout.JAVA_BYTE, i, (byte) rnd.nextInt(16));
        for (long i = 0; i < (long) rows * groups; i++) {
            scales.set(ValueLayout.JAVA_SHORT_UNALIGNED, 2 * i, Float.floatToFloat16((float) (0.002 + 0.05 * rnd.nextDouble())));
            zeros.set(ValueLayout.JAVA_BYTE, i, (byte) (zeroAtEight ? 8 : rnd.nextInt(16)));
        }
        return WeightMatrix.of(f, rows, cols, new TensorData("w", GgmlType.I8, new long[] {cols, rows}, codes),
                new TensorData("w_scale", GgmlType.F16, new long[] {groups, rows}, scales), new TensorData("w_zero", GgmlType.I8, new long[] {groups, rows}, zeros));
    }

    /** The transcoded blocks as a plain Q4_0 matrix (what the kernels multiply), rebuilt with the format's own transcodeRow. */
    WeightMatrix blocks(WeightMatrix w, GgmlType type) {
        long rowBytes = type.bytesFor(w.cols());
        MemorySegment m = arena.allocate(rowBytes * w.rows());
        for (int r = 0; r < w.rows(); r++) w.format().transcoding().transcodeRow(w, r, m, r * rowBytes);
        return WeightMatrix.of(new TensorData("blocks", type, new long[] {w.cols(), w.rows()}, m));
    }

    @ParameterizedTest(name = "group {0}")
    @ValueSource(ints = {32, 64, 128})
    void transcodedRowsPlusOffsetsAreTheReferenceBitForBit(int group) {
        WeightFormat f = groupedFormat(group);
        WeightMatrix w = grouped(f, group, 5, 256, 11 + group, false);
        WeightMatrix q4 = blocks(w, GgmlType.Q4_0);
        float[] ref = new float[256], got = new float[256], off = new float[256 / group];
        for (int r = 0; r < w.rows(); r++) {
            w.dequantizeRow(r, ref, 0);
            q4.dequantizeRow(r, got, 0);
            f.transcoding().rowOffsets(w, r, off);
            for (int k = 0; k < 256; k++) got[k] += off[k / group];
            assertArrayEquals(ref, got, "row " + r);
        }
    }

    @ParameterizedTest(name = "group {0}")
    @ValueSource(ints = {32, 64, 128})
    void runsOnTheInterleavedKernelsWithItsOffsets(int group) {
        WeightFormat f = groupedFormat(group);
        int[][] shapes = {{32, 128}, {64, 256}, {96, 640}};
        int[] tokenCounts = {1, 2, 5, 17, 40}; // decode, few-token, prefill GEMM
        long seed = 100;
        for (int[] s : shapes) {
            int rows = s[0], cols = s[1];
            WeightMatrix plain = grouped(f, group, rows, cols, ++seed, false);
            assertTrue(plain.canRepack());
            WeightMatrix w = plain.repacked(arena, pool2);
            assertTrue(w.isTranscoded() && w.isRepacked(), "transcoded");
            long copy = InterleavedQ4_0.packedBytes(rows, cols);
            assertTrue(w.residentBytes() >= copy + 4L * rows * (cols / group), "copy plus offsets counted: " + w.residentBytes());
            WeightMatrix q4 = blocks(plain, GgmlType.Q4_0).repacked(arena);
            for (int nTokens : tokenCounts) {
                float[] x = MatMulTest.activations(nTokens * cols, seed * 7 + nTokens);
                float[] out = new float[nTokens * rows], base = new float[nTokens * rows];
                MatMul.matmul(KernelMode.VECTOR, nTokens % 2 == 0 ? pool1 : pool2, w, x, 0, cols, nTokens, out, 0, rows);
                MatMul.matmul(KernelMode.VECTOR, pool1, q4, x, 0, cols, nTokens, base, 0, rows);
                float[] off = new float[cols / group];
                for (int t = 0; t < nTokens; t++) {
                    for (int r = 0; r < rows; r++) {
                        f.transcoding().rowOffsets(plain, r, off);
                        double c = 0, mag = Math.abs(base[t * rows + r]);
                        for (int gi = 0; gi < cols / group; gi++) {
                            double sum = 0;
                            for (int k = gi * group; k < (gi + 1) * group; k++) sum += x[t * cols + k];
                            c += off[gi] * sum;
                            mag += Math.abs(off[gi] * sum);
                        }
                        assertEquals(base[t * rows + r] + c, out[t * rows + r], 1e-5 * mag + 1e-6,
                                rows + "x" + cols + " g" + group + " tokens " + nTokens + " [" + t + "," + r + "]");
                    }
                }
            }
        }
    }

    @org.junit.jupiter.api.Test
    void zeroOffsetsGiveTheTargetsNumbersBitForBit() {
        WeightFormat f = groupedFormat(32);
        WeightMatrix plain = grouped(f, 32, 64, 512, 77, true);
        WeightMatrix w = plain.repacked(arena), q4 = blocks(plain, GgmlType.Q4_0).repacked(arena);
        for (int nTokens : new int[] {1, 3, 20}) {
            float[] x = MatMulTest.activations(nTokens * 512, 5 + nTokens);
            float[] a = new float[nTokens * 64], b = new float[nTokens * 64];
            MatMul.matmul(KernelMode.VECTOR, pool2, w, x, 0, 512, nTokens, a, 0, 64);
            MatMul.matmul(KernelMode.VECTOR, pool2, q4, x, 0, 512, nTokens, b, 0, 64);
            assertArrayEquals(b, a, "tokens " + nTokens);
        }
    }

    @org.junit.jupiter.api.Test
    void sharedInputCallFusesTranscodedMatrices() {
        WeightFormat f = groupedFormat(64);
        WeightMatrix a = grouped(f, 64, 64, 256, 1, false).repacked(arena), b = grouped(f, 64, 32, 256, 2, false).repacked(arena);
        for (int nTokens : new int[] {1, 4, 18}) {
            float[] x = MatMulTest.activations(nTokens * 256, 9 + nTokens);
            float[] fa = new float[nTokens * 64], fb = new float[nTokens * 32], sa = new float[nTokens * 64], sb = new float[nTokens * 32];
            MatMul.matmulSharedInput(pool2, x, nTokens, a, fa, b, fb, null, null);
            MatMul.matmul(pool2, a, x, nTokens, sa);
            MatMul.matmul(pool2, b, x, nTokens, sb);
            assertArrayEquals(sa, fa);
            assertArrayEquals(sb, fb);
        }
    }

    @org.junit.jupiter.api.Test
    void scalarModeAndUnfitShapesKeepTheFormatsOwnKernel() {
        WeightFormat f = groupedFormat(32);
        WeightMatrix odd = grouped(f, 32, 33, 64, 3, false); // 33 rows: not whole 32-row groups
        assertFalse(odd.canRepack());
        assertSame(odd, odd.repacked(arena));
        WeightMatrix plain = grouped(f, 32, 32, 64, 4, false), w = plain.repacked(arena);
        float[] x = MatMulTest.activations(64, 8), viaScalar = new float[32], ref = new float[32], row = new float[64];
        MatMul.matmul(KernelMode.SCALAR, pool1, w, x, 0, 64, 1, viaScalar, 0, 32);
        for (int r = 0; r < 32; r++) {
            plain.dequantizeRow(r, row, 0);
            double s = 0;
            for (int k = 0; k < 64; k++) s += (double) row[k] * x[k];
            ref[r] = (float) s;
        }
        assertArrayEquals(ref, viaScalar, 1e-4f);
        float[] d1 = new float[64], d2 = new float[64];
        plain.dequantizeRow(7, d1, 0);
        w.dequantizeRow(7, d2, 0);
        assertArrayEquals(d1, d2, "dequantizeRow reads the stored tensors");
    }

    /** Per-channel INT8 with an F32 row scale: Q8_0 blocks with d = 1, the scale applied after the dot product. */
    @org.junit.jupiter.api.Test
    void rowScaledInt8RunsOnTheQ8_0Kernels() {
        Transcoding t = new Transcoding() {
            @Override public WeightFormat target() { return WeightFormats.forFileType(GgmlType.Q8_0).orElseThrow(); }
            @Override public boolean applies(WeightMatrix w) { return w.cols() % 32 == 0; }
            @Override public void transcodeRow(WeightMatrix w, int row, MemorySegment dst, long offset) {
                for (int b = 0; b < w.cols() / 32; b++) {
                    long blk = offset + 34L * b;
                    dst.set(ValueLayout.JAVA_SHORT_UNALIGNED, blk, Float.floatToFloat16(1f));
                    MemorySegment.copy(w.tensor().data(), (long) row * w.cols() + 32L * b, dst, blk + 2, 32);
                }
            }
            @Override public boolean rowScaled() { return true; }
            @Override public float rowScale(WeightMatrix w, int row) { return w.part(0).data().get(F32, 4L * row); }
        };
        WeightFormat f = WeightFormat.builder("TEST_INT8_ROW_F32").geometry(1, 1)
                .decoder((w, row, dst, off) -> {
                    float s = w.part(0).data().get(F32, 4L * row);
                    for (int k = 0; k < w.cols(); k++) dst[off + k] = w.tensor().data().get(ValueLayout.JAVA_BYTE, (long) row * w.cols() + k) * s;
                })
                .scalar(DecodedRowKernel.scalar()).transcoding(t).build();
        int rows = 48, cols = 320;
        Random rnd = new Random(5);
        MemorySegment q = arena.allocate((long) rows * cols), s = arena.allocate(4L * rows);
        for (long i = 0; i < (long) rows * cols; i++) q.set(ValueLayout.JAVA_BYTE, i, (byte) (rnd.nextInt(255) - 127));
        for (int r = 0; r < rows; r++) s.set(F32, 4L * r, (float) (0.001 + 0.01 * rnd.nextDouble()));
        WeightMatrix plain = WeightMatrix.of(f, rows, cols, new TensorData("q", GgmlType.I8, new long[] {cols, rows}, q),
                new TensorData("s", GgmlType.F32, new long[] {rows}, s));
        WeightMatrix w = plain.repacked(arena, pool2);
        assertTrue(w.isTranscoded());
        assertEquals(InterleavedQ8_0.packedBytes(rows, cols) + 4L * rows, w.residentBytes());
        WeightMatrix q8 = blocks(plain, GgmlType.Q8_0).repacked(arena);
        for (int nTokens : new int[] {1, 3, 24}) {
            float[] x = MatMulTest.activations(nTokens * cols, 40 + nTokens), out = new float[nTokens * rows], base = new float[nTokens * rows];
            MatMul.matmul(KernelMode.VECTOR, pool2, w, x, 0, cols, nTokens, out, 0, rows);
            MatMul.matmul(KernelMode.VECTOR, pool1, q8, x, 0, cols, nTokens, base, 0, rows);
            for (int tok = 0; tok < nTokens; tok++) {
                for (int r = 0; r < rows; r++) {
                    float expected = base[tok * rows + r] * s.get(F32, 4L * r);
                    assertEquals(expected, out[tok * rows + r], "tokens " + nTokens + " [" + tok + "," + r + "]");
                }
            }
        }
    }

    static { Q4_0.class.getName(); Q8_0.class.getName(); }
}
