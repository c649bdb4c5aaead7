package io.modelopt.core.kernel;

import java.util.Locale;

/**
 * The one vector width the Vector API kernels are compiled for in this process: the CPU's
 * preferred float vector size (what the JVM reports, so {@code -XX:UseAVX=2} or
 * {@code -XX:MaxVectorSize=32} give 256 bits and {@code -XX:MaxVectorSize=16} 128 bits), capped
 * at 512. The system property {@code modelopt.vector.bits} ({@code 512}, {@code 256} or
 * {@code 128}) selects a narrower width than the preferred one, e.g. to measure it; a wider one
 * than the hardware offers is refused, since the Vector API would run it in its boxing fallback.
 */
public final class VectorWidth {
    private VectorWidth() {}

    /** System property selecting a narrower width than the CPU's. */
    public static final String PROPERTY = "modelopt.vector.bits";

    /** Widths the kernels are written for. */
    public static final int MIN_BITS = 128, MAX_BITS = 512;

    /**
     * The width in bits, or 0 when the CPU's preferred width is below {@link #MIN_BITS} or the
     * Vector API is absent (the scalar kernels are used then). Only read in vector mode.
     */
    static final int BITS = choose();

    /** The CPU's preferred float vector size in bits, as the JVM reports it (0 without the Vector API). */
    public static int preferredBits() {
        // not KernelMode.vectorApiAvailable(): that would initialize KernelMode, whose choice reads BITS
        if (ModuleLayer.boot().findModule("jdk.incubator.vector").isEmpty()) return 0;
        return Preferred.bits();
    }

    /** The width the vector kernels run at in this process (0: none; see {@link KernelMode#DEFAULT}). */
    public static int bits() { return BITS; }

    /** Loaded only once the Vector API module is known to be present. */
    private static final class Preferred {
        static int bits() {
            return jdk.incubator.vector.FloatVector.SPECIES_PREFERRED.vectorBitSize();
        }
    }

    private static int choose() {
        int preferred = Math.min(MAX_BITS, preferredBits());
        if (preferred < MIN_BITS) return 0;
        String requested = System.getProperty(PROPERTY);
        if (requested == null || requested.isBlank()) return preferred;
        int bits;
        try {
            bits = Integer.parseInt(requested.trim().toLowerCase(Locale.ROOT));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(PROPERTY + " must be 512, 256 or 128, got '" + requested + "'");
        }
        if (bits != 512 && bits != 256 && bits != 128) {
            throw new IllegalArgumentException(PROPERTY + " must be 512, 256 or 128, got " + bits);
        }
        if (bits > preferred) {
            throw new IllegalArgumentException(PROPERTY + "=" + bits + " is wider than this CPU's preferred vectors (" + preferred
                    + " bits); the Vector API would run it in its slow fallback");
        }
        return bits;
    }
}
