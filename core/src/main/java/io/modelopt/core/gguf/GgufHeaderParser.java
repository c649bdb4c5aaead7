package io.modelopt.core.gguf;

import io.modelopt.core.ModelFormatException;
import io.modelopt.core.tensor.GgmlType;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Parses everything of a GGUF file before the tensor data: magic, version, counts, metadata and
 * tensor infos, then places and checks the tensors in the data section. The checks follow ggml's
 * {@code gguf_init_from_file_impl} (gguf.cpp), with one rule of its own: every count and length is
 * compared with the bytes actually left in the file before anything is allocated, so a corrupt
 * count fails with a message instead of an OutOfMemoryError or a long loop.
 *
 * <p>Reads through a small positional buffer over the channel; never holds more than one value's
 * bytes at a time beyond the parsed result.
 */
final class GgufHeaderParser {
    /** {@code GGML_MAX_DIMS}. */
    static final int MAX_DIMS = 4;
    /** {@code GGML_MAX_NAME}: ggml keeps tensor names in a 64-byte buffer including the NUL. */
    static final int MAX_NAME_BYTES = 63;
    static final int DEFAULT_ALIGNMENT = 32;
    static final String ALIGNMENT_KEY = "general.alignment";
    /** Arrays of arrays deeper than this are refused (bounds recursion on crafted files). */
    static final int MAX_ARRAY_DEPTH = 8;
    /** Smallest possible metadata entry: key length (8) + type (4) + a 1-byte value. */
    private static final int MIN_KV_BYTES = 8 + 4 + 1;
    /** Smallest possible tensor info: name length (8) + n_dims (4) + type (4) + offset (8). */
    private static final int MIN_TENSOR_INFO_BYTES = 8 + 4 + 4 + 8;
    private static final int MAX_JAVA_ARRAY = Integer.MAX_VALUE - 16;

    /** The parsed header. Offsets of tensors are relative to {@code dataOffset}. */
    record Header(int version, int alignment, Map<String, GgufValue> metadata, Map<String, Long> keyOffsets,
                  List<GgufTensorInfo> tensors, long dataOffset, long fileSize) {}

    private final Path file;
    private final FileChannel channel;
    private final long fileSize;
    private final ByteBuffer buf = ByteBuffer.allocate(1 << 16).order(ByteOrder.LITTLE_ENDIAN);
    /** File offset of {@code buf}'s first byte. */
    private long bufStart;
    private long pos;

    private GgufHeaderParser(Path file, FileChannel channel, long fileSize) {
        this.file = file;
        this.channel = channel;
        this.fileSize = fileSize;
        buf.limit(0);
    }

    static Header parse(Path file, FileChannel channel) throws IOException {
        return new GgufHeaderParser(file, channel, channel.size()).parse();
    }

    private Header parse() {
        readMagic();
        int version = readVersion();

        long countsAt = pos;
        long nTensors = i64("tensor count");
        long nKv = i64("metadata count");
        if (nTensors < 0 || nTensors > remaining() / MIN_TENSOR_INFO_BYTES) {
            throw fail(countsAt, "tensor count " + Long.toUnsignedString(nTensors) + " cannot fit in the " + remaining()
                    + " bytes left (each tensor info takes at least " + MIN_TENSOR_INFO_BYTES + ")");
        }
        if (nKv < 0 || nKv > remaining() / MIN_KV_BYTES) {
            throw fail(countsAt + 8, "metadata count " + Long.toUnsignedString(nKv) + " cannot fit in the " + remaining()
                    + " bytes left (each entry takes at least " + MIN_KV_BYTES + ")");
        }
        if (nTensors * MIN_TENSOR_INFO_BYTES + nKv * MIN_KV_BYTES > remaining()) {
            throw fail(countsAt, nTensors + " tensor infos and " + nKv + " metadata entries cannot fit in the " + remaining() + " bytes left");
        }

        Map<String, GgufValue> metadata = new LinkedHashMap<>();
        Map<String, Long> keyOffsets = new HashMap<>();
        for (long i = 0; i < nKv; i++) {
            long at = pos;
            String key = string("key of metadata entry " + i);
            if (metadata.containsKey(key)) throw fail(at, "duplicate metadata key '" + key + "'");
            long typeAt = pos;
            int typeId = i32("type of key '" + key + "'");
            GgufType type = GgufType.fromId(typeId)
                    .orElseThrow(() -> fail(typeAt, "key '" + key + "' has invalid GGUF value type " + typeId));
            metadata.put(key, value(type, key, 0));
            keyOffsets.put(key, at);
        }

        int alignment = alignment(metadata, keyOffsets);

        List<GgufTensorInfo> tensors = new ArrayList<>();
        Set<String> names = new HashSet<>();
        for (long i = 0; i < nTensors; i++) {
            tensors.add(tensorInfo(i, alignment, names));
        }

        long dataOffset = alignUp(pos, alignment);
        checkPlacement(tensors, dataOffset);
        return new Header(version, alignment, Collections.unmodifiableMap(metadata), Map.copyOf(keyOffsets),
                List.copyOf(tensors), dataOffset, fileSize);
    }

