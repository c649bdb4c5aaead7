package io.modelopt.quantization.policy;

import io.modelopt.core.tensor.GgmlType;
import io.modelopt.quantization.format.IntScheme;
import io.modelopt.quantization.format.PackedIntLayout;
import io.modelopt.quantization.gguf.BlockQuantizer;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What one tensor becomes: left as it is ({@link Keep}), a ggml type ({@link Ggml}: a block
 * format written by the GGUF block quantizers, or F32/F16/BF16), or one of our packed integer
 * formats ({@link Int}).
 */
public sealed interface TargetFormat {
    /** The name shown in plans and accepted by {@link #parse}: {@code keep}, {@code Q4_K}, {@code INT4_G128_ASYM}. */
    String name();

    /** Stored bits per weight of a row of {@code cols} weights of a tensor now of type {@code source}. */
    double bitsPerWeight(int cols, GgmlType source);

    /** The tensor stays as the input has it. */
    record Keep() implements TargetFormat {
        @Override public String name() { return "keep"; }
        @Override public double bitsPerWeight(int cols, GgmlType source) { return bits(source); }
    }

    /** A ggml type: a block format or F32/F16/BF16 (a conversion). */
    record Ggml(GgmlType type) implements TargetFormat {
        @Override public String name() { return type.name(); }
        @Override public double bitsPerWeight(int cols, GgmlType source) { return bits(type); }
        /** Whether rows of {@code cols} are whole blocks of the type. */
        public boolean fits(long cols) { return cols > 0 && cols % type.blockSize() == 0; }
    }

    /** One of our formats in {@link PackedIntLayout}. */
    record Int(IntScheme scheme) implements TargetFormat {
        @Override public String name() { return scheme.formatName(); }
        @Override public double bitsPerWeight(int cols, GgmlType source) { return PackedIntLayout.bitsPerWeight(scheme, cols); }
        /** Whether our layout stores rows of {@code cols} weights of this scheme. */
        public boolean fits(long cols) { return cols > 0 && cols <= Integer.MAX_VALUE && PackedIntLayout.fits(scheme, (int) cols); }
    }

    Keep KEEP = new Keep();

    private static double bits(GgmlType t) { return 8.0 * t.typeSize() / t.blockSize(); }

    /** {@code INT4}, {@code INT4_G128}, {@code int4-g32-sym}, {@code INT8_CHANNEL_SYM_F32} ... */
    Pattern INT = Pattern.compile("INT([2348])(?:_?(G\\d+|CHANNEL|PC))?(?:_?(SYM|ASYM))?(_?F32)?");

    /**
     * Parses a rule's target: {@code keep}; {@code F32}, {@code F16}, {@code BF16}; a ggml block
     * type the GGUF quantizers write ({@code Q8_0}, {@code Q4_K}...); or
     * {@code INT<bits>[_G32|_G64|_G128|_CHANNEL][_SYM|_ASYM][_F32]}, where INT8 defaults to
     * per-channel symmetric and INT2/3/4 to group 128 asymmetric, all with F16 scales.
     *
     * @throws IllegalArgumentException an unknown name or a scheme our layout does not store, naming the known ones
     */
    static TargetFormat parse(String text) {
        String n = text.trim().toUpperCase(Locale.ROOT).replace('-', '_').replace(' ', '_');
        if (n.equals("KEEP")) return KEEP;
        Matcher m = INT.matcher(n);
        if (m.matches()) {
            int bits = Integer.parseInt(m.group(1));
            String g = m.group(2);
            int group = g == null ? (bits == 8 ? IntScheme.PER_CHANNEL : 128)
                    : g.equals("CHANNEL") || g.equals("PC") ? IntScheme.PER_CHANNEL : Integer.parseInt(g.substring(1));
            boolean sym = m.group(3) == null ? bits == 8 : m.group(3).equals("SYM");
            IntScheme s;
            try {
                s = new IntScheme(bits, group, sym, m.group(4) != null ? IntScheme.ScaleType.F32 : IntScheme.ScaleType.F16);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("target '" + text + "': " + e.getMessage(), e);
            }
            return ofScheme(s, "target '" + text + "'");
        }
        GgmlType t;
        try {
            t = GgmlType.valueOf(n);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("unknown target type '" + text + "'; known: " + known());
        }
        if (t == GgmlType.F32 || t == GgmlType.F16 || t == GgmlType.BF16) return new Ggml(t);
        try {
            BlockQuantizer.of(t);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("target type '" + text + "' cannot be written; known: " + known(), e);
        }
        return new Ggml(t);
    }

    /** Our format of {@code s}, or an error naming what {@code context} asked for and the schemes our layout stores. */
    static Int ofScheme(IntScheme s, String context) {
        if (!PackedIntLayout.schemes().contains(s)) {
            throw new IllegalArgumentException(context + ": " + s + " is not stored by our layout (F32 scales only for per-channel symmetric INT8); stored: "
                    + PackedIntLayout.schemes().stream().map(IntScheme::formatName).toList());
        }
        return new Int(s);
    }

    /** The target names {@link #parse} takes, for error messages. */
    static String known() {
        List<String> k = new ArrayList<>(List.of("keep", "F32", "F16", "BF16"));
        for (GgmlType t : GgmlType.values()) {
            if (!t.isQuantized()) continue;
            try {
                BlockQuantizer.of(t);
                k.add(t.name());
            } catch (IllegalArgumentException e) {
                // not writable: not offered
            }
        }
        k.add("INT8 (= INT8_CHANNEL_SYM)");
        k.add("INT4 (= INT4_G128_ASYM)");
        k.add("INT<2|3|4|8>[_G32|_G64|_G128|_CHANNEL][_SYM|_ASYM][_F32]");
        return String.join(", ", k);
    }
}
