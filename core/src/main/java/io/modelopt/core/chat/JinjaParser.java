package io.modelopt.core.chat;

import io.modelopt.core.chat.JinjaAst.*;
import io.modelopt.core.chat.JinjaLexer.Kind;
import io.modelopt.core.chat.JinjaLexer.Token;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * Recursive-descent parser for the Jinja subset, with Jinja2's operator precedence (lowest
 * first): {@code x if c else y}, {@code or}, {@code and}, {@code not}, comparisons and
 * {@code in} (chained), {@code + -}, {@code ~}, {@code * / // %}, {@code **}, unary {@code - +},
 * then primaries with postfix {@code .attr [index] [a:b] (call)}, filters {@code |f} and tests
 * {@code is [not] t}, which bind tighter than any binary operator (so {@code 'a' + x | trim}
 * trims only {@code x}).
 */
final class JinjaParser {
    private static final Set<String> CLOSING_TAGS = Set.of("elif", "else", "endif", "endfor", "endset", "endmacro", "endgeneration", "endfilter");
    private static final Set<String> COMPARE_OPS = Set.of("==", "!=", "<", "<=", ">", ">=");

    private final List<Token> tokens;
    private int i;
    private int loopDepth;

    private JinjaParser(List<Token> tokens) { this.tokens = tokens; }

    static List<Node> parse(String source) {
        JinjaParser p = new JinjaParser(JinjaLexer.tokenize(source, true, true));
        List<Node> body = p.body(Set.of(), null);
        if (p.peek().kind() != Kind.EOF) throw p.error(p.peek(), "unexpected " + p.peek().describe());
        return body;
    }

    // ---- statements ----

    /**
     * Nodes up to a block tag named in {@code endTags} (left unconsumed: the current token is then
     * that tag's name) or the end of the template (an error when endTags is not empty).
     */
    private List<Node> body(Set<String> endTags, Token opener) {
        List<Node> nodes = new ArrayList<>();
        while (true) {
            Token t = peek();
            switch (t.kind()) {
                case EOF -> {
                    if (!endTags.isEmpty()) {
                        throw error(opener, "'" + opener.text() + "' is never closed: expected " + expected(endTags) + " before the end of the template");
                    }
                    return nodes;
                }
                case TEXT -> { next(); nodes.add(new Text(t.text())); }
                case VAR_BEGIN -> {
                    next();
                    Expr e = tuple(true);
                    expect(Kind.VAR_END, "'}}'");
                    nodes.add(new Output(e, pos(t)));
                }
                case BLOCK_BEGIN -> {
                    Token name = tokens.get(i + 1);
                    if (name.kind() != Kind.NAME) throw error(name, "expected a tag name after '{%', got " + name.describe());
                    if (endTags.contains(name.text())) { next(); return nodes; }
                    if (opener != null && CLOSING_TAGS.contains(name.text())) {
                        throw error(name, "unexpected '{% " + name.text() + " %}': the innermost open block is '" + opener.text()
                                + "' at line " + opener.line() + ", column " + opener.column() + ", which needs " + expected(endTags) + " first");
                    }
                    next();
                    next();
                    nodes.add(statement(name));
                }
                default -> throw error(t, "unexpected " + t.describe());
            }
        }
    }

    private static String expected(Set<String> tags) {
        return tags.stream().sorted().map(s -> "'{% " + s + " %}'").reduce((a, b) -> a + " or " + b).orElse("");
    }

    private Node statement(Token name) {
        return switch (name.text()) {
            case "if" -> ifStatement(name);
            case "for" -> forStatement(name);
            case "set" -> setStatement(name);
            case "macro" -> macro(name);
            case "break", "continue" -> {
                if (loopDepth == 0) throw error(name, "'" + name.text() + "' outside of a for loop");
                endOfTag(name);
                yield new LoopControl(name.text().equals("break"), pos(name));
            }
            case "filter" -> {
                Expr chain = new Name(FilterBlock.BODY, pos(name));
                do {
                    Token f = expect(Kind.NAME, "a filter name");
                    List<Expr> args = new ArrayList<>();
                    List<Kwarg> kwargs = new ArrayList<>();
                    if (peek().isOp("(")) { next(); parseArgs(args, kwargs); }
                    chain = new Filter(chain, f.text(), List.copyOf(args), List.copyOf(kwargs), pos(f));
                } while (peek().isOp("|") && next() != null);
                endOfTag(name);
                List<Node> b = body(Set.of("endfilter"), name);
                next();
                endOfTag(name);
                yield new FilterBlock(chain, b, pos(name));
            }
            case "generation" -> {
                endOfTag(name);
                List<Node> b = body(Set.of("endgeneration"), name);
                next();
                endOfTag(name);
                yield new Block(b);
            }
            case "elif", "else", "endif", "endfor", "endset", "endmacro", "endgeneration", "endfilter" ->
                    throw error(name, "unexpected '{% " + name.text() + " %}' (no open block it could close)");
            default -> throw error(name, "unknown or unsupported tag '" + name.text() + "'");
        };
    }

    private If ifStatement(Token tag) {
        List<Branch> branches = new ArrayList<>();
        Expr cond = expression(true);
        endOfTag(tag);
        Set<String> ends = Set.of("elif", "else", "endif");
        while (true) {
            List<Node> b = body(ends, tag);
            branches.add(new Branch(cond, b));
            Token t = next();
            switch (t.text()) {
                case "elif" -> { cond = expression(true); endOfTag(t); }
                case "else" -> {
                    endOfTag(t);
                    List<Node> otherwise = body(Set.of("endif"), tag);
                    next();
                    endOfTag(tag);
                    return new If(branches, otherwise, pos(tag));
                }
                default -> { endOfTag(t); return new If(branches, List.of(), pos(tag)); }
            }
        }
    }

    private For forStatement(Token tag) {
        List<String> targets = new ArrayList<>();
        boolean paren = peek().isOp("(") && next() != null;
        do {
            targets.add(expect(Kind.NAME, "a loop variable name").text());
        } while (peek().isOp(",") && next() != null);
        if (paren) expectOp(")");
        if (!peek().isName("in")) throw error(peek(), "expected 'in' in for loop, got " + peek().describe());
        next();
        Expr iterable = tuple(false);
        Expr filter = null;
        if (peek().isName("if")) { next(); filter = expression(true); }
        if (peek().isName("recursive")) throw error(peek(), "recursive for loops are not supported");
        endOfTag(tag);
        loopDepth++;
        List<Node> body = body(Set.of("else", "endfor"), tag);
        loopDepth--;
        List<Node> otherwise = List.of();
        if (next().text().equals("else")) {
            endOfTag(tag);
            otherwise = body(Set.of("endfor"), tag);
            next();
        }
        endOfTag(tag);
        return new For(List.copyOf(targets), iterable, filter, body, otherwise, pos(tag));
    }

    private Node setStatement(Token tag) {
        Token first = expect(Kind.NAME, "a variable name after 'set'");
        if (peek().isOp(".")) {
            next();
            String attr = expect(Kind.NAME, "an attribute name").text();
            expectOp("=");
            Expr value = tuple(true);
            endOfTag(tag);
            return new Assign(List.of(), new Name(first.text(), pos(first)), attr, value, pos(tag));
        }
        List<String> names = new ArrayList<>(List.of(first.text()));
        while (peek().isOp(",")) { next(); names.add(expect(Kind.NAME, "a variable name").text()); }
        if (peek().isOp("=")) {
            next();
            Expr value = tuple(true);
            endOfTag(tag);
            return new Assign(List.copyOf(names), null, null, value, pos(tag));
        }
        if (names.size() != 1) throw error(peek(), "expected '=' after the names in 'set'");
        endOfTag(tag);
        List<Node> b = body(Set.of("endset"), tag);
        next();
        endOfTag(tag);
        return new SetBlock(first.text(), b, pos(tag));
    }

    private Macro macro(Token tag) {
        String name = expect(Kind.NAME, "a macro name").text();
        expectOp("(");
        List<Param> params = new ArrayList<>();
        while (!peek().isOp(")")) {
            String p = expect(Kind.NAME, "a parameter name").text();
            Expr dflt = null;
            if (peek().isOp("=")) { next(); dflt = expression(true); }
            params.add(new Param(p, dflt));
            if (!peek().isOp(")")) expectOp(",");
        }
        next();
        endOfTag(tag);
        int savedDepth = loopDepth;
        loopDepth = 0;
        List<Node> b = body(Set.of("endmacro"), tag);
        loopDepth = savedDepth;
        next();
        if (peek().kind() == Kind.NAME && peek().text().equals(name)) next();
        endOfTag(tag);
        return new Macro(name, List.copyOf(params), b, pos(tag));
    }

    private void endOfTag(Token tag) {
        Token t = peek();
        if (t.kind() != Kind.BLOCK_END) throw error(t, "expected '%}' to end '{% " + tag.text() + " %}', got " + t.describe());
        next();
    }

    // ---- expressions ----

    /** An expression, or several separated by commas (a tuple, as Jinja's parse_tuple). */
    private Expr tuple(boolean withCond) {
        Token start = peek();
        Expr first = expression(withCond);
        if (!peek().isOp(",")) return first;
        List<Expr> items = new ArrayList<>(List.of(first));
        while (peek().isOp(",")) {
            next();
            if (!startsExpression(peek())) break;
            items.add(expression(withCond));
        }
        return new ListLit(List.copyOf(items), true, pos(start));
    }

    private static boolean startsExpression(Token t) {
        return switch (t.kind()) {
            case NAME, STRING, INT, FLOAT -> true;
            case OP -> t.text().equals("(") || t.text().equals("[") || t.text().equals("{") || t.text().equals("-") || t.text().equals("+");
            default -> false;
        };
    }

    private Expr expression(boolean withCond) {
        return withCond ? condExpr() : or();
    }

    private Expr condExpr() {
        Expr e = or();
        while (peek().isName("if")) {
            Token t = next();
            Expr cond = or();
            Expr otherwise = null;
            if (peek().isName("else")) { next(); otherwise = condExpr(); }
            e = new Cond(cond, e, otherwise, pos(t));
        }
        return e;
    }

    private Expr or() {
        Expr e = and();
        while (peek().isName("or")) { Token t = next(); e = new Binary("or", e, and(), pos(t)); }
        return e;
    }

    private Expr and() {
        Expr e = not();
        while (peek().isName("and")) { Token t = next(); e = new Binary("and", e, not(), pos(t)); }
        return e;
    }

    private Expr not() {
        if (peek().isName("not")) { Token t = next(); return new Unary("not", not(), pos(t)); }
        return compare();
    }

    private Expr compare() {
        Token start = peek();
        Expr first = math1();
        List<String> ops = new ArrayList<>();
        List<Expr> rest = new ArrayList<>();
        while (true) {
            Token t = peek();
            if (t.kind() == Kind.OP && COMPARE_OPS.contains(t.text())) {
                next();
                ops.add(t.text());
            } else if (t.isName("in")) {
                next();
                ops.add("in");
            } else if (t.isName("not") && tokens.get(i + 1).isName("in")) {
                next();
                next();
                ops.add("not in");
            } else {
                break;
            }
            rest.add(math1());
        }
        return ops.isEmpty() ? first : new Compare(first, List.copyOf(ops), List.copyOf(rest), pos(start));
    }

    private Expr math1() {
        Expr e = concat();
        while (peek().isOp("+") || peek().isOp("-")) { Token t = next(); e = new Binary(t.text(), e, concat(), pos(t)); }
        return e;
    }

    private Expr concat() {
        Expr e = math2();
        while (peek().isOp("~")) { Token t = next(); e = new Binary("~", e, math2(), pos(t)); }
        return e;
    }

    private Expr math2() {
        Expr e = pow();
        while (peek().isOp("*") || peek().isOp("/") || peek().isOp("//") || peek().isOp("%")) {
            Token t = next();
            e = new Binary(t.text(), e, pow(), pos(t));
        }
        return e;
    }

    private Expr pow() {
        Expr e = unary(true);
        while (peek().isOp("**")) { Token t = next(); e = new Binary("**", e, unary(true), pos(t)); }
        return e;
    }

    private Expr unary(boolean withFilter) {
        Token t = peek();
        Expr e;
        if (t.isOp("-") || t.isOp("+")) {
            next();
            e = new Unary(t.text(), unary(false), pos(t));
        } else {
            e = primary();
        }
        e = postfix(e);
        return withFilter ? filters(e) : e;
    }

    private Expr primary() {
        Token t = next();
        switch (t.kind()) {
            case NAME -> {
                return switch (t.text()) {
                    case "true", "True" -> new Const(Boolean.TRUE, pos(t));
                    case "false", "False" -> new Const(Boolean.FALSE, pos(t));
                    case "none", "None" -> new Const(null, pos(t));
                    default -> new Name(t.text(), pos(t));
                };
            }
            case STRING -> {
                StringBuilder sb = new StringBuilder((String) t.value());
                while (peek().kind() == Kind.STRING) sb.append((String) next().value());   // adjacent literals join
                return new Const(sb.toString(), pos(t));
            }
            case INT, FLOAT -> { return new Const(t.value(), pos(t)); }
            case OP -> {
                switch (t.text()) {
                    case "(" -> {
                        if (peek().isOp(")")) { next(); return new ListLit(List.of(), true, pos(t)); }
                        Expr e = expression(true);
                        if (peek().isOp(",")) {
                            List<Expr> items = new ArrayList<>(List.of(e));
                            while (peek().isOp(",")) {
                                next();
                                if (peek().isOp(")")) break;
                                items.add(expression(true));
                            }
                            e = new ListLit(List.copyOf(items), true, pos(t));
                        }
                        expectOp(")");
                        return e;
                    }
                    case "[" -> {
                        List<Expr> items = new ArrayList<>();
                        while (!peek().isOp("]")) {
                            items.add(expression(true));
                            if (!peek().isOp("]")) expectOp(",");
                        }
                        next();
                        return new ListLit(List.copyOf(items), false, pos(t));
                    }
                    case "{" -> {
                        List<Expr> keys = new ArrayList<>(), values = new ArrayList<>();
                        while (!peek().isOp("}")) {
                            keys.add(expression(true));
                            expectOp(":");
                            values.add(expression(true));
                            if (!peek().isOp("}")) expectOp(",");
                        }
                        next();
                        return new DictLit(List.copyOf(keys), List.copyOf(values), pos(t));
                    }
                    default -> { }
                }
            }
            default -> { }
        }
        throw error(t, "unexpected " + t.describe() + " where an expression was expected");
    }

    private Expr postfix(Expr e) {
        while (true) {
            Token t = peek();
            if (t.isOp(".")) {
                next();
                Token n = next();
                if (n.kind() == Kind.NAME) e = new Attr(e, n.text(), pos(n));
                else if (n.kind() == Kind.INT) e = new Item(e, new Const(n.value(), pos(n)), pos(n));
                else throw error(n, "expected an attribute name after '.', got " + n.describe());
            } else if (t.isOp("[")) {
                next();
                e = subscript(e, t);
                expectOp("]");
            } else if (t.isOp("(")) {
                e = call(e);
            } else {
                return e;
            }
        }
    }

    private Expr subscript(Expr target, Token open) {
        Expr start = null, stop = null, step = null;
        if (!peek().isOp(":")) {
            Expr idx = expression(true);
            if (!peek().isOp(":")) return new Item(target, idx, pos(open));
            start = idx;
        }
        next();   // ':'
        if (!peek().isOp(":") && !peek().isOp("]")) stop = expression(true);
        if (peek().isOp(":")) {
            next();
            if (!peek().isOp("]")) step = expression(true);
        }
        return new Slice(target, start, stop, step, pos(open));
    }

    private Call call(Expr callee) {
        Token open = next();
        List<Expr> args = new ArrayList<>();
        List<Kwarg> kwargs = new ArrayList<>();
        parseArgs(args, kwargs);
        return new Call(callee, List.copyOf(args), List.copyOf(kwargs), pos(open));
    }

    /** After '(': positional and name=value arguments up to and including ')'. */
    private void parseArgs(List<Expr> args, List<Kwarg> kwargs) {
        while (!peek().isOp(")")) {
            Token t = peek();
            if (t.isOp("*") || t.isOp("**")) throw error(t, "*args and **kwargs in calls are not supported");
            if (t.kind() == Kind.NAME && tokens.get(i + 1).isOp("=")) {
                next();
                next();
                kwargs.add(new Kwarg(t.text(), expression(true)));
            } else {
                if (!kwargs.isEmpty()) throw error(t, "positional argument after a keyword argument");
                args.add(expression(true));
            }
            if (!peek().isOp(")")) expectOp(",");
        }
        next();
    }

    private Expr filters(Expr e) {
        while (true) {
            Token t = peek();
            if (t.isOp("|")) {
                next();
                Token name = expect(Kind.NAME, "a filter name after '|'");
                List<Expr> args = new ArrayList<>();
                List<Kwarg> kwargs = new ArrayList<>();
                if (peek().isOp("(")) { next(); parseArgs(args, kwargs); }
                e = new Filter(e, name.text(), List.copyOf(args), List.copyOf(kwargs), pos(name));
            } else if (t.isName("is")) {
                next();
                boolean negated = false;
                if (peek().isName("not")) { next(); negated = true; }
                Token name = expect(Kind.NAME, "a test name after 'is'");
                List<Expr> args = new ArrayList<>();
                Token a = peek();
                if (a.isOp("(")) {
                    next();
                    List<Kwarg> kwargs = new ArrayList<>();
                    parseArgs(args, kwargs);
                    if (!kwargs.isEmpty()) throw error(a, "tests take no keyword arguments");
                } else if ((a.kind() == Kind.NAME || a.kind() == Kind.STRING || a.kind() == Kind.INT || a.kind() == Kind.FLOAT
                        || a.isOp("[") || a.isOp("{")) && !a.isName("else") && !a.isName("or") && !a.isName("and")) {
                    if (a.isName("is")) throw error(a, "tests cannot be chained with 'is'");
                    args.add(postfix(primary()));   // Jinja: `x is divisibleby 3`, `x is sameas none`
                }
                e = new Test(e, name.text(), List.copyOf(args), negated, pos(name));
            } else if (t.isOp("(")) {
                e = call(e);
            } else {
                return e;
            }
        }
    }

    // ---- tokens ----

    private Token peek() { return tokens.get(i); }

    private Token next() {
        Token t = tokens.get(i);
        if (t.kind() != Kind.EOF) i++;
        return t;
    }

    private Token expect(Kind kind, String what) {
        Token t = peek();
        if (t.kind() != kind) throw error(t, "expected " + what + ", got " + t.describe());
        return next();
    }

    private void expectOp(String op) {
        Token t = peek();
        if (!t.isOp(op)) throw error(t, "expected '" + op + "', got " + t.describe());
        next();
    }

    private static Pos pos(Token t) { return new Pos(t.line(), t.column()); }

    private ChatTemplateException error(Token t, String problem) {
        return ChatTemplateException.syntax(problem, t.line(), t.column());
    }
}
