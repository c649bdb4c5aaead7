package io.modelopt.quantization.model;

import io.modelopt.core.ProgressListener;
import io.modelopt.core.gguf.GgufModelSource;
import io.modelopt.core.gguf.GgufValue;
import io.modelopt.core.gguf.GgufWriter;
import io.modelopt.core.model.ModelSource;
import io.modelopt.core.spi.ModelExporter;
import io.modelopt.core.tensor.TensorData;
import io.modelopt.quantization.format.PackedIntBinder;
import io.modelopt.quantization.gguf.GgufPreset;
import io.modelopt.quantization.gguf.GgufQuantizer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Writes a model as GGUF: the input GGUF's metadata (vocabulary included) with
 * {@code general.quantization_version = 2} and, for a llama.cpp preset, its
 * {@code general.file_type}; the tensors in llama-quantize's order (layer, then name). GGUF holds
 * ggml types only: a model with our INT weights is refused, naming the formats that hold them.
 * It needs a model read from a GGUF file (an HF directory has no GGUF vocabulary to copy).
 */
public final class GgufModelExporter implements ModelExporter {
    private static final int QUANTIZATION_VERSION = 2;

    @Override public String format() { return "gguf"; }

    @Override public void export(ModelSource quantized, Path out, ProgressListener progress) {
        ProgressListener listener = progress == null ? ProgressListener.NONE : progress;
        Map<String, GgufValue> metadata = quantized instanceof QuantizedModelSource q ? q.ggufMetadata()
                : quantized instanceof GgufModelSource g ? g.gguf().metadata() : null;
        if (metadata == null) {
            throw new IllegalArgumentException("GGUF export needs a model read from a GGUF file (its metadata and vocabulary are copied); "
                    + quantized.path() + " is " + (quantized instanceof QuantizedModelSource q ? q.inputFormat() : quantized.format())
                    + ": export it as compressed-tensors, awq or gptq, or convert it to GGUF first");
        }
        Map<String, Object> plain = quantized.metadata();
        for (String name : quantized.tensors().keySet()) {
            Object f = plain.get(PackedIntBinder.metadataKey(name));
            if (f != null) {
                throw new IllegalArgumentException("GGUF cannot hold tensor " + name + " stored as " + f + " (ggml has no such type): export it as "
                        + "compressed-tensors, awq or gptq (as their layouts allow), or quantize to a ggml type (q8_0, q4_0, q4_k_m ...) for GGUF");
            }
        }
        GgufWriter w = new GgufWriter().version(3);
        metadata.forEach(w::put);
        w.remove("split.no").remove("split.count").remove("split.tensors.count");
        boolean anyQuantized = quantized.tensors().values().stream().anyMatch(t -> t.type().isQuantized());
        if (anyQuantized) w.remove("general.quantization_version").putUInt32("general.quantization_version", QUANTIZATION_VERSION);
        if (quantized instanceof QuantizedModelSource q && q.spec().isGguf()) {
            w.remove("general.file_type").putUInt32("general.file_type", GgufPreset.parse(q.spec().method()).fileType());
        }
        List<String> names = new ArrayList<>(quantized.tensors().keySet());
        names.sort(GgufQuantizer.TENSOR_ORDER);
        long total = 0;
        for (TensorData t : quantized.tensors().values()) total += t.byteSize();
        AtomicLong done = new AtomicLong();
        long all = total;
        for (String name : names) {
            TensorData t = quantized.tensors().get(name);
            w.addTensor(name, t.type(), trim(t.shape()), ch -> {
                listener.onProgress(String.format(Locale.ROOT, "export gguf %s", name), done.get(), all);
                var b = t.data().asByteBuffer();
                while (b.hasRemaining()) ch.write(b);
                done.addAndGet(t.byteSize());
            });
        }
        w.write(out);
        listener.onProgress("export gguf", total, total);
    }

    /** ggml's {@code ggml_n_dims}: trailing dimensions of 1 are not written. */
    private static long[] trim(long[] dims) {
        int n = dims.length;
        while (n > 1 && dims[n - 1] == 1) n--;
        return Arrays.copyOf(dims, n);
    }
}
