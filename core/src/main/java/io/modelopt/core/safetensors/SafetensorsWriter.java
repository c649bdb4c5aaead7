package io.modelopt.core.safetensors;

import io.modelopt.core.tensor.TensorData;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.channels.WritableByteChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes a safetensors file: the 8-byte length, the header as {@link SafetensorsHeader#encode()}
 * makes it (compact JSON, space-padded to a multiple of 8), then every tensor's bytes back to back
 * in header order. Tensors are collected first (their sizes fix the header), then streamed to the
 * file one by one; nothing is buffered whole in memory. The file is written under a temporary name
 * beside the target and moved into place when complete, so a failed write leaves no half file and
 * a file mapped by a reader is never overwritten in place.
 *
 * <h2>Key order</h2>
 * {@link TensorOrder#AS_ADDED} (the default) keeps the order of the {@code add} calls — copying an
 * opened file in its header order with its {@link SafetensorsHeader#metadataPosition()} reproduces it
 * byte for byte (see {@link #copyOf}). {@link TensorOrder#REFERENCE} orders as the reference
 * serializer ({@code prepare} in huggingface/safetensors): by dtype alignment descending, then by
 * name; with it use {@link SafetensorsHeader.MetadataPosition#FIRST}, where the reference puts
 * {@code __metadata__} (also the default here).
 *
 * <p>Not thread-safe; one writer per file.
 */
public final class SafetensorsWriter {
    private static final Logger log = LoggerFactory.getLogger(SafetensorsWriter.class);
    private static final int CHUNK = 1 << 24;
    private static final ValueLayout.OfFloat F32_LE = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    /** Order of the tensors in the header and the data section. */
    public enum TensorOrder { AS_ADDED, REFERENCE }

    /** Writes exactly {@code byteSize} bytes of one tensor to the channel, e.g. converted on the fly. */
    @FunctionalInterface
    public interface DataSource {
        void writeTo(WritableByteChannel out) throws IOException;
    }

    private record Pending(String name, SafetensorsDType dtype, long[] shape, long byteSize, DataSource source) {}

    private final List<Pending> tensors = new ArrayList<>();
    private final Set<String> names = new HashSet<>();
    private final Map<String, String> metadata = new LinkedHashMap<>();
    private SafetensorsHeader.MetadataPosition metadataPosition = SafetensorsHeader.MetadataPosition.FIRST;
    private TensorOrder order = TensorOrder.AS_ADDED;

    public SafetensorsWriter() {}

    /**
     * A writer holding every tensor of {@code file} in header order, with its metadata at the same
     * position: {@code copyOf(f).write(p)} rewrites {@code f} (byte-identically when {@code f} was
     * written compactly, padded with spaces and with data in header order).
     */
    public static SafetensorsWriter copyOf(SafetensorsFile file) {
        SafetensorsWriter w = new SafetensorsWriter().metadata(file.metadata()).metadataPosition(file.header().metadataPosition());
        for (SafetensorsTensor t : file.tensors().values()) w.add(t);
        return w;
    }

    /** Adds (or replaces) {@code __metadata__} entries. */
    public SafetensorsWriter metadata(Map<String, String> entries) {
        entries.forEach((k, v) -> metadata.put(Objects.requireNonNull(k), Objects.requireNonNull(v, "metadata value of " + k)));
        return this;
    }

    public SafetensorsWriter metadata(String key, String value) { return metadata(Map.of(key, value)); }

    public SafetensorsWriter metadataPosition(SafetensorsHeader.MetadataPosition position) {
        metadataPosition = Objects.requireNonNull(position);
        return this;
    }

    public SafetensorsWriter order(TensorOrder tensorOrder) {
        order = Objects.requireNonNull(tensorOrder);
        return this;
    }

    /** Adds a tensor whose bytes are in {@code data} (little endian, row-major, PyTorch-order {@code shape}). */
    public SafetensorsWriter add(String name, SafetensorsDType dtype, long[] shape, MemorySegment data) {
        long size = SafetensorsTensor.byteSizeOf(dtype, shape);
        if (data.byteSize() != size) {
            throw new IllegalArgumentException("tensor " + name + ": " + dtype + Arrays.toString(shape) + " needs " + size + " bytes, data has " + data.byteSize());
        }
        return add(name, dtype, shape, size, out -> writeSegment(out, data));
    }

    public SafetensorsWriter add(SafetensorsTensor t) { return add(t.name(), t.dtype(), t.shape(), t.data()); }

    /** Adds a float tensor from a Java array (written as F32). */
    public SafetensorsWriter add(String name, long[] shape, float[] values) {
        MemorySegment bytes = MemorySegment.ofArray(new byte[Math.multiplyExact(values.length, 4)]);
        MemorySegment.copy(values, 0, bytes, F32_LE, 0, values.length);
        return add(name, SafetensorsDType.F32, shape, bytes);
    }

    /**
     * Adds a plain-typed {@link TensorData} (F32/F16/BF16/F64/I8..I64) under {@code name}; its
     * ggml-order shape is reversed to PyTorch order.
     */
    public SafetensorsWriter add(String name, TensorData t) {
        SafetensorsDType dtype = SafetensorsDType.fromGgml(t.type()).orElseThrow(() ->
                new IllegalArgumentException("tensor " + t.name() + " has ggml type " + t.type() + ", which safetensors cannot store"));
        long[] s = t.shape();
        long[] shape = new long[s.length];
        for (int i = 0; i < s.length; i++) shape[i] = s[s.length - 1 - i];
        return add(name, dtype, shape, t.data());
    }

    /**
     * Adds a tensor whose {@code byteSize} bytes {@code source} produces when the file is written
     * (for conversions streamed without holding the result).
     */
    public SafetensorsWriter add(String name, SafetensorsDType dtype, long[] shape, long byteSize, DataSource source) {
        Objects.requireNonNull(name, "name");
        if (name.equals(SafetensorsHeader.METADATA_KEY)) throw new IllegalArgumentException("a tensor cannot be named " + SafetensorsHeader.METADATA_KEY);
        if (!names.add(name)) throw new IllegalArgumentException("duplicate tensor name " + name);
        long expect = SafetensorsTensor.byteSizeOf(dtype, shape);
        if (expect != byteSize) throw new IllegalArgumentException("tensor " + name + ": " + dtype + Arrays.toString(shape) + " needs " + expect + " bytes, not " + byteSize);
        tensors.add(new Pending(name, dtype, shape.clone(), byteSize, Objects.requireNonNull(source)));
        return this;
    }

    private List<Pending> ordered() {
        List<Pending> list = new ArrayList<>(tensors);
        if (order == TensorOrder.REFERENCE) {
            list.sort(Comparator.comparing(Pending::dtype, Comparator.reverseOrder()).thenComparing(Pending::name));
        }
        return list;
    }

    /** The header this writer will write (offsets assigned in write order). */
    public SafetensorsHeader header() {
        List<SafetensorsHeader.Entry> entries = new ArrayList<>();
        long offset = 0;
        for (Pending p : ordered()) {
            entries.add(new SafetensorsHeader.Entry(p.name, p.dtype, p.shape, offset, offset + p.byteSize));
            offset += p.byteSize;
        }
        return new SafetensorsHeader(entries, metadata, metadataPosition);
    }

    /** Writes the file; returns its size in bytes. */
    public long write(Path file) throws IOException {
        byte[] headerBytes = header().encode();
        Path target = file.toAbsolutePath();
        Path tmp = target.resolveSibling("." + target.getFileName() + "." + Long.toHexString(System.nanoTime()) + ".tmp");
        boolean done = false;
        try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.WRITE, StandardOpenOption.CREATE_NEW)) {
            ByteBuffer len = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(0, headerBytes.length);
            writeAll(ch, len);
            writeAll(ch, ByteBuffer.wrap(headerBytes));
            for (Pending p : ordered()) {
                long before = ch.position();
                p.source.writeTo(ch);
                long written = ch.position() - before;
                if (written != p.byteSize) {
                    throw new IOException("tensor " + p.name + ": its data source wrote " + written + " bytes, expected " + p.byteSize);
                }
            }
            ch.force(false);
            long size = ch.position();
            ch.close();
            Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            done = true;
            log.debug("wrote {}: {} tensors, {} bytes", file, tensors.size(), size);
            return size;
        } finally {
            if (!done) Files.deleteIfExists(tmp);
        }
    }

    /** Writes a segment to a channel in chunks (a ByteBuffer view is limited to 2 GiB). */
    public static void writeSegment(WritableByteChannel out, MemorySegment data) throws IOException {
        for (long off = 0; off < data.byteSize(); off += CHUNK) {
            long n = Math.min(CHUNK, data.byteSize() - off);
            writeAll(out, data.asSlice(off, n).asByteBuffer());
        }
    }

    private static void writeAll(WritableByteChannel out, ByteBuffer buf) throws IOException {
        while (buf.hasRemaining()) out.write(buf);
    }
}
