package io.modelopt.quantization.gguf;

import io.modelopt.core.tensor.GgmlType;
import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

/**
 * llama-quantize's file types ({@code llama_ftype}): the preset name, the {@code general.file_type}
 * id written to the output and the default tensor type; {@link TensorTypePolicy} then picks the
 * type of each tensor as {@code llama_tensor_get_type} does.
 */
public enum GgufPreset {
    Q4_0(2, GgmlType.Q4_0),
    Q4_1(3, GgmlType.Q4_1),
    Q8_0(7, GgmlType.Q8_0),
    Q5_0(8, GgmlType.Q5_0),
    Q5_1(9, GgmlType.Q5_1),
    Q2_K(10, GgmlType.Q2_K),
    Q3_K_S(11, GgmlType.Q3_K),
    Q3_K_M(12, GgmlType.Q3_K),
    Q3_K_L(13, GgmlType.Q3_K),
    Q4_K_S(14, GgmlType.Q4_K),
    Q4_K_M(15, GgmlType.Q4_K),
    Q5_K_S(16, GgmlType.Q5_K),
    Q5_K_M(17, GgmlType.Q5_K),
    Q6_K(18, GgmlType.Q6_K),
    /** Needs an importance matrix for every tensor but the token embedding. */
    Q2_K_S(21, GgmlType.Q2_K);

    private final int fileType;
    private final GgmlType defaultType;

    GgufPreset(int fileType, GgmlType defaultType) {
        this.fileType = fileType;
        this.defaultType = defaultType;
    }

    /** The {@code llama_ftype} value stored as {@code general.file_type}. */
    public int fileType() { return fileType; }

    /** The type most tensors get. */
    public GgmlType defaultType() { return defaultType; }

    /**
     * The preset called {@code name}, case-insensitively, with llama-quantize's aliases
     * {@code Q3_K} = Q3_K_M, {@code Q4_K} = Q4_K_M, {@code Q5_K} = Q5_K_M.
     *
     * @throws IllegalArgumentException an unknown name, listing the known ones
     */
    public static GgufPreset parse(String name) {
        if (name == null || name.isBlank()) throw new IllegalArgumentException("empty quantization preset name; known: " + known());
        String n = name.trim().toUpperCase(Locale.ROOT);
        switch (n) {
            case "Q3_K" -> { return Q3_K_M; }
            case "Q4_K" -> { return Q4_K_M; }
            case "Q5_K" -> { return Q5_K_M; }
            default -> { }
        }
        for (GgufPreset p : values()) if (p.name().equals(n)) return p;
        throw new IllegalArgumentException("unknown quantization preset '" + name + "'; known: " + known() + " (aliases Q3_K, Q4_K, Q5_K)");
    }

    private static String known() {
        return Arrays.stream(values()).map(Enum::name).collect(Collectors.joining(", "));
    }
}
