package io.modelopt.core.chat;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Python/Jinja value semantics over plain Java values: {@code String}, {@code Long} (int),
 * {@code Double} (float), {@code Boolean}, {@code null} (None), {@code List} (list and tuple),
 * {@code Map<String, Object>} (dict, insertion-ordered), {@link Undefined}, {@link Namespace},
 * {@link Callable}. Truthiness, {@code str()}, {@code repr()}, {@code ==}, ordering and
 * {@code json.dumps} follow Python's rules, since chat templates were written against them.
 */
final class JinjaValues {
    private JinjaValues() {}

    /**
     * Jinja's default Undefined: prints as "", is falsy, iterates as empty, has length 0; using it
     * in arithmetic, comparison, attribute access or a call is an error naming what was missing.
     */
    record Undefined(String hint) {
        static final Undefined NAMELESS = new Undefined("value is undefined");

        @Override public String toString() { return ""; }
    }

    /** {@code namespace(...)}: the one mutable object, whose attributes {@code set ns.x = ...} assigns from any scope. */
    static final class Namespace {
        final Map<String, Object> attributes = new LinkedHashMap<>();

        @Override public String toString() { return "<Namespace " + attributes + ">"; }
    }

    /** A tuple: a list everywhere, except that it prints as {@code (a, b)} and is not equal to a list (as in Python). */
    static final class Tuple extends ArrayList<Object> {
        Tuple() {}

        Tuple(List<?> items) { super(items); }
    }

    /** A global function, bound method or macro. */
    @FunctionalInterface
    interface Callable {
        Object call(List<Object> args, Map<String, Object> kwargs);
    }

    /** A Java value as the renderer sees it (ints → Long, floats → Double, records and arrays not accepted). */
    static Object fromJava(Object v) {
        return switch (v) {
            case null -> null;
            case String s -> s;
            case Long l -> l;
            case Integer n -> n.longValue();
            case Short n -> n.longValue();
            case Byte n -> n.longValue();
            case Double d -> d;
            case Float f -> f.doubleValue();
            case Boolean b -> b;
            case Character c -> String.valueOf(c);
            case ChatMessage m -> {
                Map<String, Object> map = new LinkedHashMap<>();
                map.put("role", m.role());
                map.put("content", m.content());
                yield map;
            }
            case Map<?, ?> m -> {
                Map<String, Object> map = new LinkedHashMap<>();
                m.forEach((k, val) -> map.put(String.valueOf(k), fromJava(val)));
                yield map;
            }
            case Iterable<?> it -> {
                List<Object> list = new ArrayList<>();
                for (Object o : it) list.add(fromJava(o));
                yield list;
            }
            case Object[] arr -> {
                List<Object> list = new ArrayList<>(arr.length);
                for (Object o : arr) list.add(fromJava(o));
                yield list;
            }
            case Undefined u -> u;
            case Namespace n -> n;
            case Callable c -> c;
            case Number n -> n.doubleValue();
            default -> throw new IllegalArgumentException("cannot pass a " + v.getClass().getName()
                    + " to a chat template (use String, Number, Boolean, List, Map or null)");
        };
    }

    static boolean truthy(Object v) {
        return switch (v) {
            case null -> false;
            case Boolean b -> b;
            case String s -> !s.isEmpty();
            case Long l -> l != 0;
            case Double d -> d != 0.0;
            case List<?> l -> !l.isEmpty();
            case Map<?, ?> m -> !m.isEmpty();
            case Undefined u -> false;
            default -> true;
        };
    }

    /** Python's type name, for error messages ("str", "dict", ...). */
    static String typeName(Object v) {
        return switch (v) {
            case null -> "NoneType";
            case String s -> "str";
            case Long l -> "int";
            case Double d -> "float";
            case Boolean b -> "bool";
            case List<?> l -> "list";
            case Map<?, ?> m -> "dict";
            case Undefined u -> "Undefined";
            case Namespace n -> "Namespace";
            default -> "function";
        };
    }

    /** {@code str(v)}: what {@code {{ v }}} prints. */
    static String str(Object v) {
        return switch (v) {
            case null -> "None";
            case String s -> s;
            case Boolean b -> b ? "True" : "False";
            case Long l -> Long.toString(l);
            case Double d -> floatRepr(d);
            case Undefined u -> "";
            case List<?> l -> repr(l);
            case Map<?, ?> m -> repr(m);
            default -> v.toString();
        };
    }

