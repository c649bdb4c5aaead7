package io.modelopt.quantization.gguf;

import io.modelopt.core.ModelFormatException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * llama.cpp's legacy importance-matrix file ({@code llama-imatrix} before the GGUF format;
 * {@code IMatrixCollector::save_imatrix}), read as llama-quantize's {@code load_imatrix} does.
 *
 * <p>Layout, all little endian: {@code int32 n_entries}; per entry {@code int32 len},
 * {@code len} name bytes, {@code int32 ncall}, {@code int32 nval}, {@code nval} float32 values
 * ({@code sum(x²)/count · ncall} per column); then optionally {@code int32 last_chunk},
 * {@code int32 dataset_len} and the dataset file name. {@link #weights} are the stored values
 * divided by {@code ncall} in float, as llama-quantize hands them to the quantizers.
 *
 * <p>Stricter than llama.cpp where it would read garbage: a truncated file, a negative length,
 * bytes left after the trailer or a non-finite value (which llama-quantize rejects later) fail
 * with a {@link ModelFormatException} naming the file, the byte offset and the entry.
 */
public final class ImatrixFile {
    private final Path path;
    private final Map<String, float[]> weights;
    private final Map<String, Integer> calls;
    private final int chunkCount;
    private final String dataset;

    private ImatrixFile(Path path, Map<String, float[]> weights, Map<String, Integer> calls, int chunkCount, String dataset) {
        this.path = path;
        this.weights = Collections.unmodifiableMap(weights);
        this.calls = Collections.unmodifiableMap(calls);
        this.chunkCount = chunkCount;
        this.dataset = dataset;
    }

    /** Reads and validates {@code path}. */
    public static ImatrixFile read(Path path) {
        byte[] bytes;
        try {
            bytes = Files.readAllBytes(path);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read imatrix file " + path, e);
        }
        return parse(path, bytes);
    }

    /** Parses the bytes of an imatrix file; {@code path} only names it in errors. */
    public static ImatrixFile parse(Path path, byte[] bytes) {
        ByteBuffer b = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
        int nEntries = readInt(path, b, "the entry count");
        if (nEntries < 1) throw new ModelFormatException(path, 0, "no data in imatrix file (entry count " + nEntries + ")");
        Map<String, float[]> weights = new LinkedHashMap<>();
        Map<String, Integer> calls = new LinkedHashMap<>();
        for (int i = 0; i < nEntries; i++) {
            long at = b.position();
            int len = readInt(path, b, "the name length of entry " + (i + 1));
            if (len < 0 || len > b.remaining()) {
                throw new ModelFormatException(path, at, "entry " + (i + 1) + " of " + nEntries + ": name length " + len
                        + " exceeds the " + b.remaining() + " bytes left (truncated or not an imatrix file)");
            }
            byte[] nb = new byte[len];
            b.get(nb);
            String name = cString(nb);
            int ncall = readInt(path, b, "ncall of '" + name + "'");
            at = b.position();
            int nval = readInt(path, b, "the value count of '" + name + "'");
            if (nval < 1 || (long) nval * 4 > b.remaining()) {
                throw new ModelFormatException(path, at, "entry '" + name + "': " + nval + " values, "
                        + b.remaining() + " bytes left (truncated or corrupt imatrix)");
            }
            float[] v = new float[nval];
            for (int j = 0; j < nval; j++) {
                float f = b.getFloat();
                if (ncall > 0) f /= ncall;
                if (!Float.isFinite(f)) {
                    throw new ModelFormatException(path, b.position() - 4, "entry '" + name + "' value " + j + " is not finite (" + f + ")");
                }
                v[j] = f;
            }
            weights.put(name, v);
            calls.put(name, ncall);
        }
        int lastChunk = 0;
        String dataset = null;
        if (b.hasRemaining()) {
            lastChunk = readInt(path, b, "the chunk count");
            long at = b.position();
            int dlen = readInt(path, b, "the dataset name length");
            if (dlen < 0 || dlen > b.remaining()) {
                throw new ModelFormatException(path, at, "dataset name length " + dlen + " exceeds the " + b.remaining() + " bytes left");
            }
            byte[] db = new byte[dlen];
            b.get(db);
            dataset = new String(db, StandardCharsets.UTF_8);
            if (b.hasRemaining()) {
                throw new ModelFormatException(path, b.position(), b.remaining() + " unexpected bytes after the dataset name");
            }
        }
        return new ImatrixFile(path, weights, calls, lastChunk, dataset);
    }

    private static int readInt(Path path, ByteBuffer b, String what) {
        if (b.remaining() < 4) {
            throw new ModelFormatException(path, b.position(), "imatrix file truncated: cannot read " + what);
        }
        return b.getInt();
    }

    /** C reads the name into a NUL-terminated buffer: it ends at the first NUL. */
    private static String cString(byte[] nb) {
        int n = 0;
        while (n < nb.length && nb[n] != 0) n++;
        return new String(nb, 0, n, StandardCharsets.UTF_8);
    }

    public Path path() { return path; }

    /** Tensor name → per-column importance (one value per {@code ne0} column, times experts), in file order. */
    public Map<String, float[]> weights() { return weights; }

    /** The importance of one tensor, if the file has it. */
    public Optional<float[]> weights(String tensor) { return Optional.ofNullable(weights.get(tensor)); }

    /** Tensor name → the number of calls the collector counted. */
    public Map<String, Integer> calls() { return calls; }

    /** The number of entries (distinct tensor names). */
    public int entryCount() { return weights.size(); }

    /** The last chunk number the collector stored ({@code quantize.imatrix.chunks_count}), 0 when absent. */
    public int chunkCount() { return chunkCount; }

    /** The dataset file name the collector stored, if any. */
    public Optional<String> dataset() { return Optional.ofNullable(dataset); }
}
