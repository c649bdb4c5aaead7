package io.modelopt.core.testformat;

import io.modelopt.core.ModelFormatException;
import io.modelopt.core.kernel.WeightMatrix;
import io.modelopt.core.model.ModelSource;
import io.modelopt.core.model.WeightBinder;
import io.modelopt.core.tensor.GgmlType;
import io.modelopt.core.tensor.TensorData;

/** Binds an I8 {@code ….weight} with its F32 {@code ….weight_scale} (kept under its HF name) to {@link RowScaledInt8}. */
public final class RowScaledInt8Binder implements WeightBinder {
    @Override public boolean claims(String canonicalName, GgmlType type) {
        return type == GgmlType.I8 && canonicalName.endsWith(".weight");
    }

    @Override public WeightMatrix bind(ModelSource source, String weightName) {
        TensorData q = source.tensors().get(weightName);
        if (q == null || q.type() != GgmlType.I8) return null;
        String scaleName = source.fileTensorName(weightName) + "_scale";
        TensorData scale = source.tensors().get(scaleName);
        if (scale == null) throw new ModelFormatException(source.path(), "INT8 weight '" + weightName + "' has no '" + scaleName + "'");
        if (scale.type() != GgmlType.F32 || scale.elementCount() != q.rows()) {
            throw new ModelFormatException(source.path(), "'" + scaleName + "' must be F32 with one scale per row (" + q.rows() + "), got " + scale);
        }
        return WeightMatrix.of(RowScaledInt8.FORMAT, q, scale);
    }
}
