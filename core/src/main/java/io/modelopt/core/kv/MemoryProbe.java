package io.modelopt.core.kv;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * What memory the process may still use: the kernel's {@code MemAvailable} and the cgroup's
 * headroom (limit minus usage), for a fractional {@link KvBudget}. An interface so tests can
 * pretend any machine.
 */
public interface MemoryProbe {
    /** Bytes the system could give without swapping ({@code /proc/meminfo} MemAvailable); {@link Long#MAX_VALUE} if unknown. */
    long memAvailable();

    /** Bytes left under the cgroup's memory limit; {@link Long#MAX_VALUE} without a limit. */
    long cgroupHeadroom();

    /** min(cgroup headroom, MemAvailable). */
    default long usable() { return Math.min(memAvailable(), cgroupHeadroom()); }

    /** Fixed numbers (tests). */
    static MemoryProbe of(long memAvailable, long cgroupHeadroom) {
        return new MemoryProbe() {
            @Override public long memAvailable() { return memAvailable; }
            @Override public long cgroupHeadroom() { return cgroupHeadroom; }
        };
    }

    /** This Linux machine: /proc/meminfo, then cgroup v2 ({@code memory.max}, {@code memory.current}) or v1. */
    static MemoryProbe system() {
        return new MemoryProbe() {
            @Override public long memAvailable() {
                try {
                    for (String line : Files.readAllLines(Path.of("/proc/meminfo"))) {
                        if (line.startsWith("MemAvailable:")) return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
                    }
                } catch (IOException | RuntimeException e) {
                    // not Linux: unknown
                }
                return Long.MAX_VALUE;
            }

            @Override public long cgroupHeadroom() {
                for (List<String> pair : List.of(List.of("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"),
                        List.of("/sys/fs/cgroup/memory/memory.limit_in_bytes", "/sys/fs/cgroup/memory/memory.usage_in_bytes"))) {
                    try {
                        String max = Files.readString(Path.of(pair.get(0))).trim();
                        if (max.equals("max")) return Long.MAX_VALUE;
                        long limit = Long.parseLong(max);
                        if (limit >= Long.MAX_VALUE / 2) return Long.MAX_VALUE; // v1's "no limit"
                        long used = Long.parseLong(Files.readString(Path.of(pair.get(1))).trim());
                        return Math.max(0, limit - used);
                    } catch (IOException | RuntimeException e) {
                        // try the next layout
                    }
                }
                return Long.MAX_VALUE;
            }
        };
    }
}
