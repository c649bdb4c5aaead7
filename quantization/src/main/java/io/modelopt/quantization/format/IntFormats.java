package io.modelopt.quantization.format;

import io.modelopt.core.kernel.DecodedRowKernel;
import io.modelopt.core.kernel.Transcoding;
import io.modelopt.core.kernel.WeightFormat;
import java.util.Collections;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.WeakHashMap;

/**
 * Builds the {@link WeightFormat} of a group-wise integer layout: the arithmetic every layout
 * shares (ours, AutoAWQ's, GPTQ's, compressed-tensors'), given only where the layout keeps its
 * codes, scales and zero points ({@link IntLayout#readRow}).
 *
 * <ul>
 *   <li>Reference decoder: {@code scale · (code − zero)} in float, exactly as {@link IntRow#value}.</li>
 *   <li>Kernels: core's {@link DecodedRowKernel} (decode the row, then dot), the fallback where
 *       the load-time rewrite does not apply.</li>
 *   <li>{@link Transcoding}: rows rewritten at load into Q4_0 blocks (INT2/3/4, F16 scales) or
 *       Q8_0 blocks (INT8), plus per-group offsets for asymmetric schemes and per-row scales for
 *       F32 per-channel scales, so the format runs on the interleaved Q4_0/Q8_0 kernels
 *       ({@link IntTranscodings} argues why the rewrite is exact).</li>
 * </ul>
 */
public final class IntFormats {
    private IntFormats() {}

    /** The layout of each format {@link #create} made; weak keys, so an unregistered format made by a test can go. */
    private static final Map<WeightFormat, IntLayout> LAYOUTS = Collections.synchronizedMap(new WeakHashMap<>());

    /**
     * A format named {@code name} whose main tensor holds {@code blockBytes} bytes per
     * {@code blockSize} weights of a row, and whose rows {@code layout} reads. The format is not
     * registered: a {@code WeightFormatProvider} (or {@code WeightFormats.register}) does that.
     */
    public static WeightFormat create(String name, IntLayout layout, int blockSize, int blockBytes) {
        Objects.requireNonNull(layout, "layout");
        IntScheme scheme = Objects.requireNonNull(layout.scheme(), () -> name + ": the layout has no scheme");
        RowScratch scratch = new RowScratch(scheme);
        WeightFormat f = WeightFormat.builder(name)
                .geometry(blockSize, blockBytes)
                .decoder((w, row, dst, off) -> decode(scratch.read(layout, w, row), dst, off))
                .scalar(DecodedRowKernel.scalar())
                .vector(DecodedRowKernel::vector)
                .transcoding(IntTranscodings.of(layout, scratch))
                .build();
        LAYOUTS.put(f, layout);
        return f;
    }

    /** The layout of a format made by {@link #create}; empty for any other format. */
    public static Optional<IntLayout> layout(WeightFormat f) {
        return Optional.ofNullable(LAYOUTS.get(f));
    }

    /** {@code dst[off + k] = scales[g] · (codes[k] − zeros[g])}, the float arithmetic of {@link IntRow#value}. */
    static void decode(IntRow r, float[] dst, int off) {
        int gs = r.groupSize, groups = r.scales.length;
        int[] codes = r.codes;
        for (int g = 0; g < groups; g++) {
            float scale = r.scales[g];
            int zero = r.zeros[g], k0 = g * gs;
            for (int k = k0; k < k0 + gs; k++) dst[off + k] = scale * (codes[k] - zero);
        }
    }
}
