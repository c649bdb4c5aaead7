package io.modelopt.core.chat;

import io.modelopt.core.chat.JinjaAst.Pos;
import io.modelopt.core.chat.JinjaRenderer.Loop;
import io.modelopt.core.chat.JinjaValues.Callable;
import io.modelopt.core.chat.JinjaValues.Namespace;
import io.modelopt.core.chat.JinjaValues.Undefined;
import java.time.Clock;
import java.time.ZonedDateTime;
import java.time.format.TextStyle;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Attribute and item access, filters, tests, methods of str/dict/loop, and the globals
 * ({@code range}, {@code namespace}, {@code dict}, {@code raise_exception}, {@code strftime_now})
 * that Hugging Face chat templates use. Unknown filters, tests and methods are errors naming them.
 */
final class JinjaBuiltins {
    /** Thrown by {@code raise_exception(msg)}; the renderer adds the position. */
    static final class Raised extends RuntimeException {
        Raised(String message) { super(message, null, false, false); }
    }

    private final Clock clock;

    JinjaBuiltins(Clock clock) { this.clock = clock; }

    /** The globals every render sees (before the caller's variables). */
    Map<String, Object> globals() {
        Map<String, Object> g = new LinkedHashMap<>();
        g.put("raise_exception", (Callable) (args, kwargs) -> {
            throw new Raised(args.isEmpty() ? "raise_exception called" : JinjaValues.str(args.getFirst()));
        });
        g.put("range", (Callable) (args, kwargs) -> range(args));
        g.put("namespace", (Callable) (args, kwargs) -> {
            Namespace ns = new Namespace();
            for (Object a : args) {
                if (a instanceof Map<?, ?> m) m.forEach((k, v) -> ns.attributes.put(String.valueOf(k), v));
                else throw new IllegalArgumentException("namespace() takes keyword arguments or a dict, not " + JinjaValues.typeName(a));
            }
            ns.attributes.putAll(kwargs);
            return ns;
        });
        g.put("dict", (Callable) (args, kwargs) -> {
            Map<String, Object> m = new LinkedHashMap<>();
            for (Object a : args) if (a instanceof Map<?, ?> src) src.forEach((k, v) -> m.put(String.valueOf(k), v));
            m.putAll(kwargs);
            return m;
        });
        g.put("strftime_now", (Callable) (args, kwargs) -> strftime(JinjaValues.str(args.isEmpty() ? "" : args.getFirst()), ZonedDateTime.now(clock)));
        return g;
    }

    private static List<Object> range(List<Object> args) {
        long start = 0, stop, step = 1;
        for (Object a : args) if (!JinjaValues.isIntegral(a)) throw new IllegalArgumentException("range() takes integers, not " + JinjaValues.typeName(a));
        switch (args.size()) {
            case 1 -> stop = JinjaValues.toLong(args.get(0));
            case 2 -> { start = JinjaValues.toLong(args.get(0)); stop = JinjaValues.toLong(args.get(1)); }
            case 3 -> { start = JinjaValues.toLong(args.get(0)); stop = JinjaValues.toLong(args.get(1)); step = JinjaValues.toLong(args.get(2)); }
            default -> throw new IllegalArgumentException("range() takes 1 to 3 arguments, got " + args.size());
        }
        if (step == 0) throw new IllegalArgumentException("range() step must not be zero");
        List<Object> out = new ArrayList<>();
        for (long v = start; step > 0 ? v < stop : v > stop; v += step) {
            out.add(v);
            if (out.size() > 1_000_000) throw new IllegalArgumentException("range() too long");
        }
        return out;
    }

    // ---- attribute / item ----

