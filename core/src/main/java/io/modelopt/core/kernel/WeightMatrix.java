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
    /**
     * For a matrix transcoded at load ({@link Transcoding}): the affine terms beside the target's
     * interleaved copy in {@link #packed}; null otherwise.
     */
    private final Affine affine;

    /**
     * The per-row scales (F32, one per row, or null) and per-group offsets (F32, {@code rows × groups}
     * row-major, or null; {@code group} weights each) of a transcoded matrix.
     */
    record Affine(WeightFormat target, MemorySegment rowScales, MemorySegment offsets, int group) {
        int groups(int cols) { return offsets == null ? 0 : cols / group; }

        long byteSize() {
            return (rowScales == null ? 0 : rowScales.byteSize()) + (offsets == null ? 0 : offsets.byteSize());
        }
    }

    private WeightMatrix(WeightFormat format, TensorData t, List<TensorData> parts, MemorySegment packed) {
        this(format, t, parts, packed, t.rowLength(), t.rows(), null);
    }

    private WeightMatrix(WeightFormat format, TensorData t, List<TensorData> parts, MemorySegment packed, long c, long r, Affine affine) {
        this.format = format;
        this.tensor = t;
        this.parts = parts;
        this.data = t.data();
        this.packed = packed;
        this.affine = affine;
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
        checkCopyBounds();
    }

    /**
     * The launcher runs the Vector API without its per-load index checks
     * ({@code -Djdk.incubator.vector.VECTOR_ACCESS_OOB_CHECK=0}: they cost the one-token Q4_0/Q8_0
     * kernels 20–30% on an AMD EPYC, docs/PERFORMANCE.md), so the ranges those kernels index are
     * checked here once, when the weight is bound: the tensor holds its rows (above), the copy holds
     * its layout's bytes for this shape, the affine terms one scale per row and one offset per group.
     * The tests run with the checks on, which catch a kernel that indexes outside these ranges.
     */
    private void checkCopyBounds() {
        if (packed != null) {
            long need = repacking().packedBytes(rows, cols);
            if (packed.byteSize() < need) {
                throw new IllegalArgumentException("repacked copy of " + tensor.name() + " holds " + packed.byteSize() + " bytes, but its layout needs " + need
                        + " for " + rows + " x " + cols);
            }
        }
        if (affine != null) {
            if (affine.rowScales() != null && affine.rowScales().byteSize() < 4L * rows) {
                throw new IllegalArgumentException("row scales of " + tensor.name() + " hold " + affine.rowScales().byteSize() + " bytes, not " + 4L * rows);
            }
            if (affine.offsets() != null && affine.offsets().byteSize() < 4L * rows * affine.groups(cols)) {
                throw new IllegalArgumentException("group offsets of " + tensor.name() + " hold " + affine.offsets().byteSize() + " bytes, not " + 4L * rows * affine.groups(cols));
            }
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
        return new WeightMatrix(format, main, List.of(parts), null, cols, rows, null);
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
    public long residentBytes() { return packed == null ? 0 : packed.byteSize() + (affine == null ? 0 : affine.byteSize()); }

    /** Whether this matrix has a repacked copy ({@link #repacked}). */
    public boolean isRepacked() { return packed != null; }

    /** Whether the copy interleaves rows (read by its layout's group kernels), not re-encoded rows read by the format's kernel. */
    boolean isInterleaved() { return packed != null && repacking().interleaved(); }

    /** The repacked layout the kernels read: the format's own, or for a transcoded matrix its target's; or null. */
    Repacking repacking() { return affine != null ? affine.target().repacking() : format.repacking(); }

    /** Whether this matrix was rewritten into a core format's interleaved copy ({@link Transcoding}). */
    public boolean isTranscoded() { return affine != null; }

    /** The transcoded matrix's affine terms, or null. */
    Affine affine() { return affine; }

    /**
     * The format whose kernels run this matrix in {@code mode}: a transcoded matrix's target in
     * vector mode, else its own format.
     */
    WeightFormat kernelFormat(KernelMode mode) {
        return affine != null && mode == KernelMode.VECTOR ? affine.target() : format;
    }

    /**
     * Whether {@link #repacked} would make a copy: the format has a repacked layout that applies to
     * this shape ({@link #repacked} may still leave it in place, see {@link RebiasedF16}), or it
     * transcodes into one ({@link Transcoding}) and the shape is whole groups of that layout's rows.
     */
    public boolean canRepack() {
        if (packed != null) return false;
        Repacking r = format.repacking();
        if (r != null) return r.applies(rows, cols);
        return transcodes();
    }

    private boolean transcodes() {
        Transcoding t = format.transcoding();
        if (t == null || !t.applies(this)) return false;
        Repacking r = t.target().repacking();
        if (r == null || !r.interleaved() || !r.applies(rows, cols) || rows % r.groupRows() != 0) return false;
        int g = t.offsetGroupSize(this);
        return g == 0 || (g % 32 == 0 && cols % g == 0);
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
        if (format.repacking() == null) return TranscodedCopy.make(this, allocator, pool);
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
        return new WeightMatrix(format, tensor, parts, dst, cols, rows, null);
    }

    /** Alignment of a repacked copy (a cache line; the records are multiples of it). */
    public static final long REPACK_ALIGNMENT = 64;

    /** Bytes of the copy {@link #repacked} makes; 0 when {@link #canRepack()} is false. */
    public long repackBytes() {
        if (!canRepack()) return 0;
        if (format.repacking() == null) return TranscodedCopy.bytes(this);
        return format.repacking().packedBytes(rows, cols);
    }

    /** This matrix with a transcoded copy and its affine terms (made by {@link TranscodedCopy}). */
    WeightMatrix withTranscodedCopy(MemorySegment copy, Affine terms) {
        return new WeightMatrix(format, tensor, parts, copy, cols, rows, terms);
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
        if (affine != null) {
            // every kernel reads the copy; only dequantizeRow (an embedding lookup of a tied matrix) reads the stored tensors again
            long n = 0;
            if (data.isMapped()) { data.unload(); n += data.byteSize(); }
            for (TensorData p : parts) if (p.data().isMapped()) { p.data().unload(); n += p.byteSize(); }
            return n;
        }
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
        Repacking r = repacking();
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
