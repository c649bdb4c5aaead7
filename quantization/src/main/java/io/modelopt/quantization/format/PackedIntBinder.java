package io.modelopt.quantization.format;

import io.modelopt.core.ModelFormatException;
import io.modelopt.core.kernel.WeightFormat;
import io.modelopt.core.kernel.WeightFormats;
import io.modelopt.core.kernel.WeightMatrix;
import io.modelopt.core.model.ModelSource;
import io.modelopt.core.model.WeightBinder;
import io.modelopt.core.tensor.GgmlType;
import io.modelopt.core.tensor.TensorData;
import java.util.Arrays;
import java.util.Map;

/**
 * Binds a weight stored in {@link PackedIntLayout} ({@link PackedIntTensors#tensors()}): an I32
 * tensor {@code <name>} whose model metadata names its format under {@link #metadataKey}, with
 * {@code <name>_scale} and, when asymmetric, {@code <name>_zero_point} beside it.
 */
public final class PackedIntBinder implements WeightBinder {
    /** Prefix of the metadata key naming a weight's format. */
    public static final String METADATA_PREFIX = "modelopt.weight_format.";

    /** The metadata key whose String value is the {@link IntScheme#formatName()} of weight {@code canonicalName}. */
    public static String metadataKey(String canonicalName) { return METADATA_PREFIX + canonicalName; }

    // the claim cannot see the metadata: it keeps every I32 linear weight, and bind() decides
    @Override public boolean claims(String canonicalName, GgmlType type) {
        return type == GgmlType.I32 && canonicalName.endsWith(".weight");
    }

    @Override public WeightMatrix bind(ModelSource source, String weightName) {
        Object value = source.metadata().get(metadataKey(weightName));
        if (value == null) return null;
        if (!(value instanceof String formatName)) {
            throw bad(source, "metadata " + metadataKey(weightName) + " must be a format name string, got " + value);
        }
        WeightFormat format = WeightFormats.named(formatName)
                .filter(f -> IntFormats.layout(f).orElse(null) instanceof PackedIntLayout)
                .orElseThrow(() -> bad(source, "weight " + weightName + ": unknown packed integer format " + formatName + " (known: "
                        + PackedIntLayout.schemes().stream().map(IntScheme::formatName).toList() + ")"));
        IntScheme s = IntFormats.layout(format).orElseThrow().scheme();
        Map<String, TensorData> tensors = source.tensors();
        TensorData main = part(source, tensors, weightName, "");
        if (main.type() != GgmlType.I32 || main.shape().length != 2) {
            throw bad(source, "weight " + weightName + " (" + formatName + "): codes must be a 2-D I32 tensor, got " + main);
        }
        if (main.dim(0) * 32 % s.bits() != 0 || main.dim(0) * 32 / s.bits() > Integer.MAX_VALUE || main.dim(1) > Integer.MAX_VALUE) {
            throw bad(source, "weight " + weightName + " (" + formatName + "): codes tensor of shape " + Arrays.toString(main.shape()) + " holds no whole row");
        }
        int cols = (int) (main.dim(0) * 32 / s.bits()), rows = (int) main.dim(1);
        if (!PackedIntLayout.fits(s, cols)) throw bad(source, PackedIntTensors.misfit(weightName, s, cols));
        TensorData scales = part(source, tensors, weightName, PackedIntTensors.SCALE_SUFFIX);
        expect(source, weightName, formatName, scales, s.scaleType() == IntScheme.ScaleType.F16 ? GgmlType.F16 : GgmlType.F32, s.groups(cols), rows);
        try {
            if (s.symmetric()) return WeightMatrix.of(format, rows, cols, main, scales);
            TensorData zeros = part(source, tensors, weightName, PackedIntTensors.ZERO_POINT_SUFFIX);
            expect(source, weightName, formatName, zeros, GgmlType.I8, PackedIntLayout.zeroPointBytes(s, cols), rows);
            return WeightMatrix.of(format, rows, cols, main, scales, zeros);
        } catch (IllegalArgumentException e) {
            throw new ModelFormatException(source.path(), "weight " + weightName + " (" + formatName + "): " + e.getMessage(), e);
        }
    }

    /** The tensor {@code weightName + suffix}, under its canonical name or (a safetensors directory) its file's name. */
    private static TensorData part(ModelSource source, Map<String, TensorData> tensors, String weightName, String suffix) {
        TensorData t = tensors.get(weightName + suffix);
        if (t == null) t = tensors.get(source.fileTensorName(weightName) + suffix);
        if (t == null) {
            throw bad(source, "weight " + weightName + " is stored as " + source.metadata().get(metadataKey(weightName)) + " but tensor "
                    + weightName + suffix + " is missing");
        }
        return t;
    }

    private static void expect(ModelSource source, String weightName, String formatName, TensorData t, GgmlType type, long rowElements, long rows) {
        long[] shape = {rowElements, rows};
        if (t.type() != type || !Arrays.equals(t.shape(), shape)) {
            throw bad(source, "weight " + weightName + " (" + formatName + "): tensor " + t.name() + " is " + t.type() + Arrays.toString(t.shape())
                    + ", expected " + type + Arrays.toString(shape));
        }
    }

    private static ModelFormatException bad(ModelSource source, String problem) {
        return new ModelFormatException(source.path(), problem);
    }
}
