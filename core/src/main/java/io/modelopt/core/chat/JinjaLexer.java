package io.modelopt.core.chat;

import java.util.ArrayList;
import java.util.List;

/**
 * Cuts a template into text and tag tokens the way Jinja2's lexer does with the options Hugging
 * Face renders chat templates with ({@code trim_blocks=True, lstrip_blocks=True},
 * {@code keep_trailing_newline=False}):
 *
 * <ul>
 *   <li>line endings become {@code \n} and one trailing newline of the source is dropped;</li>
 *   <li>{@code {%-}, {@code {{-}, {@code {#-} strip all whitespace before the tag,
 *       {@code -%}}, {@code -}}}, {@code -#}} all whitespace after it;</li>
 *   <li>trim_blocks: the first newline after a block or comment tag ({@code %}} / {@code #}}) is removed;</li>
 *   <li>lstrip_blocks: spaces and tabs from the start of a line up to a block or comment tag are
 *       removed (not before {@code {{}, and not with {@code {%+});</li>
 *   <li>{@code {% raw %}...{% endraw %}} is text.</li>
 * </ul>
 * Comments are dropped here. Positions are 1-based line and column of the source.
 */
final class JinjaLexer {
    enum Kind { TEXT, VAR_BEGIN, VAR_END, BLOCK_BEGIN, BLOCK_END, NAME, STRING, INT, FLOAT, OP, EOF }

    record Token(Kind kind, String text, Object value, int line, int column) {
        boolean is(Kind k, String t) { return kind == k && text.equals(t); }
        boolean isOp(String t) { return kind == Kind.OP && text.equals(t); }
        boolean isName(String t) { return kind == Kind.NAME && text.equals(t); }

        String describe() {
            return switch (kind) {
                case EOF -> "end of template";
                case VAR_END -> "'}}'";
                case BLOCK_END -> "'%}'";
                case STRING -> "string literal";
                case TEXT -> "text";
                default -> "'" + text + "'";
            };
        }
    }

    /** Longest first, so that "**" wins over "*". */
    private static final String[] OPERATORS = {
        "//", "**", "==", "!=", "<=", ">=",
        "+", "-", "*", "/", "%", "~", "<", ">", "=", "(", ")", "[", "]", "{", "}", ",", ".", ":", "|",
    };

    private final String src;
    private final int[] lineStarts;
    private final boolean trimBlocks;
    private final boolean lstripBlocks;
    private final List<Token> out = new ArrayList<>();
    private int pos;
    private boolean lineStarting = true;

    private JinjaLexer(String source, boolean trimBlocks, boolean lstripBlocks) {
        this.src = normalizeNewlines(source);
        List<Integer> starts = new ArrayList<>();
        starts.add(0);
        for (int i = 0; i < src.length(); i++) if (src.charAt(i) == '\n') starts.add(i + 1);
        this.lineStarts = starts.stream().mapToInt(Integer::intValue).toArray();
        this.trimBlocks = trimBlocks;
        this.lstripBlocks = lstripBlocks;
    }

    static List<Token> tokenize(String source, boolean trimBlocks, boolean lstripBlocks) {
        JinjaLexer l = new JinjaLexer(source, trimBlocks, lstripBlocks);
        l.run();
        return l.out;
    }

    /** Jinja splits on \r\n, \r, \n, drops a last empty line (keep_trailing_newline=False) and joins with \n. */
    static String normalizeNewlines(String s) {
        String t = s.replace("\r\n", "\n").replace('\r', '\n');
        return t.endsWith("\n") ? t.substring(0, t.length() - 1) : t;
    }