    /** {@code repr(v)}, as Python prints values inside lists and dicts. */
    static String repr(Object v) {
        switch (v) {
            case String s -> { return stringRepr(s); }
            case List<?> l -> {
                boolean tuple = l instanceof Tuple;
                StringBuilder sb = new StringBuilder(tuple ? "(" : "[");
                for (int k = 0; k < l.size(); k++) {
                    if (k > 0) sb.append(", ");
                    sb.append(repr(l.get(k)));
                }
                if (tuple && l.size() == 1) sb.append(',');
                return sb.append(tuple ? ')' : ']').toString();
            }
            case Map<?, ?> m -> {
                StringBuilder sb = new StringBuilder("{");
                boolean first = true;
                for (Map.Entry<?, ?> e : m.entrySet()) {
                    if (!first) sb.append(", ");
                    first = false;
                    sb.append(repr(e.getKey())).append(": ").append(repr(e.getValue()));
                }
                return sb.append('}').toString();
            }
            case Undefined u -> { return "Undefined"; }
            case null, default -> { return str(v); }
        }
    }

    private static String stringRepr(String s) {
        char q = s.indexOf('\'') >= 0 && s.indexOf('"') < 0 ? '"' : '\'';
        StringBuilder sb = new StringBuilder().append(q);
        for (int k = 0; k < s.length(); k++) {
            char c = s.charAt(k);
            switch (c) {
                case '\\' -> sb.append("\\\\");
                case '\n' -> sb.append("\\n");
                case '\r' -> sb.append("\\r");
                case '\t' -> sb.append("\\t");
                default -> {
                    if (c == q) sb.append('\\').append(c);
                    else if (c < 0x20 || c == 0x7f) sb.append(String.format("\\x%02x", (int) c));
                    else sb.append(c);
                }
            }
        }
        return sb.append(q).toString();
    }

    /** Python's {@code repr(float)}: shortest round-trip digits, exponent form below 1e-4 and from 1e16. */
    static String floatRepr(double d) {
        if (Double.isNaN(d)) return "nan";
        if (Double.isInfinite(d)) return d > 0 ? "inf" : "-inf";
        if (d == 0) return (1 / d < 0) ? "-0.0" : "0.0";
        BigDecimal bd = new BigDecimal(Double.toString(d)).stripTrailingZeros();
        double a = Math.abs(d);
        if (a >= 1e-4 && a < 1e16) {
            String plain = bd.toPlainString();
            return plain.contains(".") ? plain : plain + ".0";
        }
        String digits = bd.unscaledValue().abs().toString();
        int exp = digits.length() - 1 - bd.scale();
        String mantissa = digits.length() == 1 ? digits : digits.charAt(0) + "." + digits.substring(1);
        return (d < 0 ? "-" : "") + mantissa + "e" + (exp < 0 ? "-" : "+") + (Math.abs(exp) < 10 ? "0" : "") + Math.abs(exp);
    }

    static boolean isNumber(Object v) { return v instanceof Long || v instanceof Double || v instanceof Boolean; }

    static double toDouble(Object v) {
        return switch (v) {
            case Long l -> l;
            case Double d -> d;
            case Boolean b -> b ? 1 : 0;
            default -> throw new IllegalStateException("not a number: " + v);
        };
    }

    static boolean isIntegral(Object v) { return v instanceof Long || v instanceof Boolean; }

    static long toLong(Object v) { return v instanceof Boolean b ? (b ? 1 : 0) : (Long) v; }

    /** Python {@code ==}: 1 == 1.0 == True; lists and dicts element-wise; two Undefineds are equal. */
    static boolean equal(Object a, Object b) {
        if (a == b) return true;
        if (a == null || b == null) return false;
        if (isNumber(a) && isNumber(b)) {
            if (isIntegral(a) && isIntegral(b)) return toLong(a) == toLong(b);
            return toDouble(a) == toDouble(b);
        }
        if (a instanceof Undefined && b instanceof Undefined) return true;
        if (a instanceof String x && b instanceof String y) return x.equals(y);
        if (a instanceof List<?> x && b instanceof List<?> y) {
            if ((x instanceof Tuple) != (y instanceof Tuple) || x.size() != y.size()) return false;
            for (int k = 0; k < x.size(); k++) if (!equal(x.get(k), y.get(k))) return false;
            return true;
        }
        if (a instanceof Map<?, ?> x && b instanceof Map<?, ?> y) {
            if (x.size() != y.size()) return false;
            for (Map.Entry<?, ?> e : x.entrySet()) {
                if (!y.containsKey(e.getKey()) || !equal(e.getValue(), y.get(e.getKey()))) return false;
            }
            return true;
        }
        return false;
    }

