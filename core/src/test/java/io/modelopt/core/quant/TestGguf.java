package io.modelopt.core.quant;

import io.modelopt.core.tensor.GgmlType;
import io.modelopt.core.tensor.TensorData;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A minimal GGUF (v2/v3) tensor-table reader for the kernel tests only, so that they do not
 * depend on the production reader: it maps the file and returns every tensor as a zero-copy slice.
 */
public final class TestGguf {
    private TestGguf() {}

    private static final ValueLayout.OfInt U32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfLong U64 = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    /** Tensors by name, in file order; the mapping lives as long as the returned segments are reachable. */
    public static Map<String, TensorData> tensors(Path file) throws IOException {
        MemorySegment m;
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            m = ch.map(FileChannel.MapMode.READ_ONLY, 0, ch.size(), Arena.ofAuto());
        }
        long[] pos = {0};
        if (m.get(U32, 0) != 0x46554747) throw new IOException(file + ": not a GGUF file");
        pos[0] = 8;
        long nTensors = m.get(U64, pos[0]);
        long nKv = m.get(U64, pos[0] + 8);
        pos[0] += 16;
        long alignment = 32;
        for (long i = 0; i < nKv; i++) {
            String key = string(m, pos);
            int type = m.get(U32, pos[0]);
            pos[0] += 4;
            if (key.equals("general.alignment")) alignment = m.get(U32, pos[0]) & 0xFFFFFFFFL;
            skipValue(m, pos, type);
        }
        record Info(String name, long[] shape, GgmlType type, long offset) {}
        Info[] infos = new Info[(int) nTensors];
        for (int i = 0; i < nTensors; i++) {
            String name = string(m, pos);
            int nDims = m.get(U32, pos[0]);
            pos[0] += 4;
            long[] shape = new long[nDims];
            for (int d = 0; d < nDims; d++) {
                shape[d] = m.get(U64, pos[0]);
                pos[0] += 8;
            }
            GgmlType type = GgmlType.fromId(m.get(U32, pos[0])).orElseThrow();
            long offset = m.get(U64, pos[0] + 4);
            pos[0] += 12;
            infos[i] = new Info(name, shape, type, offset);
        }
        long dataStart = (pos[0] + alignment - 1) / alignment * alignment;
        Map<String, TensorData> out = new LinkedHashMap<>();
        for (Info info : infos) {
            long bytes = info.type.bytesFor(TensorData.elementCount(info.shape));
            out.put(info.name, new TensorData(info.name, info.type, info.shape, m.asSlice(dataStart + info.offset, bytes)));
        }
        return out;
    }

    private static String string(MemorySegment m, long[] pos) {
        long len = m.get(U64, pos[0]);
        byte[] b = m.asSlice(pos[0] + 8, len).toArray(ValueLayout.JAVA_BYTE);
        pos[0] += 8 + len;
        return new String(b, StandardCharsets.UTF_8);
    }

    private static void skipValue(MemorySegment m, long[] pos, int type) {
        switch (type) {
            case 0, 1, 7 -> pos[0] += 1;
            case 2, 3 -> pos[0] += 2;
            case 4, 5, 6 -> pos[0] += 4;
            case 10, 11, 12 -> pos[0] += 8;
            case 8 -> pos[0] += 8 + m.get(U64, pos[0]);
            case 9 -> {
                int et = m.get(U32, pos[0]);
                long n = m.get(U64, pos[0] + 4);
                pos[0] += 12;
                for (long i = 0; i < n; i++) skipValue(m, pos, et);
            }
            default -> throw new IllegalStateException("GGUF value type " + type + " at " + pos[0]);
        }
    }
}
