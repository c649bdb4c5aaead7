package io.modelopt.core.safetensors;

import io.modelopt.core.ModelFormatException;
import io.modelopt.core.json.Json;
import io.modelopt.core.json.JsonException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * The index of a sharded checkpoint, {@code model.safetensors.index.json} as transformers'
 * {@code save_pretrained} writes it: {@code {"metadata": {"total_size": N, ...}, "weight_map":
 * {tensor name: shard file name}}}.
 *
 * @param weightMap tensor name → shard file name (relative to the index's folder), in file order
 * @param metadata  the {@code metadata} object (empty when absent)
 */
public record SafetensorsIndex(Map<String, String> weightMap, Map<String, Object> metadata) {
    /** The index file name transformers uses for safetensors checkpoints. */
    public static final String FILE_NAME = "model.safetensors.index.json";

    public SafetensorsIndex {
        weightMap = Collections.unmodifiableMap(new LinkedHashMap<>(weightMap));
        metadata = Collections.unmodifiableMap(new LinkedHashMap<>(metadata));
    }

    /** Reads an index file; malformed content throws {@link ModelFormatException} naming the file and key. */
    public static SafetensorsIndex read(Path file) {
        String text;
        try {
            text = Files.readString(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + file + ": " + e.getMessage(), e);
        }
        Map<String, Object> root;
        try {
            root = Json.parseObject(text);
        } catch (JsonException e) {
            throw new ModelFormatException(file, "not valid JSON: " + e.getMessage(), e);
        }
        if (!(root.get("weight_map") instanceof Map<?, ?> wm)) {
            throw new ModelFormatException(file, root.containsKey("weight_map") ? "'weight_map' must be an object" : "missing key 'weight_map'");
        }
        Map<String, String> weightMap = new LinkedHashMap<>();
        for (Map.Entry<?, ?> e : wm.entrySet()) {
            if (!(e.getValue() instanceof String shard)) throw new ModelFormatException(file, "weight_map[\"" + e.getKey() + "\"] must be a file name string");
            weightMap.put((String) e.getKey(), shard);
        }
        Map<String, Object> metadata = new LinkedHashMap<>();
        Object md = root.get("metadata");
        if (md instanceof Map<?, ?> m) m.forEach((k, v) -> metadata.put((String) k, v));
        else if (md != null) throw new ModelFormatException(file, "'metadata' must be an object");
        return new SafetensorsIndex(weightMap, metadata);
    }

    /**
     * Writes an index like transformers does (keys sorted, two-space indentation, trailing newline),
     * with {@code metadata.total_size} = {@code totalSize}.
     */
    public static void write(Path file, Map<String, String> weightMap, long totalSize) throws IOException {
        Map<String, Object> root = new LinkedHashMap<>();
        root.put("metadata", Map.of("total_size", totalSize));
        root.put("weight_map", new TreeMap<>(weightMap));
        Files.writeString(file, Json.writePretty(root) + "\n", StandardCharsets.UTF_8);
    }
}
