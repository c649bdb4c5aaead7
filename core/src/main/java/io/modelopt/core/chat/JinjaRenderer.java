package io.modelopt.core.chat;

import io.modelopt.core.chat.JinjaAst.*;
import io.modelopt.core.chat.JinjaValues.Callable;
import io.modelopt.core.chat.JinjaValues.Namespace;
import io.modelopt.core.chat.JinjaValues.Undefined;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Renders a parsed template. Scoping is Jinja's: each for-loop iteration and each macro call has
 * its own scope, so a {@code set} inside a loop body is gone after the iteration (templates carry
 * state out of loops in a {@code namespace()}); {@code if} blocks share the enclosing scope.
 * One renderer per render call (it holds the output), so templates are thread-safe.
 */
final class JinjaRenderer {
    /** What a body ended with: normally, or a break/continue that the innermost loop handles. */
    private enum Flow { NORMAL, BREAK, CONTINUE }

    static final class Scope {
        private final Scope parent;
        private final Map<String, Object> vars = new HashMap<>();

        Scope(Scope parent) { this.parent = parent; }

        Object lookup(String name) {
            for (Scope s = this; s != null; s = s.parent) {
                if (s.vars.containsKey(name)) return s.vars.get(name);
            }
            return new Undefined("'" + name + "' is undefined");
        }

        void set(String name, Object value) { vars.put(name, value); }
    }

    /** The {@code loop} variable of a for loop. */
    record Loop(int index0, int length, Object previous, Object next, boolean hasPrevious, boolean hasNext) {}

    private final JinjaBuiltins builtins;

    JinjaRenderer(JinjaBuiltins builtins) { this.builtins = builtins; }

    String render(List<Node> template, Scope globals) {
        StringBuilder out = new StringBuilder();
        body(template, new Scope(globals), out);
        return out.toString();
    }

    // ---- statements ----

    private Flow body(List<Node> nodes, Scope scope, StringBuilder out) {
        for (Node n : nodes) {
            Flow f = node(n, scope, out);
            if (f != Flow.NORMAL) return f;
        }
        return Flow.NORMAL;
    }

    private Flow node(Node n, Scope scope, StringBuilder out) {
        switch (n) {
            case Text t -> out.append(t.text());
            case Output o -> out.append(JinjaValues.str(eval(o.expr(), scope)));
            case If f -> {
                for (Branch b : f.branches()) {
                    if (JinjaValues.truthy(eval(b.condition(), scope))) return body(b.body(), scope, out);
                }
                return body(f.otherwise(), scope, out);
            }
            case For f -> forLoop(f, scope, out);
            case Assign s -> assign(s, scope);
            case SetBlock s -> {
                StringBuilder captured = new StringBuilder();
                body(s.body(), scope, captured);
                scope.set(s.name(), captured.toString());
            }
            case FilterBlock f -> {
                StringBuilder captured = new StringBuilder();
                Scope s = new Scope(scope);
                Flow flow = body(f.body(), s, captured);
                s.set(FilterBlock.BODY, captured.toString());
                out.append(JinjaValues.str(eval(f.chain(), s)));
                return flow;
            }
            case Macro m -> scope.set(m.name(), macro(m, scope));
            case LoopControl c -> { return c.isBreak() ? Flow.BREAK : Flow.CONTINUE; }
            case Block b -> { return body(b.body(), scope, out); }
        }
        return Flow.NORMAL;
    }

    private void forLoop(For f, Scope scope, StringBuilder out) {
        Object iterable = eval(f.iterable(), scope);
        List<Object> items = JinjaValues.iterate(iterable);
        if (items == null) throw error(f.pos(), "'" + JinjaValues.typeName(iterable) + "' object is not iterable");
        if (f.filter() != null) {
            List<Object> kept = new ArrayList<>();
            for (Object item : items) {
                Scope s = new Scope(scope);
                bindTargets(f, item, s);
                if (JinjaValues.truthy(eval(f.filter(), s))) kept.add(item);
            }
            items = kept;
        }
        int n = items.size();
        for (int k = 0; k < n; k++) {
            Scope s = new Scope(scope);
            bindTargets(f, items.get(k), s);
            s.set("loop", new Loop(k, n, k > 0 ? items.get(k - 1) : null, k + 1 < n ? items.get(k + 1) : null, k > 0, k + 1 < n));
            if (body(f.body(), s, out) == Flow.BREAK) break;
        }
        if (n == 0) body(f.otherwise(), scope, out);
    }

