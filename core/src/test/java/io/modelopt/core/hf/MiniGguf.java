package io.modelopt.core.hf;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Just enough of a GGUF reader (ggml's gguf.cpp layout, v2/v3) to fetch F32 tensors for cross-checks
 * against llama.cpp's own conversion; independent of the project's GGUF reader. Test-only.
 */
final class MiniGguf implements AutoCloseable {
    record Tensor(String name, int type, long[] ne, MemorySegment data) {}

    private static final ValueLayout.OfInt U32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfLong U64 = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private final Arena arena = Arena.ofConfined();
    private final MemorySegment m;
    private long pos;
    final Map<String, Tensor> tensors = new LinkedHashMap<>();

    MiniGguf(Path file) throws IOException {
        try (FileChannel ch = FileChannel.open(file)) {
            m = ch.map(FileChannel.MapMode.READ_ONLY, 0, ch.size(), arena);
        }
        if (u32() != 0x46554747) throw new IOException("not GGUF");
        u32(); // version
        long nTensors = u64(), nKv = u64();
        long alignment = 32;
        for (long i = 0; i < nKv; i++) {
            String key = str();
            int type = u32();
            if (key.equals("general.alignment")) alignment = u32() & 0xffffffffL;
            else skip(type);
        }
        record Info(String name, long[] ne, int type, long offset) {}
        Info[] infos = new Info[(int) nTensors];
        for (int i = 0; i < nTensors; i++) {
            String name = str();
            long[] ne = new long[u32()];
            for (int d = 0; d < ne.length; d++) ne[d] = u64();
            infos[i] = new Info(name, ne, u32(), u64());
        }
        long dataStart = (pos + alignment - 1) / alignment * alignment;
        for (Info in : infos) {
            long n = 1;
            for (long d : in.ne) n *= d;
            long bytes = in.type == 0 ? 4 * n : 0; // only F32 payloads are sliced
            tensors.put(in.name, new Tensor(in.name, in.type, in.ne, m.asSlice(dataStart + in.offset, bytes)));
        }
    }

    private int u32() { int v = m.get(U32, pos); pos += 4; return v; }

    private long u64() { long v = m.get(U64, pos); pos += 8; return v; }

    private String str() {
        int n = (int) u64();
        byte[] b = m.asSlice(pos, n).toArray(ValueLayout.JAVA_BYTE);
        pos += n;
        return new String(b, StandardCharsets.UTF_8);
    }

    private void skip(int type) {
        switch (type) {
            case 0, 1, 7 -> pos += 1;
            case 2, 3 -> pos += 2;
            case 4, 5, 6 -> pos += 4;
            case 10, 11, 12 -> pos += 8;
            case 8 -> str();
            case 9 -> {
                int et = u32();
                long n = u64();
                for (long i = 0; i < n; i++) skip(et);
            }
            default -> throw new IllegalStateException("GGUF value type " + type);
        }
    }

    @Override public void close() { arena.close(); }
}
