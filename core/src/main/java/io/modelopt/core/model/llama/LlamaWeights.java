package io.modelopt.core.model.llama;

import io.modelopt.core.ModelFormatException;
import io.modelopt.core.kernel.ComputePool;
import io.modelopt.core.kernel.HugePages;
import io.modelopt.core.kernel.WeightMatrix;
import io.modelopt.core.model.ModelConfig;
import io.modelopt.core.model.ModelSource;
import io.modelopt.core.model.WeightBinders;
import io.modelopt.core.tensor.GgmlType;
import io.modelopt.core.tensor.TensorData;
import java.lang.foreign.Arena;
import java.lang.foreign.SegmentAllocator;
import java.util.Arrays;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The tensors of a Llama-family model (Llama 2/3, Mistral, Qwen2), bound by their canonical
 * GGUF names and checked against the config. Matrices stay in their file format (mapped, not
 * copied) as {@link WeightMatrix}es; the small 1-D tensors (norms, biases, RoPE factors) are
 * copied to float arrays once.
 *
 * <p>Shapes are ggml order, ne0 = input features: {@code attn_q} is {@code {hidden, heads·headDim}},
 * {@code ffn_down} is {@code {ffn, hidden}}, {@code token_embd} is {@code {hidden, vocab}}.
 * A missing {@code output.weight} means tied embeddings: the classifier is {@code token_embd}.
 */
public final class LlamaWeights {
    private static final Logger LOG = LoggerFactory.getLogger(LlamaWeights.class);

    /** One transformer block. The biases are null unless the model has them (Qwen2). */
    public record Layer(float[] attnNorm, WeightMatrix wq, WeightMatrix wk, WeightMatrix wv,
                        float[] bq, float[] bk, float[] bv, WeightMatrix wo,
                        float[] ffnNorm, WeightMatrix gate, WeightMatrix up, WeightMatrix down) {}

    private final WeightMatrix tokenEmbedding;   // (vocab, hidden)
    private final float[] outputNorm;            // (hidden)
    private final WeightMatrix output;           // (vocab, hidden); token_embd when tied
    private final boolean tied;
    private final Layer[] layers;
    private final float[] ropeFreqFactors;       // (headDim/2) or null

    private LlamaWeights(WeightMatrix tokenEmbedding, float[] outputNorm, WeightMatrix output, boolean tied, Layer[] layers, float[] ropeFreqFactors) {
        this.tokenEmbedding = tokenEmbedding;
        this.outputNorm = outputNorm;
        this.output = output;
        this.tied = tied;
        this.layers = layers;
        this.ropeFreqFactors = ropeFreqFactors;
    }

    public WeightMatrix tokenEmbedding() { return tokenEmbedding; }
    public float[] outputNorm() { return outputNorm; }
    public WeightMatrix output() { return output; }
    /** Whether the classifier shares the embedding matrix (no {@code output.weight} in the file). */
    public boolean tiedOutput() { return tied; }
    public Layer layer(int i) { return layers[i]; }
    public int numLayers() { return layers.length; }
    /** GGUF {@code rope_freqs.weight} (Llama 3.1 frequency divisors), or null. */
    public float[] ropeFreqFactors() { return ropeFreqFactors == null ? null : ropeFreqFactors.clone(); }

    /** Whether any matrix would be repacked by {@link #repacked}. */
    public boolean canRepack() {
        if (output.canRepack()) return true;
        for (Layer l : layers) {
            for (WeightMatrix m : matrices(l)) if (m.canRepack()) return true;
        }
        return false;
    }

    /**
     * These weights with each matrix that has a faster load-time layout repacked into
     * {@code arena} ({@link WeightMatrix#repacked}), the copying split over {@code pool}'s threads
     * (null: the calling thread); the embedding lookup keeps reading in place.
     */
    public LlamaWeights repacked(Arena arena, ComputePool pool) {
        // one region for all copies: huge pages round up once per model, not once per matrix
        long total = slot(output);
        for (Layer l : layers) {
            for (WeightMatrix m : matrices(l)) total += slot(m);
        }
        if (total == 0) return this;
        SegmentAllocator region = SegmentAllocator.slicingAllocator(HugePages.allocate(arena, total));
        Layer[] ls = new Layer[layers.length];
        for (int i = 0; i < ls.length; i++) {
            Layer l = layers[i];
            ls[i] = new Layer(l.attnNorm(), repack(l.wq(), region, pool), repack(l.wk(), region, pool), repack(l.wv(), region, pool), l.bq(), l.bk(), l.bv(),
                    repack(l.wo(), region, pool), l.ffnNorm(), repack(l.gate(), region, pool), repack(l.up(), region, pool), repack(l.down(), region, pool));
        }
        return new LlamaWeights(tokenEmbedding, outputNorm, repack(output, region, pool), tied, ls, ropeFreqFactors);
    }

    /** Room for one matrix's copy in the shared region (its bytes plus the most alignment padding can take). */
    private static long slot(WeightMatrix m) {
        long n = m.repackBytes();
        return n == 0 ? 0 : n + WeightMatrix.REPACK_ALIGNMENT;
    }