    /**
     * Python ordering of numbers, strings and lists; null when the two cannot be ordered (the
     * caller reports the type error).
     */
    static Integer compare(Object a, Object b) {
        if (isNumber(a) && isNumber(b)) {
            if (isIntegral(a) && isIntegral(b)) return Long.compare(toLong(a), toLong(b));
            return Double.compare(toDouble(a), toDouble(b));
        }
        if (a instanceof String x && b instanceof String y) return Integer.signum(x.compareTo(y));
        if (a instanceof List<?> x && b instanceof List<?> y) {
            for (int k = 0; k < Math.min(x.size(), y.size()); k++) {
                if (equal(x.get(k), y.get(k))) continue;
                return compare(x.get(k), y.get(k));
            }
            return Integer.compare(x.size(), y.size());
        }
        return null;
    }

    /** Python {@code len()}; -1 when the value has no length. Strings count code points. */
    static int length(Object v) {
        return switch (v) {
            case String s -> s.codePointCount(0, s.length());
            case List<?> l -> l.size();
            case Map<?, ?> m -> m.size();
            case Undefined u -> 0;
            case Namespace n -> n.attributes.size();
            case null, default -> -1;
        };
    }

    /** The items a for loop visits: a list's elements, a dict's keys, a string's characters; null when not iterable. */
    static List<Object> iterate(Object v) {
        return switch (v) {
            case List<?> l -> new ArrayList<>(l);
            case Map<?, ?> m -> new ArrayList<>(m.keySet());
            case String s -> {
                List<Object> chars = new ArrayList<>();
                s.codePoints().forEach(cp -> chars.add(new String(Character.toChars(cp))));
                yield chars;
            }
            case Undefined u -> new ArrayList<>();
            case null, default -> null;
        };
    }

    // ---- json.dumps ----

    /**
     * Python's {@code json.dumps(v, ensure_ascii=False, indent=indent, sort_keys=sortKeys)} as
     * Hugging Face's {@code tojson} calls it: separators {@code ", "} and {@code ": "}, or
     * {@code ","} and newlines when indented; non-ASCII characters written as they are.
     */
    static String toJson(Object v, Integer indent, boolean sortKeys) {
        StringBuilder sb = new StringBuilder();
        json(sb, v, indent, 0, sortKeys);
        return sb.toString();
    }

    private static void json(StringBuilder sb, Object v, Integer indent, int level, boolean sortKeys) {
        switch (v) {
            case null -> sb.append("null");
            case Boolean b -> sb.append(b ? "true" : "false");
            case Long l -> sb.append(l);
            case Double d -> sb.append(Double.isNaN(d) ? "NaN" : Double.isInfinite(d) ? (d > 0 ? "Infinity" : "-Infinity") : floatRepr(d));
            case String s -> jsonString(sb, s);
            case List<?> l -> {
                if (l.isEmpty()) { sb.append("[]"); return; }
                sb.append('[');
                for (int k = 0; k < l.size(); k++) {
                    if (k > 0) sb.append(indent == null ? ", " : ",");
                    indentLine(sb, indent, level + 1);
                    json(sb, l.get(k), indent, level + 1, sortKeys);
                }
                indentLine(sb, indent, level);
                sb.append(']');
            }
            case Map<?, ?> m -> {
                if (m.isEmpty()) { sb.append("{}"); return; }
                List<Map.Entry<?, ?>> entries = new ArrayList<>(m.entrySet());
                if (sortKeys) entries.sort((x, y) -> String.valueOf(x.getKey()).compareTo(String.valueOf(y.getKey())));
                sb.append('{');
                for (int k = 0; k < entries.size(); k++) {
                    if (k > 0) sb.append(indent == null ? ", " : ",");
                    indentLine(sb, indent, level + 1);
                    jsonString(sb, String.valueOf(entries.get(k).getKey()));
                    sb.append(": ");
                    json(sb, entries.get(k).getValue(), indent, level + 1, sortKeys);
                }
                indentLine(sb, indent, level);
                sb.append('}');
            }
            case Namespace n -> json(sb, n.attributes, indent, level, sortKeys);
            default -> throw new IllegalArgumentException("Object of type " + typeName(v) + " is not JSON serializable");
        }
    }

    private static void indentLine(StringBuilder sb, Integer indent, int level) {
        if (indent == null) return;
        sb.append('\n');
        sb.repeat(' ', indent * level);
    }

    private static void jsonString(StringBuilder sb, String s) {
        io.modelopt.core.json.Json.quote(sb, s); // the same escapes as transformers' tojson (ensure_ascii off)
    }
}