    private void readMagic() {
        if (fileSize < 4) throw fail(0, "not a GGUF file: only " + fileSize + " bytes, too short for the magic 'GGUF'");
        byte[] m = bytes(4, "magic");
        if (m[0] != 'G' || m[1] != 'G' || m[2] != 'U' || m[3] != 'F') {
            StringBuilder shown = new StringBuilder();
            for (byte b : m) shown.append(b >= 0x20 && b < 0x7f ? (char) b : '?');
            throw fail(0, String.format("not a GGUF file: magic is '%s' (%02x %02x %02x %02x), expected 'GGUF'",
                    shown, m[0] & 0xff, m[1] & 0xff, m[2] & 0xff, m[3] & 0xff));
        }
    }

    private int readVersion() {
        long at = pos;
        int v = i32("version");
        if (v != 0 && (v & 0xFFFF) == 0) {
            throw fail(at, String.format("GGUF version 0x%08x looks byte-swapped: this is a big-endian GGUF file, only little-endian files are supported", v));
        }
        if (v == 0) throw fail(at, "bad GGUF version 0");
        if (v == 1) throw fail(at, "GGUF version 1 is not supported (it used 32-bit lengths); re-convert the model with a current llama.cpp");
        if (v < 0 || v > 3) throw fail(at, "GGUF version " + Integer.toUnsignedString(v) + " is newer than the supported versions 2 and 3");
        return v;
    }

    /** {@code general.alignment}: a uint32 power of two (ggml reads it with gguf_get_val_u32), default 32. */
    private int alignment(Map<String, GgufValue> metadata, Map<String, Long> keyOffsets) {
        GgufValue v = metadata.get(ALIGNMENT_KEY);
        if (v == null) return DEFAULT_ALIGNMENT;
        long at = keyOffsets.get(ALIGNMENT_KEY);
        if (!(v instanceof GgufValue.Int i) || i.type() != GgufType.UINT32) {
            throw fail(at, ALIGNMENT_KEY + " must be a UINT32, is " + (v instanceof GgufValue.Array a ? "an array of " + a.elementType() : v.type()));
        }
        long a = i.value();
        if (a == 0 || (a & (a - 1)) != 0) throw fail(at, ALIGNMENT_KEY + " = " + a + " is not a non-zero power of two");
        if (a > (1 << 30)) throw fail(at, ALIGNMENT_KEY + " = " + a + " is unreasonably large (more than 2^30)");
        return (int) a;
    }

    private GgufTensorInfo tensorInfo(long index, int alignment, Set<String> names) {
        long at = pos;
        String name = string("name of tensor " + index);
        int nameBytes = name.getBytes(StandardCharsets.UTF_8).length;
        if (nameBytes > MAX_NAME_BYTES) {
            throw fail(at, "tensor " + index + " name '" + abbreviate(name) + "' is too long: " + nameBytes + " bytes, ggml allows at most " + MAX_NAME_BYTES);
        }
        if (!names.add(name)) throw fail(at, "duplicate tensor name '" + name + "'");

        long dimsAt = pos;
        int nDims = i32("n_dims of tensor '" + name + "'");
        if (nDims < 0 || nDims > MAX_DIMS) {
            throw fail(dimsAt, "tensor '" + name + "' has n_dims " + Integer.toUnsignedString(nDims) + ", at most " + MAX_DIMS + " allowed");
        }
        long[] dims = new long[nDims];
        long elements = 1;
        for (int d = 0; d < nDims; d++) {
            long dimAt = pos;
            dims[d] = i64("dimension " + d + " of tensor '" + name + "'");
            if (dims[d] < 0) throw fail(dimAt, "tensor '" + name + "' dimension " + d + " is negative: " + dims[d]);
            try {
                elements = Math.multiplyExact(elements, dims[d]);
            } catch (ArithmeticException e) {
                throw fail(dimAt, "tensor '" + name + "' has too many elements: " + java.util.Arrays.toString(dims) + " overflows 64 bits");
            }
        }

        long typeAt = pos;
        int typeId = i32("type of tensor '" + name + "'");
        GgmlType type = GgmlType.fromId(typeId)
                .orElseThrow(() -> fail(typeAt, "tensor '" + name + "' has unknown ggml type id " + typeId));
        long ne0 = nDims == 0 ? 1 : dims[0];
        if (ne0 % type.blockSize() != 0) {
            throw fail(typeAt, "tensor '" + name + "' of type " + type + " has ne0 = " + ne0 + ", not a multiple of the block size " + type.blockSize());
        }
        try {
            type.bytesFor(elements);
        } catch (ArithmeticException e) {
            throw fail(typeAt, "tensor '" + name + "' byte size overflows 64 bits: " + java.util.Arrays.toString(dims) + " of " + type);
        }

        long offAt = pos;
        long offset = i64("data offset of tensor '" + name + "'");
        if (offset < 0) throw fail(offAt, "tensor '" + name + "' data offset " + Long.toUnsignedString(offset) + " is beyond any file");
        if (offset % alignment != 0) {
            throw fail(offAt, "tensor '" + name + "' data offset " + offset + " is not a multiple of the alignment " + alignment);
        }
        return new GgufTensorInfo(name, type, dims, offset);
    }

