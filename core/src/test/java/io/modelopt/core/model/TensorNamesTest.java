package io.modelopt.core.model;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

class TensorNamesTest {
    private static Map<String, String> table(int layer) {
        Map<String, String> m = new LinkedHashMap<>();
        m.put("token_embd.weight", "model.embed_tokens.weight");
        m.put("output_norm.weight", "model.norm.weight");
        m.put("output.weight", "lm_head.weight");
        String b = "blk." + layer + ".", h = "model.layers." + layer + ".";
        m.put(b + "attn_norm.weight", h + "input_layernorm.weight");
        m.put(b + "ffn_norm.weight", h + "post_attention_layernorm.weight");
        for (String s : new String[] {"weight", "bias"}) {
            m.put(b + "attn_q." + s, h + "self_attn.q_proj." + s);
            m.put(b + "attn_k." + s, h + "self_attn.k_proj." + s);
            m.put(b + "attn_v." + s, h + "self_attn.v_proj." + s);
            m.put(b + "attn_output." + s, h + "self_attn.o_proj." + s);
            m.put(b + "ffn_gate." + s, h + "mlp.gate_proj." + s);
            m.put(b + "ffn_up." + s, h + "mlp.up_proj." + s);
            m.put(b + "ffn_down." + s, h + "mlp.down_proj." + s);
        }
        return m;
    }

    @Test void mapsBothWays() {
        for (int layer : new int[] {0, 7, 31, 127}) {
            table(layer).forEach((gguf, hf) -> {
                assertEquals(Optional.of(hf), TensorNames.toHf(gguf), gguf);
                assertEquals(Optional.of(gguf), TensorNames.toGguf(hf), hf);
                assertEquals(gguf, TensorNames.toGgufOrSelf(TensorNames.toHfOrSelf(gguf)));
                assertEquals(hf, TensorNames.toHfOrSelf(TensorNames.toGgufOrSelf(hf)));
            });
        }
        Set<String> hfNames = new HashSet<>(table(3).values());
        assertEquals(table(3).size(), hfNames.size(), "the map is one-to-one");
    }

    @Test void unknownNames() {
        for (String n : new String[] {"model.layers.0.self_attn.rotary_emb.inv_freq", "blk.0.attn_norm.bias", "model.layers.0.input_layernorm.bias",
                "blk.01.attn_q.weight", "model.layers.01.mlp.up_proj.weight", "blk.x.attn_q.weight", "rope_freqs.weight", "model.embed_tokens.bias",
                "blk.0.attn_q.scale", "", "model.layers.0.mlp.up_proj"}) {
            assertEquals(Optional.empty(), TensorNames.toGguf(n), n);
            assertEquals(Optional.empty(), TensorNames.toHf(n), n);
            assertEquals(n, TensorNames.toGgufOrSelf(n));
            assertEquals(n, TensorNames.toHfOrSelf(n));
        }
    }

    /** Hand-worked: one head of 8 rows, HF rotate_half [x0..x3 | y0..y3] → GGUF pairs x0 y0 x1 y1 ... */
    @Test void permutationByHand() {
        float[] hf = {0, 1, 2, 3, 10, 11, 12, 13};
        assertArrayEquals(new float[] {0, 10, 1, 11, 2, 12, 3, 13}, TensorNames.permuteHfToGguf(hf, 8, 1, 1));
        float[] twoHeads = {0, 1, 10, 11, 20, 21, 30, 31};
        assertArrayEquals(new float[] {0, 10, 1, 11, 20, 30, 21, 31}, TensorNames.permuteHfToGguf(twoHeads, 8, 1, 2));
    }

    @Test void permutationInverse() {
        Random rnd = new Random(3);
        int[][] geometries = {{64, 64, 8}, {32, 64, 4}, {256, 16, 8}, {128, 1, 2}, {2, 3, 1}};
        for (int[] g : geometries) {
            float[] w = new float[g[0] * g[1]];
            for (int i = 0; i < w.length; i++) w[i] = rnd.nextFloat();
            float[] p = TensorNames.permuteHfToGguf(w, g[0], g[1], g[2]);
            assertArrayEquals(w, TensorNames.permuteGgufToHf(p, g[0], g[1], g[2]));
            for (int r = 0; r < g[0]; r++) {
                assertEquals(r, TensorNames.hfRowOf(TensorNames.ggufRowOf(r, g[0], g[2]), g[0], g[2]));
            }
        }
    }

    @Test void permutationRejectsBadGeometry() {
        assertThrows(IllegalArgumentException.class, () -> TensorNames.permuteHfToGguf(new float[12], 6, 2, 4));
        assertThrows(IllegalArgumentException.class, () -> TensorNames.permuteHfToGguf(new float[12], 6, 2, 2)); // head of 3 rows
        assertThrows(IllegalArgumentException.class, () -> TensorNames.permuteHfToGguf(new float[11], 4, 3, 2));
    }
}