    private void bindTargets(For f, Object item, Scope s) {
        List<String> targets = f.targets();
        if (targets.size() == 1) {
            s.set(targets.getFirst(), item);
            return;
        }
        List<Object> parts = JinjaValues.iterate(item);
        if (parts == null || parts.size() != targets.size()) {
            throw error(f.pos(), "cannot unpack " + JinjaValues.repr(item) + " into " + targets.size() + " loop variables");
        }
        for (int k = 0; k < targets.size(); k++) s.set(targets.get(k), parts.get(k));
    }

    private void assign(Assign s, Scope scope) {
        Object value = eval(s.value(), scope);
        if (s.namespace() != null) {
            Object ns = eval(s.namespace(), scope);
            if (!(ns instanceof Namespace n)) throw error(s.pos(), "cannot assign attribute '" + s.attribute() + "' on a non-namespace object");
            n.attributes.put(s.attribute(), value);
            return;
        }
        if (s.names().size() == 1) {
            scope.set(s.names().getFirst(), value);
            return;
        }
        List<Object> parts = JinjaValues.iterate(value);
        if (parts == null || parts.size() != s.names().size()) {
            throw error(s.pos(), "cannot unpack " + JinjaValues.repr(value) + " into " + s.names().size() + " names");
        }
        for (int k = 0; k < parts.size(); k++) scope.set(s.names().get(k), parts.get(k));
    }

    private Callable macro(Macro m, Scope defining) {
        return (args, kwargs) -> {
            if (args.size() > m.params().size()) {
                throw error(m.pos(), "macro '" + m.name() + "' takes " + m.params().size() + " arguments, got " + args.size());
            }
            Scope s = new Scope(defining);
            for (int k = 0; k < m.params().size(); k++) {
                Param p = m.params().get(k);
                Object v;
                if (k < args.size()) v = args.get(k);
                else if (kwargs.containsKey(p.name())) v = kwargs.get(p.name());
                else if (p.defaultValue() != null) v = eval(p.defaultValue(), s);
                else v = new Undefined("parameter '" + p.name() + "' of macro '" + m.name() + "' was not given");
                s.set(p.name(), v);
            }
            StringBuilder out = new StringBuilder();
            body(m.body(), s, out);
            return out.toString();
        };
    }

    // ---- expressions ----

    Object eval(Expr e, Scope scope) {
        return switch (e) {
            case Const c -> c.value();
            case Name n -> scope.lookup(n.name());
            case ListLit l -> {
                List<Object> items = l.tuple() ? new JinjaValues.Tuple() : new ArrayList<>(l.items().size());
                for (Expr x : l.items()) items.add(eval(x, scope));
                yield items;
            }
            case DictLit d -> {
                Map<String, Object> map = new LinkedHashMap<>();
                for (int k = 0; k < d.keys().size(); k++) {
                    Object key = eval(d.keys().get(k), scope);
                    if (!(key instanceof String ks)) throw error(d.pos(), "dict keys must be strings here, got " + JinjaValues.typeName(key));
                    map.put(ks, eval(d.values().get(k), scope));
                }
                yield map;
            }
            case Attr a -> builtins.attribute(eval(a.target(), scope), a.name(), a.pos());
            case Item it -> builtins.item(eval(it.target(), scope), eval(it.index(), scope), it.pos());
            case Slice s -> builtins.slice(eval(s.target(), scope), evalOrNull(s.start(), scope), evalOrNull(s.stop(), scope),
                    evalOrNull(s.step(), scope), s.pos());
            case Call c -> call(c, scope);
            case Filter f -> builtins.filter(f.name(), eval(f.target(), scope), evalArgs(f.args(), scope), evalKwargs(f.kwargs(), scope), f.pos());
            case Test t -> {
                boolean r = builtins.test(t.name(), eval(t.target(), scope), evalArgs(t.args(), scope), t.pos());
                yield t.negated() != r;
            }
            case Unary u -> unary(u, scope);
            case Binary b -> binary(b, scope);
            case Compare c -> compare(c, scope);
            case Cond c -> JinjaValues.truthy(eval(c.condition(), scope)) ? eval(c.then(), scope)
                    : c.otherwise() != null ? eval(c.otherwise(), scope) : new Undefined("the conditional expression had no else");
        };
    }

