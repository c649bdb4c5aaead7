package io.modelopt.core.model;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.modelopt.core.gguf.GgufModelSource;
import io.modelopt.core.hf.HfModelSource;
import io.modelopt.core.tensor.GgmlType;
import io.modelopt.core.tensor.TensorData;
import io.modelopt.core.testing.Fixtures;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.util.TreeSet;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The same model read from its GGUF file and from its Hugging Face directory: every tensor has
 * the same canonical name, dtype, shape and full contents, once the Q/K rows the GGUF converter
 * permuted are permuted back. Comparing all rows (not only the first and last) is what catches a
 * wrong permutation: it moves interior rows only.
 */
class CrossFormatTest {

    @ParameterizedTest(name = "{0}")
    @CsvSource({"stories260K, stories260K/gguf/stories260K-f32.gguf, stories260K/hf",
                "brown-llama, brown-llama/gguf/brown-llama-f32.gguf, brown-llama/hf"})
    void ggufAndHfHoldTheSameModel(String name, String gguf, String hf) {
        Path ggufPath = Fixtures.file(gguf);
        Path hfPath = Fixtures.file(hf);
        try (ModelSource g = GgufModelSource.open(ggufPath); ModelSource h = HfModelSource.open(hfPath)) {
            ModelConfig gc = g.config(), hc = h.config();
            assertEquals(RopeConvention.ADJACENT_PAIRS, gc.ropeConvention());
            assertEquals(RopeConvention.ROTATE_HALF, hc.ropeConvention());
            assertEquals(gc.hiddenSize(), hc.hiddenSize());
            assertEquals(gc.numLayers(), hc.numLayers());
            assertEquals(gc.numHeads(), hc.numHeads());
            assertEquals(gc.numKvHeads(), hc.numKvHeads());
            assertEquals(gc.headDim(), hc.headDim());
            assertEquals(gc.intermediateSize(), hc.intermediateSize());
            assertEquals(gc.vocabSize(), hc.vocabSize());
            assertEquals(gc.rmsNormEps(), hc.rmsNormEps(), 1e-12);
            assertEquals(gc.ropeTheta(), hc.ropeTheta(), 1e-3);

            assertEquals(new TreeSet<>(g.tensors().keySet()), new TreeSet<>(h.tensors().keySet()), "canonical tensor names");
            int permuted = 0;
            for (TensorData gt : g.tensors().values()) {
                TensorData ht = h.tensors().get(gt.name());
                assertEquals(GgmlType.F32, gt.type(), gt.name());
                assertEquals(gt.type(), ht.type(), gt.name());
                assertArrayEquals(gt.shape(), ht.shape(), gt.name() + " shape (ggml order)");
                float[] gv = gt.data().toArray(ValueLayout.JAVA_FLOAT_UNALIGNED);
                float[] hv = ht.data().toArray(ValueLayout.JAVA_FLOAT_UNALIGNED);
                int rows = (int) gt.rows(), cols = (int) gt.rowLength();
                if (gt.name().endsWith("attn_q.weight") || gt.name().endsWith("attn_k.weight")) {
                    int heads = gt.name().endsWith("attn_q.weight") ? gc.numHeads() : gc.numKvHeads();
                    assertArrayEquals(gv, TensorNames.permuteHfToGguf(hv, rows, cols, heads), gt.name() + " after the Q/K permutation");
                    assertNotEquals(java.util.Arrays.hashCode(gv), java.util.Arrays.hashCode(hv), gt.name() + " should differ before permuting");
                    assertArrayEquals(hv, TensorNames.permuteGgufToHf(gv, rows, cols, heads), gt.name() + " inverse permutation");
                    permuted++;
                } else {
                    assertArrayEquals(gv, hv, gt.name());
                }
            }
            assertEquals(2 * gc.numLayers(), permuted);
            assertTrue(g.tensors().size() >= 9 * gc.numLayers() + 2);
        }
    }
}
