package io.modelopt.core.json;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A small, strict JSON (RFC 8259) reader and writer: enough for config.json, tokenizer.json,
 * safetensors headers and our reports, with no third-party dependency.
 *
 * <p>Values map to Java as: object → {@code LinkedHashMap<String,Object>} (key order kept),
 * array → {@code ArrayList<Object>}, string → {@code String}, number → {@code Long} when it is an
 * integer that fits, else {@code Double} (or {@code BigDecimal} for integers beyond long),
 * {@code true/false} → {@code Boolean}, {@code null} → {@code null}.
 * Errors throw {@link JsonException} with the character offset.
 */
public final class Json {
    private static final int MAX_DEPTH = 512;

    private final String s;
    private int pos;
    private int depth;

    private Json(String s) { this.s = s; }

    /** Parses one JSON document; trailing non-whitespace is an error. */
    public static Object parse(String text) {
        Json p = new Json(text);
        p.skipWs();
        Object v = p.value();
        p.skipWs();
        if (p.pos != p.s.length()) throw p.error("unexpected trailing characters");
        return v;
    }

    /** Parses and checks that the document is an object. */
    @SuppressWarnings("unchecked")
    public static Map<String, Object> parseObject(String text) {
        Object v = parse(text);
        if (!(v instanceof Map)) throw new JsonException("expected a JSON object at the top level", 0);
        return (Map<String, Object>) v;
    }

    private JsonException error(String msg) { return new JsonException(msg, pos); }

    private void skipWs() {
        while (pos < s.length()) {
            char c = s.charAt(pos);
            if (c == ' ' || c == '\t' || c == '\n' || c == '\r') pos++;
            else break;
        }
    }

    private Object value() {
        if (pos >= s.length()) throw error("unexpected end of input");
        char c = s.charAt(pos);
        switch (c) {
            case '{': return object();
            case '[': return array();
            case '"': return string();
            case 't': literal("true"); return Boolean.TRUE;
            case 'f': literal("false"); return Boolean.FALSE;
            case 'n': literal("null"); return null;
            default:
                if (c == '-' || (c >= '0' && c <= '9')) return number();
                throw error("unexpected character '" + c + "'");
        }
    }

    private void literal(String word) {
        if (!s.startsWith(word, pos)) throw error("expected '" + word + "'");
        pos += word.length();
    }

    private Map<String, Object> object() {
        if (++depth > MAX_DEPTH) throw error("nesting deeper than " + MAX_DEPTH);
        pos++; // {
        Map<String, Object> map = new LinkedHashMap<>();
        skipWs();
        if (peek() == '}') { pos++; depth--; return map; }
        while (true) {
            skipWs();
            if (peek() != '"') throw error("expected a string key");
            String key = string();
            skipWs();
            if (peek() != ':') throw error("expected ':' after key \"" + key + "\"");
            pos++;
            skipWs();
            map.put(key, value());
            skipWs();
            char c = peek();
            pos++;
            if (c == ',') continue;
            if (c == '}') break;
            pos--;
            throw error("expected ',' or '}' in object");
        }
        depth--;
        return map;
    }

    private List<Object> array() {
        if (++depth > MAX_DEPTH) throw error("nesting deeper than " + MAX_DEPTH);
        pos++; // [
        List<Object> list = new ArrayList<>();
        skipWs();
        if (peek() == ']') { pos++; depth--; return list; }
        while (true) {
            skipWs();
            list.add(value());
            skipWs();
            char c = peek();
            pos++;
            if (c == ',') continue;
            if (c == ']') break;
            pos--;
            throw error("expected ',' or ']' in array");
        }
        depth--;
        return list;
    }

    private char peek() {
        if (pos >= s.length()) throw error("unexpected end of input");
        return s.charAt(pos);
    }

    private String string() {
        pos++; // opening quote
        StringBuilder sb = null;
        int start = pos;
        while (true) {
            if (pos >= s.length()) throw error("unterminated string");
            char c = s.charAt(pos);
            if (c == '"') {
                String out = sb == null ? s.substring(start, pos) : sb.append(s, start, pos).toString();
                pos++;
                return out;
            }
            if (c < 0x20) throw error("control character in string");
            if (c == '\\') {
                if (sb == null) sb = new StringBuilder();
                sb.append(s, start, pos);
                pos++;
                char e = peek();
                pos++;
                switch (e) {
                    case '"' -> sb.append('"');
                    case '\\' -> sb.append('\\');
                    case '/' -> sb.append('/');
                    case 'b' -> sb.append('\b');
                    case 'f' -> sb.append('\f');
                    case 'n' -> sb.append('\n');
                    case 'r' -> sb.append('\r');
                    case 't' -> sb.append('\t');
                    case 'u' -> {
                        if (pos + 4 > s.length()) throw error("truncated \\u escape");
                        int cp = 0;
                        for (int i = 0; i < 4; i++) {
                            int d = Character.digit(s.charAt(pos + i), 16);
                            if (d < 0) throw error("bad hex digit in \\u escape");
                            cp = cp * 16 + d;
                        }
                        pos += 4;
                        sb.append((char) cp);
                    }
                    default -> { pos--; throw error("bad escape '\\" + e + "'"); }
                }
                start = pos;
            } else {
                pos++;
            }
        }
    }

