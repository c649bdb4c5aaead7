package io.modelopt.core.chat;

/**
 * A chat template that cannot be parsed or rendered. Three kinds, told apart by {@link #kind()}:
 * <ul>
 *   <li>{@link Kind#SYNTAX}: {@link ChatTemplate#parse} found a malformed template; the message
 *       gives line, column and what is wrong;</li>
 *   <li>{@link Kind#RAISED}: the template called {@code raise_exception(msg)} (it rejects the
 *       conversation, e.g. roles that do not alternate); {@link #getMessage()} is exactly the
 *       template's message, for a server to return as a client error (400);</li>
 *   <li>{@link Kind#RENDER}: rendering failed otherwise (an undefined value used in arithmetic, an
 *       unknown filter, a type error); the message gives the template line and column.</li>
 * </ul>
 */
public final class ChatTemplateException extends RuntimeException {
    public enum Kind { SYNTAX, RAISED, RENDER }

    private final Kind kind;
    private final String problem;
    private final int line;
    private final int column;

    private ChatTemplateException(Kind kind, String message, String problem, int line, int column) {
        super(message);
        this.kind = kind;
        this.problem = problem;
        this.line = line;
        this.column = column;
    }

    static ChatTemplateException syntax(String problem, int line, int column) {
        return new ChatTemplateException(Kind.SYNTAX, "chat template syntax error at line " + line + ", column " + column + ": " + problem,
                problem, line, column);
    }

    static ChatTemplateException render(String problem, int line, int column) {
        return new ChatTemplateException(Kind.RENDER, "chat template error at line " + line + ", column " + column + ": " + problem,
                problem, line, column);
    }

    static ChatTemplateException raised(String templateMessage, int line, int column) {
        return new ChatTemplateException(Kind.RAISED, templateMessage, templateMessage, line, column);
    }

    public Kind kind() { return kind; }

    /** True when the template itself rejected the input with {@code raise_exception}. */
    public boolean raisedByTemplate() { return kind == Kind.RAISED; }

    /** What is wrong, without the position. */
    public String problem() { return problem; }

    /** 1-based line in the template source (after line endings are normalized to {@code \n}). */
    public int line() { return line; }

    /** 1-based column in that line. */
    public int column() { return column; }
}
