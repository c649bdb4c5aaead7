package io.modelopt.core.synthetic;

import io.modelopt.core.quant.F16;
import io.modelopt.core.quant.Q4_0;
import io.modelopt.core.quant.Q8_0;
import io.modelopt.core.tensor.GgmlType;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.WritableByteChannel;
import java.util.stream.IntStream;

/**
 * Produces a tensor's bytes chunk by chunk and writes them to a channel: rows are generated into
 * float buffers, encoded in the target type (F32, F16, or ggml's reference Q8_0 / Q4_0 quantizers,
 * as llama-quantize uses them) into one reusable direct buffer, and written out. Rows of a chunk are
 * spread over the common fork-join pool; each row depends only on its index, so the bytes do not
 * depend on the thread count. Memory: one chunk ({@value #CHUNK_BYTES} bytes) plus a row of floats
 * per worker, whatever the model size.
 *
 * <p>One instance per file being written (it owns the chunk buffer); not thread-safe.
 */
final class TensorStreamer {
    static final int CHUNK_BYTES = 8 << 20;
    private static final ValueLayout.OfFloat F32_LE = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    /** Fills one row (in the order the output stores rows) with its float values. */
    @FunctionalInterface
    interface RowSource {
        void fill(int row, float[] dst);
    }

    /** Called on the writing thread after each chunk with the bytes written so far by this streamer. */
    @FunctionalInterface
    interface Progress {
        void advanced(long bytes);
    }

    private final Progress progress;
    private ByteBuffer buffer;
    private MemorySegment segment;
    private long written;

    TensorStreamer(Progress progress) { this.progress = progress; }

    /** Counts progress from zero again (a writer writing its file a second time). */
    void restart() { written = 0; }

    /** Writes {@code rows} rows of {@code rowLength} values, encoded as {@code type}, to {@code out}. */
    void write(GgmlType type, int rowLength, int rows, RowSource source, WritableByteChannel out) throws IOException {
        long rowBytes = type.bytesFor(rowLength);
        if (rowBytes > CHUNK_BYTES) throw new IllegalArgumentException("a row of " + rowBytes + " bytes exceeds the chunk of " + CHUNK_BYTES);
        int rowsPerChunk = (int) Math.min(rows, CHUNK_BYTES / rowBytes);
        int workers = Math.max(1, Math.min(Runtime.getRuntime().availableProcessors(), rowsPerChunk));
        if (buffer == null) {
            buffer = ByteBuffer.allocateDirect(CHUNK_BYTES).order(ByteOrder.LITTLE_ENDIAN);
            segment = MemorySegment.ofBuffer(buffer);
        }
        for (int first = 0; first < rows; first += rowsPerChunk) {
            int n = Math.min(rowsPerChunk, rows - first), start = first;
            if (n * rowLength < 4096 || workers == 1) {
                encodeRows(type, rowLength, rowBytes, start, 0, n, source, new float[rowLength]);
            } else {
                // contiguous row ranges per worker: each writes its own bytes of the chunk
                IntStream.range(0, workers).parallel().forEach(w -> {
                    int from = (int) ((long) n * w / workers), to = (int) ((long) n * (w + 1) / workers);
                    encodeRows(type, rowLength, rowBytes, start, from, to, source, new float[rowLength]);
                });
            }
            buffer.clear().limit((int) (n * rowBytes));
            while (buffer.hasRemaining()) out.write(buffer);
            written += n * rowBytes;
            progress.advanced(written);
        }
    }

    private void encodeRows(GgmlType type, int rowLength, long rowBytes, int firstRow, int from, int to, RowSource source, float[] row) {
        for (int r = from; r < to; r++) {
            source.fill(firstRow + r, row);
            encode(type, row, rowLength, segment, r * rowBytes);
        }
    }

    /** Encodes {@code n} floats as {@code type} at {@code dst[off..]}: ggml's reference conversions. */
    static void encode(GgmlType type, float[] src, int n, MemorySegment dst, long off) {
        switch (type) {
            case F32 -> MemorySegment.copy(src, 0, dst, F32_LE, off, n);
            case F16 -> F16.quantizeReference(src, 0, n, dst, off);
            case Q8_0 -> Q8_0.quantizeReference(src, 0, n, dst, off);
            case Q4_0 -> Q4_0.quantizeReference(src, 0, n, dst, off);
            default -> throw new IllegalArgumentException("synthetic models are written as F32, F16, Q8_0 or Q4_0, not " + type);
        }
    }
}
