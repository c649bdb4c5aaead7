package io.modelopt.core.chat;

import io.modelopt.core.chat.JinjaAst.Pos;
import io.modelopt.core.chat.JinjaValues.Undefined;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** Python's binary operators and comparisons over {@link JinjaValues}; type errors name both operand types. */
final class JinjaOperators {
    private JinjaOperators() {}

    static Object arithmetic(String op, Object a, Object b, Pos pos) {
        if (a instanceof Undefined u) throw JinjaRenderer.error(pos, u.hint());
        if (b instanceof Undefined u) throw JinjaRenderer.error(pos, u.hint());
        boolean nums = JinjaValues.isNumber(a) && JinjaValues.isNumber(b);
        boolean ints = nums && JinjaValues.isIntegral(a) && JinjaValues.isIntegral(b);
        switch (op) {
            case "+" -> {
                if (ints) return JinjaValues.toLong(a) + JinjaValues.toLong(b);
                if (nums) return JinjaValues.toDouble(a) + JinjaValues.toDouble(b);
                if (a instanceof String x && b instanceof String y) return x + y;
                if (a instanceof List<?> x && b instanceof List<?> y) {
                    List<Object> out = new ArrayList<>(x);
                    out.addAll(y);
                    return out;
                }
            }
            case "-" -> {
                if (ints) return JinjaValues.toLong(a) - JinjaValues.toLong(b);
                if (nums) return JinjaValues.toDouble(a) - JinjaValues.toDouble(b);
            }
            case "*" -> {
                if (ints) return JinjaValues.toLong(a) * JinjaValues.toLong(b);
                if (nums) return JinjaValues.toDouble(a) * JinjaValues.toDouble(b);
                if (a instanceof String s && JinjaValues.isIntegral(b)) return s.repeat((int) Math.max(0, JinjaValues.toLong(b)));
                if (b instanceof String s && JinjaValues.isIntegral(a)) return s.repeat((int) Math.max(0, JinjaValues.toLong(a)));
                if (a instanceof List<?> l && JinjaValues.isIntegral(b)) return repeat(l, JinjaValues.toLong(b));
            }
            case "/" -> {
                if (nums) {
                    double d = JinjaValues.toDouble(b);
                    if (d == 0) throw JinjaRenderer.error(pos, "division by zero");
                    return JinjaValues.toDouble(a) / d;
                }
            }
            case "//" -> {
                if (ints) {
                    if (JinjaValues.toLong(b) == 0) throw JinjaRenderer.error(pos, "integer division or modulo by zero");
                    return Math.floorDiv(JinjaValues.toLong(a), JinjaValues.toLong(b));
                }
                if (nums) {
                    double d = JinjaValues.toDouble(b);
                    if (d == 0) throw JinjaRenderer.error(pos, "float floor division by zero");
                    return Math.floor(JinjaValues.toDouble(a) / d);
                }
            }
            case "%" -> {
                if (ints) {
                    if (JinjaValues.toLong(b) == 0) throw JinjaRenderer.error(pos, "integer division or modulo by zero");
                    return Math.floorMod(JinjaValues.toLong(a), JinjaValues.toLong(b));
                }
                if (nums) {
                    double x = JinjaValues.toDouble(a), y = JinjaValues.toDouble(b);
                    if (y == 0) throw JinjaRenderer.error(pos, "float modulo");
                    double r = x % y;
                    return (r != 0 && (r < 0) != (y < 0)) ? r + y : r;
                }
                if (a instanceof String) throw JinjaRenderer.error(pos, "printf-style string formatting ('...' % x) is not supported; use ~ or format filters");
            }
            case "**" -> {
                if (ints && JinjaValues.toLong(b) >= 0) return (long) Math.pow(JinjaValues.toLong(a), JinjaValues.toLong(b));
                if (nums) return Math.pow(JinjaValues.toDouble(a), JinjaValues.toDouble(b));
            }
            default -> throw JinjaRenderer.error(pos, "unknown operator '" + op + "'");
        }
        throw JinjaRenderer.error(pos, "unsupported operand type(s) for " + op + ": '" + JinjaValues.typeName(a) + "' and '" + JinjaValues.typeName(b) + "'");
    }

    private static List<Object> repeat(List<?> l, long times) {
        List<Object> out = new ArrayList<>();
        for (long k = 0; k < times; k++) out.addAll(l);
        return out;
    }

    static boolean compare(String op, Object a, Object b, Pos pos) {
        switch (op) {
            case "==" -> { return JinjaValues.equal(a, b); }
            case "!=" -> { return !JinjaValues.equal(a, b); }
            case "in" -> { return contains(b, a, pos); }
            case "not in" -> { return !contains(b, a, pos); }
            default -> { }
        }
        if (a instanceof Undefined u) throw JinjaRenderer.error(pos, u.hint());
        if (b instanceof Undefined u) throw JinjaRenderer.error(pos, u.hint());
        Integer c = JinjaValues.compare(a, b);
        if (c == null) {
            throw JinjaRenderer.error(pos, "'" + op + "' not supported between instances of '" + JinjaValues.typeName(a) + "' and '" + JinjaValues.typeName(b) + "'");
        }
        return switch (op) {
            case "<" -> c < 0;
            case "<=" -> c <= 0;
            case ">" -> c > 0;
            default -> c >= 0;
        };
    }

    /** Python's {@code needle in haystack}. */
    static boolean contains(Object haystack, Object needle, Pos pos) {
        switch (haystack) {
            case String s -> {
                if (!(needle instanceof String n)) {
                    throw JinjaRenderer.error(pos, "'in <string>' requires string as left operand, not " + JinjaValues.typeName(needle));
                }
                return s.contains(n);
            }
            case List<?> l -> {
                for (Object o : l) if (JinjaValues.equal(o, needle)) return true;
                return false;
            }
            case Map<?, ?> m -> { return needle instanceof String k && m.containsKey(k); }
            case Undefined u -> { return false; }
            case JinjaValues.Namespace n -> { return needle instanceof String k && n.attributes.containsKey(k); }
            case null, default -> throw JinjaRenderer.error(pos, "argument of type '" + JinjaValues.typeName(haystack) + "' is not iterable");
        }
    }
}
