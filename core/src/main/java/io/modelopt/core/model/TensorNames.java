package io.modelopt.core.model;

import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The tensor names of the Llama family (Llama, Mistral, Qwen2) in GGUF (llama.cpp's
 * {@code gguf-py/gguf/constants.py} / {@code tensor_mapping.py}) and Hugging Face transformers
 * form, both directions:
 *
 * <pre>
 * token_embd.weight            model.embed_tokens.weight
 * output_norm.weight           model.norm.weight
 * output.weight                lm_head.weight
 * blk.N.attn_norm.weight       model.layers.N.input_layernorm.weight
 * blk.N.attn_q|k|v.weight|bias model.layers.N.self_attn.q_proj|k_proj|v_proj.weight|bias
 * blk.N.attn_output.weight|bias model.layers.N.self_attn.o_proj.weight|bias
 * blk.N.ffn_norm.weight        model.layers.N.post_attention_layernorm.weight
 * blk.N.ffn_gate|up|down.weight|bias model.layers.N.mlp.gate_proj|up_proj|down_proj.weight|bias
 * </pre>
 *
 * Names outside this table (e.g. {@code model.layers.0.self_attn.rotary_emb.inv_freq} of old
 * checkpoints) give {@link Optional#empty()} from {@link #toGguf}/{@link #toHf}; the
 * {@code ...OrSelf} variants keep them unchanged. Layer numbers must be written canonically
 * (no leading zeros), so every mapped name round-trips exactly.
 *
 * <p>Also the Q/K row permutation between HF's {@code rotate_half} layout and the adjacent-pair
 * layout llama.cpp's converter writes for llama GGUFs (see {@link #permuteHfToGguf}).
 */
public final class TensorNames {
    private TensorNames() {}

    private static final Map<String, String> GLOBAL_TO_HF = Map.of(
            "token_embd.weight", "model.embed_tokens.weight",
            "output_norm.weight", "model.norm.weight",
            "output.weight", "lm_head.weight");
    private static final Map<String, String> GLOBAL_TO_GGUF = Map.of(
            "model.embed_tokens.weight", "token_embd.weight",
            "model.norm.weight", "output_norm.weight",
            "lm_head.weight", "output.weight");

    /** Per-layer GGUF stem → HF stem (without the ".weight"/".bias" suffix). */
    private static final Map<String, String> LAYER_TO_HF = Map.ofEntries(
            Map.entry("attn_norm", "input_layernorm"),
            Map.entry("attn_q", "self_attn.q_proj"),
            Map.entry("attn_k", "self_attn.k_proj"),
            Map.entry("attn_v", "self_attn.v_proj"),
            Map.entry("attn_output", "self_attn.o_proj"),
            Map.entry("ffn_norm", "post_attention_layernorm"),
            Map.entry("ffn_gate", "mlp.gate_proj"),
            Map.entry("ffn_up", "mlp.up_proj"),
            Map.entry("ffn_down", "mlp.down_proj"));
    private static final Map<String, String> LAYER_TO_GGUF = invert(LAYER_TO_HF);

    private static final Pattern GGUF_LAYER = Pattern.compile("blk\\.(0|[1-9][0-9]{0,8})\\.([a-z_]+)\\.(weight|bias)");
    private static final Pattern HF_LAYER = Pattern.compile("model\\.layers\\.(0|[1-9][0-9]{0,8})\\.([a-z_.]+)\\.(weight|bias)");

    private static Map<String, String> invert(Map<String, String> m) {
        Map<String, String> r = new java.util.HashMap<>();
        m.forEach((k, v) -> r.put(v, k));
        return Map.copyOf(r);
    }

    private static boolean isNorm(String ggufStem) { return ggufStem.endsWith("_norm"); }

    /** The HF name of a GGUF tensor name, or empty when the name is not in the table. */
    public static Optional<String> toHf(String ggufName) {
        String g = GLOBAL_TO_HF.get(ggufName);
        if (g != null) return Optional.of(g);
        Matcher m = GGUF_LAYER.matcher(ggufName);
        if (!m.matches()) return Optional.empty();
        String stem = LAYER_TO_HF.get(m.group(2));
        if (stem == null || (isNorm(m.group(2)) && m.group(3).equals("bias"))) return Optional.empty();
        return Optional.of("model.layers." + m.group(1) + "." + stem + "." + m.group(3));
    }

    /** The GGUF (canonical) name of an HF tensor name, or empty when the name is not in the table. */
    public static Optional<String> toGguf(String hfName) {
        String g = GLOBAL_TO_GGUF.get(hfName);
        if (g != null) return Optional.of(g);
        Matcher m = HF_LAYER.matcher(hfName);
        if (!m.matches()) return Optional.empty();
        String stem = LAYER_TO_GGUF.get(m.group(2));
        if (stem == null || (isNorm(stem) && m.group(3).equals("bias"))) return Optional.empty();
        return Optional.of("blk." + m.group(1) + "." + stem + "." + m.group(3));
    }

    /** {@link #toHf}, or the name unchanged when it is not in the table. */
    public static String toHfOrSelf(String ggufName) { return toHf(ggufName).orElse(ggufName); }

    /** {@link #toGguf}, or the name unchanged when it is not in the table. */
    public static String toGgufOrSelf(String hfName) { return toGguf(hfName).orElse(hfName); }

    // ------------------------------------------------------------------ Q/K permutation

    /**
     * Where row {@code hfRow} of an HF Q or K projection (PyTorch {@code [rows, cols]}, rows = heads ×
     * head_dim) goes in the GGUF tensor. Inside each head, HF keeps {@code rotate_half} order (row
     * {@code i·half + j}, i ∈ {0,1}, pairs element j with j + half), the GGUF llama layout adjacent
     * pairs (row {@code 2j + i}). This is llama.cpp's {@code convert_hf_to_gguf.py} {@code permute}:
     * {@code w.reshape(n_head, 2, rows/n_head/2, cols).swapaxes(1, 2).reshape(rows, cols)}.
     *
     * @param nHead query heads for Q, KV heads for K (the converter passes n_head_kv for K)
     */
    public static int ggufRowOf(int hfRow, int rows, int nHead) {
        checkGeometry(rows, nHead);
        if (hfRow < 0 || hfRow >= rows) throw new IndexOutOfBoundsException("row " + hfRow + " of " + rows);
        int headDim = rows / nHead, half = headDim / 2;
        int h = hfRow / headDim, r = hfRow % headDim;
        int i = r / half, j = r % half;
        return h * headDim + 2 * j + i;
    }

    /** Inverse of {@link #ggufRowOf}: the HF row that GGUF row {@code ggufRow} came from. */
    public static int hfRowOf(int ggufRow, int rows, int nHead) {
        checkGeometry(rows, nHead);
        if (ggufRow < 0 || ggufRow >= rows) throw new IndexOutOfBoundsException("row " + ggufRow + " of " + rows);
        int headDim = rows / nHead, half = headDim / 2;
        int h = ggufRow / headDim, r = ggufRow % headDim;
        int j = r / 2, i = r % 2;
        return h * headDim + i * half + j;
    }

    /**
     * Permutes the rows of a row-major {@code rows × cols} Q/K weight (or a bias, {@code cols = 1})
     * from HF rotate_half order to GGUF adjacent-pair order; returns a new array.
     */
    public static float[] permuteHfToGguf(float[] w, int rows, int cols, int nHead) {
        return permute(w, rows, cols, nHead, true);
    }

    /** Inverse of {@link #permuteHfToGguf}: GGUF adjacent-pair order back to HF rotate_half order. */
    public static float[] permuteGgufToHf(float[] w, int rows, int cols, int nHead) {
        return permute(w, rows, cols, nHead, false);
    }

    private static float[] permute(float[] w, int rows, int cols, int nHead, boolean toGguf) {
        checkGeometry(rows, nHead);
        if (cols <= 0 || (long) rows * cols != w.length) {
            throw new IllegalArgumentException("array of " + w.length + " floats is not " + rows + " x " + cols);
        }
        float[] out = new float[w.length];
        for (int src = 0; src < rows; src++) {
            int dst = toGguf ? ggufRowOf(src, rows, nHead) : hfRowOf(src, rows, nHead);
            System.arraycopy(w, src * cols, out, dst * cols, cols);
        }
        return out;
    }

    private static void checkGeometry(int rows, int nHead) {
        if (nHead <= 0 || rows <= 0 || rows % nHead != 0 || (rows / nHead) % 2 != 0) {
            throw new IllegalArgumentException(rows + " rows do not split into " + nHead + " heads of even size");
        }
    }
}
