package io.modelopt.core.quant;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.modelopt.core.tensor.GgmlType;
import io.modelopt.core.tensor.TensorData;
import io.modelopt.core.testing.Fixtures;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Against files llama.cpp wrote: brown-llama's quantized GGUFs were made by {@code llama-quantize}
 * (no importance matrix) from {@code brown-llama-f32.gguf}. So (1) each quantized tensor decodes to
 * the F32 tensor within the format's error, and (2) our {@code quantizeReference} of the F32 tensor
 * reproduces llama-quantize's bytes.
 */
class FixtureQuantsTest {
    static Map<String, TensorData> f32;

    @BeforeAll
    static void load() throws IOException {
        f32 = TestGguf.tensors(Fixtures.brownGguf("f32"));
    }

    interface Quantizer {
        void quantize(float[] src, int off, int n, MemorySegment dst, long dstOff);
    }

    static Quantizer quantizer(GgmlType t) {
        return switch (t) {
            case Q8_0 -> Q8_0::quantizeReference;
            case Q4_0 -> Q4_0::quantizeReference;
            case Q4_K -> Q4_K::quantizeReference;
            case Q6_K -> Q6_K::quantizeReference;
            default -> throw new IllegalArgumentException(t.toString());
        };
    }

    static float[] floats(TensorData t) {
        return t.data().toArray(ValueLayout.JAVA_FLOAT_UNALIGNED);
    }

    /**
     * file, type, max relative RMS error of the decoded weights (‖deq − f32‖ / ‖f32‖ over a
     * tensor): about 2^-8 for 8 bits, 2^-4 for 4 bits with block scales.
     */
    @ParameterizedTest
    @CsvSource({"q8_0, Q8_0, 0.006", "q4_0, Q4_0, 0.12", "q4_K_M, Q4_K, 0.09", "q4_K_M, Q6_K, 0.03", "q6_K, Q6_K, 0.03"})
    void quantizedTensorsDecodeToF32AndQuantizeReferenceReproducesThem(String file, GgmlType type, double maxRelRms) throws IOException {
        Map<String, TensorData> q = TestGguf.tensors(Fixtures.brownGguf(file));
        int checked = 0;
        long blocks = 0, differingBlocks = 0;
        for (TensorData t : q.values()) {
            if (t.type() != type) continue;
            TensorData ref = f32.get(t.name());
            float[] src = floats(ref);
            int n = src.length;
            float[] deq = new float[n];
            switch (type) {
                case Q8_0 -> Q8_0.dequantize(t.data(), 0, deq, 0, n);
                case Q4_0 -> Q4_0.dequantize(t.data(), 0, deq, 0, n);
                case Q4_K -> Q4_K.dequantize(t.data(), 0, deq, 0, n);
                case Q6_K -> Q6_K.dequantize(t.data(), 0, deq, 0, n);
                default -> throw new IllegalStateException();
            }
            double err = 0, norm = 0;
            for (int i = 0; i < n; i++) {
                err += (deq[i] - (double) src[i]) * (deq[i] - (double) src[i]);
                norm += (double) src[i] * src[i];
            }
            double rel = Math.sqrt(err / norm);
            assertTrue(rel < maxRelRms, t.name() + " " + type + ": relative RMS error " + rel);

            MemorySegment mine = Arena.ofAuto().allocate(t.byteSize());
            quantizer(type).quantize(src, 0, n, mine, 0);
            int bb = type.typeSize();
            for (long b = 0; b < t.byteSize() / bb; b++) {
                blocks++;
                if (mine.asSlice(b * bb, bb).mismatch(t.data().asSlice(b * bb, bb)) >= 0) differingBlocks++;
            }
            checked++;
        }
        assertTrue(checked > 0, "no " + type + " tensor in " + file);
        assertEquals(0, differingBlocks, type + ": blocks differing from llama-quantize's, of " + blocks);
    }
}
