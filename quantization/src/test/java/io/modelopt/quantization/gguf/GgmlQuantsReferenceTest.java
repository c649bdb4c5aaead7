package io.modelopt.quantization.gguf;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.modelopt.core.tensor.GgmlType;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Byte identity with ggml's own {@code quantize_<type>} (compiled from the oracle commit, see
 * resources ggml-quants/README.md) for every type, with and without importance, on rows with
 * outliers, an all-zero block and zero weights: the types the model fixtures do not cover
 * (Q4_1, Q5_0, Q5_1, IQ4_NL) and harder inputs for the others.
 */
class GgmlQuantsReferenceTest {
    private static final int ROWS = 4, N = 512;

    private static byte[] resource(String name) throws IOException {
        try (InputStream in = GgmlQuantsReferenceTest.class.getResourceAsStream("ggml-quants/" + name)) {
            if (in == null) throw new IllegalStateException("missing test resource ggml-quants/" + name);
            return in.readAllBytes();
        }
    }

    private static float[] floats(byte[] b) {
        float[] f = new float[b.length / 4];
        ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN).asFloatBuffer().get(f);
        return f;
    }

    @ParameterizedTest(name = "{0} imatrix={1}")
    @CsvSource({
            "Q4_0, false", "Q4_0, true", "Q4_1, false", "Q4_1, true", "Q5_0, false", "Q5_0, true", "Q5_1, false", "Q5_1, true",
            "Q8_0, false", "Q8_0, true", "Q2_K, false", "Q2_K, true", "Q3_K, false", "Q3_K, true", "Q4_K, false", "Q4_K, true",
            "Q5_K, false", "Q5_K, true", "Q6_K, false", "Q6_K, true", "IQ4_NL, false", "IQ4_NL, true",
    })
    void matchesGgmlBytes(GgmlType type, boolean withImportance) throws IOException {
        float[] x = floats(resource("input.f32"));
        float[] qw = withImportance ? floats(resource("imatrix.f32")) : null;
        byte[] want = resource(type.name().toLowerCase().replace("_k", "_K") + (withImportance ? "-imatrix" : "") + ".bin");
        byte[] got = new byte[want.length];
        BlockQuantizer.of(type).quantize(x, 0, ROWS, N, qw, got, 0);
        int bs = type.typeSize(), diff = 0;
        for (int b = 0; b < want.length / bs; b++) {
            if (!Arrays.equals(want, b * bs, (b + 1) * bs, got, b * bs, (b + 1) * bs)) diff++;
        }
        assertEquals(0, diff, type + (withImportance ? " with importance" : "") + ": blocks differing from ggml of " + want.length / bs);
    }
}
