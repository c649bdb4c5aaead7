package io.modelopt.quantization.gguf;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.modelopt.core.gguf.GgufFile;
import io.modelopt.core.tensor.TensorData;
import io.modelopt.core.testing.Fixtures;
import java.io.IOException;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The proof of the GGUF quantizers: quantizing brown-llama's F32 GGUF reproduces every file
 * llama-quantize made from it (../shared/fixtures/brown-llama/gguf and imatrix/gguf), tensor types
 * and tensor bytes, and the whole file byte for byte (metadata included).
 */
class LlamaQuantizeFixturesTest {
    static final String IMATRIX = "brown-llama/imatrix/brown-llama-train-c256-128chunks.imatrix";

    @TempDir Path tmp;

    @ParameterizedTest(name = "{0} imatrix={1}: {2}")
    @CsvSource({
            "Q8_0,   false, brown-llama/gguf/brown-llama-q8_0.gguf",
            "Q6_K,   false, brown-llama/gguf/brown-llama-q6_K.gguf",
            "Q4_K_M, false, brown-llama/gguf/brown-llama-q4_K_M.gguf",
            "Q4_0,   false, brown-llama/gguf/brown-llama-q4_0.gguf",
            "Q2_K,   false, brown-llama/imatrix/gguf/brown-llama-q2_K.gguf",
            "Q3_K_S, false, brown-llama/imatrix/gguf/brown-llama-q3_K_S.gguf",
            "Q3_K_M, false, brown-llama/imatrix/gguf/brown-llama-q3_K_M.gguf",
            "Q3_K_L, false, brown-llama/imatrix/gguf/brown-llama-q3_K_L.gguf",
            "Q4_K_S, false, brown-llama/imatrix/gguf/brown-llama-q4_K_S.gguf",
            "Q5_K_M, false, brown-llama/imatrix/gguf/brown-llama-q5_K_M.gguf",
            "Q2_K,   true,  brown-llama/imatrix/gguf/brown-llama-q2_K-imatrix.gguf",
            "Q3_K_S, true,  brown-llama/imatrix/gguf/brown-llama-q3_K_S-imatrix.gguf",
            "Q3_K_M, true,  brown-llama/imatrix/gguf/brown-llama-q3_K_M-imatrix.gguf",
            "Q3_K_L, true,  brown-llama/imatrix/gguf/brown-llama-q3_K_L-imatrix.gguf",
            "Q4_0,   true,  brown-llama/imatrix/gguf/brown-llama-q4_0-imatrix.gguf",
            "Q4_K_S, true,  brown-llama/imatrix/gguf/brown-llama-q4_K_S-imatrix.gguf",
            "Q4_K_M, true,  brown-llama/imatrix/gguf/brown-llama-q4_K_M-imatrix.gguf",
            "Q5_K_M, true,  brown-llama/imatrix/gguf/brown-llama-q5_K_M-imatrix.gguf",
    })
    void reproducesLlamaQuantize(String preset, boolean withImatrix, String fixture) throws IOException {
        Path f32 = Fixtures.brownGguf("f32");
        Path expected = Fixtures.file(fixture);
        GgufQuantizer q = GgufQuantizer.forPreset(preset);
        if (withImatrix) q.imatrix(ImatrixFile.read(Fixtures.file(IMATRIX)), IMATRIX);
        Path out = tmp.resolve("out.gguf");
        List<long[]> progress = new ArrayList<>();
        q.listener((stage, done, total) -> progress.add(new long[] {done, total}));
        q.quantize(f32, out);
        assertTrue(progress.size() > 1, "progress was reported");
        assertEquals(progress.get(progress.size() - 1)[0], progress.get(progress.size() - 1)[1], "progress ends complete");

        List<String> problems = new ArrayList<>();
        int sameTensors = 0;
        try (GgufFile want = GgufFile.open(expected); GgufFile got = GgufFile.open(out)) {
            assertEquals(new ArrayList<>(want.tensors().keySet()), new ArrayList<>(got.tensors().keySet()), "tensor names and order");
            for (Map.Entry<String, TensorData> e : want.tensors().entrySet()) {
                TensorData w = e.getValue(), g = got.tensor(e.getKey());
                if (w.type() != g.type()) {
                    problems.add(e.getKey() + ": type " + g.type() + ", llama-quantize " + w.type());
                    continue;
                }
                byte[] wb = w.data().toArray(ValueLayout.JAVA_BYTE), gb = g.data().toArray(ValueLayout.JAVA_BYTE);
                int bs = w.type().typeSize(), blocks = wb.length / bs, diff = 0;
                for (int b = 0; b < blocks; b++) {
                    if (!java.util.Arrays.equals(wb, b * bs, (b + 1) * bs, gb, b * bs, (b + 1) * bs)) diff++;
                }
                if (diff == 0) sameTensors++;
                else problems.add(e.getKey() + " " + w.type() + ": " + diff + " of " + blocks + " blocks differ");
            }
            System.out.printf("%s%s: %d/%d tensors byte-identical%n", preset, withImatrix ? "+imatrix" : "", sameTensors, want.tensors().size());
            assertEquals(List.of(), problems, preset + (withImatrix ? " with imatrix" : "") + ": " + sameTensors + "/" + want.tensors().size() + " tensors identical");
            assertEquals(want.metadata().keySet().stream().toList(), got.metadata().keySet().stream().toList(), "metadata keys and order");
        }
        assertArrayEquals(Files.readAllBytes(expected), Files.readAllBytes(out), "whole file byte-identical");
    }
}
