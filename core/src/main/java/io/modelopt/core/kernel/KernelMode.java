package io.modelopt.core.kernel;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Which implementation the kernels use: the Vector API or the plain scalar loops. Chosen once by
 * the system property {@code modelopt.kernels} ({@code vector}, the default, or {@code scalar}).
 * The vector kernels run at the CPU's preferred width, 512, 256 or 128 bits ({@link VectorWidth}),
 * said once in the log. When the {@code jdk.incubator.vector} module is not in the boot layer (the
 * JVM was started without {@code --add-modules jdk.incubator.vector}) or the CPU's preferred
 * vectors are narrower than 128 bits, the scalar path is used, with one warning.
 * Tests construct kernels with an explicit mode to check both against the same references.
 */
public enum KernelMode {
    SCALAR,
    VECTOR;

    private static final Logger LOG = LoggerFactory.getLogger(KernelMode.class);

    /** The process-wide choice. Vector classes are only loaded when this is {@link #VECTOR}. */
    public static final KernelMode DEFAULT = choose();

    /** Whether the Vector API module is present in this JVM. */
    public static boolean vectorApiAvailable() {
        return ModuleLayer.boot().findModule("jdk.incubator.vector").isPresent();
    }

    private static KernelMode choose() {
        String requested = System.getProperty("modelopt.kernels", "vector").trim().toLowerCase(java.util.Locale.ROOT);
        if (requested.equals("scalar")) {
            LOG.info("kernels: scalar (modelopt.kernels=scalar)");
            return SCALAR;
        }
        if (!requested.equals("vector")) {
            throw new IllegalArgumentException("modelopt.kernels must be 'vector' or 'scalar', got '" + requested + "'");
        }
        if (!vectorApiAvailable()) {
            LOG.warn("kernels: the Vector API is not available (start the JVM with --add-modules jdk.incubator.vector); using the scalar kernels, which are several times slower");
            return SCALAR;
        }
        int bits = VectorWidth.BITS;
        if (bits == 0) {
            // narrower than any shape the kernels are written for: the Vector API would run them
            // in its Java fallback, which boxes every vector and is far slower than the scalar loops
            LOG.warn("kernels: this CPU's preferred vector size is {} bits, below the {} the vector kernels need; using the scalar kernels",
                    VectorWidth.preferredBits(), VectorWidth.MIN_BITS);
            return SCALAR;
        }
        LOG.info("kernels: vector, {}-bit ({} float lanes; CPU prefers {})", bits, bits / 32, VectorWidth.preferredBits());
        return VECTOR;
    }
}