    private Object number() {
        int start = pos;
        if (peek() == '-') pos++;
        if (pos >= s.length()) throw error("truncated number");
        if (s.charAt(pos) == '0') pos++;
        else if (Character.isDigit(s.charAt(pos))) { while (pos < s.length() && Character.isDigit(s.charAt(pos))) pos++; }
        else throw error("bad number");
        boolean integer = true;
        if (pos < s.length() && s.charAt(pos) == '.') {
            integer = false;
            pos++;
            int d = pos;
            while (pos < s.length() && Character.isDigit(s.charAt(pos))) pos++;
            if (d == pos) throw error("bad number: no digits after '.'");
        }
        if (pos < s.length() && (s.charAt(pos) == 'e' || s.charAt(pos) == 'E')) {
            integer = false;
            pos++;
            if (pos < s.length() && (s.charAt(pos) == '+' || s.charAt(pos) == '-')) pos++;
            int d = pos;
            while (pos < s.length() && Character.isDigit(s.charAt(pos))) pos++;
            if (d == pos) throw error("bad number: no digits in exponent");
        }
        String text = s.substring(start, pos);
        if (integer) {
            if (text.length() <= 18) return Long.parseLong(text);
            BigDecimal big = new BigDecimal(text);
            try { return big.longValueExact(); } catch (ArithmeticException e) { return big; }
        }
        return Double.parseDouble(text);
    }

    // ------------------------------------------------------------------ writing

    /** Writes a value compactly. Maps need String keys; numbers, strings, booleans, lists, arrays of primitives, null. */
    public static String write(Object value) {
        StringBuilder sb = new StringBuilder();
        write(sb, value, -1, 0);
        return sb.toString();
    }

    /** Writes a value with two-space indentation. */
    public static String writePretty(Object value) {
        StringBuilder sb = new StringBuilder();
        write(sb, value, 2, 0);
        return sb.toString();
    }

    private static void newline(StringBuilder sb, int indent, int level) {
        if (indent < 0) return;
        sb.append('\n');
        sb.repeat(' ', indent * level);
    }

    private static void write(StringBuilder sb, Object v, int indent, int level) {
        switch (v) {
            case null -> sb.append("null");
            case String str -> quote(sb, str);
            case Boolean b -> sb.append(b);
            case Double d -> writeDouble(sb, d);
            case Float f -> writeDouble(sb, f.doubleValue());
            case Number n -> sb.append(n);
            case Map<?, ?> m -> {
                sb.append('{');
                boolean first = true;
                for (Map.Entry<?, ?> e : m.entrySet()) {
                    if (!first) sb.append(',');
                    first = false;
                    newline(sb, indent, level + 1);
                    quote(sb, String.valueOf(e.getKey()));
                    sb.append(indent < 0 ? ":" : ": ");
                    write(sb, e.getValue(), indent, level + 1);
                }
                if (!m.isEmpty()) newline(sb, indent, level);
                sb.append('}');
            }
            case Iterable<?> it -> {
                sb.append('[');
                boolean first = true;
                for (Object o : it) {
                    if (!first) sb.append(',');
                    first = false;
                    newline(sb, indent, level + 1);
                    write(sb, o, indent, level + 1);
                }
                if (!first) newline(sb, indent, level);
                sb.append(']');
            }
            case int[] a -> { List<Object> l = new ArrayList<>(); for (int x : a) l.add(x); write(sb, l, indent, level); }
            case long[] a -> { List<Object> l = new ArrayList<>(); for (long x : a) l.add(x); write(sb, l, indent, level); }
            case float[] a -> { List<Object> l = new ArrayList<>(); for (float x : a) l.add(x); write(sb, l, indent, level); }
            case double[] a -> { List<Object> l = new ArrayList<>(); for (double x : a) l.add(x); write(sb, l, indent, level); }
            case Object[] a -> write(sb, List.of(a), indent, level);
            default -> throw new IllegalArgumentException("cannot write " + v.getClass().getName() + " as JSON");
        }
    }

    private static void writeDouble(StringBuilder sb, double d) {
        if (Double.isNaN(d) || Double.isInfinite(d)) throw new IllegalArgumentException("JSON has no " + d);
        if (d == Math.rint(d) && Math.abs(d) < 1e15) sb.append((long) d).append(".0");
        else sb.append(d);
    }

    /** Appends {@code str} as a JSON string literal (quotes, escapes; non-ASCII as is). */
    public static void quote(StringBuilder sb, String str) {
        sb.append('"');
        for (int i = 0; i < str.length(); i++) {
            char c = str.charAt(i);
            switch (c) {
                case '"' -> sb.append("\\\"");
                case '\\' -> sb.append("\\\\");
                case '\n' -> sb.append("\\n");
                case '\r' -> sb.append("\\r");
                case '\t' -> sb.append("\\t");
                case '\b' -> sb.append("\\b");
                case '\f' -> sb.append("\\f");
                default -> {
                    if (c < 0x20) sb.append(String.format("\\u%04x", (int) c));
                    else sb.append(c);
                }
            }
        }
        sb.append('"');
    }
}