    /** {@code obj.name}: dict key (or a dict method), loop attribute, namespace attribute, str method. */
    Object attribute(Object obj, String name, Pos pos) {
        switch (obj) {
            case Undefined u -> throw JinjaRenderer.error(pos, u.hint());
            case Map<?, ?> m -> {
                if (isMethod(obj, name)) return boundMethod(obj, name, pos);
                return m.containsKey(name) ? m.get(name) : new Undefined("'dict object' has no attribute '" + name + "'");
            }
            case Namespace n -> {
                return n.attributes.containsKey(name) ? n.attributes.get(name) : new Undefined("namespace has no attribute '" + name + "'");
            }
            case Loop l -> {
                return switch (name) {
                    case "index" -> (long) l.index0() + 1;
                    case "index0" -> (long) l.index0();
                    case "revindex" -> (long) (l.length() - l.index0());
                    case "revindex0" -> (long) (l.length() - l.index0() - 1);
                    case "first" -> l.index0() == 0;
                    case "last" -> l.index0() == l.length() - 1;
                    case "length" -> (long) l.length();
                    case "depth" -> 1L;
                    case "depth0" -> 0L;
                    case "previtem" -> l.hasPrevious() ? l.previous() : new Undefined("there is no previous item");
                    case "nextitem" -> l.hasNext() ? l.next() : new Undefined("there is no next item");
                    case "cycle" -> boundMethod(obj, name, pos);
                    default -> new Undefined("'loop' has no attribute '" + name + "'");
                };
            }
            case null, default -> {
                if (isMethod(obj, name)) return boundMethod(obj, name, pos);
                return new Undefined("'" + JinjaValues.typeName(obj) + " object' has no attribute '" + name + "'");
            }
        }
    }

    /** {@code obj[key]}: list index (negative from the end), dict key, else the attribute of that name (Jinja's getitem). */
    Object item(Object obj, Object key, Pos pos) {
        if (obj instanceof Undefined u) throw JinjaRenderer.error(pos, u.hint());
        if (obj instanceof List<?> l && JinjaValues.isIntegral(key)) {
            long k = JinjaValues.toLong(key);
            if (k < 0) k += l.size();
            return k >= 0 && k < l.size() ? l.get((int) k) : new Undefined("list index " + key + " out of range");
        }
        if (obj instanceof String s && JinjaValues.isIntegral(key)) {
            int[] cps = s.codePoints().toArray();
            long k = JinjaValues.toLong(key);
            if (k < 0) k += cps.length;
            return k >= 0 && k < cps.length ? new String(Character.toChars(cps[(int) k])) : new Undefined("string index " + key + " out of range");
        }
        if (obj instanceof Map<?, ?> m && key instanceof String k && m.containsKey(k)) return m.get(k);
        if (key instanceof String name) return attribute(obj, name, pos);
        return new Undefined("'" + JinjaValues.typeName(obj) + " object' has no item " + JinjaValues.repr(key));
    }

    /** Python slicing of lists and strings. */
    Object slice(Object obj, Object start, Object stop, Object step, Pos pos) {
        if (obj instanceof Undefined u) throw JinjaRenderer.error(pos, u.hint());
        List<Object> items;
        boolean isString = obj instanceof String;
        if (obj instanceof List<?> l) items = new ArrayList<>(l);
        else if (isString) items = JinjaValues.iterate(obj);
        else throw JinjaRenderer.error(pos, "'" + JinjaValues.typeName(obj) + "' object is not subscriptable");
        int n = items.size();
        long st = step == null ? 1 : requireInt(step, "slice step", pos);
        if (st == 0) throw JinjaRenderer.error(pos, "slice step cannot be zero");
        long lo, hi;
        if (st > 0) {
            lo = start == null ? 0 : clampIndex(requireInt(start, "slice start", pos), n, 0, n);
            hi = stop == null ? n : clampIndex(requireInt(stop, "slice stop", pos), n, 0, n);
        } else {
            lo = start == null ? n - 1 : clampIndex(requireInt(start, "slice start", pos), n, -1, n - 1);
            hi = stop == null ? -1 : clampIndex(requireInt(stop, "slice stop", pos), n, -1, n - 1);
        }
        List<Object> out = new ArrayList<>();
        for (long k = lo; st > 0 ? k < hi : k > hi; k += st) out.add(items.get((int) k));
        if (!isString) return out;
        StringBuilder sb = new StringBuilder();
        for (Object o : out) sb.append((String) o);
        return sb.toString();
    }

    private static long clampIndex(long k, int n, long min, long max) {
        if (k < 0) k += n;
        return Math.max(min, Math.min(max, k));
    }

    private static long requireInt(Object v, String what, Pos pos) {
        if (!JinjaValues.isIntegral(v)) throw JinjaRenderer.error(pos, what + " must be an integer, not " + JinjaValues.typeName(v));
        return JinjaValues.toLong(v);
    }

    // ---- methods ----

