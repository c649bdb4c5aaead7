package io.modelopt.core.kernel;

/**
 * The geometry the interleaved k-quant copies ({@link InterleavedQ4_K}, {@link InterleavedQ5_K},
 * {@link InterleavedQ6_K}) share: rows in groups of {@code groupRows}, one record of
 * {@code recordBytes} per (group, 256-column super-block), groups after each other; rows past the
 * last whole group stay in place. Written once here; each format keeps its record's layout.
 */
final class KQuantGroups {
    private KQuantGroups() {}

    /** Columns per super-block: ggml's {@code QK_K}, every k-quant's block size. */
    static final int SUPER_BLOCK = io.modelopt.core.tensor.GgmlType.Q4_K.blockSize();

    /** Whether a {@code rows × cols} matrix has a whole group to repack (vector kernels only: {@code groupRows} 0 without them). */
    static boolean canRepack(int groupRows, int rows, int cols) {
        return groupRows > 0 && cols % SUPER_BLOCK == 0 && rows >= groupRows;
    }

    /** Bytes of the copy: whole groups only. */
    static long packedBytes(int groupRows, int recordBytes, int rows, int cols) {
        return groupRows == 0 ? 0 : (long) (rows / groupRows) * (cols / SUPER_BLOCK) * recordBytes;
    }

    /** Rows of the copy (whole groups). */
    static int packedRows(int groupRows, int rows) {
        return groupRows == 0 ? 0 : rows / groupRows * groupRows;
    }
}
