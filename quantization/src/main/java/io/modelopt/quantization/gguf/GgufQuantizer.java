package io.modelopt.quantization.gguf;

import io.modelopt.core.ModelFormatException;
import io.modelopt.core.ProgressListener;
import io.modelopt.core.gguf.GgufFile;
import io.modelopt.core.gguf.GgufValue;
import io.modelopt.core.gguf.GgufWriter;
import io.modelopt.core.tensor.GgmlType;
import io.modelopt.core.tensor.TensorData;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Quantizes an F32/F16/BF16 GGUF model to a llama-quantize preset, writing the file llama-quantize
 * would write: the tensors in its order (layer number, then name), each tensor's type chosen by
 * {@link TensorTypePolicy}, its bytes by the {@link BlockQuantizer} of that type (with the
 * tensor's row of the importance matrix, when one is given and has it), and the metadata of the
 * input followed by {@code general.quantization_version = 2}, {@code general.file_type} and, with
 * an importance matrix, the {@code quantize.imatrix.file/dataset/entries_count/chunks_count} keys.
 *
 * <p>The output is written to a temporary file beside the target and moved into place when
 * complete; tensors are quantized while they are written, a few rows at a time, so memory stays
 * bounded by one chunk. Progress goes to the {@link ProgressListener}: stage
 * {@code "quantize <tensor>"}, done/total in tensors.
 */
public final class GgufQuantizer {
    private static final Logger LOG = LoggerFactory.getLogger(GgufQuantizer.class);
    private static final Pattern LAYER = Pattern.compile("^blk\\.(\\d+)\\.");
    /** Rows converted and quantized at a time (at least one). */
    private static final int CHUNK_VALUES = 1 << 20;
    private static final int QUANTIZATION_VERSION = 2;

    /** One tensor of the output: its name, ggml dims, source type, output type, and whether it got importance weights. */
    public record TensorPlan(String name, long[] dims, GgmlType sourceType, GgmlType type, boolean withImportance) {
        public TensorPlan {
            dims = dims.clone();
        }

        @Override public long[] dims() { return dims.clone(); }

        public boolean quantized() { return sourceType != type; }

        @Override public String toString() {
            return name + " " + Arrays.toString(dims) + " " + sourceType + (quantized() ? " -> " + type : "") + (withImportance ? " (imatrix)" : "");
        }
    }

    private final GgufPreset preset;
    private ImatrixFile imatrix;
    private String imatrixName;
    private ProgressListener listener = ProgressListener.NONE;

    public GgufQuantizer(GgufPreset preset) {
        this.preset = Objects.requireNonNull(preset, "preset");
    }

    /** A quantizer for a preset named as llama-quantize names it ("Q4_K_M", "q8_0", "Q4_K"...). */
    public static GgufQuantizer forPreset(String name) {
        return new GgufQuantizer(GgufPreset.parse(name));
    }

    public GgufPreset preset() { return preset; }

    /** Uses an importance matrix; {@code quantize.imatrix.file} records its path as given. */
    public GgufQuantizer imatrix(ImatrixFile m) {
        return imatrix(m, m.path().toString());
    }

    /** Uses an importance matrix, recording {@code recordedName} as {@code quantize.imatrix.file} (llama-quantize records its argument). */
    public GgufQuantizer imatrix(ImatrixFile m, String recordedName) {
        this.imatrix = Objects.requireNonNull(m, "imatrix");
        this.imatrixName = Objects.requireNonNull(recordedName, "recordedName");
        return this;
    }

    public GgufQuantizer listener(ProgressListener l) {
        this.listener = Objects.requireNonNull(l, "listener");
        return this;
    }

    /** llama.cpp's tensor order ({@code weight_name_comparer}): layer number ({@code blk.N.}, others -1 first), then name. */
    public static final Comparator<String> TENSOR_ORDER = Comparator.<String>comparingInt(GgufQuantizer::layerOf)
            .thenComparing(Comparator.naturalOrder());

    private static int layerOf(String name) {
        Matcher m = LAYER.matcher(name);
        return m.find() ? Integer.parseInt(m.group(1)) : -1;
    }

    /** The model shape the policy needs, from {@code general.architecture} and {@code <arch>.block_count/attention.head_count(_kv)/expert_count}. */
    public static TensorTypePolicy.ModelShape shapeOf(GgufFile in) {
        String arch = in.getString("general.architecture");
        int nLayer = in.getInt(arch + ".block_count");
        int nHead = firstInt(in, arch + ".attention.head_count").orElseThrow(
                () -> new ModelFormatException(in.path(), "missing metadata key '" + arch + ".attention.head_count'"));
        int nHeadKv = firstInt(in, arch + ".attention.head_count_kv").orElse(nHead);
        int nExpert = in.findInt(arch + ".expert_count").orElse(0);
        return new TensorTypePolicy.ModelShape(arch, nLayer, nHead, nHeadKv, nExpert);
    }

    /** A scalar, or the first element of a per-layer array. */
    private static Optional<Integer> firstInt(GgufFile in, String key) {
        Optional<GgufValue> v = in.find(key);
        if (v.isEmpty()) return Optional.empty();
        if (v.get() instanceof GgufValue.Array) {
            int[] a = in.getIntArray(key);
            return a.length == 0 ? Optional.empty() : Optional.of(a[0]);
        }
        return Optional.of(in.getInt(key));
    }

    /** ggml's {@code ggml_n_dims}: trailing dimensions of 1 are not written (at least one stays). */
    static long[] trimDims(long[] dims) {
        int n = dims.length;
        while (n > 1 && dims[n - 1] == 1) n--;
        return Arrays.copyOf(dims, Math.max(1, n));
    }

    /** The type every tensor of {@code in} would get, in output order, without writing anything. */
    public List<TensorPlan> plan(GgufFile in) {
        TensorTypePolicy.ModelShape shape = shapeOf(in);
        List<String> names = new ArrayList<>(in.tensors().keySet());
        names.sort(TENSOR_ORDER);
        int nAttnV = 0;
        boolean hasOutput = false;
        for (String n : names) {
            if (n.contains("attn_v.weight") || n.contains("attn_qkv.weight") || n.contains("attn_kv_b.weight")) nAttnV++;
            else if (n.equals("output.weight")) hasOutput = true;
        }
        TensorTypePolicy policy = new TensorTypePolicy(preset, shape, imatrix != null, hasOutput, nAttnV);
        if (imatrix != null) checkImatrixNames(in);
        List<TensorPlan> plans = new ArrayList<>();
        for (String name : names) {
            TensorData t = in.tensor(name);
            long[] dims = trimDims(t.shape());
            GgmlType target = t.type();
            boolean withImportance = false;
            if (TensorTypePolicy.isQuantizable(name, dims.length)) {
                target = policy.typeFor(name, dims);
            }
            if (target != t.type()) {
                if (t.type() != GgmlType.F32 && t.type() != GgmlType.F16 && t.type() != GgmlType.BF16) {
                    throw new IllegalArgumentException("tensor " + name + " is " + t.type() + ": requantizing from a quantized type is not supported (the input must be F32, F16 or BF16)");
                }
                BlockQuantizer.of(target); // fails here, naming the type, if there is no quantizer for it
                withImportance = importanceFor(name, dims) != null;
                if (preset == GgufPreset.Q2_K_S && target == GgmlType.Q2_K && !withImportance && !name.equals("token_embd.weight")) {
                    throw new IllegalArgumentException("Missing importance matrix for tensor " + name + " in a very low-bit quantization (" + preset + ")");
                }
            }
            plans.add(new TensorPlan(name, dims, t.type(), target, withImportance));
        }
        return plans;
    }

    /**
     * An imatrix entry naming a tensor the model does not have means it was made for another model
     * (llama-quantize ignores such entries; we refuse, since every weight would then be unweighted).
     */
    private void checkImatrixNames(GgufFile in) {
        int missing = 0;
        String first = null;
        for (String name : imatrix.weights().keySet()) {
            if (!in.tensors().containsKey(name)) {
                missing++;
                if (first == null) first = name;
            }
        }
        if (missing > 0) {
            throw new IllegalArgumentException("imatrix " + imatrix.path() + " does not match the model: " + missing + " of " + imatrix.entryCount()
                    + " entries name tensors the model lacks (first: " + first + "); was it collected on another model?");
        }
    }

    /** The imatrix row(s) for a tensor: {@code ne0 * ne2} values; a size mismatch fails except for the token embedding. */
    private float[] importanceFor(String name, long[] dims) {
        if (imatrix == null) return null;
        float[] w = imatrix.weights().get(name);
        if (w == null) {
            LOG.info("imatrix has no weights for {}", name);
            return null;
        }
        long need = dims[0] * (dims.length > 2 ? dims[2] : 1);
        if (w.length != need) {
            if (name.equals("token_embd.weight")) return null;
            throw new IllegalArgumentException("imatrix size " + w.length + " is different from tensor size " + need + " for " + name);
        }
        return w;
    }

    /**
     * Quantizes {@code input} to {@code output} (replacing it) and returns the output's tensor plan.
     *
     * @throws IllegalArgumentException a tensor cannot take the preset (quantized source, no fallback, imatrix mismatch)
     * @throws ModelFormatException the input is not a valid GGUF model
     */
    public List<TensorPlan> quantize(Path input, Path output) {
        try (GgufFile in = GgufFile.open(input)) {
            List<TensorPlan> plans = plan(in);
            GgufWriter w = new GgufWriter().version(3);
            in.metadata().forEach(w::put);
            w.remove("general.quantization_version").putUInt32("general.quantization_version", QUANTIZATION_VERSION);
            w.remove("general.file_type").putUInt32("general.file_type", preset.fileType());
            w.remove("split.no").remove("split.count").remove("split.tensors.count");
            if (imatrix != null) {
                w.remove("quantize.imatrix.file").putString("quantize.imatrix.file", truncate127(imatrixName));
                if (imatrix.dataset().filter(s -> !s.isEmpty()).isPresent()) {
                    w.remove("quantize.imatrix.dataset").putString("quantize.imatrix.dataset", truncate127(imatrix.dataset().get()));
                }
                w.remove("quantize.imatrix.entries_count").putInt32("quantize.imatrix.entries_count", imatrix.entryCount());
                if (imatrix.chunkCount() > 0) {
                    w.remove("quantize.imatrix.chunks_count").putInt32("quantize.imatrix.chunks_count", imatrix.chunkCount());
                }
            }
            AtomicInteger done = new AtomicInteger();
            int total = plans.size();
            for (TensorPlan p : plans) {
                TensorData src = in.tensor(p.name());
                if (!p.quantized()) {
                    w.addTensor(p.name(), p.type(), p.dims(), src.data());
                    continue;
                }
                float[] importance = importanceFor(p.name(), p.dims());
                w.addTensor(p.name(), p.type(), p.dims(), out -> {
                    listener.onProgress("quantize " + p.name(), done.get(), total);
                    writeQuantized(src, p, importance, out);
                    done.incrementAndGet();
                });
            }
            w.write(output);
            listener.onProgress("quantize", total, total);
            LOG.info("quantized {} to {} ({}): {} tensors", input, output, preset, total);
            return plans;
        }
    }

    private static String truncate127(String s) {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        return b.length <= 127 ? s : new String(b, 0, 127, StandardCharsets.UTF_8);
    }

    private static void writeQuantized(TensorData src, TensorPlan p, float[] importance, java.nio.channels.WritableByteChannel out)
            throws java.io.IOException {
        BlockQuantizer q = BlockQuantizer.of(p.type());
        long[] dims = p.dims();
        int nPerRow = Math.toIntExact(dims[0]);
        long rowsPerMatrix = dims.length > 1 ? dims[1] : 1;
        long rows = src.elementCount() / nPerRow;
        int rowBytes = Math.toIntExact(p.type().bytesFor(nPerRow));
        int chunkRows = (int) Math.max(1, Math.min(rows, CHUNK_VALUES / nPerRow));
        float[] x = new float[chunkRows * nPerRow];
        byte[] y = new byte[chunkRows * rowBytes];
        MemorySegment data = src.data();
        for (long r0 = 0; r0 < rows; r0 += chunkRows) {
            int n = (int) Math.min(chunkRows, rows - r0);
            readRows(data, src.type(), r0 * nPerRow, x, n * nPerRow);
            for (int r = 0; r < n; r++) {
                long row = r0 + r;
                float[] qw = null;
                if (importance != null) {
                    int expert = (int) (row / rowsPerMatrix);
                    qw = expert == 0 ? importance : Arrays.copyOfRange(importance, expert * nPerRow, (expert + 1) * nPerRow);
                }
                q.quantizeRow(x, r * nPerRow, nPerRow, qw, y, r * rowBytes);
            }
            ByteBuffer b = ByteBuffer.wrap(y, 0, n * rowBytes);
            while (b.hasRemaining()) out.write(b);
        }
    }

    private static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfShort I16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    /** Elements {@code [first, first+n)} of an F32/F16/BF16 tensor as floats (F16 and BF16 converted exactly). */
    private static void readRows(MemorySegment data, GgmlType type, long first, float[] x, int n) {
        switch (type) {
            case F32 -> MemorySegment.copy(data, F32, first * 4, x, 0, n);
            case F16 -> { for (int i = 0; i < n; i++) x[i] = Float.float16ToFloat(data.get(I16, (first + i) * 2)); }
            case BF16 -> { for (int i = 0; i < n; i++) x[i] = Float.intBitsToFloat((data.get(I16, (first + i) * 2) & 0xFFFF) << 16); }
            default -> throw new IllegalStateException("cannot read " + type + " as floats");
        }
    }
}
