package io.modelopt.core.kernel;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Large off-heap buffers backed by 2 MiB transparent huge pages where the OS allows it, for the
 * repacked weight copies that a decode step streams through once per token.
 *
 * <p><b>Why.</b> A decode step reads every weight byte once, 0.6–1.2 GB for a 1.1B model. With 4 KiB
 * pages that is a TLB miss and, worse, a restart of the hardware L2 stream prefetcher at every page
 * boundary (it does not cross pages), so the stream never reaches full bandwidth. Most Linux
 * systems set transparent huge pages to {@code madvise}: only regions that ask get them. Java's
 * {@link Arena#allocate} cannot ask, and zeroes the memory first (faulting it in as small pages), so
 * this class maps the region itself ({@code mmap}, {@code madvise(MADV_HUGEPAGE)} before the first
 * touch) and ties its {@code munmap} to the caller's arena.
 *
 * <p>Anywhere this fails (not Linux, no {@code mmap} symbol, {@code mmap} refused, or
 * {@code -Dmodelopt.hugepages=false}) the buffer comes from {@link Arena#allocate} as before; the
 * contents are the same either way (zero-filled). The region is 2 MiB aligned, its unused tail and
 * head are never touched, so they cost address space, not memory.
 */
public final class HugePages {
    private HugePages() {}

    private static final Logger LOG = LoggerFactory.getLogger(HugePages.class);

    /** The huge-page size of x86-64 and (default) arm64 Linux. */
    public static final long SIZE = 2L << 20;

    private static final boolean ENABLED = Boolean.parseBoolean(System.getProperty("modelopt.hugepages", "true"));
    private static final int PROT_READ_WRITE = 0x1 | 0x2;
    private static final int MAP_PRIVATE_ANONYMOUS = 0x02 | 0x20;
    private static final int MADV_HUGEPAGE = 14;

    private static final MethodHandle MMAP;
    private static final MethodHandle MUNMAP;
    private static final MethodHandle MADVISE;

    static {
        MethodHandle mmap = null, munmap = null, madvise = null;
        if (ENABLED && System.getProperty("os.name", "").toLowerCase().contains("linux")) {
            try {
                Linker linker = Linker.nativeLinker();
                SymbolLookup libc = linker.defaultLookup();
                Optional<MemorySegment> m = libc.find("mmap"), u = libc.find("munmap"), a = libc.find("madvise");
                if (m.isPresent() && u.isPresent() && a.isPresent()) {
                    mmap = linker.downcallHandle(m.get(), FunctionDescriptor.of(ValueLayout.ADDRESS,
                            ValueLayout.ADDRESS, ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT,
                            ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG));
                    munmap = linker.downcallHandle(u.get(), FunctionDescriptor.of(ValueLayout.JAVA_INT,
                            ValueLayout.ADDRESS, ValueLayout.JAVA_LONG));
                    madvise = linker.downcallHandle(a.get(), FunctionDescriptor.of(ValueLayout.JAVA_INT,
                            ValueLayout.ADDRESS, ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT));
                }
            } catch (RuntimeException | LinkageError e) {
                // e.g. --enable-native-access denied: fall back to ordinary allocation.
                LOG.debug("huge pages unavailable: {}", e.toString());
                mmap = null;
            }
        }
        MMAP = mmap;
        MUNMAP = munmap;
        MADVISE = madvise;
    }

    /** Whether {@link #allocate} maps its own regions (it may still get small pages from the OS). */
    public static boolean available() {
        return MMAP != null;
    }

    /**
     * A zero-filled segment of {@code bytes}, 64-byte aligned (2 MiB aligned when mapped here), freed
     * when {@code arena} closes.
     */
    public static MemorySegment allocate(Arena arena, long bytes) {
        if (MMAP == null || bytes < SIZE) return arena.allocate(bytes, 64);
        long whole = (bytes + SIZE - 1) & -SIZE;
        long mapped = whole + SIZE;                           // room to align the start
        MemorySegment base;
        try {
            base = (MemorySegment) MMAP.invokeExact(MemorySegment.NULL, mapped, PROT_READ_WRITE,
                    MAP_PRIVATE_ANONYMOUS, -1, 0L);
        } catch (Throwable t) {
            return arena.allocate(bytes, 64);
        }
        if (base.address() == -1L || base.address() == 0L) return arena.allocate(bytes, 64);   // MAP_FAILED
        long aligned = (base.address() + SIZE - 1) & -SIZE;
        MemorySegment region = MemorySegment.ofAddress(aligned);
        try {
            int rc = (int) MADVISE.invokeExact(region, whole, MADV_HUGEPAGE);
            if (rc != 0) LOG.debug("madvise(MADV_HUGEPAGE) refused; small pages");
        } catch (Throwable t) {
            LOG.debug("madvise failed: {}", t.toString());
        }
        long baseAddress = base.address();
        // The cleanup receives a fresh segment; only the addresses matter.
        return region.reinterpret(bytes, arena, s -> unmap(baseAddress, mapped));
    }

    private static void unmap(long address, long bytes) {
        try {
            int rc = (int) MUNMAP.invokeExact(MemorySegment.ofAddress(address), bytes);
            if (rc != 0) LOG.warn("munmap of {} bytes at {} failed", bytes, Long.toHexString(address));
        } catch (Throwable t) {
            LOG.warn("munmap failed: {}", t.toString());
        }
    }
}
