package io.modelopt.core.kernel;

import io.modelopt.core.tensor.GgmlType;
import io.modelopt.core.tensor.TensorData;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SegmentAllocator;
import java.util.List;
import java.util.Objects;

/**
 * A 2-D weight ready for {@link MatMul}: {@code rows} output features of {@code cols} inputs each
 * (ggml ne1 = rows, ne0 = cols; a tensor of more dimensions is read as {@code ne1·ne2·…} rows),
 * in a registered {@link WeightFormat}, read in place from its tensors' own bytes (usually the
 * mapped model file). Most formats are one tensor of a ggml type ({@link #of(TensorData)}); a
 * format may take more ({@link #of(WeightFormat, TensorData, TensorData...)}): e.g. quantized
 * rows plus a tensor of per-row scales.
 */
public final class WeightMatrix {
    private final WeightFormat format;
    private final TensorData tensor;
    /** The format's further tensors (empty for a one-tensor format). */
    private final List<TensorData> parts;
    private final MemorySegment data;
    private final int rows, cols;
    private final long rowBytes;
    /**
     * The load-time repacked copy, or null: for Q4_0/Q8_0 the whole row groups interleaved
     * ({@link InterleavedQ4_0}, {@link InterleavedQ8_0}), for F16 every row re-encoded ({@link RebiasedF16}).
     */
    private final MemorySegment packed;

    private WeightMatrix(WeightFormat format, TensorData t, List<TensorData> parts, MemorySegment packed) {
        this(format, t, parts, packed, t.rowLength(), t.rows());
    }

    private WeightMatrix(WeightFormat format, TensorData t, List<TensorData> parts, MemorySegment packed, long c, long r) {
        this.format = format;
        this.tensor = t;
        this.parts = parts;
        this.data = t.data();
        this.packed = packed;
        if (c > Integer.MAX_VALUE || r > Integer.MAX_VALUE || c * r > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("tensor " + t.name() + " is too large for a weight matrix: " + t);
        }
        this.cols = (int) c;
        this.rows = (int) r;
        this.rowBytes = format.rowBytes(c);
        if (rowBytes * r != t.byteSize()) {
            throw new IllegalArgumentException("tensor " + t.name() + " holds " + t.byteSize() + " bytes, but " + r + " rows of " + c + " " + format
                    + " weights take " + rowBytes * r);
        }
    }

    /**
     * Wraps a tensor in the format its ggml type binds to ({@link WeightFormats#forFileType}).
     * Throws {@link UnsupportedOperationException} naming the tensor when no format takes its type.
     */
    public static WeightMatrix of(TensorData t) {
        WeightFormat f = WeightFormats.forFileType(t.type()).orElseThrow(() -> new UnsupportedOperationException(
                "tensor " + t.name() + ": no matmul kernel for type " + t.type() + " (supported: " + WeightFormats.fileTypes() + ")"));
        return new WeightMatrix(f, t, List.of(), null);
    }

    /**
     * A weight of {@code format} whose rows are {@code main}'s (its shape gives rows and columns,
     * its bytes {@link WeightFormat#rowBytes} per row) and whose other tensors are {@code parts},
     * which the format's decoder and kernels read ({@link #part}).
     */
    public static WeightMatrix of(WeightFormat format, TensorData main, TensorData... parts) {
        Objects.requireNonNull(format, "format");
        return new WeightMatrix(format, main, List.of(parts), null);
    }

    /**
     * A weight of {@code format} with {@code rows × cols} weights whose main tensor's shape is its
     * own (e.g. INT4 codes packed eight to an I32 element: {@code {cols / 8, rows}}); its bytes must
     * be {@link WeightFormat#rowBytes}{@code (cols)} per row.
     */
    public static WeightMatrix of(WeightFormat format, int rows, int cols, TensorData main, TensorData... parts) {
        Objects.requireNonNull(format, "format");
        if (rows < 1 || cols < 1) throw new IllegalArgumentException("weight " + main.name() + ": " + rows + " rows of " + cols + " columns");
        return new WeightMatrix(format, main, List.of(parts), null, cols, rows);
    }

    /** The weight's format. */
    public WeightFormat format() { return format; }

    /** The format's {@code i}-th further tensor (0-based; the main tensor is {@link #tensor()}). */
    public TensorData part(int i) {
        if (i < 0 || i >= parts.size()) throw new IndexOutOfBoundsException(format + " weight " + tensor.name() + " has " + parts.size() + " further tensors, not " + (i + 1));
        return parts.get(i);
    }

