package io.modelopt.cli.report;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.util.Optional;

/**
 * Returns freed memory to the OS between stages, so a stage's RSS is its own and not the last
 * stage's leftovers. Arenas allocate through malloc; glibc keeps freed chunks of its heaps (all
 * but the large mmapped ones) for reuse, and a quantized model is thousands of such chunks: the
 * default report's INT4 stage showed an RSS of 739 MiB for a 136 MiB model until this was called.
 * {@code malloc_trim(0)} is glibc's; elsewhere this does only the GC.
 */
final class NativeMemory {
    private static final Optional<MethodHandle> MALLOC_TRIM = lookup();

    private NativeMemory() {}

    private static Optional<MethodHandle> lookup() {
        try {
            Linker linker = Linker.nativeLinker();
            return linker.defaultLookup().find("malloc_trim")
                    .map(f -> linker.downcallHandle(f, FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG)));
        } catch (RuntimeException | LinkageError e) {
            // no native access (--enable-native-access) or no glibc: the GC alone
            return Optional.empty();
        }
    }

    /** A full GC, then glibc's trim of every malloc arena. */
    static void release() {
        System.gc();
        MALLOC_TRIM.ifPresent(h -> {
            try {
                int ignored = (int) h.invokeExact(0L);
            } catch (Throwable e) {
                // trimming is an optimization of the measurement; a failure leaves the RSS higher, no more
            }
        });
    }
}