    private void run() {
        int n = src.length();
        while (pos < n) {
            int tag = nextTagStart(pos);
            if (tag < 0) {
                emitText(src.substring(pos), pos);
                pos = n;
                break;
            }
            char kind = src.charAt(tag + 1);
            char sign = tag + 2 < n ? src.charAt(tag + 2) : 0;
            String text = src.substring(pos, tag);
            if (sign == '-') {
                text = stripTrailing(text);
            } else if (sign != '+' && lstripBlocks && kind != '{') {
                int lpos = text.lastIndexOf('\n') + 1;
                if ((lpos > 0 || lineStarting) && lpos < text.length() && isBlank(text, lpos)) text = text.substring(0, lpos);
            }
            emitText(text, pos);
            int afterBegin = tag + 2 + (sign == '-' || sign == '+' ? 1 : 0);
            switch (kind) {
                case '#' -> comment(tag, afterBegin);
                case '{' -> tag(tag, afterBegin, Kind.VAR_BEGIN, Kind.VAR_END, '}');
                default -> {
                    if (rawBlockAt(afterBegin)) raw(tag, afterBegin);
                    else tag(tag, afterBegin, Kind.BLOCK_BEGIN, Kind.BLOCK_END, '%');
                }
            }
        }
        int[] lc = lineColumn(src.length());
        out.add(new Token(Kind.EOF, "", null, lc[0], lc[1]));
    }

    private int nextTagStart(int from) {
        int i = src.indexOf('{', from);
        while (i >= 0 && i + 1 < src.length()) {
            char c = src.charAt(i + 1);
            if (c == '{' || c == '%' || c == '#') return i;
            i = src.indexOf('{', i + 1);
        }
        return -1;
    }

    private void emitText(String text, int at) {
        if (text.isEmpty()) return;
        int[] lc = lineColumn(at);
        out.add(new Token(Kind.TEXT, text, text, lc[0], lc[1]));
    }

    /** Jinja's comment rule: the first "#}" ends it; "-#}" strips what follows, "#}" takes one newline (trim_blocks). */
    private void comment(int tagStart, int bodyStart) {
        int end = src.indexOf("#}", bodyStart);
        if (end < 0) throw error(tagStart, "comment '{#' is never closed with '#}'");
        char before = end > bodyStart ? src.charAt(end - 1) : 0;
        pos = afterEnd(end + 2, before);
    }

    /** Position after an end delimiter at {@code afterDelim}, applying "-" (all whitespace) or trim_blocks (one newline). */
    private int afterEnd(int afterDelim, char signBefore) {
        int p = afterDelim;
        if (signBefore == '-') {
            while (p < src.length() && Character.isWhitespace(src.charAt(p))) p++;
        } else if (signBefore != '+' && trimBlocks && p < src.length() && src.charAt(p) == '\n') {
            p++;
        }
        lineStarting = p > 0 && src.charAt(p - 1) == '\n' && p > afterDelim;
        return p;
    }

    private void tag(int tagStart, int p, Kind begin, Kind end, char closer) {
        int[] lc = lineColumn(tagStart);
        out.add(new Token(begin, src.substring(tagStart, tagStart + 2), null, lc[0], lc[1]));
        int n = src.length();
        int depth = 0;
        while (true) {
            while (p < n && Character.isWhitespace(src.charAt(p))) p++;
            if (p >= n) {
                throw error(tagStart, (begin == Kind.VAR_BEGIN ? "'{{' is never closed with '}}'" : "'{%' is never closed with '%}'"));
            }
            // the end delimiter (with its whitespace sign) is tried before any operator, but not inside
            // brackets: Jinja's balancing stack, so that {'b': {}} inside {{ }} is a dict
            char c = src.charAt(p);
            if (depth == 0 && (c == '-' || c == '+') && src.startsWith(closer + "}", p + 1) && !(c == '+' && closer == '}')) {
                int[] e = lineColumn(p);
                out.add(new Token(end, src.substring(p, p + 3), null, e[0], e[1]));
                pos = afterEnd(p + 3, c);
                return;
            }
            if (depth == 0 && c == closer && p + 1 < n && src.charAt(p + 1) == '}') {
                int[] e = lineColumn(p);
                out.add(new Token(end, src.substring(p, p + 2), null, e[0], e[1]));
                if (closer == '}') {
                    pos = p + 2;
                    lineStarting = false;
                } else {
                    pos = afterEnd(p + 2, (char) 0);
                }
                return;
            }
            p = expressionToken(p);
            Token last = out.getLast();
            if (last.kind() == Kind.OP) {
                switch (last.text()) {
                    case "(", "[", "{" -> depth++;
                    case ")", "]", "}" -> depth = Math.max(0, depth - 1);
                    default -> { }
                }
            }
        }
    }

