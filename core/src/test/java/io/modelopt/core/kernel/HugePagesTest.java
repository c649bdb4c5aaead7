package io.modelopt.core.kernel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@link HugePages}: zero-filled, aligned, owned by the arena, and unmapped when it closes. */
class HugePagesTest {
    @Test
    void largeRegionIsZeroedWritableAndAligned() {
        long bytes = 5 * HugePages.SIZE + 12345;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment s = HugePages.allocate(arena, bytes);
            assertEquals(bytes, s.byteSize());
            assertEquals(0, s.address() % 64);
            if (HugePages.available()) assertEquals(0, s.address() % HugePages.SIZE, "huge-page aligned");
            for (long at = 0; at < bytes; at += 4096) assertEquals(0, s.get(ValueLayout.JAVA_BYTE, at));
            assertEquals(0, s.get(ValueLayout.JAVA_BYTE, bytes - 1));
            s.set(ValueLayout.JAVA_LONG_UNALIGNED, bytes - 8, 0x0123456789ABCDEFL);
            assertEquals(0x0123456789ABCDEFL, s.get(ValueLayout.JAVA_LONG_UNALIGNED, bytes - 8));
            assertThrows(IndexOutOfBoundsException.class, () -> s.get(ValueLayout.JAVA_BYTE, bytes));
        }
    }

    @Test
    void smallRegionComesFromTheArena() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment s = HugePages.allocate(arena, 1000);
            assertEquals(1000, s.byteSize());
            assertEquals(0, s.address() % 64);
        }
    }

    @Test
    void closingTheArenaUnmapsTheRegion() throws IOException {
        assumeTrue(HugePages.available(), "mmap not available here");
        long address;
        MemorySegment s;
        try (Arena arena = Arena.ofShared()) {
            s = HugePages.allocate(arena, 3 * HugePages.SIZE);
            address = s.address();
            assertTrue(mapped(address), "region listed in /proc/self/maps");
        }
        assertFalse(s.scope().isAlive());
        assertThrows(IllegalStateException.class, () -> s.get(ValueLayout.JAVA_BYTE, 0));
        assertFalse(mapped(address), "region still mapped after the arena closed");
    }

    /** Whether some line of /proc/self/maps covers {@code address}. */
    private static boolean mapped(long address) throws IOException {
        List<String> lines = Files.readAllLines(Path.of("/proc/self/maps"));
        for (String line : lines) {
            String[] range = line.substring(0, line.indexOf(' ')).split("-");
            long lo = Long.parseUnsignedLong(range[0], 16), hi = Long.parseUnsignedLong(range[1], 16);
            if (Long.compareUnsigned(address, lo) >= 0 && Long.compareUnsigned(address, hi) < 0) return true;
        }
        return false;
    }
}
