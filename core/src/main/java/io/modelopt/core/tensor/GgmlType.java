package io.modelopt.core.tensor;

import java.util.Optional;

/**
 * Every ggml tensor type, with its GGUF id and block geometry, as in ggml's {@code type_traits[]}
 * (ggml/src/ggml.c) and the block structs of ggml-common.h. A row of {@code n} elements of a
 * type takes {@code n / blockSize * typeSize} bytes; {@code n} must be a multiple of the block size.
 *
 * <p>Ids 4, 5 (old Q4_2/Q4_3) and 31..33, 36..38 (removed interleaved variants) are retired in
 * ggml and are reported as unknown.
 */
public enum GgmlType {
    F32(0, 1, 4),
    F16(1, 1, 2),
    Q4_0(2, 32, 2 + 16),
    Q4_1(3, 32, 2 + 2 + 16),
    Q5_0(6, 32, 2 + 4 + 16),
    Q5_1(7, 32, 2 + 2 + 4 + 16),
    Q8_0(8, 32, 2 + 32),
    Q8_1(9, 32, 2 + 2 + 32),
    Q2_K(10, 256, 16 + 64 + 2 + 2),
    Q3_K(11, 256, 32 + 64 + 12 + 2),
    Q4_K(12, 256, 2 + 2 + 12 + 128),
    Q5_K(13, 256, 2 + 2 + 12 + 32 + 128),
    Q6_K(14, 256, 128 + 64 + 16 + 2),
    Q8_K(15, 256, 4 + 256 + 16 * 2),
    IQ2_XXS(16, 256, 2 + 64),
    IQ2_XS(17, 256, 2 + 64 + 8),
    IQ3_XXS(18, 256, 2 + 96),
    IQ1_S(19, 256, 2 + 32 + 16),
    IQ4_NL(20, 32, 2 + 16),
    IQ3_S(21, 256, 2 + 64 + 32 + 8 + 4),
    IQ2_S(22, 256, 2 + 64 + 8 + 8),
    IQ4_XS(23, 256, 2 + 2 + 4 + 128),
    I8(24, 1, 1),
    I16(25, 1, 2),
    I32(26, 1, 4),
    I64(27, 1, 8),
    F64(28, 1, 8),
    IQ1_M(29, 256, 32 + 16 + 8),
    BF16(30, 1, 2),
    TQ1_0(34, 256, 48 + 4 + 2),
    TQ2_0(35, 256, 64 + 2),
    MXFP4(39, 32, 1 + 16);

    private static final GgmlType[] BY_ID = new GgmlType[64];
    static {
        for (GgmlType t : values()) BY_ID[t.id] = t;
    }

    private final int id;
    private final int blockSize;
    private final int typeSize;

    GgmlType(int id, int blockSize, int typeSize) {
        this.id = id;
        this.blockSize = blockSize;
        this.typeSize = typeSize;
    }

    /** The id stored in GGUF tensor infos. */
    public int id() { return id; }

    /** Elements per block (1 for plain types). */
    public int blockSize() { return blockSize; }

    /** Bytes per block. */
    public int typeSize() { return typeSize; }

    public boolean isQuantized() { return blockSize > 1; }

    /** Bytes taken by {@code elements} elements; throws if not a whole number of blocks. */
    public long bytesFor(long elements) {
        if (elements < 0 || elements % blockSize != 0) {
            throw new IllegalArgumentException(this + ": " + elements + " elements is not a multiple of the block size " + blockSize);
        }
        return Math.multiplyExact(elements / blockSize, (long) typeSize);
    }

    /** Bits per weight, including scales (e.g. 4.5 for Q4_0). */
    public double bitsPerWeight() { return typeSize * 8.0 / blockSize; }

    public static Optional<GgmlType> fromId(int id) {
        return id >= 0 && id < BY_ID.length ? Optional.ofNullable(BY_ID[id]) : Optional.empty();
    }

    /** Looks a type up by its ggml name, case-insensitively ("q4_k", "Q4_K", "bf16"). */
    public static Optional<GgmlType> fromName(String name) {
        for (GgmlType t : values()) if (t.name().equalsIgnoreCase(name)) return Optional.of(t);
        return Optional.empty();
    }
}
