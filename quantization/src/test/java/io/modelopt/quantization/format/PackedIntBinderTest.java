package io.modelopt.quantization.format;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.modelopt.core.ModelFormatException;
import io.modelopt.core.kernel.WeightMatrix;
import io.modelopt.core.model.ModelConfig;
import io.modelopt.core.model.ModelSource;
import io.modelopt.core.model.WeightBinder;
import io.modelopt.core.model.WeightBinders;
import io.modelopt.core.tensor.GgmlType;
import io.modelopt.core.tensor.TensorData;
import io.modelopt.core.tokenizer.Tokenizer;
import java.lang.foreign.Arena;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

class PackedIntBinderTest {
    private static final String W = "blk.0.attn_q.weight";

    /** A model source of just tensors and metadata. */
    record Source(Map<String, TensorData> tensors, Map<String, Object> metadata) implements ModelSource {
        @Override public Path path() { return Path.of("test-model.gguf"); }
        @Override public String format() { return "gguf"; }
        @Override public ModelConfig config() { throw new UnsupportedOperationException(); }
        @Override public Tokenizer tokenizer() { throw new UnsupportedOperationException(); }
        @Override public String fileTensorName(String canonicalName) { return canonicalName; }
        @Override public void close() {}
    }

    private static Source source(PackedIntTensors t) {
        Map<String, TensorData> tensors = new LinkedHashMap<>();
        for (TensorData d : t.tensors()) tensors.put(d.name(), d);
        Map<String, Object> meta = new HashMap<>();
        meta.put(PackedIntBinder.metadataKey(t.name()), t.scheme().formatName());
        return new Source(tensors, meta);
    }

    private static PackedIntTensors filled(IntScheme s, int rows, int cols, Arena arena) {
        var src = IntRowsForTests.randomLayout(s, rows, cols, 4);
        PackedIntTensors t = PackedIntTensors.allocate(W, s, rows, cols, arena);
        for (int r = 0; r < rows; r++) t.writeRow(r, src.rows[r]);
        return t;
    }

    @Test
    void isRegisteredAndClaimsI32Weights() {
        assertTrue(WeightBinders.all().stream().anyMatch(b -> b instanceof PackedIntBinder));
        assertEquals("modelopt.weight_format." + W, PackedIntBinder.metadataKey(W));
        WeightBinder b = new PackedIntBinder();
        assertTrue(b.claims(W, GgmlType.I32));
        assertFalse(b.claims(W, GgmlType.F16));
        assertFalse(b.claims(W + "_scale", GgmlType.I32));
    }

    @Test
    void bindsWhatPackedIntTensorsWrote() {
        for (IntScheme s : new IntScheme[] {IntScheme.of(4, 128, false), IntScheme.of(3, 32, true), IntScheme.int8(),
                new IntScheme(8, -1, true, IntScheme.ScaleType.F32)}) {
            try (Arena arena = Arena.ofConfined()) {
                PackedIntTensors t = filled(s, 3, 256, arena);
                WeightMatrix w = new PackedIntBinder().bind(source(t), W);
                assertSame(PackedIntLayout.format(s), w.format());
                assertEquals(3, w.rows());
                assertEquals(256, w.cols());
                float[] a = new float[256], b = new float[256];
                for (int r = 0; r < 3; r++) {
                    w.dequantizeRow(r, a, 0);
                    t.matrix().dequantizeRow(r, b, 0);
                    assertArrayEquals(b, a);
                }
            }
        }
    }

    @Test
    void aWeightWithoutMetadataIsNotOurs() {
        try (Arena arena = Arena.ofConfined()) {
            Source src = source(filled(IntScheme.of(4, 32, true), 2, 64, arena));
            src.metadata().clear();
            assertNull(new PackedIntBinder().bind(src, W));
        }
    }

    @Test
    void missingOrMisshapenPartsAreClearErrors() {
        try (Arena arena = Arena.ofConfined()) {
            Source src = source(filled(IntScheme.of(4, 32, false), 2, 64, arena));
            src.tensors().remove(W + "_zero_point");
            var e = assertThrows(ModelFormatException.class, () -> new PackedIntBinder().bind(src, W));
            assertTrue(e.getMessage().contains(W + "_zero_point is missing"), e.getMessage());

            Source src2 = source(filled(IntScheme.of(4, 32, false), 2, 64, arena));
            src2.tensors().put(W + "_scale", new TensorData(W + "_scale", GgmlType.F16, new long[] {1, 2}, arena.allocate(4)));
            e = assertThrows(ModelFormatException.class, () -> new PackedIntBinder().bind(src2, W));
            assertTrue(e.getMessage().contains("expected F16[2, 2]"), e.getMessage());

            Source src3 = source(filled(IntScheme.of(4, 32, false), 2, 64, arena));
            src3.metadata().put(PackedIntBinder.metadataKey(W), "INT5_G32_SYM");
            e = assertThrows(ModelFormatException.class, () -> new PackedIntBinder().bind(src3, W));
            assertTrue(e.getMessage().contains("unknown packed integer format INT5_G32_SYM"), e.getMessage());

            Source src4 = source(filled(IntScheme.of(4, 32, false), 2, 64, arena));
            src4.metadata().put(PackedIntBinder.metadataKey(W), "INT4_G128_ASYM"); // 64 columns: not a whole 128-group
            e = assertThrows(ModelFormatException.class, () -> new PackedIntBinder().bind(src4, W));
            assertTrue(e.getMessage().contains(W), e.getMessage());
        }
    }
}
