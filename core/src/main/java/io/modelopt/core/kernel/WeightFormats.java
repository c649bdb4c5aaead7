package io.modelopt.core.kernel;

import io.modelopt.core.quant.BF16;
import io.modelopt.core.quant.F16;
import io.modelopt.core.quant.IQ4_NL;
import io.modelopt.core.quant.Q2_K;
import io.modelopt.core.quant.Q3_K;
import io.modelopt.core.quant.Q5_1;
import io.modelopt.core.quant.Q4_0;
import io.modelopt.core.quant.Q4_1;
import io.modelopt.core.quant.Q4_K;
import io.modelopt.core.quant.Q5_0;
import io.modelopt.core.quant.Q5_K;
import io.modelopt.core.quant.Q6_K;
import io.modelopt.core.quant.Q8_0;
import io.modelopt.core.tensor.GgmlType;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.ServiceLoader;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The table of weight formats the engine can multiply with: one {@link WeightFormat} per format,
 * core's ggml formats listed below (the one place a ggml format is wired in), and whatever
 * {@link WeightFormatProvider}s on the class or module path add. Adding a format is one entry
 * (its decoder, kernels and optional repacked layout) plus its tests; nothing else switches on
 * formats.
 */
public final class WeightFormats {
    private WeightFormats() {}

    private static final Logger LOG = LoggerFactory.getLogger(WeightFormats.class);

    private static final Map<String, WeightFormat> BY_NAME = new LinkedHashMap<>();
    private static final Map<GgmlType, WeightFormat> BY_FILE_TYPE = new EnumMap<>(GgmlType.class);

    /** A ggml type's reference row decoder over the main tensor's bytes. */
    @FunctionalInterface
    private interface Blocks {
        void dequantize(MemorySegment src, long byteOffset, float[] dst, int dstOffset, int n);
    }

    private static WeightFormat.RowDecoder rows(Blocks b) {
        return (w, row, dst, off) -> b.dequantize(w.data(), row * w.rowBytes(), dst, off, w.cols());
    }