    /** Every tensor lies inside the data section and no two overlap. */
    private void checkPlacement(List<GgufTensorInfo> tensors, long dataOffset) {
        if (tensors.isEmpty()) return;
        if (dataOffset > fileSize) {
            throw fail(dataOffset, "the data section starts at " + dataOffset + ", beyond the end of the file (" + fileSize + " bytes)");
        }
        long dataSize = fileSize - dataOffset;
        for (GgufTensorInfo t : tensors) {
            long size = t.byteSize();
            if (t.offset() > dataSize || size > dataSize - t.offset()) {
                throw fail(dataOffset, "tensor '" + t.name() + "' data [" + t.offset() + ", " + Long.toUnsignedString(t.offset() + size)
                        + ") relative to the data section lies beyond the end of the file (the data section has " + dataSize + " bytes)");
            }
        }
        List<GgufTensorInfo> byOffset = new ArrayList<>(tensors);
        byOffset.sort((a, b) -> Long.compare(a.offset(), b.offset()));
        GgufTensorInfo prev = null;
        for (GgufTensorInfo t : byOffset) {
            if (t.byteSize() == 0) continue;
            if (prev != null && prev.offset() + prev.byteSize() > t.offset()) {
                throw fail(dataOffset + t.offset(), "tensors '" + prev.name() + "' [" + prev.offset() + ", " + (prev.offset() + prev.byteSize())
                        + ") and '" + t.name() + "' [" + t.offset() + ", " + (t.offset() + t.byteSize()) + ") overlap");
            }
            prev = t;
        }
    }

    // ---- values ----------------------------------------------------------------------------

    private GgufValue value(GgufType type, String key, int depth) {
        return switch (type) {
            case UINT8 -> new GgufValue.Int(type, u8("value of '" + key + "'"));
            case INT8 -> new GgufValue.Int(type, (byte) u8("value of '" + key + "'"));
            case UINT16 -> new GgufValue.Int(type, i16("value of '" + key + "'") & 0xFFFF);
            case INT16 -> new GgufValue.Int(type, i16("value of '" + key + "'"));
            case UINT32 -> new GgufValue.Int(type, i32("value of '" + key + "'") & 0xFFFF_FFFFL);
            case INT32 -> new GgufValue.Int(type, i32("value of '" + key + "'"));
            case UINT64, INT64 -> new GgufValue.Int(type, i64("value of '" + key + "'"));
            case FLOAT32 -> new GgufValue.Float32(Float.intBitsToFloat(i32("value of '" + key + "'")));
            case FLOAT64 -> new GgufValue.Float64(Double.longBitsToDouble(i64("value of '" + key + "'")));
            case BOOL -> new GgufValue.Bool(u8("value of '" + key + "'") != 0);
            case STRING -> new GgufValue.Str(string("value of '" + key + "'"));
            case ARRAY -> array(key, depth);
        };
    }

