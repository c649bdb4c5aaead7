package io.modelopt.quantization.policy;

import io.modelopt.core.tensor.GgmlType;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * What a quantization does to each tensor of a model, in the model's tensor order: its target
 * format and why ({@code default}, {@code rule blk.*.attn_*=INT8}, {@code full precision by
 * default}, {@code fallback: 172 columns ...}), with the bits per weight that gives.
 * {@link #toString()} is the table {@code modelopt quantize --plan} and
 * {@code ModelOptimizer.quantizationPlan()} show.
 *
 * @param unmatchedPatterns rule patterns that matched no tensor (each also logged as a warning)
 */
public record QuantizationPlan(String method, List<Entry> entries, List<String> unmatchedPatterns) {

    /**
     * One tensor.
     *
     * @param shape  ggml order, trailing 1s dropped
     * @param reason why this target
     */
    public record Entry(String name, long[] shape, GgmlType source, TargetFormat target, String reason) {
        public Entry {
            shape = shape.clone();
        }

        @Override public long[] shape() { return shape.clone(); }

        /** Row length (ne0). */
        public long cols() { return shape[0]; }

        public long elements() {
            long n = 1;
            for (long d : shape) n *= d;
            return n;
        }

        /** Whether the tensor is rewritten (quantized or converted), not kept as it is. */
        public boolean changes() { return !(target instanceof TargetFormat.Keep); }

        /** Stored bits per weight after the step. */
        public double bitsPerWeight() { return target.bitsPerWeight((int) Math.min(Integer.MAX_VALUE, cols()), source); }

        /** A block's linear weight ({@code blk.N.*.weight}, two or more dims). */
        public boolean isBlockLinear() { return name.startsWith("blk.") && name.endsWith(".weight") && shape.length >= 2; }
    }

    public QuantizationPlan {
        entries = List.copyOf(entries);
        unmatchedPatterns = List.copyOf(unmatchedPatterns);
    }

    /** The entry of tensor {@code name}. */
    public Entry entry(String name) {
        for (Entry e : entries) if (e.name().equals(name)) return e;
        throw new IllegalArgumentException("no tensor " + name + " in the plan");
    }

    /** The target of tensor {@code name}, e.g. {@code INT4_G128_ASYM}, {@code keep}. */
    public String targetOf(String name) { return entry(name).target().name(); }

    /** Estimated stored bits per weight of the whole model (every tensor). */
    public double bitsPerWeight() { return bits(false); }

    /** Estimated stored bits per weight of the blocks' linear weights alone. */
    public double blockLinearBitsPerWeight() { return bits(true); }

    private double bits(boolean linearsOnly) {
        double b = 0;
        long n = 0;
        for (Entry e : entries) {
            if (linearsOnly && !e.isBlockLinear()) continue;
            b += e.bitsPerWeight() * e.elements();
            n += e.elements();
        }
        return n == 0 ? 0 : b / n;
    }

    @Override public String toString() {
        int w = 4, tw = 6;
        for (Entry e : entries) {
            w = Math.max(w, e.name().length());
            tw = Math.max(tw, targetText(e).length());
        }
        StringBuilder sb = new StringBuilder();
        sb.append(String.format(Locale.ROOT, "plan (%s): %d tensors, %d rewritten; bits/weight %.3f whole model, %.3f block linears%n",
                method, entries.size(), entries.stream().filter(Entry::changes).count(), bitsPerWeight(), blockLinearBitsPerWeight()));
        for (String p : unmatchedPatterns) sb.append("warning: pattern '").append(p).append("' matches no tensor\n");
        sb.append(String.format(Locale.ROOT, "  %-" + w + "s  %-20s  %-6s  %-" + tw + "s  %7s  %s%n", "name", "shape (ggml order)", "from", "to", "bits/w", "why"));
        for (Entry e : entries) {
            sb.append(String.format(Locale.ROOT, "  %-" + w + "s  %-20s  %-6s  %-" + tw + "s  %7.3f  %s%n", e.name(), Arrays.toString(e.shape()), e.source(),
                    targetText(e), e.bitsPerWeight(), e.reason()));
        }
        return sb.toString();
    }

    private static String targetText(Entry e) {
        return e.changes() ? e.target().name() : "(" + e.source() + ")";
    }
}