    /** One matrix repacked, its copied file pages released at once (so that load never holds both for the whole model). */
    private static WeightMatrix repack(WeightMatrix m, SegmentAllocator region, ComputePool pool) {
        WeightMatrix r = m.repacked(region, pool);
        if (m.canRepack() && !r.isRepacked()) {
            LOG.warn("{} holds a {} the re-encoded half layout cannot represent (|value| >= 128, infinite or NaN): read in place, decode is slower",
                    m, m.type() == GgmlType.F16 ? "weight" : "block scale");
        }
        r.unloadCopiedSource();
        return r;
    }

    /** Bytes of repacked copies held beyond the model file's own (0 when read in place). */
    public long repackedBytes() {
        long n = output.residentBytes();
        for (Layer l : layers) {
            for (WeightMatrix m : matrices(l)) n += m.residentBytes();
        }
        return n;
    }

    private static WeightMatrix[] matrices(Layer l) {
        return new WeightMatrix[]{l.wq(), l.wk(), l.wv(), l.wo(), l.gate(), l.up(), l.down()};
    }

    /** Binds and checks every tensor the config calls for. */
    public static LlamaWeights bind(ModelSource source) {
        return new Binder(source).bind();
    }

    private static final class Binder {
        private final ModelSource source;
        private final ModelConfig c;
        private final Map<String, TensorData> tensors;

        Binder(ModelSource source) {
            this.source = source;
            this.c = source.config();
            this.tensors = source.tensors();
        }

        LlamaWeights bind() {
            int h = c.hiddenSize();
            WeightMatrix embd = matrix("token_embd.weight", h, c.vocabSize());
            float[] outNorm = vector("output_norm.weight", h);
            boolean tied = !tensors.containsKey("output.weight");
            WeightMatrix out = tied ? embd : matrix("output.weight", h, c.vocabSize());
            Layer[] layers = new Layer[c.numLayers()];
            for (int i = 0; i < layers.length; i++) layers[i] = layer(i);
            float[] freqs = tensors.containsKey("rope_freqs.weight") ? vector("rope_freqs.weight", c.headDim() / 2) : null;
            return new LlamaWeights(embd, outNorm, out, tied, layers, freqs);
        }

        private Layer layer(int i) {
            String p = "blk." + i + ".";
            int h = c.hiddenSize(), q = c.qDim(), kv = c.kvDim(), f = c.intermediateSize();
            boolean bias = c.attentionBias() || tensors.containsKey(p + "attn_q.bias");
            return new Layer(
                    vector(p + "attn_norm.weight", h),
                    matrix(p + "attn_q.weight", h, q),
                    matrix(p + "attn_k.weight", h, kv),
                    matrix(p + "attn_v.weight", h, kv),
                    bias ? vector(p + "attn_q.bias", q) : null,
                    bias ? vector(p + "attn_k.bias", kv) : null,
                    bias ? vector(p + "attn_v.bias", kv) : null,
                    matrix(p + "attn_output.weight", q, h),
                    vector(p + "ffn_norm.weight", h),
                    matrix(p + "ffn_gate.weight", h, f),
                    matrix(p + "ffn_up.weight", h, f),
                    matrix(p + "ffn_down.weight", f, h));
        }

        private TensorData tensor(String name, long... shape) {
            TensorData t = tensors.get(name);
            if (t == null) {
                throw new ModelFormatException(source.path(), "missing tensor " + describe(name) + " (expected shape "
                        + Arrays.toString(shape) + " for " + c.architecture() + ")");
            }
            if (!Arrays.equals(trimmed(t.shape()), trimmed(shape))) {
                throw new ModelFormatException(source.path(), "tensor " + describe(name) + " has shape " + Arrays.toString(t.shape())
                        + " (ggml order), expected " + Arrays.toString(shape) + " from the config " + c);
            }
            return t;
        }

        /** A linear weight: a registered binder's ({@link WeightBinders}) if one recognizes it, else the tensor of that name in its type's format. */
        private WeightMatrix matrix(String name, int in, int out) {
            WeightMatrix bound = WeightBinders.bind(source, name);
            if (bound != null) {
                if (bound.cols() != in || bound.rows() != out) {
                    throw new ModelFormatException(source.path(), "weight " + describe(name) + " bound as " + bound + ", expected " + out + " rows of "
                            + in + " columns from the config " + c);
                }
                return bound;
            }
            return WeightMatrix.of(tensor(name, in, out));
        }

        private float[] vector(String name, int n) {
            TensorData t = tensor(name, n);
            float[] v = new float[n];
            try {
                WeightMatrix.of(t).dequantizeRow(0, v, 0);
            } catch (UnsupportedOperationException e) {
                throw new ModelFormatException(source.path(), "tensor " + describe(name) + " is " + t.type() + "; norms and biases must be F32/F16/BF16", e);
            }
            return v;
        }

        private String describe(String name) {
            String file = source.fileTensorName(name);
            return file == null || file.equals(name) ? "'" + name + "'" : "'" + name + "' ('" + file + "' in the file)";
        }

        /** Drops trailing 1s (ggml pads shapes with them: {n, 1} is a vector). */
        private static long[] trimmed(long[] s) {
            int n = s.length;
            while (n > 1 && s[n - 1] == 1) n--;
            return Arrays.copyOf(s, n);
        }
    }
}
