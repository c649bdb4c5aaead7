package io.modelopt.core.kernel;

import io.modelopt.core.quant.BF16;
import io.modelopt.core.quant.F16;
import io.modelopt.core.quant.Q4_0;
import io.modelopt.core.quant.Q4_1;
import io.modelopt.core.quant.Q4_K;
import io.modelopt.core.quant.Q5_0;
import io.modelopt.core.quant.Q5_K;
import io.modelopt.core.quant.Q6_K;
import io.modelopt.core.quant.Q8_0;
import io.modelopt.core.tensor.GgmlType;
import io.modelopt.core.tensor.TensorData;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SegmentAllocator;
import java.util.EnumSet;
import java.util.Set;

/**
 * A 2-D weight ready for {@link MatMul}: {@code rows} output features of {@code cols} inputs each
 * (ggml ne1 = rows, ne0 = cols; a tensor of more dimensions is read as {@code ne1·ne2·…} rows),
 * read in place from the tensor's own bytes (usually the mapped model file), in its own format.
 */
public final class WeightMatrix {
    /** The weight formats {@link MatMul} has kernels for. */
    public static final Set<GgmlType> SUPPORTED = EnumSet.of(GgmlType.F32, GgmlType.F16, GgmlType.BF16, GgmlType.Q8_0,
            GgmlType.Q4_0, GgmlType.Q4_1, GgmlType.Q5_0, GgmlType.Q4_K, GgmlType.Q5_K, GgmlType.Q6_K);

    private final TensorData tensor;
    private final MemorySegment data;
    private final int rows, cols;
    private final long rowBytes;
    /**
     * The load-time repacked copy, or null: for Q4_0/Q8_0 the whole row groups interleaved
     * ({@link InterleavedQ4_0}, {@link InterleavedQ8_0}), for F16 every row re-encoded ({@link RebiasedF16}).
     */
    private final MemorySegment packed;

    private WeightMatrix(TensorData t) {
        this(t, null);
    }

    private WeightMatrix(TensorData t, MemorySegment packed) {
        this.tensor = t;
        this.data = t.data();
        this.packed = packed;
        long c = t.rowLength(), r = t.rows();
        if (c > Integer.MAX_VALUE || r > Integer.MAX_VALUE || c * r > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("tensor " + t.name() + " is too large for a weight matrix: " + t);
        }
        this.cols = (int) c;
        this.rows = (int) r;
        this.rowBytes = t.rowBytes();
    }

    /**
     * Wraps a tensor. Throws {@link UnsupportedOperationException} naming the tensor when its type
     * has no matmul kernel (see {@link #SUPPORTED}).
     */
    public static WeightMatrix of(TensorData t) {
        if (!SUPPORTED.contains(t.type())) {
            throw new UnsupportedOperationException("tensor " + t.name() + ": no matmul kernel for type " + t.type() + " (supported: " + SUPPORTED + ")");
        }
        return new WeightMatrix(t);
    }

    public int rows() { return rows; }
    public int cols() { return cols; }
    public GgmlType type() { return tensor.type(); }
    public TensorData tensor() { return tensor; }

    /** The weight bytes, row after row, {@link #rowBytes()} each. */
    MemorySegment data() { return data; }

    /** Bytes of one row in the tensor's format. */
    public long rowBytes() { return rowBytes; }

    /** Bytes of the weights as stored ({@code rows · rowBytes}). */
    public long byteSize() { return rowBytes * rows; }

    /** Bytes this matrix holds beyond the tensor's own (a load-time repacked copy); 0: weights are read in place. */
    public long residentBytes() { return packed == null ? 0 : packed.byteSize(); }

    /** Whether this matrix has a repacked copy ({@link #repacked}). */
    public boolean isRepacked() { return packed != null; }

    /** Whether the copy is a row-interleaved Q4_0/Q8_0 one (read by group kernels), not re-encoded F16 rows. */
    boolean isInterleaved() { return packed != null && tensor.type() != GgmlType.F16; }

    /**
     * Whether {@link #repacked} would make a copy: Q4_0 or Q8_0 with at least one whole group of
     * rows, or F16 ({@link #repacked} may still leave any of them in place, see {@link RebiasedF16}).
     */
    public boolean canRepack() {
        if (packed != null || cols % 32 != 0) return false;
        return switch (tensor.type()) {
            case Q4_0 -> rows >= InterleavedQ4_0.ROWS;
            case Q8_0 -> rows >= InterleavedQ8_0.ROWS;
            case F16 -> true;
            default -> false;
        };
    }

    /**
     * This matrix with a repacked copy of its weights, allocated in {@code arena} (which owns it):
     * Q4_0 rows interleaved 32 at a time ({@link InterleavedQ4_0}), Q8_0 rows 16 at a time
     * ({@link InterleavedQ8_0}), F16 rows re-encoded with exponents that leave no value subnormal
     * ({@link RebiasedF16}). The Vector API kernels then read the copy, for decode and for the
     * prefill GEMM's panels; the scalar kernels, the rows after the last whole group and
     * {@link #dequantizeRow} keep reading the tensor. Returns {@code this} when {@link #canRepack()}
     * is false, or for an F16 matrix holding a weight, or a Q4_0/Q8_0 matrix holding a block scale,
     * that the re-encoding cannot represent ({@code |w| ≥ 128}, infinite or NaN; checked before
     * anything is allocated).
     */
    public WeightMatrix repacked(Arena arena) {
        return repacked(arena, null);
    }

    /**
     * As {@link #repacked(Arena)}, the copying split over {@code pool}'s threads (null: the calling
     * thread); the arena must be shared then. The copy is on huge pages where the OS allows
     * ({@link HugePages}).
     */
    public WeightMatrix repacked(Arena arena, ComputePool pool) {
        if (!canRepack()) return this;
        return repacked(SegmentAllocator.slicingAllocator(HugePages.allocate(arena, repackBytes())), pool);
    }

