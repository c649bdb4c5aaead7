package io.modelopt.quantization.format;

import io.modelopt.core.kernel.WeightMatrix;
import io.modelopt.core.tensor.GgmlType;
import io.modelopt.core.tensor.TensorData;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * The tensors of one weight in {@link PackedIntLayout}, allocated empty and filled row by row
 * ({@link #writeRow}): the main tensor named as the weight ({@code blk.0.attn_q.weight}), then
 * {@code <name>_scale}, then (asymmetric) {@code <name>_zero_point}. Their memory belongs to the
 * arena given to {@link #allocate}.
 */
public final class PackedIntTensors {
    /** Suffix of the scale tensor's name. */
    public static final String SCALE_SUFFIX = "_scale";
    /** Suffix of the zero-point tensor's name. */
    public static final String ZERO_POINT_SUFFIX = "_zero_point";

    private final String name;
    private final IntScheme scheme;
    private final int rows, cols, groups, zeroBytes;
    private final TensorData main, scales, zeros;

    private PackedIntTensors(String name, IntScheme scheme, int rows, int cols, Arena arena) {
        this.name = name;
        this.scheme = scheme;
        this.rows = rows;
        this.cols = cols;
        this.groups = scheme.groups(cols);
        this.zeroBytes = PackedIntLayout.zeroPointBytes(scheme, cols);
        this.main = tensor(arena, name, GgmlType.I32, PackedIntLayout.codeWords(scheme, cols));
        GgmlType scaleType = scheme.scaleType() == IntScheme.ScaleType.F16 ? GgmlType.F16 : GgmlType.F32;
        this.scales = tensor(arena, name + SCALE_SUFFIX, scaleType, groups);
        this.zeros = scheme.symmetric() ? null : tensor(arena, name + ZERO_POINT_SUFFIX, GgmlType.I8, zeroBytes);
    }

    private TensorData tensor(Arena arena, String n, GgmlType type, long rowElements) {
        long[] shape = {rowElements, rows};
        return new TensorData(n, type, shape, arena.allocate(type.bytesFor(rowElements * rows), 64));
    }

    /**
     * Empty tensors for a {@code rows × cols} weight of scheme {@code s} named {@code canonicalName}.
     *
     * @throws IllegalArgumentException naming the tensor, and the group sizes that would work, when
     *                                  {@code s} cannot store rows of {@code cols} weights; or when
     *                                  {@code s} is not one of {@link PackedIntLayout#schemes()}
     */
    public static PackedIntTensors allocate(String canonicalName, IntScheme s, int rows, int cols, Arena arena) {
        Objects.requireNonNull(canonicalName, "canonicalName");
        Objects.requireNonNull(arena, "arena");
        PackedIntLayout.format(s); // throws for a scheme this layout does not store
        if (rows < 1 || cols < 1) throw new IllegalArgumentException("tensor " + canonicalName + ": " + rows + " rows of " + cols + " columns");
        if (!PackedIntLayout.fits(s, cols)) throw new IllegalArgumentException(misfit(canonicalName, s, cols));
        return new PackedIntTensors(canonicalName, s, rows, cols, arena);
    }

    /** Why {@code s} cannot take rows of {@code cols}, and what could. */
    static String misfit(String tensor, IntScheme s, int cols) {
        List<String> ok = new ArrayList<>();
        for (int g : new int[] {32, 64, 128, IntScheme.PER_CHANNEL}) {
            if (PackedIntLayout.fits(new IntScheme(s.bits(), g, s.symmetric(), s.scaleType()), cols)) ok.add(g == IntScheme.PER_CHANNEL ? "-1 (per channel)" : String.valueOf(g));
        }
        String why = s.fits(cols)
                ? "rows of " + cols + " INT" + s.bits() + " codes are not whole int32 words (columns must be a multiple of " + PackedIntLayout.blockSize(s.bits()) + ")"
                : cols + " columns are not a whole number of " + s.groupSize(cols) + "-weight groups";
        String alternatives = ok.isEmpty()
                ? "no group size works at " + s.bits() + " bits" + (cols % PackedIntLayout.blockSize(8) == 0 ? "; INT8 per channel (-1) would" : "")
                : "group sizes that would work at " + s.bits() + " bits: " + String.join(", ", ok);
        return "tensor " + tensor + ": cannot store as " + s + ": " + why + "; " + alternatives;
    }

    /**
     * Stores row {@code row} (scales rounded to the scheme's scale type, as stored; a symmetric
     * scheme's zeros must be its implicit one).
     *
     * @throws IllegalArgumentException for a row of another length, or codes or zero points outside {@code [0, 2^bits)}
     */
    public void writeRow(int row, IntRow r) {
        if (row < 0 || row >= rows) throw new IllegalArgumentException("tensor " + name + ": row " + row + " out of [0, " + rows + ")");
        if (r.codes.length != cols || r.scales.length != groups) {
            throw new IllegalArgumentException("tensor " + name + ": a row of " + r.codes.length + " weights in " + r.scales.length + " groups, expected "
                    + cols + " in " + groups);
        }
        int max = scheme.maxCode();
        for (int k = 0; k < cols; k++) {
            if ((r.codes[k] & ~max) != 0) throw new IllegalArgumentException("tensor " + name + " row " + row + ": code " + r.codes[k] + " at " + k + " outside [0, " + max + "]");
        }
        for (int g = 0; g < groups; g++) {
            int z = r.zeros[g];
            if (scheme.symmetric() ? z != scheme.symmetricZero() : (z & ~max) != 0) {
                throw new IllegalArgumentException("tensor " + name + " row " + row + ": zero point " + z + " of group " + g + " is not valid for " + scheme);
            }
        }
        PackedIntLayout.pack(r.codes, cols, scheme.bits(), main.data(), (long) row * 4 * PackedIntLayout.codeWords(scheme, cols), true);
        MemorySegment sd = scales.data();
        long so = (long) row * groups;
        for (int g = 0; g < groups; g++) {
            if (scheme.scaleType() == IntScheme.ScaleType.F16) sd.set(PackedIntLayout.SHORT, (so + g) * 2, Float.floatToFloat16(r.scales[g]));
            else sd.set(PackedIntLayout.FLOAT, (so + g) * 4, r.scales[g]);
        }
        if (zeros != null) PackedIntLayout.pack(r.zeros, groups, scheme.bits(), zeros.data(), (long) row * zeroBytes, false);
    }

    /** The main tensor, the scales, and (asymmetric) the zero points, in that order. */
    public List<TensorData> tensors() {
        return zeros == null ? List.of(main, scales) : List.of(main, scales, zeros);
    }

    /** The weight as a matrix of {@link PackedIntLayout#format(IntScheme)}, reading these tensors in place. */
    public WeightMatrix matrix() {
        return zeros == null
                ? WeightMatrix.of(PackedIntLayout.format(scheme), rows, cols, main, scales)
                : WeightMatrix.of(PackedIntLayout.format(scheme), rows, cols, main, scales, zeros);
    }

    /** Bytes of all the tensors. */
    public long byteSize() {
        long n = 0;
        for (TensorData t : tensors()) n += t.byteSize();
        return n;
    }

    /** Stored bits per weight, exactly: {@code 8 · byteSize() / (rows · cols)}. */
    public double bitsPerWeight() { return 8.0 * byteSize() / ((double) rows * cols); }

    public String name() { return name; }
    public IntScheme scheme() { return scheme; }
    public int rows() { return rows; }
    public int cols() { return cols; }
}
