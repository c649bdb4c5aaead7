package io.modelopt.core.model.llama;

import io.modelopt.core.ModelFormatException;
import io.modelopt.core.kernel.WeightMatrix;
import io.modelopt.core.model.ModelConfig;
import io.modelopt.core.model.ModelSource;
import io.modelopt.core.model.WeightBinders;
import io.modelopt.core.tensor.TensorData;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;

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

    /** The linear matrices: each block's q, k, v, o, gate, up, down in that order, then the classifier. */
    public List<WeightMatrix> linearMatrices() {
        List<WeightMatrix> all = new ArrayList<>(7 * layers.length + 1);
        for (Layer l : layers) all.addAll(List.of(l.wq(), l.wk(), l.wv(), l.wo(), l.gate(), l.up(), l.down()));
        all.add(output);
        return all;
    }

    /**
     * These weights with each linear matrix replaced by {@code f} of it, called in the order of
     * {@link #linearMatrices()}; the embedding lookup, norms and biases stay as they are (a backend
     * uses this to put its own layout of the matrices in place, e.g. the CPU's repacked copies).
     */
    public LlamaWeights withLinears(UnaryOperator<WeightMatrix> f) {
        Layer[] ls = new Layer[layers.length];
        for (int i = 0; i < ls.length; i++) {
            Layer l = layers[i];
            WeightMatrix q = f.apply(l.wq()), k = f.apply(l.wk()), v = f.apply(l.wv()), o = f.apply(l.wo());
            WeightMatrix gate = f.apply(l.gate()), up = f.apply(l.up()), down = f.apply(l.down());
            ls[i] = new Layer(l.attnNorm(), q, k, v, l.bq(), l.bk(), l.bv(), o, l.ffnNorm(), gate, up, down);
        }
        return new LlamaWeights(tokenEmbedding, outputNorm, f.apply(output), tied, ls, ropeFreqFactors);
    }

    /** Bytes of the bound tensors as the model file holds them: each matrix once (a tied classifier is the embedding), plus norms and biases. */
    public long tensorBytes() {
        long n = tokenEmbedding.byteSize() + 4L * outputNorm.length + (tied ? 0 : output.byteSize());
        if (ropeFreqFactors != null) n += 4L * ropeFreqFactors.length;
        for (Layer l : layers) {
            for (WeightMatrix m : List.of(l.wq(), l.wk(), l.wv(), l.wo(), l.gate(), l.up(), l.down())) n += m.byteSize();
            n += 4L * (l.attnNorm().length + l.ffnNorm().length);
            if (l.bq() != null) n += 4L * (l.bq().length + l.bk().length + l.bv().length);
        }
        return n;
    }

    /** Bytes of copies held beyond the model file's own ({@link WeightMatrix#residentBytes()} of each linear; 0 when all are read in place). */
    public long repackedBytes() {
        long n = 0;
        for (WeightMatrix m : linearMatrices()) n += m.residentBytes();
        return n;
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
