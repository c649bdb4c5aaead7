package io.modelopt.cli;

import java.io.PrintWriter;
import java.util.spi.ToolProvider;

/** Makes {@code modelopt} runnable in-process through {@link ToolProvider#findFirst(String)}. */
public final class ModeloptTool implements ToolProvider {
    @Override public String name() { return "modelopt"; }

    @Override public int run(PrintWriter out, PrintWriter err, String... args) {
        var o = new java.io.PrintStream(new WriterOutputStream(out), true, java.nio.charset.StandardCharsets.UTF_8);
        var e = new java.io.PrintStream(new WriterOutputStream(err), true, java.nio.charset.StandardCharsets.UTF_8);
        int code = Main.run(args, o, e);
        o.flush();
        e.flush();
        return code;
    }

    /** Bytes → UTF-8 text into a writer. */
    private static final class WriterOutputStream extends java.io.OutputStream {
        private final PrintWriter w;
        private final java.io.ByteArrayOutputStream buf = new java.io.ByteArrayOutputStream();

        WriterOutputStream(PrintWriter w) { this.w = w; }

        @Override public void write(int b) { buf.write(b); }

        @Override public void flush() {
            w.write(buf.toString(java.nio.charset.StandardCharsets.UTF_8));
            buf.reset();
            w.flush();
        }
    }
}
