package io.modelopt.core.model.llama;

import io.modelopt.core.model.ModelConfig;
import io.modelopt.core.model.ModelSource;
import io.modelopt.core.model.RopeConvention;
import io.modelopt.core.tensor.GgmlType;
import io.modelopt.core.tensor.TensorData;
import io.modelopt.core.tokenizer.Tokenizer;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Random;

/**
 * A tiny random Llama held in memory as an F32 {@link ModelSource}, plus an independent float64
 * forward pass over the same weights (HF layout, {@code rotate_half}, full recompute), the
 * reference the engine's forward is checked against. With {@link RopeConvention#ADJACENT_PAIRS}
 * the Q/K rows (and biases) are stored permuted exactly as llama.cpp's converter permutes them,
 * so the engine must give the same logits either way.
 */
public final class TinyLlama implements ModelSource {
    private final ModelConfig config;
    private final Arena arena = Arena.ofShared();
    private final Map<String, TensorData> tensors = new LinkedHashMap<>();
    /** HF-layout weights, [out][in], exactly the float values stored. */
    private final Map<String, double[][]> hf = new LinkedHashMap<>();
    private final Map<String, double[]> vectors = new LinkedHashMap<>();

    public TinyLlama(ModelConfig c, long seed) {
        this.config = c;
        Random r = new Random(seed);
        int h = c.hiddenSize();
        matrix("token_embd.weight", c.vocabSize(), h, 1.0, r, false, 0);
        vector("output_norm.weight", h, r, 1.0, 0.2, false, 0);
        if (!c.tieWordEmbeddings()) matrix("output.weight", c.vocabSize(), h, 1 / Math.sqrt(h), r, false, 0);
        for (int l = 0; l < c.numLayers(); l++) {
            String p = "blk." + l + ".";
            vector(p + "attn_norm.weight", h, r, 1.0, 0.2, false, 0);
            matrix(p + "attn_q.weight", c.qDim(), h, 1 / Math.sqrt(h), r, true, c.numHeads());
            matrix(p + "attn_k.weight", c.kvDim(), h, 1 / Math.sqrt(h), r, true, c.numKvHeads());
            matrix(p + "attn_v.weight", c.kvDim(), h, 1 / Math.sqrt(h), r, false, 0);
            if (c.attentionBias()) {
                vector(p + "attn_q.bias", c.qDim(), r, 0, 0.3, true, c.numHeads());
                vector(p + "attn_k.bias", c.kvDim(), r, 0, 0.3, true, c.numKvHeads());
                vector(p + "attn_v.bias", c.kvDim(), r, 0, 0.3, false, 0);
            }
            matrix(p + "attn_output.weight", h, c.qDim(), 1 / Math.sqrt(c.qDim()), r, false, 0);
            vector(p + "ffn_norm.weight", h, r, 1.0, 0.2, false, 0);
            matrix(p + "ffn_gate.weight", c.intermediateSize(), h, 1 / Math.sqrt(h), r, false, 0);
            matrix(p + "ffn_up.weight", c.intermediateSize(), h, 1 / Math.sqrt(h), r, false, 0);
            matrix(p + "ffn_down.weight", h, c.intermediateSize(), 1 / Math.sqrt(c.intermediateSize()), r, false, 0);
        }
    }

    /** Stores weight [out][in] ~ N(0, std); Q/K rows permuted for ADJACENT_PAIRS storage. */
    private void matrix(String name, int out, int in, double std, Random r, boolean rope, int heads) {
        double[][] w = new double[out][in];
        for (double[] row : w) for (int i = 0; i < in; i++) row[i] = (float) (r.nextGaussian() * std);
        hf.put(name, w);
        MemorySegment seg = arena.allocate(4L * out * in, 64);
        for (int o = 0; o < out; o++) {
            int stored = rope ? storedRow(o, heads) : o;
            for (int i = 0; i < in; i++) seg.set(F32, 4L * ((long) stored * in + i), (float) w[o][i]);
        }
        tensors.put(name, new TensorData(name, GgmlType.F32, new long[] {in, out}, seg));
    }

    private void vector(String name, int n, Random r, double mean, double std, boolean rope, int heads) {
        double[] v = new double[n];
        for (int i = 0; i < n; i++) v[i] = (float) (mean + r.nextGaussian() * std);
        vectors.put(name, v);
        MemorySegment seg = arena.allocate(4L * n, 64);
        for (int i = 0; i < n; i++) seg.set(F32, 4L * (rope ? storedRow(i, heads) : i), (float) v[i]);
        tensors.put(name, new TensorData(name, GgmlType.F32, new long[] {n}, seg));
    }

    /** Where HF row (head, j·half + i) lands: itself (ROTATE_HALF) or (head, 2i + j) after llama.cpp's permutation. */
    private int storedRow(int row, int heads) {
        if (config.ropeConvention() == RopeConvention.ROTATE_HALF) return row;
        int hd = config.headDim(), half = hd / 2;
        int head = row / hd, within = row % hd, j = within / half, i = within % half;
        return head * hd + 2 * i + j;
    }