    static {
        // ggml's formats: name = type, geometry from the type, reference decode/quantize from core.quant
        add(WeightFormat.builder("F32").fileType(GgmlType.F32)
                .decoder((w, row, dst, off) -> MemorySegment.copy(w.data(), WeightData.FLOAT, row * w.rowBytes(), dst, off, w.cols()))
                .scalar(F32Kernel.Scalar.INSTANCE).vector(() -> F32Kernel.Vectorized.INSTANCE).build());
        add(WeightFormat.builder("F16").fileType(GgmlType.F16).decoder(rows(F16::dequantize)).quantizer(F16::quantizeReference)
                .scalar(F16Kernel.Scalar.INSTANCE).vector(() -> F16Kernel.Vectorized.INSTANCE).repacking(Repackings.F16_REENCODED).build());
        add(WeightFormat.builder("BF16").fileType(GgmlType.BF16).decoder(rows(BF16::dequantize)).quantizer(BF16::quantizeReference)
                .scalar(BF16Kernel.Scalar.INSTANCE).vector(() -> BF16Kernel.Vectorized.INSTANCE).build());
        add(WeightFormat.builder("Q8_0").fileType(GgmlType.Q8_0).decoder(rows(Q8_0::dequantize)).quantizer(Q8_0::quantizeReference)
                .scalar(Q8_0Kernel.Scalar.INSTANCE).vector(() -> Q8_0Kernel.Vectorized.INSTANCE).repacking(Repackings.Q8_0_INTERLEAVED).build());
        add(WeightFormat.builder("Q4_0").fileType(GgmlType.Q4_0).decoder(rows(Q4_0::dequantize)).quantizer(Q4_0::quantizeReference)
                .scalar(Q4_0Kernel.Scalar.INSTANCE).vector(() -> Q4_0Kernel.Vectorized.INSTANCE).repacking(Repackings.Q4_0_INTERLEAVED).build());
        add(WeightFormat.builder("Q4_1").fileType(GgmlType.Q4_1).decoder(rows(Q4_1::dequantize)).quantizer(Q4_1::quantizeReference)
                .scalar(Q4_1Kernel.Scalar.INSTANCE).vector(() -> Q4_1Kernel.Vectorized.INSTANCE).build());
        add(WeightFormat.builder("Q5_0").fileType(GgmlType.Q5_0).decoder(rows(Q5_0::dequantize)).quantizer(Q5_0::quantizeReference)
                .scalar(Q5_0Kernel.Scalar.INSTANCE)
                // below 512 bits the JIT boxes the Q5_0 vector kernel's vectors in some runs (MatMulTest's allocation
                // check at 4 tokens: 3 of 10 runs at 256/128 bits on 2026-12-03, 0.7-1.8 MB per 50 calls; its inner
                // loop over a block's halves exists only below 512 bits): the scalar kernel until that loop is
                // rewritten (Q5_0 is a rare file type)
                .vector(() -> VectorWidth.bits() == 512 ? Q5_0Kernel.Vectorized.INSTANCE : Q5_0Kernel.Scalar.INSTANCE).build());
        add(WeightFormat.builder("Q4_K").fileType(GgmlType.Q4_K).decoder(rows(Q4_K::dequantize)).quantizer(Q4_K::quantizeReference)
                .scalar(Q4_KKernel.Scalar.INSTANCE).vector(() -> Q4_KKernel.Vectorized.INSTANCE).repacking(Repackings.Q4_K_INTERLEAVED).build());
        add(WeightFormat.builder("Q5_K").fileType(GgmlType.Q5_K).decoder(rows(Q5_K::dequantize))
                .scalar(Q5_KKernel.Scalar.INSTANCE).vector(() -> Q5_KKernel.Vectorized.INSTANCE).repacking(Repackings.Q5_K_INTERLEAVED).build());
        add(WeightFormat.builder("Q6_K").fileType(GgmlType.Q6_K).decoder(rows(Q6_K::dequantize)).quantizer(Q6_K::quantizeReference)
                .scalar(Q6_KKernel.Scalar.INSTANCE).vector(() -> Q6_KKernel.Vectorized.INSTANCE).repacking(Repackings.Q6_K_INTERLEAVED).build());
        // formats the GGUF quantizer writes whose kernel is still the generic decode-then-multiply one
        add(WeightFormat.builder("Q5_1").fileType(GgmlType.Q5_1).decoder(rows(Q5_1::dequantize)).quantizer(Q5_1::quantizeReference)
                .scalar(DecodedRowKernel.Scalar.INSTANCE).vector(() -> DecodedRowKernel.Vectorized.INSTANCE).build());
        add(WeightFormat.builder("Q2_K").fileType(GgmlType.Q2_K).decoder(rows(Q2_K::dequantize))
                .scalar(DecodedRowKernel.Scalar.INSTANCE).vector(() -> DecodedRowKernel.Vectorized.INSTANCE).build());
        add(WeightFormat.builder("Q3_K").fileType(GgmlType.Q3_K).decoder(rows(Q3_K::dequantize))
                .scalar(DecodedRowKernel.Scalar.INSTANCE).vector(() -> DecodedRowKernel.Vectorized.INSTANCE).build());
        add(WeightFormat.builder("IQ4_NL").fileType(GgmlType.IQ4_NL).decoder(rows(IQ4_NL::dequantize))
                .scalar(DecodedRowKernel.Scalar.INSTANCE).vector(() -> DecodedRowKernel.Vectorized.INSTANCE).build());
        loadProviders();
    }

    private static void loadProviders() {
        for (WeightFormatProvider p : ServiceLoader.load(WeightFormatProvider.class, WeightFormats.class.getClassLoader())) {
            for (WeightFormat f : p.formats()) {
                register(f);
                LOG.debug("weight format {} from {}", f.name(), p.getClass().getName());
            }
        }
    }

    private static void add(WeightFormat f) {
        if (BY_NAME.putIfAbsent(f.name(), f) != null) {
            throw new IllegalStateException("weight format " + f.name() + " is registered twice");
        }
        if (f.fileType() != null && BY_FILE_TYPE.putIfAbsent(f.fileType(), f) != null) {
            BY_NAME.remove(f.name());
            throw new IllegalStateException("weight format " + f.name() + ": ggml type " + f.fileType() + " already belongs to " + BY_FILE_TYPE.get(f.fileType()));
        }
    }

    /**
     * Adds a format at run time (providers are found by {@link ServiceLoader} without this call).
     *
     * @throws IllegalStateException if its name, or its ggml type, is taken
     */
    public static synchronized void register(WeightFormat f) {
        add(f);
    }

    /** The format a tensor of ggml type {@code t} binds to, or empty when no kernel multiplies that type. */
    public static synchronized Optional<WeightFormat> forFileType(GgmlType t) {
        return Optional.ofNullable(BY_FILE_TYPE.get(t));
    }

    /** The format of that name. */
    public static synchronized Optional<WeightFormat> named(String name) {
        return Optional.ofNullable(BY_NAME.get(name));
    }

    /** Every registered format, core's first. */
    public static synchronized Collection<WeightFormat> all() {
        return Collections.unmodifiableList(new ArrayList<>(BY_NAME.values()));
    }

    /** The ggml types that bind to a format (what {@link WeightMatrix#of} accepts). */
    public static synchronized List<GgmlType> fileTypes() {
        return List.copyOf(BY_FILE_TYPE.keySet());
    }
}