    private static boolean isMethod(Object obj, String name) {
        return switch (obj) {
            case String s -> switch (name) {
                case "strip", "lstrip", "rstrip", "startswith", "endswith", "split", "rsplit", "upper", "lower", "title",
                     "capitalize", "replace", "find", "rfind", "count", "join", "splitlines", "isdigit", "isalpha",
                     "isspace", "islower", "isupper" -> true;
                default -> false;
            };
            case Map<?, ?> m -> switch (name) {
                case "items", "keys", "values", "get" -> true;
                default -> false;
            };
            default -> false;
        };
    }

    private Callable boundMethod(Object obj, String name, Pos pos) {
        return (args, kwargs) -> callMethod(obj, name, args, kwargs, pos);
    }

    Object callMethod(Object obj, String name, List<Object> args, Map<String, Object> kwargs, Pos pos) {
        if (obj instanceof Undefined u) throw JinjaRenderer.error(pos, u.hint());
        if (obj instanceof String s && isMethod(obj, name)) return stringMethod(s, name, args, pos);
        if (obj instanceof Map<?, ?> m && isMethod(obj, name)) {
            switch (name) {
                case "items" -> {
                    List<Object> out = new ArrayList<>();
                    m.forEach((k, v) -> {
                        List<Object> pair = new JinjaValues.Tuple();
                        pair.add(k);
                        pair.add(v);
                        out.add(pair);
                    });
                    return out;
                }
                case "keys" -> { return new ArrayList<Object>(m.keySet()); }
                case "values" -> { return new ArrayList<Object>(m.values()); }
                default -> {   // get
                    Object key = arg(args, 0, pos, "get");
                    return m.containsKey(key) ? m.get(key) : (args.size() > 1 ? args.get(1) : null);
                }
            }
        }
        if (obj instanceof Loop l && name.equals("cycle")) {
            if (args.isEmpty()) throw JinjaRenderer.error(pos, "loop.cycle() needs at least one value");
            return args.get(l.index0() % args.size());
        }
        Object attr = attribute(obj, name, pos);
        if (attr instanceof Callable c) return c.call(args, kwargs);
        if (attr instanceof Undefined) {
            throw JinjaRenderer.error(pos, "'" + JinjaValues.typeName(obj) + " object' has no method '" + name + "' (not supported here)");
        }
        throw JinjaRenderer.error(pos, "'" + JinjaValues.typeName(attr) + "' object is not callable");
    }

    private static Object arg(List<Object> args, int k, Pos pos, String method) {
        if (args.size() <= k) throw JinjaRenderer.error(pos, method + "() is missing argument " + (k + 1));
        return args.get(k);
    }

    private static String strArg(List<Object> args, int k, Pos pos, String method) {
        Object v = arg(args, k, pos, method);
        if (!(v instanceof String s)) throw JinjaRenderer.error(pos, method + "() argument " + (k + 1) + " must be str, not " + JinjaValues.typeName(v));
        return s;
    }

