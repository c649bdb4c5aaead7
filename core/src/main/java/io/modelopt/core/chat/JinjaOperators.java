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
                if (ints) return exact(() -> Math.addExact(JinjaValues.toLong(a), JinjaValues.toLong(b)), pos);
                if (nums) return JinjaValues.toDouble(a) + JinjaValues.toDouble(b);
                if (a instanceof String x && b instanceof String y) return x + y;
                if (a instanceof List<?> x && b instanceof List<?> y) {
                    List<Object> out = new ArrayList<>(x);
                    out.addAll(y);
                    return out;
                }
            }
            case "-" -> {
                if (ints) return exact(() -> Math.subtractExact(JinjaValues.toLong(a), JinjaValues.toLong(b)), pos);
                if (nums) return JinjaValues.toDouble(a) - JinjaValues.toDouble(b);
            }
            case "*" -> {
                if (ints) return exact(() -> Math.multiplyExact(JinjaValues.toLong(a), JinjaValues.toLong(b)), pos);
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
                if (a instanceof String f) return printf(f, b instanceof JinjaValues.Tuple t ? t : List.of(b), pos);
            }
            case "**" -> {
                if (ints && JinjaValues.toLong(b) >= 0) {
                    long base = JinjaValues.toLong(a), e = JinjaValues.toLong(b);
                    return exact(() -> {
                        long r = 1;
                        for (long k = 0; k < e; k++) r = Math.multiplyExact(r, base);
                        return r;
                    }, pos);
                }
                if (nums) return Math.pow(JinjaValues.toDouble(a), JinjaValues.toDouble(b));
            }
            default -> throw JinjaRenderer.error(pos, "unknown operator '" + op + "'");
        }
        throw JinjaRenderer.error(pos, "unsupported operand type(s) for " + op + ": '" + JinjaValues.typeName(a) + "' and '" + JinjaValues.typeName(b) + "'");
    }

    private static long exact(java.util.function.LongSupplier op, Pos pos) {
        try {
            return op.getAsLong();
        } catch (ArithmeticException e) {
            throw JinjaRenderer.error(pos, "integer overflow (numbers here are 64-bit; Python's are unbounded)");
        }
    }

    /** Python's {@code "fmt" % args} for %s %r %d %i %f %x %%, with an optional precision ({@code %.2f}). */
    private static String printf(String fmt, List<?> args, Pos pos) {
        StringBuilder sb = new StringBuilder();
        int next = 0;
        for (int k = 0; k < fmt.length(); k++) {
            char c = fmt.charAt(k);
            if (c != '%') { sb.append(c); continue; }
            int p = k + 1;
            int precision = -1;
            if (p < fmt.length() && fmt.charAt(p) == '.') {
                int q = ++p;
                while (p < fmt.length() && Character.isDigit(fmt.charAt(p))) p++;
                precision = q == p ? 0 : Integer.parseInt(fmt.substring(q, p));
            }
            if (p >= fmt.length()) throw JinjaRenderer.error(pos, "incomplete format");
            char conv = fmt.charAt(p);
            k = p;
            if (conv == '%') { sb.append('%'); continue; }
            if (next >= args.size()) throw JinjaRenderer.error(pos, "not enough arguments for format string");
            Object v = args.get(next++);
            switch (conv) {
                case 's' -> sb.append(JinjaValues.str(v));
                case 'r' -> sb.append(JinjaValues.repr(v));
                case 'd', 'i' -> {
                    if (!JinjaValues.isNumber(v)) throw JinjaRenderer.error(pos, "%" + conv + " format: a number is required, not " + JinjaValues.typeName(v));
                    sb.append(v instanceof Double d ? (long) (double) d : JinjaValues.toLong(v));
                }
                case 'f' -> {
                    if (!JinjaValues.isNumber(v)) throw JinjaRenderer.error(pos, "%f format: a number is required, not " + JinjaValues.typeName(v));
                    sb.append(new java.math.BigDecimal(JinjaValues.toDouble(v)).setScale(precision < 0 ? 6 : precision, java.math.RoundingMode.HALF_EVEN).toPlainString());
                }
                case 'x' -> {
                    if (!JinjaValues.isIntegral(v)) throw JinjaRenderer.error(pos, "%x format: an integer is required, not " + JinjaValues.typeName(v));
                    sb.append(Long.toHexString(JinjaValues.toLong(v)));
                }
                default -> throw JinjaRenderer.error(pos, "unsupported format character '" + conv + "'");
            }
        }
        if (next < args.size()) throw JinjaRenderer.error(pos, "not all arguments converted during string formatting");
        return sb.toString();
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