    private boolean rawBlockAt(int p) {
        int q = skipWs(p);
        if (!src.startsWith("raw", q)) return false;
        int r = skipWs(q + 3);
        return src.startsWith("%}", r) || src.startsWith("-%}", r);
    }

    /** {@code {% raw %}...{% endraw %}}: the body is text; the raw begin tag has no trim_blocks (Jinja's rule). */
    private void raw(int tagStart, int afterBegin) {
        int r = skipWs(skipWs(afterBegin) + 3);
        int bodyStart;
        if (src.startsWith("-%}", r)) {
            bodyStart = r + 3;
            while (bodyStart < src.length() && Character.isWhitespace(src.charAt(bodyStart))) bodyStart++;
        } else {
            bodyStart = r + 2;
        }
        int search = bodyStart;
        while (true) {
            int t = src.indexOf("{%", search);
            if (t < 0) throw error(tagStart, "'{% raw %}' is never closed with '{% endraw %}'");
            char sign = t + 2 < src.length() ? src.charAt(t + 2) : 0;
            int q = skipWs(t + 2 + (sign == '-' || sign == '+' ? 1 : 0));
            if (src.startsWith("endraw", q)) {
                int e = skipWs(q + 6);
                char endSign = 0;
                if (src.startsWith("-%}", e) || src.startsWith("+%}", e)) { endSign = src.charAt(e); e++; }
                if (src.startsWith("%}", e)) {
                    String text = src.substring(bodyStart, t);
                    if (sign == '-') {
                        text = stripTrailing(text);
                    } else if (sign != '+' && lstripBlocks) {
                        int lpos = text.lastIndexOf('\n') + 1;
                        if (lpos > 0 && lpos < text.length() && isBlank(text, lpos)) text = text.substring(0, lpos);
                    }
                    emitText(text, bodyStart);
                    pos = afterEnd(e + 2, endSign);
                    return;
                }
            }
            search = t + 2;
        }
    }

    private int skipWs(int p) {
        while (p < src.length() && Character.isWhitespace(src.charAt(p))) p++;
        return p;
    }

    private int expressionToken(int p) {
        char c = src.charAt(p);
        int[] lc = lineColumn(p);
        if (Character.isLetter(c) || c == '_') {
            int q = p + 1;
            while (q < src.length() && (Character.isLetterOrDigit(src.charAt(q)) || src.charAt(q) == '_')) q++;
            out.add(new Token(Kind.NAME, src.substring(p, q), null, lc[0], lc[1]));
            return q;
        }
        if (Character.isDigit(c)) return number(p, lc);
        if (c == '\'' || c == '"') return string(p, lc);
        for (String op : OPERATORS) {
            if (src.startsWith(op, p)) {
                out.add(new Token(Kind.OP, op, null, lc[0], lc[1]));
                return p + op.length();
            }
        }
        throw error(p, "unexpected character '" + c + "'");
    }