    private static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    /** Float64 logits at every position of {@code tokens} (positions 0..n-1), computed from scratch. */
    public double[][] referenceLogits(int[] tokens, double[] invFreq) {
        ModelConfig c = config;
        int n = tokens.length, h = c.hiddenSize(), hd = c.headDim(), half = hd / 2;
        double[][] x = new double[n][];
        for (int t = 0; t < n; t++) x[t] = hf.get("token_embd.weight")[tokens[t]].clone();
        for (int l = 0; l < c.numLayers(); l++) {
            String p = "blk." + l + ".";
            double[][] q = new double[n][], k = new double[n][], v = new double[n][];
            for (int t = 0; t < n; t++) {
                double[] xn = rmsNorm(x[t], vectors.get(p + "attn_norm.weight"), c.rmsNormEps());
                q[t] = add(matVec(hf.get(p + "attn_q.weight"), xn), vectors.get(p + "attn_q.bias"));
                k[t] = add(matVec(hf.get(p + "attn_k.weight"), xn), vectors.get(p + "attn_k.bias"));
                v[t] = add(matVec(hf.get(p + "attn_v.weight"), xn), vectors.get(p + "attn_v.bias"));
                rotateHalf(q[t], c.numHeads(), hd, t, invFreq);
                rotateHalf(k[t], c.numKvHeads(), hd, t, invFreq);
            }
            for (int t = 0; t < n; t++) {
                double[] att = new double[c.qDim()];
                for (int head = 0; head < c.numHeads(); head++) {
                    int kvh = head / c.groupSize();
                    double[] s = new double[t + 1];
                    double max = Double.NEGATIVE_INFINITY;
                    for (int pos = 0; pos <= t; pos++) {
                        double d = 0;
                        for (int i = 0; i < hd; i++) d += q[t][head * hd + i] * k[pos][kvh * hd + i];
                        s[pos] = d / Math.sqrt(hd);
                        max = Math.max(max, s[pos]);
                    }
                    double sum = 0;
                    for (int pos = 0; pos <= t; pos++) sum += s[pos] = Math.exp(s[pos] - max);
                    for (int pos = 0; pos <= t; pos++)
                        for (int i = 0; i < hd; i++) att[head * hd + i] += s[pos] / sum * v[pos][kvh * hd + i];
                }
                x[t] = add(x[t], matVec(hf.get(p + "attn_output.weight"), att));
                double[] xn = rmsNorm(x[t], vectors.get(p + "ffn_norm.weight"), c.rmsNormEps());
                double[] g = matVec(hf.get(p + "ffn_gate.weight"), xn), u = matVec(hf.get(p + "ffn_up.weight"), xn);
                for (int i = 0; i < g.length; i++) g[i] = g[i] / (1 + Math.exp(-g[i])) * u[i];
                x[t] = add(x[t], matVec(hf.get(p + "ffn_down.weight"), g));
            }
        }
        double[][] out = new double[n][];
        double[][] cls = hf.get(c.tieWordEmbeddings() ? "token_embd.weight" : "output.weight");
        for (int t = 0; t < n; t++) out[t] = matVec(cls, rmsNorm(x[t], vectors.get("output_norm.weight"), c.rmsNormEps()));
        return out;
    }

    public static double[] plainInvFreq(int headDim, double theta) {
        double[] f = new double[headDim / 2];
        for (int i = 0; i < f.length; i++) f[i] = Math.pow(theta, -2.0 * i / headDim);
        return f;
    }

    private static void rotateHalf(double[] x, int heads, int hd, int pos, double[] invFreq) {
        int half = hd / 2;
        for (int h = 0; h < heads; h++) {
            for (int i = 0; i < half; i++) {
                double a = pos * invFreq[i], x0 = x[h * hd + i], x1 = x[h * hd + i + half];
                x[h * hd + i] = x0 * Math.cos(a) - x1 * Math.sin(a);
                x[h * hd + i + half] = x0 * Math.sin(a) + x1 * Math.cos(a);
            }
        }
    }

    private static double[] rmsNorm(double[] x, double[] w, double eps) {
        double ss = 0;
        for (double d : x) ss += d * d;
        double s = 1 / Math.sqrt(ss / x.length + eps);
        double[] o = new double[x.length];
        for (int i = 0; i < x.length; i++) o[i] = x[i] * s * w[i];
        return o;
    }

    private static double[] matVec(double[][] w, double[] x) {
        double[] o = new double[w.length];
        for (int r = 0; r < w.length; r++) {
            double s = 0;
            for (int i = 0; i < x.length; i++) s += w[r][i] * x[i];
            o[r] = s;
        }
        return o;
    }

    private static double[] add(double[] a, double[] b) {
        if (b == null) return a;
        double[] o = a.clone();
        for (int i = 0; i < o.length; i++) o[i] += b[i];
        return o;
    }

    @Override public Path path() { return Path.of("tiny-random-llama"); }
    @Override public String format() { return "memory"; }
    @Override public ModelConfig config() { return config; }
    @Override public Tokenizer tokenizer() { throw new UnsupportedOperationException("the tiny test model has no tokenizer"); }
    @Override public Map<String, TensorData> tensors() { return tensors; }
    @Override public Map<String, Object> metadata() { return Map.of(); }
    @Override public String fileTensorName(String canonicalName) { return canonicalName; }
    @Override public void close() { arena.close(); }
}
