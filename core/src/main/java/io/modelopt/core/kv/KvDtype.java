package io.modelopt.core.kv;

import io.modelopt.core.tensor.GgmlType;

/** Element type of cached keys and values. F16 is llama.cpp's default ({@code -ctk/-ctv f16}). */
public enum KvDtype {
    F32(GgmlType.F32),
    F16(GgmlType.F16);

    private final GgmlType ggmlType;

    KvDtype(GgmlType t) { this.ggmlType = t; }

    /** Bytes per element. */
    public int bytes() { return ggmlType.typeSize(); }

    /** The matching ggml type (what the attention kernel reads). */
    public GgmlType ggmlType() { return ggmlType; }
}
