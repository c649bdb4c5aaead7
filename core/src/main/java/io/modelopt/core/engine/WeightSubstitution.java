package io.modelopt.core.engine;

import io.modelopt.core.kernel.WeightMatrix;

/**
 * Chooses the weight matrix a {@link BlockRunner} call multiplies with, linear by linear: the
 * model's own, or a replacement for this call only (fake-quantized for AWQ's clip search, rescaled
 * for its scale search, already-quantized blocks in GPTQ's sequential order). The model's weights
 * are never changed. The replacement must have the original's shape ({@code cols × rows}).
 */
@FunctionalInterface
public interface WeightSubstitution {
    /** The model's own weights everywhere. */
    WeightSubstitution NONE = (layer, linear, original) -> original;

    /**
     * @param layer    the decoder block ({@code numLayers} for {@link Linear#OUTPUT})
     * @param linear   which matrix of it
     * @param original the matrix the model would use (possibly a repacked copy of the file's)
     * @return the matrix to use for this call
     */
    WeightMatrix weight(int layer, Linear linear, WeightMatrix original);

    /** {@code replacement} for {@code linear} of {@code layer}, the model's own weights elsewhere. */
    static WeightSubstitution of(int layer, Linear linear, WeightMatrix replacement) {
        return (l, which, original) -> l == layer && which == linear ? replacement : original;
    }
}
