package io.modelopt.server;

import java.math.BigDecimal;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Typed reads of a request's JSON object. Every wrong type or out-of-range value is a 400 naming
 * the field ({@code param}); a field given as {@code null} reads as absent, as OpenAI's API treats
 * it. The names read are recorded so that {@link #unread()} lists the fields nobody looked at.
 */
final class Fields {
    private final Map<String, Object> body;
    private final String prefix;
    private final Set<String> read = new HashSet<>();

    Fields(Map<String, Object> body) { this(body, ""); }

    private Fields(Map<String, Object> body, String prefix) {
        this.body = body;
        this.prefix = prefix;
    }

    /** The fields of {@code name}'s object (null when absent), named {@code name.field} in errors. */
    Fields object(String name) {
        Object v = get(name);
        if (v == null) return null;
        if (!(v instanceof Map<?, ?> m)) throw wrongType(name, "an object", v);
        @SuppressWarnings("unchecked") Map<String, Object> map = (Map<String, Object>) m;
        return new Fields(map, param(name) + ".");
    }

    boolean has(String name) { return get(name) != null; }

    /** The raw value (marks it read). */
    Object get(String name) {
        read.add(name);
        return body.get(name);
    }

    String string(String name) {
        Object v = get(name);
        if (v == null) return null;
        if (v instanceof String s) return s;
        throw wrongType(name, "a string", v);
    }

    Boolean bool(String name) {
        Object v = get(name);
        if (v == null) return null;
        if (v instanceof Boolean b) return b;
        throw wrongType(name, "a boolean (true or false)", v);
    }

    /** An integer in [{@code min}, {@code max}], or null when absent. A number with a fraction is a 400. */
    Long integer(String name, long min, long max) {
        Object v = get(name);
        if (v == null) return null;
        long x = integerValue(name, v);
        if (x < min || x > max) throw ApiException.badRequest(param(name), param(name) + " must be in [" + min + ", " + max + "], got " + x);
        return x;
    }

    /** A finite number in [{@code min}, {@code max}], or null when absent. */
    Double number(String name, double min, double max) {
        Object v = get(name);
        if (v == null) return null;
        if (!(v instanceof Number n)) throw wrongType(name, "a number", v);
        double x = n.doubleValue();
        if (!Double.isFinite(x) || x < min || x > max) {
            throw ApiException.badRequest(param(name), param(name) + " must be a number in [" + fmt(min) + ", " + fmt(max) + "], got " + v);
        }
        return x;
    }

    /** A list (or null when absent). */
    List<?> list(String name) {
        Object v = get(name);
        if (v == null) return null;
        if (v instanceof List<?> l) return l;
        throw wrongType(name, "an array", v);
    }

    /** Names of the fields present (non-null) that no read asked for. */
    Set<String> unread() {
        Set<String> s = new java.util.TreeSet<>();
        for (var e : body.entrySet()) if (e.getValue() != null && !read.contains(e.getKey())) s.add(prefix + e.getKey());
        return s;
    }

    /** The full name of a field for errors ({@code stream_options.include_usage}). */
    String param(String name) { return prefix + name; }

    ApiException wrongType(String name, String expected, Object got) {
        return ApiException.badRequest(param(name), param(name) + " must be " + expected + ", got " + describe(got));
    }

    long integerValue(String name, Object v) {
        if (v instanceof Long l) return l;
        if (v instanceof Double d && d == Math.rint(d) && Math.abs(d) < 0x1p53) return d.longValue();
        if (v instanceof BigDecimal) throw ApiException.badRequest(param(name), param(name) + " is out of range: " + v);
        throw wrongType(name, "an integer", v);
    }

    /** How a JSON value is named in an error: its type, and the value itself when short. */
    static String describe(Object v) {
        return switch (v) {
            case null -> "null";
            case String s -> "the string \"" + (s.length() > 40 ? s.substring(0, 40) + "..." : s) + "\"";
            case Boolean b -> "the boolean " + b;
            case Number n -> "the number " + n;
            case List<?> l -> "an array";
            case Map<?, ?> m -> "an object";
            default -> v.getClass().getSimpleName();
        };
    }

    private static String fmt(double d) {
        return d == Math.rint(d) && Math.abs(d) < 1e15 ? Long.toString((long) d) : Double.toString(d);
    }
}
