package io.modelopt.core.testformat;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.modelopt.core.ModelOptimizer;
import io.modelopt.core.OptimizedModel;
import io.modelopt.core.ProgressListener;
import io.modelopt.core.eval.Perplexity;
import io.modelopt.core.eval.WindowProtocol;
import io.modelopt.core.kernel.WeightFormats;
import io.modelopt.core.kv.KvDtype;
import io.modelopt.core.model.llama.LlamaWeights;
import io.modelopt.core.safetensors.SafetensorsCheckpoint;
import io.modelopt.core.safetensors.SafetensorsDType;
import io.modelopt.core.safetensors.SafetensorsTensor;
import io.modelopt.core.safetensors.SafetensorsWriter;
import io.modelopt.core.testing.Fixtures;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A format registered from the test sources ({@link RowScaledInt8}, bound by {@link RowScaledInt8Binder}
 * through {@code META-INF/services}) works end to end without any core switch knowing it: the
 * brown-llama checkpoint with every linear weight stored as I8 plus a per-row F32
 * {@code weight_scale} loads, runs and scores the same perplexity as the same weights
 * dequantized to F32 and run by core's own F32 format.
 */
class RegisteredFormatEndToEndTest {
    private static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(java.nio.ByteOrder.LITTLE_ENDIAN);
    private static final List<String> LINEARS = List.of("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj");

    @TempDir Path tmp;

    @Test
    void int8CheckpointLoadsRunsAndScoresLikeItsDequantizedTwin() throws IOException {
        Path hf = Fixtures.brownHf();
        Path int8 = tmp.resolve("int8"), twin = tmp.resolve("twin");
        writeCheckpoints(hf, int8, twin);

        assertTrue(WeightFormats.named("TEST_INT8_ROW_SCALED").isPresent(), "the provider was found by ServiceLoader");
        try (ModelOptimizer m = ModelOptimizer.load(int8)) {
            LlamaWeights w = LlamaWeights.bind(m.source());
            assertEquals(RowScaledInt8.FORMAT, w.layer(0).wq().format());
            assertEquals(RowScaledInt8.FORMAT, w.layer(w.numLayers() - 1).down().format());
            assertEquals("F32", w.output().format().name(), "lm_head is not a quantized linear here");
        }

        String text = Files.readString(Fixtures.file("corpora/brown/test.txt")).substring(0, 4_000);
        double pInt8 = perplexity(int8, text), pTwin = perplexity(twin, text);
        assertTrue(pInt8 > 1 && pInt8 < 1e4, "a sane perplexity: " + pInt8);
        assertEquals(pTwin, pInt8, pTwin * 1e-5, "same weights, two formats: same perplexity (float order only)");
    }

    private static double perplexity(Path dir, String text) {
        try (OptimizedModel model = ModelOptimizer.load(dir).withKvCache(KvDtype.F32).withThreads(2).build()) {
            Perplexity.Result r = model.perplexity(text, WindowProtocol.llamaCpp(128, model.tokenizer().bosId()), ProgressListener.NONE);
            return r.perplexity();
        }
    }

    /** {@code int8}: linears as I8 + weight_scale; {@code twin}: the same values as F32; everything else copied. */
    private static void writeCheckpoints(Path hf, Path int8, Path twin) throws IOException {
        Files.createDirectories(int8);
        Files.createDirectories(twin);
        for (String f : List.of("config.json", "tokenizer.json", "tokenizer.model", "tokenizer_config.json")) {
            if (Files.exists(hf.resolve(f))) {
                Files.copy(hf.resolve(f), int8.resolve(f));
                Files.copy(hf.resolve(f), twin.resolve(f));
            }
        }
        try (SafetensorsCheckpoint ckpt = SafetensorsCheckpoint.open(hf); Arena arena = Arena.ofConfined()) {
            SafetensorsWriter a = new SafetensorsWriter().metadata("format", "pt"), b = new SafetensorsWriter().metadata("format", "pt");
            for (SafetensorsTensor t : ckpt.tensors().values()) {
                boolean linear = t.name().endsWith(".weight") && LINEARS.stream().anyMatch(l -> t.name().contains("." + l + "."));
                if (!linear) {
                    a.add(t.name(), t.dtype(), t.shape(), t.data());
                    b.add(t.name(), t.dtype(), t.shape(), t.data());
                    continue;
                }
                long[] shape = t.shape();
                int rows = (int) shape[0], cols = (int) shape[1];
                MemorySegment q = arena.allocate((long) rows * cols), scales = arena.allocate(4L * rows), deq = arena.allocate(4L * rows * cols);
                for (int r = 0; r < rows; r++) {
                    float max = 0;
                    for (int k = 0; k < cols; k++) max = Math.max(max, Math.abs(t.data().get(F32, 4L * ((long) r * cols + k))));
                    float scale = max == 0 ? 1 : max / 127f;
                    scales.set(F32, 4L * r, scale);
                    for (int k = 0; k < cols; k++) {
                        long i = (long) r * cols + k;
                        int v = Math.round(t.data().get(F32, 4 * i) / scale);
                        q.set(ValueLayout.JAVA_BYTE, i, (byte) Math.max(-127, Math.min(127, v)));
                        deq.set(F32, 4 * i, q.get(ValueLayout.JAVA_BYTE, i) * scale);
                    }
                }
                a.add(t.name(), SafetensorsDType.I8, shape, q);
                a.add(t.name() + "_scale", SafetensorsDType.F32, new long[] {rows}, scales);
                b.add(t.name(), SafetensorsDType.F32, shape, deq);
            }
            a.write(int8.resolve(SafetensorsCheckpoint.SINGLE_FILE));
            b.write(twin.resolve(SafetensorsCheckpoint.SINGLE_FILE));
        }
    }
}