    private Object stringMethod(String s, String name, List<Object> args, Pos pos) {
        switch (name) {
            case "strip" -> { return strip(s, args.isEmpty() || args.getFirst() == null ? null : strArg(args, 0, pos, name), true, true); }
            case "lstrip" -> { return strip(s, args.isEmpty() || args.getFirst() == null ? null : strArg(args, 0, pos, name), true, false); }
            case "rstrip" -> { return strip(s, args.isEmpty() || args.getFirst() == null ? null : strArg(args, 0, pos, name), false, true); }
            case "startswith", "endswith" -> {
                Object a = arg(args, 0, pos, name);
                List<Object> options = a instanceof List<?> l ? new ArrayList<>(l) : List.of(a);
                for (Object o : options) {
                    if (!(o instanceof String p)) throw JinjaRenderer.error(pos, name + "() takes str or a tuple of str");
                    if (name.equals("startswith") ? s.startsWith(p) : s.endsWith(p)) return true;
                }
                return false;
            }
            case "split", "rsplit" -> {
                String sep = args.isEmpty() || args.getFirst() == null ? null : strArg(args, 0, pos, name);
                long max = args.size() > 1 ? requireInt(args.get(1), "maxsplit", pos) : -1;
                return name.equals("split") ? split(s, sep, max) : rsplit(s, sep, max);
            }
            case "upper" -> { return s.toUpperCase(Locale.ROOT); }
            case "lower" -> { return s.toLowerCase(Locale.ROOT); }
            case "title" -> { return pythonTitle(s); }
            case "capitalize" -> { return capitalize(s); }
            case "replace" -> {
                String from = strArg(args, 0, pos, name), to = strArg(args, 1, pos, name);
                long count = args.size() > 2 ? requireInt(args.get(2), "count", pos) : -1;
                return replace(s, from, to, count);
            }
            case "find" -> { return (long) s.indexOf(strArg(args, 0, pos, name)); }
            case "rfind" -> { return (long) s.lastIndexOf(strArg(args, 0, pos, name)); }
            case "count" -> {
                String sub = strArg(args, 0, pos, name);
                if (sub.isEmpty()) return (long) s.codePointCount(0, s.length()) + 1;
                long c = 0;
                for (int k = s.indexOf(sub); k >= 0; k = s.indexOf(sub, k + sub.length())) c++;
                return c;
            }
            case "join" -> {
                List<Object> parts = JinjaValues.iterate(arg(args, 0, pos, name));
                if (parts == null) throw JinjaRenderer.error(pos, "join() argument must be iterable");
                StringBuilder sb = new StringBuilder();
                for (int k = 0; k < parts.size(); k++) {
                    if (!(parts.get(k) instanceof String p)) throw JinjaRenderer.error(pos, "join() expects str items, got " + JinjaValues.typeName(parts.get(k)));
                    if (k > 0) sb.append(s);
                    sb.append(p);
                }
                return sb.toString();
            }
            case "splitlines" -> {
                List<Object> lines = new ArrayList<>(List.of((Object[]) s.split("\r\n|\r|\n", -1)));
                if (!lines.isEmpty() && "".equals(lines.getLast())) lines.removeLast();   // no empty line after a final newline
                return lines;
            }
            case "isdigit" -> { return !s.isEmpty() && s.chars().allMatch(Character::isDigit); }
            case "isalpha" -> { return !s.isEmpty() && s.chars().allMatch(Character::isLetter); }
            case "isspace" -> { return !s.isEmpty() && s.chars().allMatch(Character::isWhitespace); }
            case "islower" -> { return s.chars().anyMatch(Character::isLetter) && s.equals(s.toLowerCase(Locale.ROOT)); }
            default -> { return s.chars().anyMatch(Character::isLetter) && s.equals(s.toUpperCase(Locale.ROOT)); }   // isupper
        }
    }

    /** Python's str.strip: whitespace, or any of {@code chars}. */
    static String strip(String s, String chars, boolean left, boolean right) {
        int b = 0, e = s.length();
        if (left) while (b < e && stripped(s.charAt(b), chars)) b++;
        if (right) while (e > b && stripped(s.charAt(e - 1), chars)) e--;
        return s.substring(b, e);
    }

    private static boolean stripped(char c, String chars) {
        return chars == null ? Character.isWhitespace(c) || Character.isSpaceChar(c) : chars.indexOf(c) >= 0;
    }

    private static List<Object> split(String s, String sep, long max) {
        List<Object> out = new ArrayList<>();
        if (sep == null) {
            int k = 0, n = s.length();
            while (true) {
                while (k < n && Character.isWhitespace(s.charAt(k))) k++;
                if (k >= n) break;
                if (max >= 0 && out.size() == max) { out.add(strip(s.substring(k), null, false, true)); break; }
                int e = k;
                while (e < n && !Character.isWhitespace(s.charAt(e))) e++;
                out.add(s.substring(k, e));
                k = e;
            }
            return out;
        }
        if (sep.isEmpty()) throw new IllegalArgumentException("empty separator");
        int k = 0;
        while (max < 0 || out.size() < max) {
            int e = s.indexOf(sep, k);
            if (e < 0) break;
            out.add(s.substring(k, e));
            k = e + sep.length();
        }
        out.add(s.substring(k));
        return out;
    }

    private static List<Object> rsplit(String s, String sep, long max) {
        if (max < 0 || sep == null) return split(s, sep, max);
        if (sep.isEmpty()) throw new IllegalArgumentException("empty separator");
        List<Object> out = new ArrayList<>();
        int e = s.length();
        while (out.size() < max) {
            int k = s.lastIndexOf(sep, e - sep.length());
            if (k < 0 || e - sep.length() < 0) break;
            out.add(s.substring(k + sep.length(), e));
            e = k;
        }
        out.add(s.substring(0, e));
        Collections.reverse(out);
        return out;
    }

