package io.modelopt.core.model;

import java.util.Arrays;
import java.util.Objects;

/**
 * One description of a Llama-family model, whichever file it came from (GGUF metadata or an HF
 * config.json). Immutable; build with {@link #builder()}.
 *
 * @param headDim           per-head size (usually hidden / heads, but HF may set it explicitly)
 * @param contextLength     trained context length (GGUF {@code context_length}, HF {@code max_position_embeddings})
 * @param attentionBias     Q/K/V projections carry biases (Qwen2)
 * @param eosTokenIds       every token id that ends generation
 */
public record ModelConfig(
        Architecture architecture,
        int hiddenSize,
        int numLayers,
        int numHeads,
        int numKvHeads,
        int headDim,
        int intermediateSize,
        int vocabSize,
        int contextLength,
        float rmsNormEps,
        float ropeTheta,
        RopeScaling ropeScaling,
        RopeConvention ropeConvention,
        boolean tieWordEmbeddings,
        boolean attentionBias,
        int bosTokenId,
        int[] eosTokenIds,
        String dtype) {

    public ModelConfig {
        Objects.requireNonNull(architecture, "architecture");
        Objects.requireNonNull(ropeConvention, "ropeConvention");
        eosTokenIds = eosTokenIds == null ? new int[0] : eosTokenIds.clone();
        check(hiddenSize > 0, "hiddenSize", hiddenSize);
        check(numLayers > 0, "numLayers", numLayers);
        check(numHeads > 0, "numHeads", numHeads);
        check(numKvHeads > 0 && numHeads % numKvHeads == 0, "numKvHeads (must divide numHeads " + numHeads + ")", numKvHeads);
        check(headDim > 0 && headDim % 2 == 0, "headDim (must be even)", headDim);
        check(intermediateSize > 0, "intermediateSize", intermediateSize);
        check(vocabSize > 0, "vocabSize", vocabSize);
        check(contextLength > 0, "contextLength", contextLength);
    }

    private static void check(boolean ok, String what, long value) {
        if (!ok) throw new IllegalArgumentException("invalid model config: " + what + " = " + value);
    }

    @Override public int[] eosTokenIds() { return eosTokenIds.clone(); }

    public boolean isEos(int token) {
        for (int e : eosTokenIds) if (e == token) return true;
        return false;
    }

    /** Query heads per KV head (grouped-query attention). */
    public int groupSize() { return numHeads / numKvHeads; }

    public int qDim() { return numHeads * headDim; }

    public int kvDim() { return numKvHeads * headDim; }

    public static Builder builder() { return new Builder(); }

    public Builder toBuilder() {
        return new Builder().architecture(architecture).hiddenSize(hiddenSize).numLayers(numLayers).numHeads(numHeads)
                .numKvHeads(numKvHeads).headDim(headDim).intermediateSize(intermediateSize).vocabSize(vocabSize)
                .contextLength(contextLength).rmsNormEps(rmsNormEps).ropeTheta(ropeTheta).ropeScaling(ropeScaling)
                .ropeConvention(ropeConvention).tieWordEmbeddings(tieWordEmbeddings).attentionBias(attentionBias)
                .bosTokenId(bosTokenId).eosTokenIds(eosTokenIds).dtype(dtype);
    }

    @Override public String toString() {
        return "ModelConfig[" + architecture + " hidden=" + hiddenSize + " layers=" + numLayers + " heads=" + numHeads + "/" + numKvHeads
                + " headDim=" + headDim + " ffn=" + intermediateSize + " vocab=" + vocabSize + " ctx=" + contextLength
                + " eps=" + rmsNormEps + " theta=" + ropeTheta + (ropeScaling == null ? "" : " scaling=" + ropeScaling)
                + " rope=" + ropeConvention + " tied=" + tieWordEmbeddings + " bias=" + attentionBias
                + " bos=" + bosTokenId + " eos=" + Arrays.toString(eosTokenIds) + " dtype=" + dtype + "]";
    }

    @Override public boolean equals(Object o) {
        return o instanceof ModelConfig c && toString().equals(c.toString());
    }

    @Override public int hashCode() { return toString().hashCode(); }

    /** Mutable builder; {@link #build()} validates. {@code headDim} defaults to hidden / heads, {@code numKvHeads} to heads. */
    public static final class Builder {
        private Architecture architecture = Architecture.LLAMA;
        private int hiddenSize, numLayers, numHeads, numKvHeads, headDim, intermediateSize, vocabSize, contextLength = 2048;
        private float rmsNormEps = 1e-5f, ropeTheta = 10000f;
        private RopeScaling ropeScaling;
        private RopeConvention ropeConvention = RopeConvention.ROTATE_HALF;
        private boolean tieWordEmbeddings, attentionBias;
        private int bosTokenId = 1;
        private int[] eosTokenIds = {2};
        private String dtype = "float32";

        public Builder architecture(Architecture v) { architecture = v; return this; }
        public Builder hiddenSize(int v) { hiddenSize = v; return this; }
        public Builder numLayers(int v) { numLayers = v; return this; }
        public Builder numHeads(int v) { numHeads = v; return this; }
        public Builder numKvHeads(int v) { numKvHeads = v; return this; }
        public Builder headDim(int v) { headDim = v; return this; }
        public Builder intermediateSize(int v) { intermediateSize = v; return this; }
        public Builder vocabSize(int v) { vocabSize = v; return this; }
        public Builder contextLength(int v) { contextLength = v; return this; }
        public Builder rmsNormEps(float v) { rmsNormEps = v; return this; }
        public Builder ropeTheta(float v) { ropeTheta = v; return this; }
        public Builder ropeScaling(RopeScaling v) { ropeScaling = v; return this; }
        public Builder ropeConvention(RopeConvention v) { ropeConvention = v; return this; }
        public Builder tieWordEmbeddings(boolean v) { tieWordEmbeddings = v; return this; }
        public Builder attentionBias(boolean v) { attentionBias = v; return this; }
        public Builder bosTokenId(int v) { bosTokenId = v; return this; }
        public Builder eosTokenIds(int... v) { eosTokenIds = v.clone(); return this; }
        public Builder dtype(String v) { dtype = v; return this; }

        public ModelConfig build() {
            int kv = numKvHeads == 0 ? numHeads : numKvHeads;
            int hd = headDim == 0 && numHeads > 0 ? hiddenSize / numHeads : headDim;
            return new ModelConfig(architecture, hiddenSize, numLayers, numHeads, kv, hd, intermediateSize, vocabSize, contextLength,
                    rmsNormEps, ropeTheta, ropeScaling, ropeConvention, tieWordEmbeddings, attentionBias, bosTokenId, eosTokenIds, dtype);
        }
    }
}
