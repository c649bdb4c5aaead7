package io.modelopt.core;

import java.nio.file.Path;

/**
 * A model file (GGUF, safetensors, config.json, tokenizer.json, ...) is malformed, truncated or
 * unsupported. The message always names the file and, where known, the byte offset or the key
 * and what was wrong, so a user can tell a corrupt download from an unsupported feature.
 */
public class ModelFormatException extends RuntimeException {
    private final Path file;
    private final long offset;

    public ModelFormatException(Path file, long offset, String problem) {
        this(file, offset, problem, null);
    }

    public ModelFormatException(Path file, long offset, String problem, Throwable cause) {
        super(describe(file, offset, problem), cause);
        this.file = file;
        this.offset = offset;
    }

    public ModelFormatException(Path file, String problem) {
        this(file, -1, problem, null);
    }

    public ModelFormatException(Path file, String problem, Throwable cause) {
        this(file, -1, problem, cause);
    }

    private static String describe(Path file, long offset, String problem) {
        StringBuilder sb = new StringBuilder();
        sb.append(file == null ? "<memory>" : file.toString());
        if (offset >= 0) sb.append(" @ offset ").append(offset);
        return sb.append(": ").append(problem).toString();
    }

    /** The file that was being read, or {@code null} when the data came from memory. */
    public Path file() { return file; }

    /** The byte offset of the problem, or -1 when it is not tied to one position. */
    public long offset() { return offset; }
}