    private int number(int p, int[] lc) {
        int q = p;
        while (q < src.length() && (Character.isDigit(src.charAt(q)) || src.charAt(q) == '_')) q++;
        boolean isFloat = false;
        if (q + 1 < src.length() && src.charAt(q) == '.' && Character.isDigit(src.charAt(q + 1))) {
            isFloat = true;
            q++;
            while (q < src.length() && (Character.isDigit(src.charAt(q)) || src.charAt(q) == '_')) q++;
        }
        if (q < src.length() && (src.charAt(q) == 'e' || src.charAt(q) == 'E')) {
            int e = q + 1;
            if (e < src.length() && (src.charAt(e) == '+' || src.charAt(e) == '-')) e++;
            if (e < src.length() && Character.isDigit(src.charAt(e))) {
                isFloat = true;
                q = e;
                while (q < src.length() && Character.isDigit(src.charAt(q))) q++;
            }
        }
        String text = src.substring(p, q);
        String digits = text.replace("_", "");
        try {
            Object v = isFloat ? (Object) Double.parseDouble(digits) : (Object) Long.parseLong(digits);
            out.add(new Token(isFloat ? Kind.FLOAT : Kind.INT, text, v, lc[0], lc[1]));
        } catch (NumberFormatException e) {
            throw error(p, "bad number literal '" + text + "'");
        }
        return q;
    }

    /** A Python string literal: the escapes Python knows; an unknown escape keeps its backslash. */
    private int string(int p, int[] lc) {
        char quote = src.charAt(p);
        StringBuilder sb = new StringBuilder();
        int q = p + 1;
        while (true) {
            if (q >= src.length()) throw error(p, "string literal is never closed (missing " + quote + ")");
            char c = src.charAt(q);
            if (c == quote) break;
            if (c != '\\') {
                sb.append(c);
                q++;
                continue;
            }
            if (q + 1 >= src.length()) throw error(p, "string literal is never closed (missing " + quote + ")");
            char e = src.charAt(q + 1);
            q += 2;
            switch (e) {
                case 'n' -> sb.append('\n');
                case 't' -> sb.append('\t');
                case 'r' -> sb.append('\r');
                case '\\' -> sb.append('\\');
                case '\'' -> sb.append('\'');
                case '"' -> sb.append('"');
                case 'a' -> sb.append('\u0007');
                case 'b' -> sb.append('\b');
                case 'f' -> sb.append('\f');
                case 'v' -> sb.append('\u000b');
                case '\n' -> { }
                case 'x' -> q = hexEscape(sb, q, 2, p);
                case 'u' -> q = hexEscape(sb, q, 4, p);
                case 'U' -> q = hexEscape(sb, q, 8, p);
                default -> {
                    if (e >= '0' && e <= '7') {
                        int v = e - '0';
                        int k = 0;
                        while (k < 2 && q < src.length() && src.charAt(q) >= '0' && src.charAt(q) <= '7') { v = v * 8 + (src.charAt(q) - '0'); q++; k++; }
                        sb.appendCodePoint(v);
                    } else {
                        sb.append('\\').append(e);
                    }
                }
            }
        }
        out.add(new Token(Kind.STRING, src.substring(p, q + 1), sb.toString(), lc[0], lc[1]));
        return q + 1;
    }

    private int hexEscape(StringBuilder sb, int q, int digits, int literalStart) {
        if (q + digits > src.length()) throw error(q - 2, "truncated \\" + src.charAt(q - 1) + " escape in string literal");
        try {
            sb.appendCodePoint(Integer.parseInt(src.substring(q, q + digits), 16));
        } catch (IllegalArgumentException e) {
            throw error(q - 2, "bad \\" + src.charAt(q - 1) + " escape in string literal");
        }
        return q + digits;
    }

    private static String stripTrailing(String s) {
        int e = s.length();
        while (e > 0 && Character.isWhitespace(s.charAt(e - 1))) e--;
        return s.substring(0, e);
    }

    private static boolean isBlank(String s, int from) {
        for (int i = from; i < s.length(); i++) if (!Character.isWhitespace(s.charAt(i))) return false;
        return true;
    }

    private int[] lineColumn(int offset) {
        int i = java.util.Arrays.binarySearch(lineStarts, offset);
        int line = i >= 0 ? i : -i - 2;
        return new int[] {line + 1, offset - lineStarts[line] + 1};
    }

    private ChatTemplateException error(int offset, String problem) {
        int[] lc = lineColumn(offset);
        return ChatTemplateException.syntax(problem, lc[0], lc[1]);
    }
}
