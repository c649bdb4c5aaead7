package io.modelopt.core.hf;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.modelopt.core.model.ModelConfig;
import io.modelopt.core.model.TensorNames;
import io.modelopt.core.tensor.GgmlType;
import io.modelopt.core.tensor.TensorData;
import io.modelopt.core.testing.Fixtures;
import java.io.IOException;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * The HF checkpoints read through {@link HfModelSource} against the f32 GGUFs made from the same
 * weights by llama.cpp (brown-llama: convert_hf_to_gguf.py; stories260K: the llama2.c converter,
 * with the HF export permuted by transformers' rule). Same canonical names, same ggml shapes, same
 * bytes — except attn_q/attn_k, which must equal {@link TensorNames#permuteHfToGguf} of the HF rows.
 */
class HfGgufCrossCheckTest {
    private static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    @Test void brownLlama() throws IOException {
        crossCheck(Fixtures.brownHf(), Fixtures.brownGguf("f32"), 39);
    }

    @Test void stories260K() throws IOException {
        crossCheck(Fixtures.storiesHf(), Fixtures.storiesGguf("f32"), 48);
    }

    private static void crossCheck(Path hfDir, Path ggufFile, int expectedTensors) throws IOException {
        try (HfModelSource hf = HfModelSource.open(hfDir); MiniGguf gguf = new MiniGguf(ggufFile)) {
            ModelConfig c = hf.config();
            assertEquals(expectedTensors, hf.tensors().size());
            assertEquals(new TreeSet<>(gguf.tensors.keySet()), new TreeSet<>(hf.tensors().keySet()));
            int permuted = 0;
            for (TensorData t : hf.tensors().values()) {
                MiniGguf.Tensor g = gguf.tensors.get(t.name());
                assertEquals(0, g.type(), t.name() + " is F32 in the GGUF");
                assertEquals(GgmlType.F32, t.type());
                assertArrayEquals(g.ne(), t.shape(), t.name());
                float[] hfValues = t.data().toArray(F32);
                boolean q = t.name().endsWith("attn_q.weight"), k = t.name().endsWith("attn_k.weight");
                if (q || k) {
                    int rows = (int) t.shape()[1], cols = (int) t.shape()[0];
                    float[] p = TensorNames.permuteHfToGguf(hfValues, rows, cols, q ? c.numHeads() : c.numKvHeads());
                    assertArrayEquals(g.data().toArray(F32), p, t.name() + " after permutation");
                    assertArrayEquals(hfValues, TensorNames.permuteGgufToHf(g.data().toArray(F32), rows, cols, q ? c.numHeads() : c.numKvHeads()));
                    permuted++;
                } else {
                    assertEquals(-1, g.data().mismatch(t.data()), t.name() + " bytes");
                }
            }
            assertEquals(2 * c.numLayers(), permuted);
        }
    }
}
