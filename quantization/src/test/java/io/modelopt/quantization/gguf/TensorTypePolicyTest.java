package io.modelopt.quantization.gguf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.modelopt.core.tensor.GgmlType;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** llama_tensor_get_type on synthetic Llama shapes: layer bumps and the fallbacks for rows not divisible by 256. */
class TensorTypePolicyTest {

    /** The quantizable tensors of an n-layer Llama in llama-quantize's order, with ggml dims. */
    static Map<String, long[]> llama(int nLayer, long dim, long ff, long kv, long vocab) {
        List<String> names = new ArrayList<>(List.of("output.weight", "token_embd.weight"));
        for (int l = 0; l < nLayer; l++) {
            for (String s : new String[] {"attn_k", "attn_output", "attn_q", "attn_v", "ffn_down", "ffn_gate", "ffn_up"}) names.add("blk." + l + "." + s + ".weight");
        }
        names.sort(GgufQuantizer.TENSOR_ORDER);
        Map<String, long[]> m = new LinkedHashMap<>();
        for (String n : names) {
            long[] d;
            if (n.endsWith("attn_k.weight") || n.endsWith("attn_v.weight")) d = new long[] {dim, kv};
            else if (n.endsWith("ffn_down.weight")) d = new long[] {ff, dim};
            else if (n.contains("ffn_")) d = new long[] {dim, ff};
            else if (n.startsWith("blk.")) d = new long[] {dim, dim};
            else d = new long[] {dim, vocab};
            m.put(n, d);
        }
        return m;
    }

    static Map<String, GgmlType> types(GgufPreset p, int nLayer, int nHead, int nKv, long dim, long ff, boolean imatrix) {
        Map<String, long[]> t = llama(nLayer, dim, ff, dim * nKv / nHead, 32000);
        TensorTypePolicy policy = new TensorTypePolicy(p, new TensorTypePolicy.ModelShape("llama", nLayer, nHead, nKv, 0), imatrix, true, nLayer);
        Map<String, GgmlType> out = new LinkedHashMap<>();
        t.forEach((n, d) -> out.put(n, policy.typeFor(n, d)));
        return out;
    }

    @Test
    void q4KMBumpsAttnVAndFfnDownOfTheUseMoreBitsLayers() {
        Map<String, GgmlType> t = types(GgufPreset.Q4_K_M, 32, 32, 8, 4096, 14336, false);
        // use_more_bits(i, 32): i < 4, i >= 28, or (i - 4) % 3 == 2
        for (int l = 0; l < 32; l++) {
            boolean more = l < 4 || l >= 28 || (l - 4) % 3 == 2;
            GgmlType want = more ? GgmlType.Q6_K : GgmlType.Q4_K;
            assertEquals(want, t.get("blk." + l + ".attn_v.weight"), "attn_v " + l);
            assertEquals(want, t.get("blk." + l + ".ffn_down.weight"), "ffn_down " + l);
            assertEquals(GgmlType.Q4_K, t.get("blk." + l + ".attn_q.weight"));
        }
        assertEquals(GgmlType.Q6_K, t.get("output.weight"));
        assertEquals(GgmlType.Q4_K, t.get("token_embd.weight"));
    }

    @Test
    void lowBitPresets() {
        Map<String, GgmlType> q2 = types(GgufPreset.Q2_K, 32, 32, 8, 4096, 14336, false);
        assertEquals(GgmlType.Q4_K, q2.get("blk.0.attn_v.weight"), "n_gqa 4 -> Q4_K");
        assertEquals(GgmlType.Q3_K, q2.get("blk.5.ffn_down.weight"));
        assertEquals(GgmlType.Q3_K, q2.get("blk.5.attn_output.weight"));
        assertEquals(GgmlType.Q2_K, q2.get("blk.5.ffn_up.weight"));
        assertEquals(GgmlType.Q3_K, types(GgufPreset.Q2_K, 4, 8, 4, 256, 768, false).get("blk.0.attn_v.weight"), "n_gqa 2 -> Q3_K");
        Map<String, GgmlType> q3m = types(GgufPreset.Q3_K_M, 32, 32, 8, 4096, 14336, false);
        assertEquals(GgmlType.Q5_K, q3m.get("blk.0.attn_v.weight"));
        assertEquals(GgmlType.Q5_K, q3m.get("blk.1.attn_v.weight"));
        assertEquals(GgmlType.Q4_K, q3m.get("blk.2.attn_v.weight"));
        assertEquals(GgmlType.Q5_K, q3m.get("blk.1.ffn_down.weight"), "i < n/16");
        assertEquals(GgmlType.Q4_K, q3m.get("blk.2.ffn_down.weight"));
        Map<String, GgmlType> q4s = types(GgufPreset.Q4_K_S, 32, 32, 8, 4096, 14336, false);
        assertEquals(GgmlType.Q5_K, q4s.get("blk.3.attn_v.weight"));
        assertEquals(GgmlType.Q4_K, q4s.get("blk.4.attn_v.weight"));
        assertEquals(GgmlType.Q5_K, q4s.get("blk.3.ffn_down.weight"));
        assertEquals(GgmlType.Q4_K, q4s.get("blk.4.ffn_down.weight"));
        // Q4_0 with an imatrix guards the first n/8 ffn_down with Q4_1
        Map<String, GgmlType> q40 = types(GgufPreset.Q4_0, 32, 32, 8, 4096, 14336, true);
        assertEquals(GgmlType.Q4_1, q40.get("blk.3.ffn_down.weight"));
        assertEquals(GgmlType.Q4_0, q40.get("blk.4.ffn_down.weight"));
        assertEquals(GgmlType.Q4_0, types(GgufPreset.Q4_0, 32, 32, 8, 4096, 14336, false).get("blk.3.ffn_down.weight"));
    }

