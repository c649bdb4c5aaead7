package io.modelopt.core.safetensors;

import io.modelopt.core.ModelFormatException;
import io.modelopt.core.json.Json;
import io.modelopt.core.json.JsonException;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The JSON header of a safetensors file: tensor entries in header order and the optional
 * {@code __metadata__} string map. {@link #parse} validates it against the size of the data section
 * as the reference implementation ({@code Metadata::validate} in huggingface/safetensors) does: every
 * entry's byte span must equal {@code elements × dtype size} (overflow-checked), lie inside the
 * data section, and the spans sorted by offset must tile the data section exactly — no overlap, no
 * hole, no trailing bytes. {@link #encode} writes it back compactly, padded with spaces to a
 * multiple of 8 bytes as the reference serializer does.
 *
 * @param entries            tensor entries in the order their keys appear in the header
 * @param metadata           {@code __metadata__}, empty when absent
 * @param metadataPosition   where {@code __metadata__} is (or is to be) written among the keys
 */
public record SafetensorsHeader(List<Entry> entries, Map<String, String> metadata, MetadataPosition metadataPosition) {
    /** The name of the reserved metadata key. */
    public static final String METADATA_KEY = "__metadata__";

    /**
     * Where {@code __metadata__} sits among the header keys. The reference serializer writes it
     * FIRST; other writers (e.g. the script that made this project's fixtures) write it LAST.
     * Readers do not care; it matters only for reproducing a file byte for byte.
     */
    public enum MetadataPosition { FIRST, LAST }

    /**
     * One tensor of the header.
     *
     * @param shape PyTorch order
     * @param begin first byte, relative to the start of the data section
     * @param end   one past the last byte
     */
    public record Entry(String name, SafetensorsDType dtype, long[] shape, long begin, long end) {
        public Entry {
            Objects.requireNonNull(name, "name");
            Objects.requireNonNull(dtype, "dtype");
            shape = shape.clone();
        }

        @Override public long[] shape() { return shape.clone(); }

        public long byteSize() { return end - begin; }

        @Override public boolean equals(Object o) {
            return o instanceof Entry e && name.equals(e.name) && dtype == e.dtype && Arrays.equals(shape, e.shape) && begin == e.begin && end == e.end;
        }

        @Override public int hashCode() { return Objects.hash(name, dtype, Arrays.hashCode(shape), begin, end); }

        @Override public String toString() { return name + " " + dtype + Arrays.toString(shape) + " [" + begin + "," + end + ")"; }
    }

    public SafetensorsHeader {
        entries = List.copyOf(entries);
        metadata = Collections.unmodifiableMap(new LinkedHashMap<>(metadata));
        Objects.requireNonNull(metadataPosition, "metadataPosition");
    }

    /** Bytes of the data section the entries describe (the largest end offset). */
    public long dataSize() {
        long max = 0;
        for (Entry e : entries) max = Math.max(max, e.end);
        return max;
    }

    // ------------------------------------------------------------------ reading

    /**
     * Parses and validates a header.
     *
     * @param file       the file, for error messages
     * @param json       the header text (already UTF-8 decoded; trailing padding spaces allowed)
     * @param dataSize   bytes in the file after the header
     * @param baseOffset file offset of the header's first byte (8), for error positions
     * @throws ModelFormatException naming the file and the offending key or tensor
     */
    public static SafetensorsHeader parse(Path file, String json, long dataSize, long baseOffset) {
        Map<String, Object> root;
        try {
            root = Json.parseObject(json);
        } catch (JsonException e) {
            int at = Math.min(Math.max(e.offset(), 0), json.length());
            long byteOffset = baseOffset + json.substring(0, at).getBytes(StandardCharsets.UTF_8).length;
            throw new ModelFormatException(file, byteOffset, "header is not valid JSON: " + e.getMessage(), e);
        }
        Map<String, String> metadata = new LinkedHashMap<>();
        MetadataPosition position = MetadataPosition.FIRST;
        List<Entry> entries = new ArrayList<>(root.size());
        int index = 0;
        for (Map.Entry<String, Object> kv : root.entrySet()) {
            String key = kv.getKey();
            if (key.equals(METADATA_KEY)) {
                readMetadata(file, kv.getValue(), metadata);
                if (index == root.size() - 1 && index > 0) position = MetadataPosition.LAST;
            } else {
                entries.add(readEntry(file, key, kv.getValue()));
            }
            index++;
        }
        validate(file, entries, dataSize);
        return new SafetensorsHeader(entries, metadata, position);
    }

    private static void readMetadata(Path file, Object value, Map<String, String> out) {
        if (value == null) return; // serde reads null as None
        if (!(value instanceof Map<?, ?> m)) throw new ModelFormatException(file, METADATA_KEY + " must be an object of strings, found " + kind(value));
        for (Map.Entry<?, ?> e : m.entrySet()) {
            if (!(e.getValue() instanceof String s)) {
                throw new ModelFormatException(file, METADATA_KEY + "[\"" + e.getKey() + "\"] must be a string, found " + kind(e.getValue()));
            }
            out.put((String) e.getKey(), s);
        }
    }

    private static Entry readEntry(Path file, String name, Object value) {
        if (!(value instanceof Map<?, ?> m)) throw new ModelFormatException(file, "tensor '" + name + "': expected an object, found " + kind(value));
        Object dt = m.get("dtype");
        if (!(dt instanceof String dtName)) throw new ModelFormatException(file, "tensor '" + name + "': 'dtype' must be a string, found " + kind(dt));
        SafetensorsDType dtype = SafetensorsDType.fromName(dtName).orElseThrow(() ->
                new ModelFormatException(file, "tensor '" + name + "' has unknown dtype '" + dtName + "'"));
        long[] shape = longs(file, name, "shape", m.get("shape"), -1);
        long[] offsets = longs(file, name, "data_offsets", m.get("data_offsets"), 2);
        return new Entry(name, dtype, shape, offsets[0], offsets[1]);
    }

    private static long[] longs(Path file, String name, String field, Object value, int requiredLength) {
        if (!(value instanceof List<?> list)) throw new ModelFormatException(file, "tensor '" + name + "': '" + field + "' must be an array, found " + kind(value));
        if (requiredLength >= 0 && list.size() != requiredLength) {
            throw new ModelFormatException(file, "tensor '" + name + "': '" + field + "' must have " + requiredLength + " entries, found " + list.size());
        }
        long[] out = new long[list.size()];
        for (int i = 0; i < out.length; i++) {
            Object v = list.get(i);
            if (v instanceof Long l && l >= 0) out[i] = l;
            else if (v instanceof BigDecimal) throw new ModelFormatException(file, "tensor '" + name + "': '" + field + "' value " + v + " is too large");
            else throw new ModelFormatException(file, "tensor '" + name + "': '" + field + "' must hold non-negative integers, found " + v);
        }
        return out;
    }

    private static String kind(Object v) {
        return switch (v) {
            case null -> "null";
            case String s -> "a string";
            case Map<?, ?> m -> "an object";
            case List<?> l -> "an array";
            case Boolean b -> "a boolean";
            default -> "a number";
        };
    }

    private static void validate(Path file, List<Entry> entries, long dataSize) {
        for (Entry e : entries) {
            if (e.end < e.begin) {
                throw new ModelFormatException(file, "tensor '" + e.name + "': data_offsets [" + e.begin + "," + e.end + ") end before they begin");
            }
            long need;
            try {
                need = SafetensorsTensor.byteSizeOf(e.dtype, e.shape);
            } catch (ArithmeticException ex) {
                throw new ModelFormatException(file, "tensor '" + e.name + "': shape " + Arrays.toString(e.shape) + " of " + e.dtype + " overflows 64-bit byte counts");
            }
            if (need != e.end - e.begin) {
                throw new ModelFormatException(file, "tensor '" + e.name + "': shape " + Arrays.toString(e.shape) + " of " + e.dtype + " needs " + need
                        + " bytes but data_offsets [" + e.begin + "," + e.end + ") span " + (e.end - e.begin));
            }
            if (e.end > dataSize) {
                throw new ModelFormatException(file, "tensor '" + e.name + "': data_offsets [" + e.begin + "," + e.end + ") run past the end of the data section ("
                        + dataSize + " bytes; file truncated?)");
            }
        }
        List<Entry> sorted = new ArrayList<>(entries);
        sorted.sort(Comparator.comparingLong(Entry::begin).thenComparingLong(Entry::end));
        long covered = 0;
        Entry previous = null;
        for (Entry e : sorted) {
            if (e.begin < covered) {
                throw new ModelFormatException(file, "tensors '" + previous.name + "' [" + previous.begin + "," + previous.end + ") and '" + e.name + "' ["
                        + e.begin + "," + e.end + ") overlap");
            }
            if (e.begin > covered) {
                throw new ModelFormatException(file, "hole of " + (e.begin - covered) + " bytes in the data section before tensor '" + e.name + "' (at "
                        + covered + "); the format requires tensors to cover it contiguously");
            }
            covered = e.end;
            previous = e;
        }
        if (covered != dataSize) {
            throw new ModelFormatException(file, "data section has " + (dataSize - covered) + " trailing bytes after the last tensor (tensors cover "
                    + covered + " of " + dataSize + ")");
        }
    }

    // ------------------------------------------------------------------ writing

    /**
     * The header as written to a file: compact JSON ({@code {"name":{"dtype":..,"shape":[..],"data_offsets":[b,e]},...}},
     * keys in {@link #entries()} order, {@code __metadata__} at {@link #metadataPosition()} and left out
     * when empty), UTF-8, padded with spaces to a multiple of 8 bytes so the data section starts
     * 8-aligned. The 8-byte length prefix is not included.
     */
    public byte[] encode() {
        Map<String, Object> root = new LinkedHashMap<>();
        if (!metadata.isEmpty() && metadataPosition == MetadataPosition.FIRST) root.put(METADATA_KEY, metadata);
        for (Entry e : entries) {
            if (e.name.equals(METADATA_KEY)) throw new IllegalArgumentException("a tensor cannot be named " + METADATA_KEY);
            if (root.containsKey(e.name)) throw new IllegalArgumentException("duplicate tensor name " + e.name);
            Map<String, Object> info = new LinkedHashMap<>();
            info.put("dtype", e.dtype.name());
            info.put("shape", e.shape);
            info.put("data_offsets", new long[] {e.begin, e.end});
            root.put(e.name, info);
        }
        if (!metadata.isEmpty() && metadataPosition == MetadataPosition.LAST) root.put(METADATA_KEY, metadata);
        byte[] json = Json.write(root).getBytes(StandardCharsets.UTF_8);
        int padded = (json.length + 7) & ~7;
        byte[] out = Arrays.copyOf(json, padded);
        Arrays.fill(out, json.length, padded, (byte) ' ');
        return out;
    }
}
