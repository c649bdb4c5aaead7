package io.modelopt.core.json;

/** Malformed JSON; {@link #offset()} is the character position where reading stopped. */
public class JsonException extends RuntimeException {
    private final int offset;

    public JsonException(String message, int offset) {
        super(message + " (at character " + offset + ")");
        this.offset = offset;
    }

    public int offset() { return offset; }
}
