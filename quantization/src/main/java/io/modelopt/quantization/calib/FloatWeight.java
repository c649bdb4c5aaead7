package io.modelopt.quantization.calib;

/**
 * A linear's weight decoded to floats: {@code rows} output rows of {@code cols} inputs, row-major
 * ({@code w[r·cols + c]} multiplies input column {@code c} into output {@code r}).
 */
public record FloatWeight(String name, int rows, int cols, float[] data) {
    public FloatWeight {
        if ((long) rows * cols != data.length) throw new IllegalArgumentException(name + ": " + data.length + " floats, not " + rows + " x " + cols);
    }
}