    private static String replace(String s, String from, String to, long count) {
        if (count < 0) return s.replace(from, to);
        StringBuilder sb = new StringBuilder();
        int k = 0;
        for (long c = 0; c < count; c++) {
            int e = s.indexOf(from, k);
            if (e < 0) break;
            sb.append(s, k, e).append(to);
            k = e + from.length();
            if (from.isEmpty()) { if (k < s.length()) sb.append(s.charAt(k)); k++; }
        }
        if (k <= s.length()) sb.append(s.substring(Math.min(k, s.length())));
        return sb.toString();
    }

    /** Python's str.title(): a cased letter after an uncased character is upper-cased, others lower-cased. */
    private static String pythonTitle(String s) {
        StringBuilder sb = new StringBuilder(s.length());
        boolean prevCased = false;
        for (int k = 0; k < s.length(); k++) {
            char c = s.charAt(k);
            boolean cased = Character.isUpperCase(c) || Character.isLowerCase(c) || Character.isTitleCase(c);
            sb.append(cased ? (prevCased ? Character.toLowerCase(c) : Character.toTitleCase(c)) : c);
            prevCased = cased;
        }
        return sb.toString();
    }

    private static String capitalize(String s) {
        if (s.isEmpty()) return s;
        return s.substring(0, 1).toUpperCase(Locale.ROOT) + s.substring(1).toLowerCase(Locale.ROOT);
    }

    // ---- filters ----

    Object filter(String name, Object v, List<Object> args, Map<String, Object> kwargs, Pos pos) {
        try {
            return applyFilter(name, v, args, kwargs, pos);
        } catch (ChatTemplateException e) {
            throw e;
        } catch (RuntimeException e) {
            throw JinjaRenderer.error(pos, "filter '" + name + "': " + e.getMessage());
        }
    }

