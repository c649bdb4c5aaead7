package io.modelopt.core.kernel;

import io.modelopt.core.tensor.TensorData;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SegmentAllocator;
import java.lang.foreign.ValueLayout;

/**
 * Makes the load-time copy of a matrix whose format transcodes into a core format
 * ({@link Transcoding}): group by group of the target's interleaved layout, the group's rows are
 * rewritten into a small scratch matrix of the target's blocks and that scratch is packed into its
 * slot of the copy, so the target's whole bytes never exist at once (the resident cost is the
 * interleaved copy plus the affine terms). The per-group offsets (group-major: {@code [group][row]})
 * and per-row scales go into F32 arrays beside the copy.
 */
final class TranscodedCopy {
    private TranscodedCopy() {}

    static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED;

    /** Bytes of {@code w}'s copy: the target's interleaved layout, the offsets and the row scales, each rounded up to the copy alignment. */
    static long bytes(WeightMatrix w) {
        Transcoding t = w.format().transcoding();
        long n = align(t.target().repacking().packedBytes(w.rows(), w.cols()));
        int og = t.offsetGroupSize(w);
        if (og > 0) n += align(4L * w.rows() * (w.cols() / og));
        if (t.rowScaled()) n += align(4L * w.rows());
        return n;
    }

    private static long align(long n) {
        long a = WeightMatrix.REPACK_ALIGNMENT;
        return (n + a - 1) / a * a;
    }

    /** {@code w} with its transcoded copy taken from {@code allocator}, or {@code w} itself when a group's blocks cannot be represented by the layout. */
    static WeightMatrix make(WeightMatrix w, SegmentAllocator allocator, ComputePool pool) {
        Transcoding t = w.format().transcoding();
        WeightFormat target = t.target();
        Repacking layout = target.repacking();
        int rows = w.rows(), cols = w.cols(), groupRows = layout.groupRows();
        int og = t.offsetGroupSize(w), groups = og > 0 ? cols / og : 0;
        long align = WeightMatrix.REPACK_ALIGNMENT;
        MemorySegment copy = allocator.allocate(layout.packedBytes(rows, cols), align);
        MemorySegment offsets = og > 0 ? allocator.allocate(4L * rows * groups, align) : null;
        MemorySegment scales = t.rowScaled() ? allocator.allocate(4L * rows, align) : null;
        long rowBytes = target.rowBytes(cols), groupBytes = layout.packedBytes(groupRows, cols);
        boolean[] unrepresentable = {false}; // written by the pool's threads, read after its join
        ComputePool.RangeTask fill = (g0, g1, worker) -> {
            try (Arena scratchArena = Arena.ofConfined()) {
                MemorySegment scratch = scratchArena.allocate(groupRows * rowBytes, align);
                WeightMatrix group = WeightMatrix.of(new TensorData(w.tensor().name() + "#transcoded", target.fileType(), new long[] {cols, groupRows}, scratch));
                float[] rowOffsets = new float[Math.max(1, groups)];
                for (int g = g0; g < g1; g++) {
                    for (int i = 0; i < groupRows; i++) {
                        int r = g * groupRows + i;
                        t.transcodeRow(w, r, scratch, i * rowBytes);
                        if (offsets != null) {
                            // group-major ([group][row]): the affine kernel reads L adjacent rows of one group
                            t.rowOffsets(w, r, rowOffsets);
                            for (int j = 0; j < groups; j++) offsets.set(F32, 4L * ((long) j * rows + r), rowOffsets[j]);
                        }
                        if (scales != null) scales.set(F32, 4L * r, t.rowScale(w, r));
                    }
                    if (!layout.representable(group, 0, groupRows)) {
                        unrepresentable[0] = true;
                        return;
                    }
                    layout.pack(group, copy.asSlice(g * groupBytes, groupBytes), 0, 1);
                }
            }
        };
        int nGroups = rows / groupRows;
        if (pool == null) fill.run(0, nGroups, 0);
        else pool.parallelFor(nGroups, fill);
        if (unrepresentable[0]) return w;
        return w.withTranscodedCopy(copy, new WeightMatrix.Affine(target, scales, offsets, og));
    }
}
