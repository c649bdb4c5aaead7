package io.modelopt.core.synthetic;

import io.modelopt.core.model.TensorNames;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * One tensor of a synthetic model, by its canonical GGUF name, with its ggml-order shape
 * ({@code ne0} = row length = input features).
 *
 * @param name     canonical (GGUF) name, e.g. {@code blk.3.attn_k.weight}; also the key of its random stream
 * @param ne0      row length
 * @param rows     number of rows (1 for a norm vector)
 * @param norm     an RMSNorm weight: a vector of ones, always stored as F32
 * @param ropeHeads for Q (query heads) and K (KV heads): the heads whose rows HF stores in rotate_half
 *                 order; 0 for every other tensor
 */
public record SyntheticTensor(String name, int ne0, int rows, boolean norm, int ropeHeads) {

    /** The ggml shape: {@code {ne0}} for a vector, else {@code {ne0, rows}}. */
    public long[] ggmlShape() { return norm ? new long[] {ne0} : new long[] {ne0, rows}; }

    /** The PyTorch ([out, in]) shape of the HF tensor. */
    public long[] torchShape() { return norm ? new long[] {ne0} : new long[] {rows, ne0}; }

    public long elementCount() { return (long) ne0 * rows; }

    /** The HF tensor name ({@link TensorNames}). */
    public String hfName() { return TensorNames.toHf(name).orElseThrow(() -> new IllegalStateException("no HF name for " + name)); }

    /**
     * The row of the canonical (GGUF, adjacent-pair RoPE order) tensor that row {@code hfRow} of the
     * HF tensor holds: identity except for Q and K, whose rows HF keeps in rotate_half order.
     */
    public int canonicalRowOfHfRow(int hfRow) {
        return ropeHeads == 0 ? hfRow : TensorNames.ggufRowOf(hfRow, rows, ropeHeads);
    }

    /**
     * The tensors in the order llama.cpp's {@code convert_hf_to_gguf.py} writes a Llama checkpoint
     * whose safetensors list them in the HF module order: {@code token_embd}, then per block
     * attn_norm, q, k, v, output, ffn_norm, gate, up, down, then {@code output_norm} and
     * {@code output} (absent when tied).
     */
    public static List<SyntheticTensor> convertOrder(SyntheticSpec s) {
        int h = s.hiddenSize(), kv = s.kvDim(), f = s.intermediateSize();
        List<SyntheticTensor> list = new ArrayList<>();
        list.add(new SyntheticTensor("token_embd.weight", h, s.vocabSize(), false, 0));
        for (int i = 0; i < s.numLayers(); i++) {
            String p = "blk." + i + ".";
            list.add(new SyntheticTensor(p + "attn_norm.weight", h, 1, true, 0));
            list.add(new SyntheticTensor(p + "attn_q.weight", h, h, false, s.numHeads()));
            list.add(new SyntheticTensor(p + "attn_k.weight", h, kv, false, s.numKvHeads()));
            list.add(new SyntheticTensor(p + "attn_v.weight", h, kv, false, 0));
            list.add(new SyntheticTensor(p + "attn_output.weight", h, h, false, 0));
            list.add(new SyntheticTensor(p + "ffn_norm.weight", h, 1, true, 0));
            list.add(new SyntheticTensor(p + "ffn_gate.weight", h, f, false, 0));
            list.add(new SyntheticTensor(p + "ffn_up.weight", h, f, false, 0));
            list.add(new SyntheticTensor(p + "ffn_down.weight", f, h, false, 0));
        }
        list.add(new SyntheticTensor("output_norm.weight", h, 1, true, 0));
        if (!s.tiedEmbeddings()) list.add(new SyntheticTensor("output.weight", h, s.vocabSize(), false, 0));
        return List.copyOf(list);
    }

    /**
     * The order {@code llama-quantize} writes: the tensors outside blocks first, then block by block
     * (by block number), each group sorted by name — llama.cpp's loader keeps tensors in a sorted
     * map and the quantizer orders them by layer.
     */
    public static List<SyntheticTensor> quantizeOrder(SyntheticSpec s) {
        List<SyntheticTensor> list = new ArrayList<>(convertOrder(s));
        list.sort(Comparator.comparingInt(SyntheticTensor::block).thenComparing(SyntheticTensor::name));
        return List.copyOf(list);
    }

    /** The block number, or -1 for tensors outside the blocks. */
    int block() {
        if (!name.startsWith("blk.")) return -1;
        return Integer.parseInt(name.substring(4, name.indexOf('.', 4)));
    }
}