    private Object applyFilter(String name, Object v, List<Object> args, Map<String, Object> kwargs, Pos pos) {
        switch (name) {
            case "default", "d" -> {
                Object dflt = args.isEmpty() ? kwargs.getOrDefault("default_value", "") : args.getFirst();
                boolean bool = JinjaValues.truthy(args.size() > 1 ? args.get(1) : kwargs.getOrDefault("boolean", false));
                return v instanceof Undefined || (bool && !JinjaValues.truthy(v)) ? dflt : v;
            }
            case "safe" -> { return v; }
            case "string" -> { return JinjaValues.str(v); }
            case "list" -> { return iterable(v, name, pos); }
            case "length", "count" -> {
                int n = JinjaValues.length(v);
                if (n < 0) throw JinjaRenderer.error(pos, "object of type '" + JinjaValues.typeName(v) + "' has no len()");
                return (long) n;
            }
            case "tojson" -> {
                if (v instanceof Undefined u) throw JinjaRenderer.error(pos, u.hint());
                Object indent = args.isEmpty() ? kwargs.get("indent") : args.getFirst();
                Integer ind = indent == null ? null : (int) requireInt(indent, "tojson indent", pos);
                return JinjaValues.toJson(v, ind, JinjaValues.truthy(kwargs.getOrDefault("sort_keys", false)));
            }
            case "first", "last" -> {
                List<Object> items = iterable(v, name, pos);
                if (items.isEmpty()) return new Undefined("No " + name + " item, sequence was empty.");
                return name.equals("first") ? items.getFirst() : items.getLast();
            }
            case "join" -> {
                String sep = args.isEmpty() ? JinjaValues.str(kwargs.getOrDefault("d", "")) : JinjaValues.str(args.getFirst());
                Object attr = args.size() > 1 ? args.get(1) : kwargs.get("attribute");
                StringBuilder sb = new StringBuilder();
                List<Object> items = iterable(v, name, pos);
                for (int k = 0; k < items.size(); k++) {
                    if (k > 0) sb.append(sep);
                    Object o = items.get(k);
                    sb.append(JinjaValues.str(attr == null ? o : item(o, attr, pos)));
                }
                return sb.toString();
            }
            case "reverse" -> {
                if (v instanceof String s) return new StringBuilder(s).reverse().toString();
                List<Object> items = iterable(v, name, pos);
                Collections.reverse(items);
                return items;
            }
            case "items" -> {
                if (v instanceof Undefined) return new ArrayList<>();
                if (!(v instanceof Map<?, ?>)) throw JinjaRenderer.error(pos, "items filter expects a dict, got " + JinjaValues.typeName(v));
                return callMethod(v, "items", List.of(), Map.of(), pos);
            }
            case "selectattr", "rejectattr" -> {
                if (!JinjaValues.truthy(v)) return new ArrayList<>();   // Jinja: `if value:` before iterating
                String attr = JinjaValues.str(arg(args, 0, pos, name));
                List<Object> out = new ArrayList<>();
                for (Object o : iterable(v, name, pos)) {
                    Object a = item(o, attr, pos);
                    boolean r = args.size() > 1 ? test(JinjaValues.str(args.get(1)), a, args.subList(2, args.size()), pos) : JinjaValues.truthy(a);
                    if (r == name.equals("selectattr")) out.add(o);
                }
                return out;
            }
            case "select", "reject" -> {
                if (!JinjaValues.truthy(v)) return new ArrayList<>();
                List<Object> out = new ArrayList<>();
                for (Object o : iterable(v, name, pos)) {
                    boolean r = args.isEmpty() ? JinjaValues.truthy(o) : test(JinjaValues.str(args.getFirst()), o, args.subList(1, args.size()), pos);
                    if (r == name.equals("select")) out.add(o);
                }
                return out;
            }
            case "map" -> {
                List<Object> out = new ArrayList<>();
                if (!JinjaValues.truthy(v)) return out;
                Object attr = kwargs.get("attribute");
                for (Object o : iterable(v, name, pos)) {
                    if (attr != null) {
                        Object a = item(o, attr, pos);
                        out.add(a instanceof Undefined && kwargs.containsKey("default") ? kwargs.get("default") : a);
                    } else {
                        String f = JinjaValues.str(arg(args, 0, pos, name));
                        out.add(filter(f, o, args.subList(1, args.size()), Map.of(), pos));
                    }
                }
                return out;
            }
            case "unique" -> {
                List<Object> out = new ArrayList<>();
                for (Object o : iterable(v, name, pos)) {
                    boolean seen = false;
                    for (Object p : out) if (JinjaValues.equal(p, o)) { seen = true; break; }
                    if (!seen) out.add(o);
                }
                return out;
            }
            case "sort" -> {
                List<Object> items = iterable(v, name, pos);
                boolean reverse = JinjaValues.truthy(args.isEmpty() ? kwargs.getOrDefault("reverse", false) : args.getFirst());
                Object attr = kwargs.get("attribute");
                items.sort((x, y) -> {
                    Object a = attr == null ? x : item(x, attr, pos), b = attr == null ? y : item(y, attr, pos);
                    if (a instanceof String s && b instanceof String t) return s.compareToIgnoreCase(t);   // case_sensitive=False
                    Integer c = JinjaValues.compare(a, b);
                    if (c == null) throw JinjaRenderer.error(pos, "cannot sort " + JinjaValues.typeName(a) + " and " + JinjaValues.typeName(b));
                    return c;
                });
                if (reverse) Collections.reverse(items);
                return items;
            }
            case "sum" -> {
                Object total = 0L;
                for (Object o : iterable(v, name, pos)) total = JinjaOperators.arithmetic("+", total, o, pos);
                return total;
            }
            case "min", "max" -> {
                List<Object> items = iterable(v, name, pos);
                if (items.isEmpty()) return new Undefined("No " + name + " item, sequence was empty.");
                Object best = items.getFirst();
                for (Object o : items) {
                    // case_sensitive=False, as Jinja's min/max
                    Integer c = o instanceof String x && best instanceof String y
                            ? Integer.signum(x.toLowerCase(Locale.ROOT).compareTo(y.toLowerCase(Locale.ROOT))) : JinjaValues.compare(o, best);
                    if (c == null) throw JinjaRenderer.error(pos, "cannot compare " + JinjaValues.typeName(o) + " and " + JinjaValues.typeName(best));
                    if (name.equals("min") ? c < 0 : c > 0) best = o;
                }
                return best;
            }
            case "abs" -> {
                if (v instanceof Double d) return Math.abs(d);
                if (JinjaValues.isIntegral(v)) return Math.abs(JinjaValues.toLong(v));
                throw JinjaRenderer.error(pos, "bad operand type for abs(): '" + JinjaValues.typeName(v) + "'");
            }
            case "int" -> {
                Object dflt = args.isEmpty() ? 0L : args.getFirst();
                if (JinjaValues.isIntegral(v)) return JinjaValues.toLong(v);
                if (v instanceof Double d) return (long) (double) d;
                if (v instanceof String s) {
                    try { return Long.parseLong(s.strip().replace("_", "")); } catch (NumberFormatException e) {
                        try { return (long) Double.parseDouble(s.strip()); } catch (NumberFormatException e2) { return dflt; }
                    }
                }
                return dflt;
            }
            case "float" -> {
                Object dflt = args.isEmpty() ? 0.0 : args.getFirst();
                if (JinjaValues.isNumber(v)) return JinjaValues.toDouble(v);
                if (v instanceof String s) {
                    try { return Double.parseDouble(s.strip()); } catch (NumberFormatException e) { return dflt; }
                }
                return dflt;
            }
            case "round" -> {
                long precision = args.isEmpty() ? 0 : requireInt(args.getFirst(), "round precision", pos);
                String method = args.size() > 1 ? JinjaValues.str(args.get(1)) : JinjaValues.str(kwargs.getOrDefault("method", "common"));
                // Python's round(): the exact binary value, halves to even
                java.math.RoundingMode mode = switch (method) {
                    case "ceil" -> java.math.RoundingMode.CEILING;
                    case "floor" -> java.math.RoundingMode.FLOOR;
                    default -> java.math.RoundingMode.HALF_EVEN;
                };
                return new java.math.BigDecimal(JinjaValues.toDouble(v)).setScale((int) precision, mode).doubleValue();
            }
            case "indent" -> {
                Object w = args.isEmpty() ? kwargs.getOrDefault("width", 4L) : args.getFirst();
                String pad = w instanceof String s ? s : " ".repeat((int) requireInt(w, "indent width", pos));
                boolean first = JinjaValues.truthy(args.size() > 1 ? args.get(1) : kwargs.getOrDefault("first", false));
                boolean blank = JinjaValues.truthy(args.size() > 2 ? args.get(2) : kwargs.getOrDefault("blank", false));
                String[] lines = JinjaValues.str(v).split("\n", -1);
                StringBuilder sb = new StringBuilder();
                for (int k = 0; k < lines.length; k++) {
                    if (k > 0) sb.append('\n');
                    boolean indentIt = (k > 0 || first) && (blank || !lines[k].isBlank());
                    sb.append(indentIt ? pad : "").append(lines[k]);
                }
                return sb.toString();
            }
            default -> { }
        }
        String s = JinjaValues.str(v);
        return switch (name) {
            case "trim" -> strip(s, args.isEmpty() || args.getFirst() == null ? null : JinjaValues.str(args.getFirst()), true, true);
            case "upper" -> s.toUpperCase(Locale.ROOT);
            case "lower" -> s.toLowerCase(Locale.ROOT);
            case "capitalize" -> capitalize(s);
            case "title" -> jinjaTitle(s);
            case "replace" -> replace(s, JinjaValues.str(arg(args, 0, pos, name)), JinjaValues.str(arg(args, 1, pos, name)),
                    args.size() > 2 ? requireInt(args.get(2), "count", pos) : -1);
            case "escape", "e" -> s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&#34;").replace("'", "&#39;");
            case "wordcount" -> (long) split(s, null, -1).size();
            default -> throw JinjaRenderer.error(pos, "unknown filter '" + name + "'");
        };
    }

