package io.modelopt.quantization.model;

import io.modelopt.core.ProgressListener;
import io.modelopt.core.QuantizationSpec;
import io.modelopt.core.gguf.GgufModelSource;
import io.modelopt.core.gguf.GgufValue;
import io.modelopt.core.model.ModelSource;
import io.modelopt.core.spi.Quantizer;
import io.modelopt.core.tensor.GgmlType;
import io.modelopt.core.tensor.TensorData;
import io.modelopt.core.tokenizer.Tokenizer;
import io.modelopt.quantization.format.IntRow;
import io.modelopt.quantization.format.IntScheme;
import io.modelopt.quantization.format.PackedIntBinder;
import io.modelopt.quantization.format.PackedIntTensors;
import io.modelopt.quantization.gguf.BlockQuantizer;
import io.modelopt.quantization.policy.LayerPolicy;
import io.modelopt.quantization.policy.QuantizationPlan;
import io.modelopt.quantization.policy.TargetFormat;
import io.modelopt.quantization.rtn.RtnQuantizer;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Quantizes a float model into memory without calibration: method {@code rtn} (round to nearest
 * into our INT formats, optionally with a clip search) and the llama.cpp types and presets
 * ({@code q8_0}, {@code q4_k_m}...; each tensor through the same {@link BlockQuantizer} that
 * {@code GgufQuantizer} uses, so the tensors are llama-quantize's). The {@link LayerPolicy} picks
 * each tensor's target first, so a bad rule fails before any work.
 *
 * <p>Streams tensor by tensor, a row at a time: rows are decoded to floats, quantized, and written
 * into the result's arena; the input tensor's pages are then released
 * ({@link MemorySegment#unload()} of a mapped input), so resident memory grows with the output,
 * not the input. Tensors the plan keeps (embeddings, norms, lm_head) are <b>copied</b> into the
 * arena rather than viewed in place: the result must outlive its input
 * ({@code ModelOptimizer.build()} closes the input after quantizing, and {@code --force} may
 * replace the input file), and their bytes count in the output anyway.
 *
 * <p>Progress: stage {@code "quantize i/n <tensor>"}, done/total in input bytes.
 */
public final class RtnModelQuantizer implements Quantizer {
    private static final Logger LOG = LoggerFactory.getLogger(RtnModelQuantizer.class);
    private static final long ALIGNMENT = 64;

    @Override public boolean supports(QuantizationSpec spec) {
        return spec.method().equals("rtn") || spec.isGguf();
    }

    @Override public String plan(ModelSource source, QuantizationSpec spec) {
        return LayerPolicy.plan(source, spec).toString();
    }

    @Override public QuantizedModelSource quantize(ModelSource source, QuantizationSpec spec, ProgressListener progress) {
        if (!supports(spec)) throw new IllegalArgumentException("RtnModelQuantizer does not implement method '" + spec.method() + "' (it does rtn and the GGUF types)");
        return assemble(source, spec, LayerPolicy.plan(source, spec), progress, Arena.ofShared(), Map.of(), Map.of(), Map.of());
    }

    /**
     * Builds the in-memory model of {@code plan}: tensors in {@code precomputed} (a calibrated
     * method's INT weights, by canonical name, allocated in {@code arena}) are taken as they are,
     * {@code replacedFloats} (row-major F32 values of kept float tensors a method changed, such as
     * AWQ's norms) are written in the tensor's own type, everything else is quantized as
     * {@link #quantize} does. The result owns {@code arena}; it is closed on failure.
     */
    public static QuantizedModelSource assemble(ModelSource source, QuantizationSpec spec, QuantizationPlan plan, ProgressListener progress,
                                                Arena arena, Map<String, PackedIntTensors> precomputed, Map<String, float[]> replacedFloats,
                                                Map<String, Object> extraMetadata) {
        ProgressListener listener = progress == null ? ProgressListener.NONE : progress;
        Tokenizer tokenizer = null;
        RuntimeException tokenizerError = null;
        try {
            tokenizer = source.tokenizer(); // built now: the input may be closed once this returns
        } catch (RuntimeException e) {
            tokenizerError = e;
        }
        Map<String, TensorData> in = source.tensors();
        long total = 0;
        for (TensorData t : in.values()) total += t.byteSize();
        Map<String, TensorData> out = new LinkedHashMap<>();
        Map<String, Object> metadata = new LinkedHashMap<>(source.metadata());
        metadata.putAll(extraMetadata);
        Map<String, String> fileNames = new LinkedHashMap<>();
        long t0 = System.nanoTime();
        try {
            long done = 0;
            int i = 0, n = plan.entries().size();
            float[] row = new float[0];
            for (QuantizationPlan.Entry e : plan.entries()) {
                TensorData src = in.get(e.name());
                i++;
                listener.onProgress(String.format(Locale.ROOT, "quantize %d/%d %s", i, n, e.name()), done, total);
                if (row.length < src.rowLength()) row = new float[(int) src.rowLength()];
                switch (e.target()) {
                    case TargetFormat.Keep k when replacedFloats.containsKey(e.name()) -> put(out, replaced(src, replacedFloats.get(e.name()), arena));
                    case TargetFormat.Keep k -> put(out, copy(src, arena));
                    case TargetFormat.Ggml g when !g.type().isQuantized() -> put(out, convert(src, g.type(), row, arena));
                    case TargetFormat.Ggml g -> put(out, blocks(src, g.type(), row, arena));
                    case TargetFormat.Int it -> {
                        PackedIntTensors pre = precomputed.get(e.name());
                        if (pre != null && !pre.scheme().equals(it.scheme())) {
                            throw new IllegalStateException(e.name() + " was quantized as " + pre.scheme() + ", the plan says " + it.scheme());
                        }
                        for (TensorData t : pre != null ? pre.tensors() : packed(src, it.scheme(), spec.clipSearch(), row, arena)) put(out, t);
                        metadata.put(PackedIntBinder.metadataKey(e.name()), it.scheme().formatName());
                    }
                }
                fileNames.put(e.name(), source.fileTensorName(e.name()));
                if (src.data().isMapped()) src.data().unload();
                done += src.byteSize();
                LOG.debug("{} {} -> {} ({})", e.name(), src.type(), e.target().name(), e.reason());
            }
            listener.onProgress("quantize", total, total);
            long bytes = 0;
            for (TensorData t : out.values()) bytes += t.byteSize();
            String summary = String.format(Locale.ROOT, "%s; %.3f bits/weight whole model, %.3f block linears", spec,
                    plan.bitsPerWeight(), plan.blockLinearBitsPerWeight());
            metadata.put("modelopt.quantization", summary);
            LOG.info("quantized {} in memory ({}): {} tensors, {} -> {} bytes in {} s", source.path(), summary, n, total, bytes,
                    String.format(Locale.ROOT, "%.1f", (System.nanoTime() - t0) / 1e9));
            Map<String, GgufValue> gguf = source instanceof GgufModelSource g ? new LinkedHashMap<>(g.gguf().metadata())
                    : source instanceof QuantizedModelSource q ? q.ggufMetadata() : null;
            String inputFormat = source instanceof QuantizedModelSource q ? q.inputFormat() : source.format();
            return new QuantizedModelSource(source.path(), inputFormat, source.config(), tokenizer, tokenizerError, out, metadata, fileNames,
                    gguf, spec, plan, arena);
        } catch (RuntimeException | Error e) {
            arena.close();
            throw e;
        }
    }

    private static void put(Map<String, TensorData> out, TensorData t) {
        if (out.putIfAbsent(t.name(), t) != null) throw new IllegalArgumentException("tensor " + t.name() + " would be written twice (a part name collides with an input tensor)");
    }

    private static TensorData copy(TensorData src, Arena arena) {
        MemorySegment d = arena.allocate(src.byteSize(), ALIGNMENT);
        d.copyFrom(src.data());
        return new TensorData(src.name(), src.type(), src.shape(), d);
    }

    private static TensorData replaced(TensorData src, float[] values, Arena arena) {
        if (values.length != src.elementCount()) throw new IllegalArgumentException(src.name() + ": " + values.length + " replacement values for " + src.elementCount() + " elements");
        if (src.type().isQuantized()) throw new IllegalArgumentException(src.name() + " is " + src.type() + ": only float tensors can be replaced");
        int cols = (int) src.rowLength();
        MemorySegment d = arena.allocate(src.type().bytesFor(src.elementCount()), ALIGNMENT);
        float[] row = new float[cols];
        for (long r = 0, rows = src.rows(); r < rows; r++) {
            System.arraycopy(values, (int) (r * cols), row, 0, cols);
            FloatRows.write(d, src.type(), r, row, cols);
        }
        return new TensorData(src.name(), src.type(), src.shape(), d);
    }

    private static TensorData convert(TensorData src, GgmlType type, float[] row, Arena arena) {
        int cols = (int) src.rowLength();
        MemorySegment d = arena.allocate(type.bytesFor(src.elementCount()), ALIGNMENT);
        for (long r = 0, rows = src.rows(); r < rows; r++) {
            FloatRows.read(src, r, row);
            FloatRows.write(d, type, r, row, cols);
        }
        return new TensorData(src.name(), type, src.shape(), d);
    }

    private static TensorData blocks(TensorData src, GgmlType type, float[] row, Arena arena) {
        BlockQuantizer q = BlockQuantizer.of(type);
        int cols = (int) src.rowLength();
        int rowBytes = (int) type.bytesFor(cols);
        byte[] y = new byte[rowBytes];
        MemorySegment d = arena.allocate(type.bytesFor(src.elementCount()), ALIGNMENT);
        MemorySegment ys = MemorySegment.ofArray(y);
        for (long r = 0, rows = src.rows(); r < rows; r++) {
            FloatRows.read(src, r, row);
            q.quantizeRow(row, 0, cols, null, y, 0);
            MemorySegment.copy(ys, 0, d, r * rowBytes, rowBytes);
        }
        return new TensorData(src.name(), type, src.shape(), d);
    }

    private static Iterable<TensorData> packed(TensorData src, IntScheme s, boolean clipSearch, float[] row, Arena arena) {
        int cols = (int) src.rowLength(), rows = Math.toIntExact(src.rows());
        PackedIntTensors t = PackedIntTensors.allocate(src.name(), s, rows, cols, arena);
        IntRow r = new IntRow(s, cols);
        for (int i = 0; i < rows; i++) {
            FloatRows.read(src, i, row);
            try {
                RtnQuantizer.quantizeRow(row, 0, cols, s, clipSearch, r);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("tensor " + src.name() + " row " + i + ": " + e.getMessage(), e);
            }
            t.writeRow(i, r);
        }
        return t.tensors();
    }
}