    @Test
    void seventyBBumpsAttnV() {
        Map<String, GgmlType> t = types(GgufPreset.Q3_K_S, 80, 64, 8, 8192, 28672, false);
        assertEquals(GgmlType.Q5_K, t.get("blk.10.attn_v.weight"));
        assertEquals(GgmlType.Q3_K, t.get("blk.10.attn_q.weight"));
    }

    @Test
    void rowsNotDivisibleBy256FallBack() {
        TensorTypePolicy.ModelShape s = new TensorTypePolicy.ModelShape("llama", 4, 8, 4, 0);
        // ne0 = 96: a multiple of 32 but not of 256
        assertEquals(GgmlType.Q5_0, new TensorTypePolicy(GgufPreset.Q4_K_S, s, false, true, 4).typeFor("blk.0.attn_q.weight", new long[] {96, 96}));
        assertEquals(GgmlType.Q5_1, new TensorTypePolicy(GgufPreset.Q5_K_S, s, false, true, 4).typeFor("blk.0.attn_q.weight", new long[] {96, 96}));
        assertEquals(GgmlType.Q8_0, new TensorTypePolicy(GgufPreset.Q6_K, s, false, true, 4).typeFor("blk.0.attn_q.weight", new long[] {96, 96}));
        assertEquals(GgmlType.IQ4_NL, new TensorTypePolicy(GgufPreset.Q3_K_S, s, false, true, 4).typeFor("blk.0.attn_q.weight", new long[] {96, 96}));
        // ne0 = 100: not even a multiple of 32 -> F16
        TensorTypePolicy p = new TensorTypePolicy(GgufPreset.Q4_K_M, s, false, true, 4);
        assertEquals(GgmlType.F16, p.typeFor("blk.0.attn_q.weight", new long[] {100, 96}));
        assertEquals(1, p.fallbackCount());
        assertEquals(0, p.kQuantizedCount());
        // the output matrix: Q6_K, or Q8_0 when its rows do not fit (stories260K: ne0 = 64 with Q4_0)
        assertEquals(GgmlType.Q8_0, new TensorTypePolicy(GgufPreset.Q4_0, s, false, true, 4).typeFor("output.weight", new long[] {64, 512}));
        assertEquals(GgmlType.Q6_K, new TensorTypePolicy(GgufPreset.Q4_0, s, false, true, 4).typeFor("output.weight", new long[] {256, 512}));
        assertEquals(GgmlType.Q8_0, new TensorTypePolicy(GgufPreset.Q8_0, s, false, true, 4).typeFor("output.weight", new long[] {256, 512}));
        // no output.weight: the token embedding is treated as the output
        assertEquals(GgmlType.Q6_K, new TensorTypePolicy(GgufPreset.Q4_K_M, s, false, false, 4).typeFor("token_embd.weight", new long[] {256, 512}));
        // legacy types have no fallback: llama-quantize aborts ("Unsupported tensor size")
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new TensorTypePolicy(GgufPreset.Q8_0, s, false, true, 4).typeFor("blk.0.ffn_down.weight", new long[] {172, 64}));
        assertTrue(e.getMessage().contains("172 columns are not divisible by 32") && e.getMessage().contains("Unsupported tensor size"), e.getMessage());
    }

    @Test
    void whichTensorsAreQuantized() {
        assertTrue(TensorTypePolicy.isQuantizable("blk.0.attn_q.weight", 2));
        assertFalse(TensorTypePolicy.isQuantizable("blk.0.attn_norm.weight", 2));
        assertFalse(TensorTypePolicy.isQuantizable("output_norm.weight", 1));
        assertFalse(TensorTypePolicy.isQuantizable("blk.0.attn_q.weight", 1));
        assertFalse(TensorTypePolicy.isQuantizable("blk.0.attn_q.bias", 2));
        assertFalse(TensorTypePolicy.isQuantizable("blk.0.ffn_gate_inp.weight", 2));
        assertFalse(TensorTypePolicy.isQuantizable("position_embd.weight", 2));
    }

    @Test
    void presetsParseLikeLlamaQuantize() {
        assertEquals(GgufPreset.Q4_K_M, GgufPreset.parse("q4_k_m"));
        assertEquals(GgufPreset.Q4_K_M, GgufPreset.parse("Q4_K"));
        assertEquals(GgufPreset.Q3_K_M, GgufPreset.parse("Q3_K"));
        assertEquals(GgufPreset.Q5_K_M, GgufPreset.parse("Q5_K"));
        assertEquals(15, GgufPreset.Q4_K_M.fileType());
        assertEquals(7, GgufPreset.Q8_0.fileType());
        assertEquals(GgmlType.Q3_K, GgufPreset.Q3_K_L.defaultType());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> GgufPreset.parse("Q4_K_XL"));
        assertTrue(e.getMessage().contains("unknown quantization preset 'Q4_K_XL'") && e.getMessage().contains("Q4_K_M"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> GgufQuantizer.forPreset(""));
    }
}