    /** Jinja's title filter: words begin after whitespace, '-', '(', '{', '[' or '<'. */
    private static String jinjaTitle(String s) {
        StringBuilder sb = new StringBuilder(s.length());
        boolean start = true;
        for (int k = 0; k < s.length(); k++) {
            char c = s.charAt(k);
            boolean sep = Character.isWhitespace(c) || "-({[<".indexOf(c) >= 0;
            sb.append(sep ? c : start ? Character.toUpperCase(c) : Character.toLowerCase(c));
            start = sep;
        }
        return sb.toString();
    }

    private static List<Object> iterable(Object v, String filter, Pos pos) {
        List<Object> items = JinjaValues.iterate(v);
        if (items == null) throw JinjaRenderer.error(pos, "filter '" + filter + "' needs a sequence, got '" + JinjaValues.typeName(v) + "'");
        return items;
    }

    // ---- tests ----

    boolean test(String name, Object v, List<Object> args, Pos pos) {
        return switch (name) {
            case "defined" -> !(v instanceof Undefined);
            case "undefined" -> v instanceof Undefined;
            case "none" -> v == null;
            case "string" -> v instanceof String;
            case "number" -> v instanceof Long || v instanceof Double || v instanceof Boolean;   // bool is an int in Python
            case "integer" -> v instanceof Long;
            case "float" -> v instanceof Double;
            case "boolean" -> v instanceof Boolean;
            case "true" -> Boolean.TRUE.equals(v);
            case "false" -> Boolean.FALSE.equals(v);
            case "mapping" -> v instanceof Map<?, ?>;
            case "sequence" -> v instanceof List<?> || v instanceof String || v instanceof Map<?, ?>;
            case "iterable" -> v instanceof List<?> || v instanceof String || v instanceof Map<?, ?> || v instanceof Undefined;
            case "callable" -> v instanceof Callable;
            case "odd", "even" -> {
                if (!JinjaValues.isIntegral(v)) throw JinjaRenderer.error(pos, "test '" + name + "' needs an integer, got " + JinjaValues.typeName(v));
                yield (Math.floorMod(JinjaValues.toLong(v), 2) == 1) == name.equals("odd");
            }
            case "divisibleby" -> {
                long d = requireInt(arg(args, 0, pos, name), "divisibleby", pos);
                yield d != 0 && JinjaValues.toLong(v) % d == 0;
            }
            case "eq", "equalto", "==" -> JinjaValues.equal(v, arg(args, 0, pos, name));
            case "ne", "!=" -> !JinjaValues.equal(v, arg(args, 0, pos, name));
            case "lt", "<" -> JinjaOperators.compare("<", v, arg(args, 0, pos, name), pos);
            case "le", "<=" -> JinjaOperators.compare("<=", v, arg(args, 0, pos, name), pos);
            case "gt", ">", "greaterthan" -> JinjaOperators.compare(">", v, arg(args, 0, pos, name), pos);
            case "ge", ">=" -> JinjaOperators.compare(">=", v, arg(args, 0, pos, name), pos);
            case "in" -> JinjaOperators.contains(arg(args, 0, pos, name), v, pos);
            case "sameas" -> {
                Object o = arg(args, 0, pos, name);
                yield v == o || (v != null && (v instanceof Boolean || v instanceof Long) && v.equals(o));
            }
            case "lower" -> v instanceof String s && s.equals(s.toLowerCase(Locale.ROOT));
            case "upper" -> v instanceof String s && s.equals(s.toUpperCase(Locale.ROOT));
            default -> throw JinjaRenderer.error(pos, "unknown test '" + name + "'");
        };
    }

