package io.modelopt.core.gguf;

import java.util.Optional;

/**
 * The metadata value types of GGUF ({@code enum gguf_type} in ggml's gguf.h), with their ids and
 * fixed sizes in bytes. {@link #STRING} (uint64 length + UTF-8 bytes) and {@link #ARRAY}
 * (int32 element type + uint64 count + elements) have no fixed size.
 */
public enum GgufType {
    UINT8(0, 1),
    INT8(1, 1),
    UINT16(2, 2),
    INT16(3, 2),
    UINT32(4, 4),
    INT32(5, 4),
    FLOAT32(6, 4),
    BOOL(7, 1),
    STRING(8, -1),
    ARRAY(9, -1),
    UINT64(10, 8),
    INT64(11, 8),
    FLOAT64(12, 8);

    private static final GgufType[] BY_ID = values();

    private final int id;
    private final int size;

    GgufType(int id, int size) {
        this.id = id;
        this.size = size;
    }

    /** The id written in the file. */
    public int id() { return id; }

    /** Bytes of one value, or -1 for {@link #STRING} and {@link #ARRAY}. */
    public int size() { return size; }

    /**
     * The fewest bytes one value of this type can take in a file: a string is at least its 8-byte
     * length, an array at least its 4-byte type and 8-byte count. Used to bound element counts by
     * the bytes left in the file before anything is allocated.
     */
    public int minEncodedSize() {
        return switch (this) {
            case STRING -> 8;
            case ARRAY -> 12;
            default -> size;
        };
    }

    public boolean isInteger() {
        return switch (this) {
            case UINT8, INT8, UINT16, INT16, UINT32, INT32, UINT64, INT64 -> true;
            default -> false;
        };
    }

    public boolean isUnsigned() {
        return this == UINT8 || this == UINT16 || this == UINT32 || this == UINT64;
    }

    public static Optional<GgufType> fromId(int id) {
        return id >= 0 && id < BY_ID.length ? Optional.of(BY_ID[id]) : Optional.empty();
    }
}
