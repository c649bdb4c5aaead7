package io.modelopt.cli.command;

import io.modelopt.cli.Args;
import io.modelopt.core.engine.Backend;
import io.modelopt.core.kv.KvDtype;
import java.util.Locale;

/** Options shared by the commands that run a model (--backend, --threads, --kv, --ctx), parsed and checked alike. */
final class CommandOptions {
    private CommandOptions() {}

    /** Usage line of {@code --backend}, the same in every command. */
    static final String BACKEND_USAGE = "  --backend NAME        where the model runs: cpu (default), or a backend module on the class path (e.g. cuda)";

    /** {@code --backend NAME}: a registered backend that can run here; default {@code cpu}. */
    static Backend backend(Args args) {
        String name = args.get("backend", "cpu");
        Backend b;
        try {
            b = Backend.named(name);
        } catch (IllegalArgumentException e) {
            throw new Args.UsageException("--backend: " + e.getMessage());
        }
        if (!b.isAvailable()) throw new Args.UsageException("--backend " + name + " is not available on this machine");
        return b;
    }

    /** {@code --threads T}: at least 1; default all processors. */
    static int threads(Args args) {
        int t = args.getInt("threads", Runtime.getRuntime().availableProcessors());
        if (t < 1) throw new Args.UsageException("--threads must be >= 1, got " + t);
        return t;
    }

    /** {@code --kv f16|f32}, default f16 (llama.cpp's default). */
    static KvDtype kvDtype(Args args) {
        String v = args.get("kv", "f16").toLowerCase(Locale.ROOT);
        return switch (v) {
            case "f16" -> KvDtype.F16;
            case "f32" -> KvDtype.F32;
            default -> throw new Args.UsageException("--kv must be f16 or f32, got '" + args.get("kv", "") + "'");
        };
    }

    /**
     * {@code --ctx N}: between {@code min} and the model's trained context length (default). Longer
     * contexts are refused rather than run: positions beyond training give RoPE angles the model
     * never saw, and numbers from them would look valid while meaning little.
     */
    static int contextLength(Args args, int trained, int min) {
        int ctx = args.getInt("ctx", trained);
        if (ctx < min) throw new Args.UsageException("--ctx must be >= " + min + ", got " + ctx);
        if (ctx > trained) {
            throw new Args.UsageException("--ctx " + ctx + " exceeds the model's trained context length " + trained);
        }
        return ctx;
    }
}
