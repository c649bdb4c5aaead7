package io.modelopt.core.safetensors;

import io.modelopt.core.tensor.GgmlType;
import java.util.Optional;

/**
 * The element types of the safetensors format, spelled as in the header's {@code "dtype"} field.
 *
 * <p>The constants are declared in the order of the reference implementation's {@code Dtype}
 * enum (huggingface/safetensors, {@code safetensors/src/tensor.rs}: "increasing alignment order"),
 * so {@link #compareTo} is the order its serializer sorts by (see
 * {@link SafetensorsWriter.TensorOrder#REFERENCE}). Names are matched case-sensitively, as serde does.
 * Sub-byte types of newer format versions (F4, F6_*) and F8_E8M0 are not supported.
 */
public enum SafetensorsDType {
    BOOL(1, null),
    U8(1, null),
    I8(1, GgmlType.I8),
    F8_E5M2(1, null),
    F8_E4M3(1, null),
    I16(2, GgmlType.I16),
    U16(2, null),
    F16(2, GgmlType.F16),
    BF16(2, GgmlType.BF16),
    I32(4, GgmlType.I32),
    U32(4, null),
    F32(4, GgmlType.F32),
    F64(8, GgmlType.F64),
    I64(8, GgmlType.I64),
    U64(8, null);

    private final int size;
    private final GgmlType ggmlType;

    SafetensorsDType(int size, GgmlType ggmlType) {
        this.size = size;
        this.ggmlType = ggmlType;
    }

    /** Bytes per element. */
    public int size() { return size; }

    /** The ggml type with the same element encoding, if ggml has one (it has no unsigned, bool or fp8 types). */
    public Optional<GgmlType> ggmlType() { return Optional.ofNullable(ggmlType); }

    /** Whether the engine can use tensors of this type as float weights (F32, F16, BF16). */
    public boolean isFloatWeight() { return this == F32 || this == F16 || this == BF16; }

    /** The dtype named exactly {@code name} in a header ("F32", "BF16", ...). */
    public static Optional<SafetensorsDType> fromName(String name) {
        for (SafetensorsDType t : values()) if (t.name().equals(name)) return Optional.of(t);
        return Optional.empty();
    }

    /** The safetensors dtype for a plain (non-quantized) ggml type. */
    public static Optional<SafetensorsDType> fromGgml(GgmlType type) {
        for (SafetensorsDType t : values()) if (t.ggmlType == type) return Optional.of(t);
        return Optional.empty();
    }
}
