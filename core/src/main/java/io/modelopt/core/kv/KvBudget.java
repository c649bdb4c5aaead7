package io.modelopt.core.kv;

import java.util.Locale;
import java.util.Objects;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * How much memory the KV cache may take: a number of bytes ({@code 512MiB}), or a fraction of
 * what the process may still use once the weights are loaded ({@code 0.3}: of the smaller of the
 * cgroup's headroom and MemAvailable, {@link MemoryProbe}). {@link #plan} turns it into an exact
 * number of blocks from the model's dims and the KV dtype, scales included, and fails, with both
 * numbers and what to change, when one sequence of the maximum length does not fit: at build
 * time, not as an out-of-memory error later.
 */
public final class KvBudget {
    private static final Pattern SIZE = Pattern.compile("(?i)\\s*([0-9]+(?:\\.[0-9]+)?)\\s*(B|KB|MB|GB|TB|KIB|MIB|GIB|TIB)?\\s*");

    private final long bytes;       // > 0 for a byte budget
    private final double fraction;  // > 0 for a fractional one

    private KvBudget(long bytes, double fraction) {
        this.bytes = bytes;
        this.fraction = fraction;
    }

    /** Exactly {@code bytes} bytes. */
    public static KvBudget bytes(long bytes) {
        if (bytes < 1) throw new IllegalArgumentException("a KV budget must be at least 1 byte, got " + bytes);
        return new KvBudget(bytes, 0);
    }

    /** {@code fraction} (0 < f <= 1) of the memory the process may still use. */
    public static KvBudget fraction(double fraction) {
        if (!(fraction > 0 && fraction <= 1)) throw new IllegalArgumentException("a fractional KV budget must be in (0, 1], got " + fraction);
        return new KvBudget(0, fraction);
    }

    /**
     * {@code 512MiB}, {@code 2GiB}, {@code 1.5GB}, {@code 1048576B} (KiB/MiB/GiB/TiB are powers of
     * 1024, KB/MB/GB/TB of 1000), or a unitless fraction in (0, 1] such as {@code 0.3}.
     */
    public static KvBudget parse(String text) {
        Objects.requireNonNull(text, "text");
        Matcher m = SIZE.matcher(text);
        if (!m.matches()) {
            throw new IllegalArgumentException("KV budget '" + text + "': give bytes with a unit (512MiB, 2GiB, 1GB, 4096B) or a fraction in (0, 1] (0.3)");
        }
        double v = Double.parseDouble(m.group(1));
        if (m.group(2) == null) {
            if (v > 0 && v <= 1) return fraction(v);
            throw new IllegalArgumentException("KV budget '" + text + "': a number without a unit is a fraction in (0, 1]; for bytes add a unit (e.g. "
                    + m.group(1) + "B or 512MiB)");
        }
        long unit = switch (m.group(2).toUpperCase(Locale.ROOT)) {
            case "B" -> 1L;
            case "KB" -> 1000L;
            case "MB" -> 1000_000L;
            case "GB" -> 1000_000_000L;
            case "TB" -> 1000_000_000_000L;
            case "KIB" -> 1L << 10;
            case "MIB" -> 1L << 20;
            case "GIB" -> 1L << 30;
            default -> 1L << 40;
        };
        double b = v * unit;
        if (b >= Long.MAX_VALUE) throw new IllegalArgumentException("KV budget '" + text + "' overflows a long");
        return bytes((long) b);
    }

    public boolean isFraction() { return fraction > 0; }

    /** The budget in bytes on the machine {@code probe} describes. */
    public long resolveBytes(MemoryProbe probe) {
        if (!isFraction()) return bytes;
        long usable = probe.usable();
        if (usable == Long.MAX_VALUE) throw new IllegalStateException("a fractional KV budget (" + fraction + ") needs MemAvailable or a cgroup limit; neither is readable here: give bytes (e.g. 512MiB)");
        return (long) (fraction * usable);
    }

    /**
     * The exact number of blocks of {@code blockSize} tokens the budget holds for a model of these
     * dims with {@code dtype} entries (and their scales).
     *
     * @param maxSequenceLength the longest sequence that must fit (the context length)
     * @throws IllegalArgumentException if the budget is smaller than one block, or than one sequence of {@code maxSequenceLength}
     */
    public Plan plan(int numLayers, int numKvHeads, int headDim, KvDtype dtype, int blockSize, int maxSequenceLength, MemoryProbe probe) {
        KvLayout one = KvLayout.of(numLayers, numKvHeads, headDim, 1, blockSize, dtype);
        long budget = resolveBytes(probe);
        String what = (isFraction() ? String.format(Locale.ROOT, "%s of %,d usable bytes = ", fraction, probe.usable()) : "") + String.format(Locale.ROOT, "%,d bytes", budget);
        long staticScales = dtype.defaultScales().isStatic() ? 2L * numLayers * 4 * one.scalesPerLayer() : 0;
        long blocks = Math.max(0, budget - staticScales) / one.bytesPerBlock(); // static (per-layer) scales are paid once
        if (blocks < 1) {
            throw new IllegalArgumentException(String.format(Locale.ROOT, "KV budget of %s is smaller than one block: %d tokens x %d layers x %d KV heads x %d x %s take %,d bytes",
                    what, blockSize, numLayers, numKvHeads, headDim, dtype, one.bytesPerBlock()));
        }
        int needed = (maxSequenceLength + blockSize - 1) / blockSize;
        if (blocks < needed) {
            long neededBytes = (long) needed * one.bytesPerBlock() + staticScales;
            throw new IllegalArgumentException(String.format(Locale.ROOT,
                    "KV budget of %s holds %,d blocks of %d tokens (%,d tokens), but one sequence of the maximum length %,d needs %,d blocks (%,d bytes) with %s KV: "
                            + "use a maximum length of at most %,d, a smaller KV dtype (%s), or a budget of at least %,d bytes",
                    what, blocks, blockSize, blocks * blockSize, maxSequenceLength, needed, neededBytes, dtype, blocks * blockSize, smaller(dtype), neededBytes));
        }
        int n = (int) Math.min(Integer.MAX_VALUE, blocks);
        return new Plan(budget, KvLayout.of(numLayers, numKvHeads, headDim, n, blockSize, dtype), maxSequenceLength);
    }

    private static String smaller(KvDtype d) {
        return switch (d) {
            case F32 -> "f16, int8 or fp8";
            case F16, BF16 -> "int8 or fp8, about half the bytes";
            case INT8, FP8_E4M3 -> "none is smaller than " + d.cliName();
        };
    }

    /**
     * A resolved budget: the storage layout of exactly as many blocks as it holds.
     *
     * @param budgetBytes the budget in bytes
     * @param layout      {@code numBlocks} blocks of the model's KV shape; {@code layout.byteSize() <= budgetBytes}
     */
    public record Plan(long budgetBytes, KvLayout layout, int maxSequenceLength) {
        public int numBlocks() { return layout.numBlocks(); }

        public int blockSize() { return layout.blockSize(); }

        public double bytesPerToken() { return layout.bytesPerToken(); }

        /** Sequences of {@code tokens} tokens that fit at once (each needs ceil(tokens / blockSize) blocks). */
        public int sequencesOf(int tokens) { return numBlocks() / ((tokens + blockSize() - 1) / blockSize()); }

        @Override public String toString() {
            return String.format(Locale.ROOT, "KV cache %s: %,.0f bytes/token, %,d blocks of %d tokens (%,d tokens, %,d bytes of a %,d-byte budget)",
                    layout.dtype().cliName(), bytesPerToken(), numBlocks(), blockSize(), (long) numBlocks() * blockSize(), layout.byteSize(), budgetBytes);
        }
    }

    @Override public String toString() {
        return isFraction() ? "KvBudget[" + fraction + " of usable memory]" : String.format(Locale.ROOT, "KvBudget[%,d bytes]", bytes);
    }
}
