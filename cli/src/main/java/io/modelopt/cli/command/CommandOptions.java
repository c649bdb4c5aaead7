package io.modelopt.cli.command;

import io.modelopt.cli.Args;
import io.modelopt.core.engine.Backend;
import io.modelopt.core.kv.KvBudget;
import io.modelopt.core.kv.KvDtype;
import io.modelopt.core.kv.MemoryProbe;
import java.util.Locale;

/** Options shared by the commands that run a model (--backend, --threads, --kv-cache, --kv-budget, --ctx), parsed and checked alike. */
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

    /** Usage lines of {@code --kv-cache} and {@code --kv-budget}, the same in every command. */
    static final String KV_USAGE = """
              --kv-cache TYPE       KV cache element type: f16 (default, as llama.cpp), f32, bf16,
                                    int8 (per-token scales, 0.53x f16), fp8 (E4M3, scale 1.0); --kv is an alias
              --kv-budget B         KV memory: bytes with a unit (512MiB, 2GiB) or a fraction (0.3) of the
                                    memory still usable (min of cgroup headroom and MemAvailable); fails
                                    unless one sequence of --ctx tokens fits""";

    /** {@code --kv-cache f32|f16|bf16|int8|fp8} (or its alias {@code --kv}), default f16 (llama.cpp's default). */
    static KvDtype kvDtype(Args args) {
        String name = args.has("kv-cache") ? "kv-cache" : "kv";
        try {
            return KvDtype.parse(args.get(name, "f16").toLowerCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new Args.UsageException("--" + name + ": " + e.getMessage());
        }
    }

    /** {@code --kv-budget B}, or null without one. */
    static KvBudget kvBudget(Args args) {
        if (!args.has("kv-budget")) return null;
        try {
            return KvBudget.parse(args.get("kv-budget", ""));
        } catch (IllegalArgumentException e) {
            throw new Args.UsageException("--kv-budget: " + e.getMessage());
        }
    }

    /**
     * The budget's plan for {@code config} with {@code kv} entries and sequences of {@code ctx}
     * tokens (blocks of 16), or null without {@code --kv-budget}; a budget too small is a usage error with its numbers.
     */
    static KvBudget.Plan kvPlan(Args args, io.modelopt.core.model.ModelConfig config, KvDtype kv, int ctx) {
        KvBudget budget = kvBudget(args);
        if (budget == null) return null;
        try {
            return budget.plan(config.numLayers(), config.numKvHeads(), config.headDim(), kv, 16, ctx, MemoryProbe.system());
        } catch (IllegalArgumentException | IllegalStateException e) {
            throw new Args.UsageException("--kv-budget: " + e.getMessage());
        }
    }

    /** "KV cache int8: 11,968 bytes/token" for a config, with the plan's blocks when there is one. */
    static String kvLine(io.modelopt.core.model.ModelConfig config, KvDtype kv, KvBudget.Plan plan) {
        if (plan != null) return plan.toString();
        var l = io.modelopt.core.kv.KvLayout.of(config.numLayers(), config.numKvHeads(), config.headDim(), 1, 16, kv);
        return String.format(Locale.ROOT, "KV cache %s: %,.0f bytes/token", kv.cliName(), l.bytesPerToken());
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
