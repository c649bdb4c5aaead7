package io.modelopt.core.safetensors;

import io.modelopt.core.ModelFormatException;
import io.modelopt.core.tensor.TensorData;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A safetensors file, opened read-only: an 8-byte little-endian header length N, N bytes of JSON
 * header (see {@link SafetensorsHeader}), then the data section. The header is read and validated
 * completely before anything is mapped; the data section is then memory-mapped once into a shared
 * arena owned by this object, and every tensor is a zero-copy slice of it, usable from any thread
 * until {@link #close()}.
 *
 * <p>Every malformed input (short file, header length beyond the file or the 100 MB limit the
 * reference implementation also uses, invalid UTF-8 or JSON, bad entries, overlaps, holes,
 * truncation) throws {@link ModelFormatException} naming the file and the problem.
 */
public final class SafetensorsFile implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(SafetensorsFile.class);

    /** Largest accepted header, as the reference implementation's {@code MAX_HEADER_SIZE}. */
    public static final long MAX_HEADER_BYTES = 100_000_000L;

    private final Path path;
    private final SafetensorsHeader header;
    private final long headerLength;
    private final Arena arena;
    private final Map<String, SafetensorsTensor> tensors;
    private final AtomicBoolean closed = new AtomicBoolean();

    private SafetensorsFile(Path path, SafetensorsHeader header, long headerLength, Arena arena, Map<String, SafetensorsTensor> tensors) {
        this.path = path;
        this.header = header;
        this.headerLength = headerLength;
        this.arena = arena;
        this.tensors = Collections.unmodifiableMap(tensors);
    }

    /**
     * Opens, validates and maps {@code file}.
     *
     * @throws ModelFormatException when the file is not a valid safetensors file
     * @throws java.io.UncheckedIOException when it cannot be read
     */
    public static SafetensorsFile open(Path file) {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            long size = ch.size();
            if (size < 8) throw new ModelFormatException(file, 0, "file is " + size + " bytes, too short for the 8-byte header length");
            ByteBuffer lenBuf = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN);
            readFully(ch, lenBuf, 0);
            long n = lenBuf.getLong(0);
            if (n < 0 || n > MAX_HEADER_BYTES) {
                throw new ModelFormatException(file, 0, "header length " + Long.toUnsignedString(n) + " exceeds the limit of " + MAX_HEADER_BYTES + " bytes");
            }
            if (n > size - 8) {
                throw new ModelFormatException(file, 0, "header length " + n + " runs past the end of the file (" + size + " bytes)");
            }
            ByteBuffer headerBuf = ByteBuffer.allocate((int) n);
            readFully(ch, headerBuf, 8);
            headerBuf.flip();
            String json;
            try {
                json = StandardCharsets.UTF_8.newDecoder()
                        .onMalformedInput(CodingErrorAction.REPORT)
                        .onUnmappableCharacter(CodingErrorAction.REPORT)
                        .decode(headerBuf).toString();
            } catch (CharacterCodingException e) {
                throw new ModelFormatException(file, 8, "header is not valid UTF-8", e);
            }
            long dataStart = 8 + n;
            long dataSize = size - dataStart;
            SafetensorsHeader header = SafetensorsHeader.parse(file, json, dataSize, 8);
            if (dataStart % 8 != 0) log.debug("{}: data section starts at {}, not 8-aligned", file, dataStart);

            Arena arena = Arena.ofShared();
            try {
                MemorySegment data = dataSize == 0 ? MemorySegment.NULL : ch.map(FileChannel.MapMode.READ_ONLY, dataStart, dataSize, arena);
                Map<String, SafetensorsTensor> tensors = new LinkedHashMap<>();
                for (SafetensorsHeader.Entry e : header.entries()) {
                    tensors.put(e.name(), new SafetensorsTensor(e.name(), e.dtype(), e.shape(), data.asSlice(e.begin(), e.byteSize())));
                }
                log.debug("opened {}: {} tensors, {} data bytes", file, tensors.size(), dataSize);
                return new SafetensorsFile(file, header, n, arena, tensors);
            } catch (RuntimeException | IOException e) {
                arena.close();
                throw e;
            }
        } catch (IOException e) {
            throw new java.io.UncheckedIOException("cannot read " + file + ": " + e.getMessage(), e);
        }
    }

    private static void readFully(FileChannel ch, ByteBuffer buf, long position) throws IOException {
        long pos = position;
        while (buf.hasRemaining()) {
            int r = ch.read(buf, pos);
            if (r < 0) throw new java.io.EOFException("unexpected end of file at " + pos);
            pos += r;
        }
    }

    public Path path() { return path; }

    /** The parsed header (entries in header order, metadata, its position). */
    public SafetensorsHeader header() { return header; }

    /** N, the length of the JSON header (padding included). */
    public long headerLength() { return headerLength; }

    /** File offset of the data section: {@code 8 + headerLength()}. */
    public long dataOffset() { return 8 + headerLength; }

    /** The {@code __metadata__} map (empty when the header has none). */
    public Map<String, String> metadata() { return header.metadata(); }

    /** Tensor names in header order. */
    public List<String> tensorNames() { return new ArrayList<>(tensors.keySet()); }

    /** Name → tensor, in header order; unmodifiable. */
    public Map<String, SafetensorsTensor> tensors() {
        checkOpen();
        return tensors;
    }

    public Optional<SafetensorsTensor> find(String name) {
        checkOpen();
        return Optional.ofNullable(tensors.get(name));
    }

    /** The tensor {@code name}; throws {@link ModelFormatException} naming the file when absent. */
    public SafetensorsTensor tensor(String name) {
        return find(name).orElseThrow(() -> new ModelFormatException(path, "no tensor named '" + name + "'"));
    }

    /**
     * {@code tensor(name)} as a {@link TensorData} named {@code newName}, shape in ggml order.
     *
     * @throws ModelFormatException when absent or its dtype has no ggml type
     */
    public TensorData tensorData(String name, String newName) {
        SafetensorsTensor t = tensor(name);
        try {
            return t.toTensorData(newName);
        } catch (IllegalArgumentException e) {
            throw new ModelFormatException(path, e.getMessage(), e);
        }
    }

    private void checkOpen() {
        if (closed.get()) throw new IllegalStateException(path + " is closed");
    }

    /** Unmaps the file; every tensor segment becomes unusable. Idempotent. */
    @Override public void close() {
        if (closed.compareAndSet(false, true)) arena.close();
    }

    @Override public String toString() { return "SafetensorsFile[" + path + ", " + tensors.size() + " tensors]"; }
}