    /**
     * As {@link #repacked(Arena, ComputePool)}, the copy taken from {@code allocator} ({@link #repackBytes()}
     * bytes, 64-byte aligned), which must keep it alive as long as the result is used. For many
     * matrices sliced from one huge-page region: one region rounds up to a whole huge page once,
     * not once per matrix (tiny1b: 150 MB).
     */
    public WeightMatrix repacked(SegmentAllocator allocator, ComputePool pool) {
        if (!canRepack()) return this;
        GgmlType type = tensor.type();
        int groups = rows / packedGroupRows();
        // every copy stores halves as RebiasedF16 codes (F16 its weights, Q4_0 and Q8_0 their block scales)
        boolean[] unrepresentable = {false}; // written by the pool's threads, read after its join
        int checked = type == GgmlType.F16 ? rows : groups * packedGroupRows();
        ComputePool.RangeTask check = (r0, r1, worker) -> {
            boolean ok = type == GgmlType.F16 ? RebiasedF16.representable(this, r0, r1) : RebiasedF16.scalesRepresentable(this, r0, r1);
            if (!ok) unrepresentable[0] = true;
        };
        if (pool == null) check.run(0, checked, 0);
        else pool.parallelFor(checked, check);
        if (unrepresentable[0]) return this;
        MemorySegment dst = allocator.allocate(repackBytes(), REPACK_ALIGNMENT);
        ComputePool.RangeTask fill = (g0, g1, worker) -> {
            switch (type) {
                case Q4_0 -> InterleavedQ4_0.packGroups(this, dst, g0, g1);
                case Q8_0 -> InterleavedQ8_0.packGroups(this, dst, g0, g1);
                default -> RebiasedF16.pack(this, dst, g0, g1);
            }
        };
        if (pool == null) fill.run(0, groups, 0);
        else pool.parallelFor(groups, fill);
        return new WeightMatrix(tensor, dst);
    }

    /** Alignment of a repacked copy (a cache line; the records are multiples of it). */
    public static final long REPACK_ALIGNMENT = 64;

    /** Bytes of the copy {@link #repacked} makes; 0 when {@link #canRepack()} is false. */
    public long repackBytes() {
        if (!canRepack()) return 0;
        return switch (tensor.type()) {
            case Q4_0 -> InterleavedQ4_0.packedBytes(rows, cols);
            case Q8_0 -> InterleavedQ8_0.packedBytes(rows, cols);
            default -> 2L * rows * cols;
        };
    }

    /**
     * For a repacked matrix: drops the resident pages of the file bytes it has copied
     * ({@link MemorySegment#unload()}, i.e. {@code madvise(MADV_DONTNEED)} on the mapping), since
     * decode and prefill now read the copy; a later read of the file bytes (the rows after the last
     * group, an embedding lookup of a tied matrix) faults its pages back in from the page cache.
     * A no-op for matrices that are not repacked or not mapped (or with {@code -Dmodelopt.gemm.fromCopy=false},
     * where the prefill GEMM still reads the file). Returns the bytes released.
     */
    public long unloadCopiedSource() {
        // (F16 panels always come from the copy; -Dmodelopt.gemm.fromCopy only concerns the interleaved formats)
        if (packed == null || (!Gemm.FROM_COPY && isInterleaved()) || !data.isMapped()) return 0;
        long copied = (long) packedRows() * rowBytes;
        data.asSlice(0, copied).unload();
        return copied;
    }

    MemorySegment packed() { return packed; }

    /** Rows covered by the repacked copy (whole groups); 0 without one. */
    int packedRows() { return packed == null ? 0 : rows / packedGroupRows() * packedGroupRows(); }

    /** Rows per group of the repacked layout (the row grain of its kernel; 1 for F16, whose copy keeps the rows). */
    int packedGroupRows() {
        return switch (tensor.type()) {
            case Q4_0 -> InterleavedQ4_0.ROWS;
            case Q8_0 -> InterleavedQ8_0.ROWS;
            default -> 1;
        };
    }

    /** Dequantizes row {@code row} into {@code dst[off .. off+cols)} (embedding lookup), with the format's reference decoder. */
    public void dequantizeRow(int row, float[] dst, int off) {
        if (row < 0 || row >= rows) throw new IllegalArgumentException("row " + row + " out of [0, " + rows + ") in " + tensor.name());
        if (off < 0 || off > dst.length - cols) throw new IllegalArgumentException("dst has room for " + (dst.length - off) + " of " + cols + " elements at " + off);
        long base = row * rowBytes;
        switch (tensor.type()) {
            case F32 -> MemorySegment.copy(data, WeightData.FLOAT, base, dst, off, cols);
            case F16 -> F16.dequantize(data, base, dst, off, cols);
            case BF16 -> BF16.dequantize(data, base, dst, off, cols);
            case Q8_0 -> Q8_0.dequantize(data, base, dst, off, cols);
            case Q4_0 -> Q4_0.dequantize(data, base, dst, off, cols);
            case Q4_1 -> Q4_1.dequantize(data, base, dst, off, cols);
            case Q5_0 -> Q5_0.dequantize(data, base, dst, off, cols);
            case Q4_K -> Q4_K.dequantize(data, base, dst, off, cols);
            case Q5_K -> Q5_K.dequantize(data, base, dst, off, cols);
            case Q6_K -> Q6_K.dequantize(data, base, dst, off, cols);
            default -> throw new IllegalStateException("unreachable: " + tensor.type());
        }
    }

    @Override public String toString() {
        return "WeightMatrix[" + tensor.name() + " " + type() + " " + rows + "x" + cols + "]";
    }
}