    /** How many further tensors the format has beside the main one ({@link #part}). */
    public int partCount() { return parts.size(); }

    public int rows() { return rows; }
    public int cols() { return cols; }
    /** The ggml type of the main tensor. */
    public GgmlType type() { return tensor.type(); }
    public TensorData tensor() { return tensor; }

    /** The weight bytes, row after row, {@link #rowBytes()} each. */
    MemorySegment data() { return data; }

    /** Bytes of one row in the tensor's format. */
    public long rowBytes() { return rowBytes; }

    /** Bytes of the weights as stored: every tensor of the format. */
    public long byteSize() {
        long n = rowBytes * rows;
        for (TensorData p : parts) n += p.byteSize();
        return n;
    }

    /** Bytes this matrix holds beyond the tensor's own (a load-time repacked copy); 0: weights are read in place. */
    public long residentBytes() { return packed == null ? 0 : packed.byteSize(); }

    /** Whether this matrix has a repacked copy ({@link #repacked}). */
    public boolean isRepacked() { return packed != null; }

    /** Whether the copy interleaves rows (read by its layout's group kernels), not re-encoded rows read by the format's kernel. */
    boolean isInterleaved() { return packed != null && format.repacking().interleaved(); }

    /** The format's repacked layout, or null. */
    Repacking repacking() { return format.repacking(); }

    /**
     * Whether {@link #repacked} would make a copy: the format has a repacked layout that applies to
     * this shape ({@link #repacked} may still leave it in place, see {@link RebiasedF16}).
     */
    public boolean canRepack() {
        Repacking r = format.repacking();
        return packed == null && r != null && r.applies(rows, cols);
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
        Repacking layout = format.repacking();
        int groups = rows / layout.groupRows();
        boolean[] unrepresentable = {false}; // written by the pool's threads, read after its join
        int checked = groups * layout.groupRows();
        ComputePool.RangeTask check = (r0, r1, worker) -> {
            if (!layout.representable(this, r0, r1)) unrepresentable[0] = true;
        };
        if (pool == null) check.run(0, checked, 0);
        else pool.parallelFor(checked, check);
        if (unrepresentable[0]) return this;
        MemorySegment dst = allocator.allocate(repackBytes(), REPACK_ALIGNMENT);
        ComputePool.RangeTask fill = (g0, g1, worker) -> layout.pack(this, dst, g0, g1);
        if (pool == null) fill.run(0, groups, 0);
        else pool.parallelFor(groups, fill);
        return new WeightMatrix(format, tensor, parts, dst, cols, rows);
    }

    /** Alignment of a repacked copy (a cache line; the records are multiples of it). */
    public static final long REPACK_ALIGNMENT = 64;

    /** Bytes of the copy {@link #repacked} makes; 0 when {@link #canRepack()} is false. */
    public long repackBytes() {
        if (!canRepack()) return 0;
        return format.repacking().packedBytes(rows, cols);
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
        if (packed == null || (isInterleaved() && !(Gemm.FROM_COPY && format.repacking().gemmReadsCopy())) || !data.isMapped()) return 0;
        long copied = (long) packedRows() * rowBytes;
        data.asSlice(0, copied).unload();
        return copied;
    }

    MemorySegment packed() { return packed; }

    /** Rows covered by the repacked copy (whole groups); 0 without one. */
    int packedRows() { return packed == null ? 0 : rows / packedGroupRows() * packedGroupRows(); }

    /** Rows per group of the repacked layout (the row grain of its kernel; 1 for F16, whose copy keeps the rows). */
    int packedGroupRows() {
        Repacking r = format.repacking();
        return r == null ? 1 : r.groupRows();
    }

    /** Decodes row {@code row} into {@code dst[off .. off+cols)} (embedding lookup), with the format's reference decoder. */
    public void dequantizeRow(int row, float[] dst, int off) {
        if (row < 0 || row >= rows) throw new IllegalArgumentException("row " + row + " out of [0, " + rows + ") in " + tensor.name());
        if (off < 0 || off > dst.length - cols) throw new IllegalArgumentException("dst has room for " + (dst.length - off) + " of " + cols + " elements at " + off);
        format.decodeRow(this, row, dst, off);
    }

    @Override public String toString() {
        return "WeightMatrix[" + tensor.name() + " " + format + " " + rows + "x" + cols + "]";
    }
}
