package io.modelopt.core.model;

import io.modelopt.core.kernel.WeightMatrix;
import io.modelopt.core.tensor.GgmlType;

/**
 * Recognizes a linear layer's weight stored as several tensors, or in a dtype that no ggml type's
 * format reads alone, and binds it to a registered {@link io.modelopt.core.kernel.WeightFormat}:
 * e.g. an INT8 {@code weight} with an F32 {@code weight_scale} per row, or AutoAWQ's
 * {@code qweight}/{@code qzeros}/{@code scales}. Found with {@link java.util.ServiceLoader}
 * ({@code provides} in {@code module-info} and
 * {@code META-INF/services/io.modelopt.core.model.WeightBinder}); asked before the default
 * binding, which wraps the one tensor of a weight's name in the format of its ggml type.
 */
public interface WeightBinder {
    /**
     * Whether this binder reads the tensor stored under {@code canonicalName} with ggml type
     * {@code type} (a loader then keeps a weight of a dtype it would otherwise refuse).
     */
    boolean claims(String canonicalName, GgmlType type);

    /**
     * The weight canonically named {@code weightName} (e.g. {@code blk.0.attn_q.weight}) bound
     * from {@code source}'s tensors, or null when this binder does not recognize it. Its rows and
     * columns must be the ones the model's config calls for (the caller checks them).
     *
     * @throws io.modelopt.core.ModelFormatException when the tensors are recognized but inconsistent
     */
    WeightMatrix bind(ModelSource source, String weightName);
}
