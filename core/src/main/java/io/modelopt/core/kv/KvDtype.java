package io.modelopt.core.kv;

/**
 * Element type of cached keys and values, with the scales a quantized type needs
 * ({@link #defaultScales()}). F16 is llama.cpp's default ({@code -ctk/-ctv f16}).
 *
 * <ul>
 *   <li>{@link #INT8}: symmetric, one F32 scale per token and KV head
 *       ({@link KvScaleLayout#PER_TOKEN_HEAD}, absmax/127). Chosen over one scale per block and
 *       head by measured quality: see docs/KVCACHE.md (a block's scale is set by its largest token
 *       and crushes the others; per token costs 4 bytes per head-entry, 68 bytes instead of 64
 *       at head size 64, still 0.53× F16).</li>
 *   <li>{@link #FP8_E4M3}: OCP E4M3FN bytes (max 448, no infinities), one F32 scale per layer for
 *       K and one for V ({@link KvScaleLayout#PER_LAYER}, 1.0 unless calibrated: vLLM's
 *       {@code fp8} cache); per KV head ({@link KvScaleLayout#PER_LAYER_HEAD}) as an option.</li>
 * </ul>
 */
public enum KvDtype {
    F32(4, KvScaleLayout.NONE),
    F16(2, KvScaleLayout.NONE),
    BF16(2, KvScaleLayout.NONE),
    INT8(1, KvScaleLayout.PER_TOKEN_HEAD),
    FP8_E4M3(1, KvScaleLayout.PER_LAYER);

    private final int bytes;
    private final KvScaleLayout defaultScales;

    KvDtype(int bytes, KvScaleLayout defaultScales) {
        this.bytes = bytes;
        this.defaultScales = defaultScales;
    }

    /** Bytes per element (scales not included: see {@link KvLayout#bytesPerToken()}). */
    public int bytes() { return bytes; }

    /** Whether entries carry scales. */
    public boolean quantized() { return defaultScales != KvScaleLayout.NONE; }

    /** The scale layout {@link KvLayout#of} gives this type. */
    public KvScaleLayout defaultScales() { return defaultScales; }

    /** Whether {@code scales} can go with this type (the storage reads and writes only these). */
    public boolean supports(KvScaleLayout scales) {
        return switch (this) {
            case F32, F16, BF16 -> scales == KvScaleLayout.NONE;
            case INT8 -> scales == KvScaleLayout.PER_TOKEN_HEAD;
            case FP8_E4M3 -> scales == KvScaleLayout.PER_LAYER || scales == KvScaleLayout.PER_LAYER_HEAD;
        };
    }

    /** The CLI spelling: f32, f16, bf16, int8, fp8. */
    public String cliName() { return this == FP8_E4M3 ? "fp8" : name().toLowerCase(java.util.Locale.ROOT); }

    /** Parses {@link #cliName()} (or the enum name), case-insensitive; the message lists the names. */
    public static KvDtype parse(String s) {
        for (KvDtype d : values()) if (d.cliName().equalsIgnoreCase(s) || d.name().equalsIgnoreCase(s)) return d;
        throw new IllegalArgumentException("unknown KV cache type '" + s + "': use f32, f16, bf16, int8 or fp8");
    }
}
