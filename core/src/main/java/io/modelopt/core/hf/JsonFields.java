package io.modelopt.core.hf;

import io.modelopt.core.ModelFormatException;
import io.modelopt.core.json.Json;
import io.modelopt.core.json.JsonException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Typed reads from one JSON object of an HF file ({@code config.json}, {@code generation_config.json}),
 * every failure a {@link ModelFormatException} naming the file and the key. A key holding JSON
 * {@code null} counts as absent, as transformers treats it (its defaults apply). {@code prefix} names
 * a nested object in messages (e.g. {@code rope_scaling.}).
 */
record JsonFields(Path file, Map<String, Object> map, String prefix) {

    /** Reads and parses a JSON object file. */
    static JsonFields read(Path file) {
        String text;
        try {
            text = Files.readString(file, StandardCharsets.UTF_8);
        } catch (CharacterCodingException e) {
            throw new ModelFormatException(file, "not valid UTF-8", e);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + file + ": " + e.getMessage(), e);
        }
        try {
            return new JsonFields(file, Json.parseObject(text), "");
        } catch (JsonException e) {
            throw new ModelFormatException(file, "not valid JSON: " + e.getMessage(), e);
        }
    }

    boolean has(String key) { return map.get(key) != null; }

    private String name(String key) { return "'" + prefix + key + "'"; }

    private ModelFormatException wrongType(String key, String expected) {
        Object v = map.get(key);
        return new ModelFormatException(file, "key " + name(key) + " must be " + expected + ", found " + describe(v));
    }

    static String describe(Object v) {
        return switch (v) {
            case null -> "null";
            case String s -> "the string \"" + s + "\"";
            case Map<?, ?> m -> "an object";
            case List<?> l -> "an array";
            default -> String.valueOf(v);
        };
    }

    private Object require(String key) {
        Object v = map.get(key);
        if (v == null) {
            throw new ModelFormatException(file, map.containsKey(key) ? "required key " + name(key) + " is null" : "missing required key " + name(key));
        }
        return v;
    }

    int requireInt(String key) { return toInt(key, require(key)); }

    Optional<Integer> optInt(String key) { return has(key) ? Optional.of(toInt(key, map.get(key))) : Optional.empty(); }

    int optInt(String key, int fallback) { return optInt(key).orElse(fallback); }

    private int toInt(String key, Object v) {
        if (v instanceof Long l && l >= Integer.MIN_VALUE && l <= Integer.MAX_VALUE) return (int) (long) l;
        throw wrongType(key, "an integer");
    }

    double requireDouble(String key) { return toDouble(key, require(key)); }

    Optional<Double> optDouble(String key) { return has(key) ? Optional.of(toDouble(key, map.get(key))) : Optional.empty(); }

    double optDouble(String key, double fallback) { return optDouble(key).orElse(fallback); }

    private double toDouble(String key, Object v) {
        if (v instanceof Number n && !(v instanceof java.math.BigDecimal)) return n.doubleValue();
        throw wrongType(key, "a number");
    }

    Optional<Boolean> optBool(String key) {
        if (!has(key)) return Optional.empty();
        if (map.get(key) instanceof Boolean b) return Optional.of(b);
        throw wrongType(key, "true or false");
    }

    boolean optBool(String key, boolean fallback) { return optBool(key).orElse(fallback); }

    Optional<String> optString(String key) {
        if (!has(key)) return Optional.empty();
        if (map.get(key) instanceof String s) return Optional.of(s);
        throw wrongType(key, "a string");
    }

    String requireString(String key) {
        if (require(key) instanceof String s) return s;
        throw wrongType(key, "a string");
    }

    /** A token id or a list of token ids ({@code eos_token_id} may be either). */
    Optional<int[]> optIntOrList(String key) {
        if (!has(key)) return Optional.empty();
        Object v = map.get(key);
        if (v instanceof Long) return Optional.of(new int[] {toInt(key, v)});
        if (v instanceof List<?> list) {
            int[] out = new int[list.size()];
            for (int i = 0; i < out.length; i++) {
                if (!(list.get(i) instanceof Long l) || l < Integer.MIN_VALUE || l > Integer.MAX_VALUE) throw wrongType(key, "an integer or a list of integers");
                out[i] = (int) (long) l;
            }
            return Optional.of(out);
        }
        throw wrongType(key, "an integer or a list of integers");
    }

    @SuppressWarnings("unchecked")
    Optional<JsonFields> optObject(String key) {
        if (!has(key)) return Optional.empty();
        if (map.get(key) instanceof Map<?, ?> m) return Optional.of(new JsonFields(file, (Map<String, Object>) m, prefix + key + "."));
        throw wrongType(key, "an object");
    }

    @SuppressWarnings("unchecked")
    Optional<List<Object>> optList(String key) {
        if (!has(key)) return Optional.empty();
        if (map.get(key) instanceof List<?> l) return Optional.of((List<Object>) l);
        throw wrongType(key, "an array");
    }
}
