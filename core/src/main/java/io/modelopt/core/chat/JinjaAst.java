package io.modelopt.core.chat;

import java.util.List;

/** The parsed template: statements ({@link Node}) and expressions ({@link Expr}), each with its source position. */
final class JinjaAst {
    private JinjaAst() {}

    record Pos(int line, int column) {}

    // ---- statements ----

    sealed interface Node permits Text, Output, If, For, Assign, SetBlock, FilterBlock, Macro, LoopControl, Block {}

    record Text(String text) implements Node {}

    record Output(Expr expr, Pos pos) implements Node {}

    record Branch(Expr condition, List<Node> body) {}

    /** if / elif... / else; {@code otherwise} is empty without else. */
    record If(List<Branch> branches, List<Node> otherwise, Pos pos) implements Node {}

    /** for targets in iterable [if filter] ... [else ...] endfor. */
    record For(List<String> targets, Expr iterable, Expr filter, List<Node> body, List<Node> otherwise, Pos pos) implements Node {}

    /** set target = value; target is a name, several names (unpacking), or {@code ns.attr}. */
    record Assign(List<String> names, Expr namespace, String attribute, Expr value, Pos pos) implements Node {}

    /** set name %}...{% endset: the rendered body, as a string. */
    record SetBlock(String name, List<Node> body, Pos pos) implements Node {}

    /** filter f(args) | g %}...{% endfilter: the rendered body through the filters; {@code chain} reads it as {@link #BODY}. */
    record FilterBlock(Expr chain, List<Node> body, Pos pos) implements Node {
        static final String BODY = "\0filter-body";
    }

    record Param(String name, Expr defaultValue) {}

    record Macro(String name, List<Param> params, List<Node> body, Pos pos) implements Node {}

    /** break or continue (Jinja's loopcontrols extension, which Hugging Face enables). */
    record LoopControl(boolean isBreak, Pos pos) implements Node {}

    /** A body rendered in place ({@code generation} blocks of Hugging Face's AssistantTracker). */
    record Block(List<Node> body) implements Node {}

    // ---- expressions ----

    sealed interface Expr permits Const, Name, ListLit, DictLit, Attr, Item, Slice, Call, Filter, Test, Unary, Binary, Compare, Cond {
        Pos pos();
    }

    record Const(Object value, Pos pos) implements Expr {}

    record Name(String name, Pos pos) implements Expr {}

    /** A list or tuple literal (a tuple is a {@link JinjaValues.Tuple}: a list that prints as Python's tuple). */
    record ListLit(List<Expr> items, boolean tuple, Pos pos) implements Expr {}

    record DictLit(List<Expr> keys, List<Expr> values, Pos pos) implements Expr {}

    record Attr(Expr target, String name, Pos pos) implements Expr {}

    record Item(Expr target, Expr index, Pos pos) implements Expr {}

    record Slice(Expr target, Expr start, Expr stop, Expr step, Pos pos) implements Expr {}

    record Kwarg(String name, Expr value) {}

    record Call(Expr callee, List<Expr> args, List<Kwarg> kwargs, Pos pos) implements Expr {}

    record Filter(Expr target, String name, List<Expr> args, List<Kwarg> kwargs, Pos pos) implements Expr {}

    record Test(Expr target, String name, List<Expr> args, boolean negated, Pos pos) implements Expr {}

    /** "not", "-" or "+". */
    record Unary(String op, Expr operand, Pos pos) implements Expr {}

    /** + - * / // % ** ~ and or. */
    record Binary(String op, Expr left, Expr right, Pos pos) implements Expr {}

    /** A chain {@code a < b <= c}: ops are == != < <= > >= in "not in". */
    record Compare(Expr first, List<String> ops, List<Expr> rest, Pos pos) implements Expr {}

    /** {@code then if condition else otherwise}; otherwise may be null (undefined). */
    record Cond(Expr condition, Expr then, Expr otherwise, Pos pos) implements Expr {}
}
