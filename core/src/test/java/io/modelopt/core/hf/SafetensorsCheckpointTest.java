package io.modelopt.core.hf;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.modelopt.core.ModelFormatException;
import io.modelopt.core.safetensors.SafetensorsCheckpoint;
import io.modelopt.core.safetensors.SafetensorsFile;
import io.modelopt.core.safetensors.SafetensorsIndex;
import io.modelopt.core.safetensors.SafetensorsTensor;
import io.modelopt.core.safetensors.SafetensorsWriter;
import io.modelopt.core.tensor.TensorData;
import io.modelopt.core.testing.Fixtures;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Sharded checkpoints written by {@link SafetensorsWriter} + {@link SafetensorsIndex} load like the single file. */
class SafetensorsCheckpointTest {
    @TempDir Path tmp;

    /** Splits {@code source} in header order into {@code n} shards named as transformers names them. */
    static Map<String, String> split(Path source, Path dir, int n) throws IOException {
        Files.createDirectories(dir);
        Map<String, String> weightMap = new LinkedHashMap<>();
        try (SafetensorsFile f = SafetensorsFile.open(source)) {
            List<SafetensorsTensor> all = new ArrayList<>(f.tensors().values());
            long total = 0;
            for (int s = 0; s < n; s++) {
                String shard = String.format("model-%05d-of-%05d.safetensors", s + 1, n);
                SafetensorsWriter w = new SafetensorsWriter().metadata(f.metadata());
                for (int i = s * all.size() / n; i < (s + 1) * all.size() / n; i++) {
                    w.add(all.get(i));
                    weightMap.put(all.get(i).name(), shard);
                    total += all.get(i).byteSize();
                }
                w.write(dir.resolve(shard));
            }
            SafetensorsIndex.write(dir.resolve(SafetensorsIndex.FILE_NAME), weightMap, total);
        }
        Files.copy(source.resolveSibling("config.json"), dir.resolve("config.json"));
        return weightMap;
    }

    @Test void shardedBrownLoadsIdentically() throws IOException {
        Path hf = Fixtures.brownHf();
        Path dir = tmp.resolve("sharded");
        split(hf.resolve("model.safetensors"), dir, 3);
        try (SafetensorsCheckpoint single = SafetensorsCheckpoint.open(hf); SafetensorsCheckpoint sharded = SafetensorsCheckpoint.open(dir)) {
            assertTrue(sharded.isSharded());
            assertEquals(3, sharded.files().size());
            assertEquals(single.tensorNames(), sharded.tensorNames());
            for (SafetensorsTensor a : single.tensors().values()) {
                SafetensorsTensor b = sharded.tensors().get(a.name());
                assertEquals(a.dtype(), b.dtype());
                assertArrayEquals(a.shape(), b.shape());
                assertEquals(-1, a.data().mismatch(b.data()), a.name());
            }
            assertEquals(5_245_184L * 4, ((Number) sharded.index().orElseThrow().metadata().get("total_size")).longValue());
            assertEquals("model-00003-of-00003.safetensors", sharded.fileOf("lm_head.weight").orElseThrow().getFileName().toString());
        }
        try (HfModelSource a = HfModelSource.open(hf); HfModelSource b = HfModelSource.open(dir)) {
            assertEquals(a.config(), b.config());
            assertEquals(new ArrayList<>(a.tensors().keySet()), new ArrayList<>(b.tensors().keySet()));
            for (TensorData t : a.tensors().values()) {
                TensorData u = b.tensors().get(t.name());
                assertEquals(t.type(), u.type());
                assertArrayEquals(t.shape(), u.shape());
                assertEquals(-1, t.data().mismatch(u.data()), t.name());
            }
        }
    }

    @Test void missingShardIsNamed() throws IOException {
        Path dir = tmp.resolve("missing");
        split(Fixtures.storiesHf().resolve("model.safetensors"), dir, 2);
        Files.delete(dir.resolve("model-00002-of-00002.safetensors"));
        ModelFormatException e = assertThrows(ModelFormatException.class, () -> SafetensorsCheckpoint.open(dir));
        assertTrue(e.getMessage().contains("shard file 'model-00002-of-00002.safetensors'") && e.getMessage().contains("is missing"), e.getMessage());
        assertTrue(e.getMessage().startsWith(dir.resolve(SafetensorsIndex.FILE_NAME).toString()), e.getMessage());
    }

    @Test void tensorNotWhereTheIndexSays() throws IOException {
        Path dir = tmp.resolve("wrong");
        Map<String, String> map = split(Fixtures.storiesHf().resolve("model.safetensors"), dir, 2);
        map.put("model.norm.weight", "model-00001-of-00002.safetensors"); // it is in shard 2
        SafetensorsIndex.write(dir.resolve(SafetensorsIndex.FILE_NAME), map, 0);
        ModelFormatException e = assertThrows(ModelFormatException.class, () -> SafetensorsCheckpoint.open(dir));
        assertTrue(e.getMessage().contains("tensor 'model.norm.weight' in shard 'model-00001-of-00002.safetensors'")
                && e.getMessage().contains("it is in model-00002-of-00002.safetensors"), e.getMessage());

        map.put("model.norm.weight", "model-00002-of-00002.safetensors");
        map.put("ghost.weight", "model-00002-of-00002.safetensors");
        SafetensorsIndex.write(dir.resolve(SafetensorsIndex.FILE_NAME), map, 0);
        e = assertThrows(ModelFormatException.class, () -> SafetensorsCheckpoint.open(dir));
        assertTrue(e.getMessage().contains("'ghost.weight'") && e.getMessage().contains("no shard does"), e.getMessage());
    }

    @Test void badIndexAndEscapingShard() throws IOException {
        Path dir = Files.createDirectories(tmp.resolve("bad"));
        Path idx = dir.resolve(SafetensorsIndex.FILE_NAME);
        Files.writeString(idx, "{\"metadata\":{}}");
        assertTrue(assertThrows(ModelFormatException.class, () -> SafetensorsCheckpoint.open(dir)).getMessage().contains("missing key 'weight_map'"));
        Files.writeString(idx, "{\"weight_map\":{\"a\":\"../x.safetensors\"}}");
        assertTrue(assertThrows(ModelFormatException.class, () -> SafetensorsCheckpoint.open(dir)).getMessage().contains("outside the checkpoint directory"));
        Files.writeString(idx, "{\"weight_map\":{\"a\":3}}");
        assertTrue(assertThrows(ModelFormatException.class, () -> SafetensorsCheckpoint.open(dir)).getMessage().contains("weight_map[\"a\"]"));
        Files.writeString(idx, "{\"weight_map\":");
        assertTrue(assertThrows(ModelFormatException.class, () -> SafetensorsCheckpoint.open(dir)).getMessage().contains("not valid JSON"));
        Path empty = Files.createDirectories(tmp.resolve("empty"));
        ModelFormatException e = assertThrows(ModelFormatException.class, () -> SafetensorsCheckpoint.open(empty));
        assertTrue(e.getMessage().startsWith(empty.toString()) && e.getMessage().contains("model.safetensors"), e.getMessage());
    }
}
