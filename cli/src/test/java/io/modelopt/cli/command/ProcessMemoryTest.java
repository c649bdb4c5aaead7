package io.modelopt.cli.command;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class ProcessMemoryTest {
    /** An excerpt in the kernel's smaps format (fs/proc/task_mmu.c): header line, then "Name: value kB" fields. */
    @Test
    void sumsRssAndSizeOfTheWantedFilesMappingsOnly() {
        List<String> smaps = List.of(
                "7f0000000000-7f0008000000 r--s 00000000 fe:00 1234                       /models/a b.gguf",
                "Size:             131072 kB",
                "KernelPageSize:        4 kB",
                "Rss:               65536 kB",
                "Pss:               65536 kB",
                "VmFlags: rd sh mr mw me ms sd",
                "7f0010000000-7f0010001000 rw-p 00000000 00:00 0 ",
                "Size:                  4 kB",
                "Rss:                   4 kB",
                "7f0020000000-7f0020002000 r--s 08000000 fe:00 1234                       /models/a b.gguf (deleted)",
                "Size:                  8 kB",
                "Rss:                   8 kB",
                "7f0030000000-7f0030001000 r--p 00000000 fe:00 99                         /models/other.gguf",
                "Size:                  4 kB",
                "Rss:                   4 kB");
        ProcessMemory.Mapped m = ProcessMemory.sum(smaps, Set.of("/models/a b.gguf"));
        assertEquals(2, m.mappings());
        assertEquals((65536L + 8) * 1024, m.rssBytes());
        assertEquals((131072L + 8) * 1024, m.sizeBytes());
    }
}
