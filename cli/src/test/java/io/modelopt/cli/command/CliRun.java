package io.modelopt.cli.command;

import io.modelopt.cli.Main;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/** One {@code Main.run} with captured stdout/stderr. */
record CliRun(int code, String out, String err) {
    static CliRun of(String... args) {
        ByteArrayOutputStream o = new ByteArrayOutputStream(), e = new ByteArrayOutputStream();
        int code;
        try (PrintStream out = new PrintStream(o, true, StandardCharsets.UTF_8); PrintStream err = new PrintStream(e, true, StandardCharsets.UTF_8)) {
            code = Main.run(args, out, err);
        }
        return new CliRun(code, o.toString(StandardCharsets.UTF_8), e.toString(StandardCharsets.UTF_8));
    }

    String lastLine() {
        String[] lines = out.strip().split("\n");
        return lines[lines.length - 1];
    }

    @Override public String toString() {
        return "exit " + code + "\n--- stdout\n" + out + "\n--- stderr\n" + err;
    }
}
