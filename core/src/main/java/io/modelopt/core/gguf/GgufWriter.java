package io.modelopt.core.gguf;

import io.modelopt.core.tensor.GgmlType;
import io.modelopt.core.tensor.TensorData;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.channels.WritableByteChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes GGUF files (version 3 by default, 2 on request) laid out exactly as ggml's
 * {@code gguf_write_to_file} and gguf-py's {@code GGUFWriter} do: header, metadata in insertion
 * order with the given types, tensor infos, zero padding to {@code general.alignment}, then each
 * tensor's data followed by zero padding to the alignment. Tensor offsets are assigned in the
 * order tensors were added. A file read by {@link GgufFile} and written back with
 * {@link #copyOf(GgufFile)} is byte-identical when it was written by ggml or gguf-py.
 *
 * <p>Tensor data is streamed: the header is written first, then each tensor's bytes are copied
 * from its segment (typically a mapped file) or produced by a {@link TensorContent} callback, so a
 * model larger than memory can be rewritten or quantized tensor by tensor.
 *
 * <p>Not thread-safe; build, then call {@link #write(Path)} once or several times.
 */
public final class GgufWriter {
    private static final Logger LOG = LoggerFactory.getLogger(GgufWriter.class);
    private static final int COPY_CHUNK = 8 << 20;

    /** Produces a tensor's bytes on demand, for writing models without holding all tensors in memory. */
    @FunctionalInterface
    public interface TensorContent {
        /** Writes exactly the tensor's byte size to {@code out} (the writer checks the count). */
        void writeTo(WritableByteChannel out) throws IOException;
    }

    private record PendingTensor(String name, GgmlType type, long[] dims, long byteSize, TensorContent content) {}

    private int version = 3;
    private final Map<String, GgufValue> metadata = new LinkedHashMap<>();
    private final List<PendingTensor> tensors = new ArrayList<>();
    private final Set<String> tensorNames = new HashSet<>();

    public GgufWriter() {}

    /** A writer holding {@code file}'s version, metadata (same order and types) and tensors (read from its mapping). */
    public static GgufWriter copyOf(GgufFile file) {
        GgufWriter w = new GgufWriter().version(file.version());
        file.metadata().forEach(w::put);
        for (TensorData t : file.tensors().values()) w.addTensor(t);
        return w;
    }

    /** 2 or 3 (the layouts are identical; v3 only declared that big-endian files may exist). */
    public GgufWriter version(int version) {
        if (version != 2 && version != 3) throw new IllegalArgumentException("GGUF version must be 2 or 3, not " + version);
        this.version = version;
        return this;
    }

    public int version() { return version; }

    // ---- metadata -------------------------------------------------------------------------

    /**
     * Sets {@code key} to {@code value}. A new key goes to the end; setting an existing key
     * replaces its value in place. {@code general.alignment} must be a UINT32 power of two.
     */
    public GgufWriter put(String key, GgufValue value) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(value, "value");
        if (key.isEmpty()) throw new IllegalArgumentException("empty metadata key");
        if (key.equals(GgufHeaderParser.ALIGNMENT_KEY)) checkAlignment(value);
        metadata.put(key, value);
        return this;
    }

    public GgufWriter putString(String key, String v) { return put(key, GgufValue.string(v)); }
    public GgufWriter putUInt8(String key, int v) { return put(key, GgufValue.uint8(v)); }
    public GgufWriter putInt8(String key, int v) { return put(key, GgufValue.int8(v)); }
    public GgufWriter putUInt16(String key, int v) { return put(key, GgufValue.uint16(v)); }
    public GgufWriter putInt16(String key, int v) { return put(key, GgufValue.int16(v)); }
    public GgufWriter putUInt32(String key, long v) { return put(key, GgufValue.uint32(v)); }
    public GgufWriter putInt32(String key, int v) { return put(key, GgufValue.int32(v)); }
    public GgufWriter putUInt64(String key, long v) { return put(key, GgufValue.uint64(v)); }
    public GgufWriter putInt64(String key, long v) { return put(key, GgufValue.int64(v)); }
    public GgufWriter putFloat32(String key, float v) { return put(key, GgufValue.float32(v)); }
    public GgufWriter putFloat64(String key, double v) { return put(key, GgufValue.float64(v)); }
    public GgufWriter putBool(String key, boolean v) { return put(key, GgufValue.bool(v)); }
    public GgufWriter putStringArray(String key, List<String> v) { return put(key, GgufValue.stringArray(v)); }
    public GgufWriter putFloat32Array(String key, float... v) { return put(key, GgufValue.floatArray(v)); }
    public GgufWriter putInt32Array(String key, int... v) { return put(key, GgufValue.intArray(GgufType.INT32, v)); }

    /** Sets {@code general.alignment} (UINT32); tensor data and the data section are padded to it. */
    public GgufWriter alignment(int alignment) { return putUInt32(GgufHeaderParser.ALIGNMENT_KEY, alignment); }

    public int alignment() {
        GgufValue v = metadata.get(GgufHeaderParser.ALIGNMENT_KEY);
        return v == null ? GgufHeaderParser.DEFAULT_ALIGNMENT : (int) ((GgufValue.Int) v).value();
    }

    public GgufWriter remove(String key) {
        metadata.remove(key);
        return this;
    }

    /** The metadata so far, in order. */
    public Map<String, GgufValue> metadata() { return Collections.unmodifiableMap(metadata); }

    private static void checkAlignment(GgufValue v) {
        if (!(v instanceof GgufValue.Int i) || i.type() != GgufType.UINT32) {
            throw new IllegalArgumentException("general.alignment must be a UINT32, not " + v.type());
        }
        long a = i.value();
        if (a == 0 || (a & (a - 1)) != 0 || a > (1 << 30)) {
            throw new IllegalArgumentException("general.alignment must be a power of two up to 2^30, not " + a);
        }
    }

    // ---- tensors --------------------------------------------------------------------------

    /** Adds a tensor whose bytes are {@code data} (e.g. a slice of a mapped file); the segment must stay alive until written. */
    public GgufWriter addTensor(String name, GgmlType type, long[] dims, MemorySegment data) {
        long size = checkTensor(name, type, dims);
        if (data.byteSize() != size) {
            throw new IllegalArgumentException("tensor '" + name + "': " + data.byteSize() + " bytes given, " + type + Arrays.toString(dims) + " needs " + size);
        }
        return add(new PendingTensor(name, type, dims.clone(), size, out -> copy(data, out)));
    }

    public GgufWriter addTensor(String name, GgmlType type, long[] dims, byte[] data) {
        return addTensor(name, type, dims, MemorySegment.ofArray(data.clone()));
    }

    public GgufWriter addTensor(TensorData t) { return addTensor(t.name(), t.type(), t.shape(), t.data()); }

    /** Adds a tensor whose bytes {@code content} produces while the file is written. */
    public GgufWriter addTensor(String name, GgmlType type, long[] dims, TensorContent content) {
        Objects.requireNonNull(content, "content");
        long size = checkTensor(name, type, dims);
        return add(new PendingTensor(name, type, dims.clone(), size, content));
    }

    public int tensorCount() { return tensors.size(); }

    private GgufWriter add(PendingTensor t) {
        tensors.add(t);
        tensorNames.add(t.name());
        return this;
    }

    private long checkTensor(String name, GgmlType type, long[] dims) {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(type, "type");
        if (name.getBytes(StandardCharsets.UTF_8).length > GgufHeaderParser.MAX_NAME_BYTES) {
            throw new IllegalArgumentException("tensor name '" + name + "' is longer than ggml's " + GgufHeaderParser.MAX_NAME_BYTES + " bytes");
        }
        if (tensorNames.contains(name)) throw new IllegalArgumentException("duplicate tensor name '" + name + "'");
        if (dims.length > GgufHeaderParser.MAX_DIMS) throw new IllegalArgumentException("tensor '" + name + "' has " + dims.length + " dims, at most 4");
        for (long d : dims) if (d < 0) throw new IllegalArgumentException("tensor '" + name + "' has a negative dimension: " + Arrays.toString(dims));
        long ne0 = dims.length == 0 ? 1 : dims[0];
        if (ne0 % type.blockSize() != 0) {
            throw new IllegalArgumentException("tensor '" + name + "' of type " + type + ": ne0 = " + ne0 + " is not a multiple of the block size " + type.blockSize());
        }
        return type.bytesFor(TensorData.elementCount(dims));
    }

    // ---- output ---------------------------------------------------------------------------

    /**
     * Writes the file to {@code path}, through a temporary file beside it that is moved into place
     * when complete, so a failure never leaves a truncated GGUF under the final name.
     */
    public void write(Path path) {
        Path abs = path.toAbsolutePath();
        Path tmp = abs.resolveSibling(abs.getFileName() + ".tmp-" + ProcessHandle.current().pid() + "-" + System.nanoTime());
        try {
            try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
                long n = writeTo(ch);
                LOG.debug("wrote {} ({} bytes, {} keys, {} tensors)", path, n, metadata.size(), tensors.size());
            }
            try {
                Files.move(tmp, abs, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            } catch (java.nio.file.AtomicMoveNotSupportedException e) {
                Files.move(tmp, abs, StandardCopyOption.REPLACE_EXISTING);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write GGUF file " + path, e);
        } finally {
            try {
                Files.deleteIfExists(tmp);
            } catch (IOException ignored) {
                // the move succeeded or the original error is more useful
            }
        }
    }

    /** The whole file in memory (for small files and tests). */
    public byte[] toByteArray() {
        ByteArrayOutputStream bos = new ByteArrayOutputStream();
        try {
            writeTo(Channels.newChannel(bos));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return bos.toByteArray();
    }

    /** Streams the file to {@code out}; returns the number of bytes written. */
    public long writeTo(WritableByteChannel out) throws IOException {
        int alignment = alignment();
        LeOutput o = new LeOutput(out);
        o.bytes(new byte[] {'G', 'G', 'U', 'F'});
        o.i32(version);
        o.i64(tensors.size());
        o.i64(metadata.size());
        for (Map.Entry<String, GgufValue> e : metadata.entrySet()) {
            o.string(e.getKey());
            o.i32(e.getValue().type().id());
            value(o, e.getValue());
        }
        long offset = 0;
        for (PendingTensor t : tensors) {
            o.string(t.name());
            o.i32(t.dims().length);
            for (long d : t.dims()) o.i64(d);
            o.i32(t.type().id());
            o.i64(offset);
            offset = Math.addExact(offset, padding(t.byteSize(), alignment) + t.byteSize());
        }
        o.zeros(padding(o.written(), alignment));
        o.flush();
        for (PendingTensor t : tensors) {
            CountingChannel counted = new CountingChannel(out);
            t.content().writeTo(counted);
            if (counted.count != t.byteSize()) {
                throw new IllegalStateException("tensor '" + t.name() + "' content wrote " + counted.count + " bytes, expected " + t.byteSize());
            }
            o.advance(t.byteSize());
            o.zeros(padding(t.byteSize(), alignment));
            o.flush();
        }
        return o.written();
    }

    private static long padding(long n, long alignment) {
        return GgufHeaderParser.alignUp(n, alignment) - n;
    }

    private static void value(LeOutput o, GgufValue v) throws IOException {
        switch (v) {
            case GgufValue.Int i -> o.integer(i.type(), i.value());
            case GgufValue.Float32 f -> o.i32(Float.floatToRawIntBits(f.value()));
            case GgufValue.Float64 f -> o.i64(Double.doubleToRawLongBits(f.value()));
            case GgufValue.Bool b -> o.u8(b.value() ? 1 : 0);
            case GgufValue.Str s -> o.string(s.value());
            case GgufValue.Array a -> array(o, a);
        }
    }

    private static void array(LeOutput o, GgufValue.Array a) throws IOException {
        o.i32(a.elementType().id());
        o.i64(a.size());
        Object data = a.rawData();
        switch (a.elementType()) {
            case FLOAT32 -> { for (float f : (float[]) data) o.i32(Float.floatToRawIntBits(f)); }
            case FLOAT64 -> { for (double d : (double[]) data) o.i64(Double.doubleToRawLongBits(d)); }
            case BOOL -> { for (boolean b : (boolean[]) data) o.u8(b ? 1 : 0); }
            case STRING -> { for (String s : (String[]) data) o.string(s); }
            case ARRAY -> { for (GgufValue.Array x : (GgufValue.Array[]) data) array(o, x); }
            default -> { for (long x : (long[]) data) o.integer(a.elementType(), x); }
        }
    }

    private static void copy(MemorySegment data, WritableByteChannel out) throws IOException {
        for (long off = 0; off < data.byteSize(); off += COPY_CHUNK) {
            ByteBuffer b = data.asSlice(off, Math.min(COPY_CHUNK, data.byteSize() - off)).asByteBuffer();
            while (b.hasRemaining()) out.write(b);
        }
    }

    /** Counts what a {@link TensorContent} writes. */
    private static final class CountingChannel implements WritableByteChannel {
        private final WritableByteChannel out;
        long count;

        CountingChannel(WritableByteChannel out) { this.out = out; }

        @Override public int write(ByteBuffer src) throws IOException {
            int n = 0;
            while (src.hasRemaining()) n += out.write(src);
            count += n;
            return n;
        }

        @Override public boolean isOpen() { return out.isOpen(); }

        @Override public void close() {
            // the writer owns the underlying channel
        }
    }

    /** A little-endian buffered writer over a channel that counts every byte of the file. */
    private static final class LeOutput {
        private final WritableByteChannel out;
        private final ByteBuffer buf = ByteBuffer.allocate(1 << 16).order(ByteOrder.LITTLE_ENDIAN);
        private long written;

        LeOutput(WritableByteChannel out) { this.out = out; }

        long written() { return written + buf.position(); }

        /** Accounts for bytes written directly to the channel (tensor data). */
        void advance(long n) { written += n; }

        private void room(int n) throws IOException {
            if (buf.remaining() < n) flush();
        }

        void flush() throws IOException {
            buf.flip();
            written += buf.remaining();
            while (buf.hasRemaining()) out.write(buf);
            buf.clear();
        }

        void u8(int v) throws IOException { room(1); buf.put((byte) v); }
        void i16(int v) throws IOException { room(2); buf.putShort((short) v); }
        void i32(int v) throws IOException { room(4); buf.putInt(v); }
        void i64(long v) throws IOException { room(8); buf.putLong(v); }

        void integer(GgufType type, long v) throws IOException {
            switch (type.size()) {
                case 1 -> u8((int) v);
                case 2 -> i16((int) v);
                case 4 -> i32((int) v);
                default -> i64(v);
            }
        }

        void bytes(byte[] b) throws IOException {
            int off = 0;
            while (off < b.length) {
                room(1);
                int n = Math.min(buf.remaining(), b.length - off);
                buf.put(b, off, n);
                off += n;
            }
        }

        void string(String s) throws IOException {
            byte[] b = s.getBytes(StandardCharsets.UTF_8);
            i64(b.length);
            bytes(b);
        }

        void zeros(long n) throws IOException {
            for (long i = 0; i < n; i++) u8(0);
        }
    }
}