    private Object evalOrNull(Expr e, Scope scope) { return e == null ? null : eval(e, scope); }

    private List<Object> evalArgs(List<Expr> args, Scope scope) {
        List<Object> out = new ArrayList<>(args.size());
        for (Expr a : args) out.add(eval(a, scope));
        return out;
    }

    private Map<String, Object> evalKwargs(List<Kwarg> kwargs, Scope scope) {
        if (kwargs.isEmpty()) return Map.of();
        Map<String, Object> out = new LinkedHashMap<>();
        for (Kwarg k : kwargs) out.put(k.name(), eval(k.value(), scope));
        return out;
    }

    private Object call(Call c, Scope scope) {
        List<Object> args = evalArgs(c.args(), scope);
        Map<String, Object> kwargs = evalKwargs(c.kwargs(), scope);
        if (c.callee() instanceof Attr a) {
            Object target = eval(a.target(), scope);
            return builtins.callMethod(target, a.name(), args, kwargs, a.pos());
        }
        Object f = eval(c.callee(), scope);
        if (f instanceof Callable fn) {
            try {
                return fn.call(args, kwargs);
            } catch (JinjaBuiltins.Raised r) {
                throw ChatTemplateException.raised(r.getMessage(), c.pos().line(), c.pos().column());
            } catch (ChatTemplateException ex) {
                throw ex;
            } catch (RuntimeException ex) {
                throw error(c.pos(), ex.getMessage());
            }
        }
        if (f instanceof Undefined u) throw error(c.pos(), u.hint());
        throw error(c.pos(), "'" + JinjaValues.typeName(f) + "' object is not callable");
    }

    private Object unary(Unary u, Scope scope) {
        Object v = eval(u.operand(), scope);
        if (u.op().equals("not")) return !JinjaValues.truthy(v);
        if (v instanceof Undefined un) throw error(u.pos(), un.hint());
        if (!JinjaValues.isNumber(v)) throw error(u.pos(), "bad operand type for unary " + u.op() + ": '" + JinjaValues.typeName(v) + "'");
        if (u.op().equals("+")) return v instanceof Boolean ? (Object) JinjaValues.toLong(v) : v;
        return v instanceof Double d ? (Object) (-d) : (Object) (-JinjaValues.toLong(v));
    }

    private Object binary(Binary b, Scope scope) {
        switch (b.op()) {
            case "and" -> {
                Object l = eval(b.left(), scope);
                return JinjaValues.truthy(l) ? eval(b.right(), scope) : l;
            }
            case "or" -> {
                Object l = eval(b.left(), scope);
                return JinjaValues.truthy(l) ? l : eval(b.right(), scope);
            }
            case "~" -> { return JinjaValues.str(eval(b.left(), scope)) + JinjaValues.str(eval(b.right(), scope)); }
            default -> { return JinjaOperators.arithmetic(b.op(), eval(b.left(), scope), eval(b.right(), scope), b.pos()); }
        }
    }

    private Object compare(Compare c, Scope scope) {
        Object left = eval(c.first(), scope);
        for (int k = 0; k < c.ops().size(); k++) {
            Object right = eval(c.rest().get(k), scope);
            if (!JinjaOperators.compare(c.ops().get(k), left, right, c.pos())) return false;
            left = right;
        }
        return true;
    }

    static ChatTemplateException error(Pos pos, String problem) {
        return ChatTemplateException.render(problem, pos.line(), pos.column());
    }
}
