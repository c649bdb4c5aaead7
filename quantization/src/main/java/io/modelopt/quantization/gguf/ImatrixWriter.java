package io.modelopt.quantization.gguf;

import io.modelopt.quantization.calib.ImatrixCollector;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

/**
 * Writes llama-imatrix's legacy binary format at the fixtures' commit
 * ({@code IMatrixCollector::save_imatrix}): the entry count; per tensor the name length and
 * bytes, {@code ncall}, the value count and the values {@code sum(x²) / count · ncall} (float32);
 * then the last chunk number and the dataset name. All integers int32, little-endian.
 * {@link ImatrixFile} reads it back.
 */
public final class ImatrixWriter {
    private ImatrixWriter() {}

    public static void write(Path out, Map<String, ImatrixCollector.Entry> entries, int chunks, String dataset) {
        if (entries.isEmpty()) throw new IllegalArgumentException("no imatrix data collected (no product of at least 16 tokens ran)");
        byte[] ds = dataset.getBytes(StandardCharsets.UTF_8);
        long size = 4 + 8 + ds.length;
        for (Map.Entry<String, ImatrixCollector.Entry> e : entries.entrySet()) {
            size += 12 + e.getKey().getBytes(StandardCharsets.UTF_8).length + 4L * e.getValue().values().length;
        }
        ByteBuffer b = ByteBuffer.allocate(Math.toIntExact(size)).order(ByteOrder.LITTLE_ENDIAN);
        b.putInt(entries.size());
        for (Map.Entry<String, ImatrixCollector.Entry> e : entries.entrySet()) {
            byte[] name = e.getKey().getBytes(StandardCharsets.UTF_8);
            float[] v = e.getValue().values();
            b.putInt(name.length).put(name).putInt(e.getValue().calls()).putInt(v.length);
            for (float f : v) b.putFloat(f);
        }
        b.putInt(chunks).putInt(ds.length).put(ds);
        try {
            Files.write(out, b.array());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write imatrix file " + out + ": " + e.getMessage(), e);
        }
    }
}