    private GgufValue.Array array(String key, int depth) {
        long at = pos;
        if (depth >= MAX_ARRAY_DEPTH) throw fail(at, "array '" + key + "' nests arrays deeper than " + MAX_ARRAY_DEPTH + " levels");
        int typeId = i32("element type of array '" + key + "'");
        GgufType et = GgufType.fromId(typeId)
                .orElseThrow(() -> fail(at, "array '" + key + "' has invalid element type " + typeId));
        long countAt = pos;
        long count = i64("length of array '" + key + "'");
        if (count < 0 || count > remaining() / et.minEncodedSize()) {
            throw fail(countAt, "array '" + key + "' claims " + Long.toUnsignedString(count) + " elements of " + et
                    + " but only " + remaining() + " bytes are left in the file");
        }
        if (count > MAX_JAVA_ARRAY) throw fail(countAt, "array '" + key + "' has " + count + " elements, more than a Java array holds");
        int n = (int) count;
        String what = "element of array '" + key + "'";
        Object data = switch (et) {
            case UINT8 -> { long[] a = new long[n]; for (int i = 0; i < n; i++) a[i] = u8(what); yield a; }
            case INT8 -> { long[] a = new long[n]; for (int i = 0; i < n; i++) a[i] = (byte) u8(what); yield a; }
            case UINT16 -> { long[] a = new long[n]; for (int i = 0; i < n; i++) a[i] = i16(what) & 0xFFFF; yield a; }
            case INT16 -> { long[] a = new long[n]; for (int i = 0; i < n; i++) a[i] = i16(what); yield a; }
            case UINT32 -> { long[] a = new long[n]; for (int i = 0; i < n; i++) a[i] = i32(what) & 0xFFFF_FFFFL; yield a; }
            case INT32 -> { long[] a = new long[n]; for (int i = 0; i < n; i++) a[i] = i32(what); yield a; }
            case UINT64, INT64 -> { long[] a = new long[n]; for (int i = 0; i < n; i++) a[i] = i64(what); yield a; }
            case FLOAT32 -> { float[] a = new float[n]; for (int i = 0; i < n; i++) a[i] = Float.intBitsToFloat(i32(what)); yield a; }
            case FLOAT64 -> { double[] a = new double[n]; for (int i = 0; i < n; i++) a[i] = Double.longBitsToDouble(i64(what)); yield a; }
            case BOOL -> { boolean[] a = new boolean[n]; for (int i = 0; i < n; i++) a[i] = u8(what) != 0; yield a; }
            case STRING -> { String[] a = new String[n]; for (int i = 0; i < n; i++) a[i] = string(what); yield a; }
            case ARRAY -> { GgufValue.Array[] a = new GgufValue.Array[n]; for (int i = 0; i < n; i++) a[i] = array(key, depth + 1); yield a; }
        };
        return new GgufValue.Array(et, data, n);
    }

    // ---- primitive reads -------------------------------------------------------------------

    private long remaining() { return fileSize - pos; }

    private void need(int n, String what) {
        if (n > remaining()) {
            throw fail(pos, "unexpected end of file reading " + what + ": need " + n + " bytes, " + remaining() + " left");
        }
        int inBuf = (int) (bufStart + buf.limit() - pos);
        if (inBuf >= n) {
            buf.position((int) (pos - bufStart));
            return;
        }
        // refill from pos
        buf.clear();
        bufStart = pos;
        try {
            while (buf.position() < n) {
                int r = channel.read(buf, bufStart + buf.position());
                if (r < 0) throw fail(pos, "unexpected end of file reading " + what + " (the file shrank while being read)");
            }
        } catch (IOException e) {
            throw new UncheckedIOException("reading " + file + " at offset " + pos, e);
        }
        buf.flip();
    }

    private int u8(String what) {
        need(1, what);
        pos += 1;
        return buf.get() & 0xFF;
    }

    private short i16(String what) {
        need(2, what);
        pos += 2;
        return buf.getShort();
    }

    private int i32(String what) {
        need(4, what);
        pos += 4;
        return buf.getInt();
    }

    private long i64(String what) {
        need(8, what);
        pos += 8;
        return buf.getLong();
    }

    private byte[] bytes(int n, String what) {
        if (n <= buf.capacity()) {
            need(n, what);
            byte[] out = new byte[n];
            buf.get(out);
            pos += n;
            return out;
        }
        if (n > remaining()) throw fail(pos, "unexpected end of file reading " + what + ": need " + n + " bytes, " + remaining() + " left");
        byte[] out = new byte[n];
        ByteBuffer dst = ByteBuffer.wrap(out);
        try {
            while (dst.hasRemaining()) {
                int r = channel.read(dst, pos + dst.position());
                if (r < 0) throw fail(pos, "unexpected end of file reading " + what + " (the file shrank while being read)");
            }
        } catch (IOException e) {
            throw new UncheckedIOException("reading " + file + " at offset " + pos, e);
        }
        pos += n;
        buf.limit(0);
        bufStart = pos;
        return out;
    }

    private String string(String what) {
        long at = pos;
        long len = i64("length of " + what);
        if (len < 0 || len > remaining()) {
            throw fail(at, "string length " + Long.toUnsignedString(len) + " of " + what + " exceeds the " + remaining() + " bytes left in the file");
        }
        if (len > MAX_JAVA_ARRAY) throw fail(at, "string of " + len + " bytes (" + what + ") is larger than a Java string holds");
        return new String(bytes((int) len, what), StandardCharsets.UTF_8);
    }

    static long alignUp(long x, long alignment) {
        return (x + alignment - 1) & -alignment;
    }

    private static String abbreviate(String s) {
        return s.length() <= 80 ? s : s.substring(0, 80) + "...";
    }

    private ModelFormatException fail(long offset, String problem) {
        return new ModelFormatException(file, offset, problem);
    }
}