    // ---- strftime ----

    /** Python's strftime for the directives chat templates use (Llama 3.x: "%d %b %Y"), in English. */
    static String strftime(String format, ZonedDateTime t) {
        StringBuilder sb = new StringBuilder();
        for (int k = 0; k < format.length(); k++) {
            char c = format.charAt(k);
            if (c != '%' || k + 1 >= format.length()) { sb.append(c); continue; }
            char d = format.charAt(++k);
            switch (d) {
                case 'd' -> sb.append(String.format("%02d", t.getDayOfMonth()));
                case 'm' -> sb.append(String.format("%02d", t.getMonthValue()));
                case 'Y' -> sb.append(t.getYear());
                case 'y' -> sb.append(String.format("%02d", t.getYear() % 100));
                case 'H' -> sb.append(String.format("%02d", t.getHour()));
                case 'I' -> sb.append(String.format("%02d", (t.getHour() + 11) % 12 + 1));
                case 'M' -> sb.append(String.format("%02d", t.getMinute()));
                case 'S' -> sb.append(String.format("%02d", t.getSecond()));
                case 'p' -> sb.append(t.getHour() < 12 ? "AM" : "PM");
                case 'b' -> sb.append(t.getMonth().getDisplayName(TextStyle.SHORT, Locale.ENGLISH));
                case 'B' -> sb.append(t.getMonth().getDisplayName(TextStyle.FULL, Locale.ENGLISH));
                case 'a' -> sb.append(t.getDayOfWeek().getDisplayName(TextStyle.SHORT, Locale.ENGLISH));
                case 'A' -> sb.append(t.getDayOfWeek().getDisplayName(TextStyle.FULL, Locale.ENGLISH));
                case 'j' -> sb.append(String.format("%03d", t.getDayOfYear()));
                case '%' -> sb.append('%');
                default -> sb.append('%').append(d);
            }
        }
        return sb.toString();
    }
}
