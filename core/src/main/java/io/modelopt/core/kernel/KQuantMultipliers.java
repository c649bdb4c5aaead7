package io.modelopt.core.kernel;

/**
 * The form a repacked k-quant kernel wants its activations in, beside the Q8_K quants: ints of
 * per-view multipliers computed once per token from the quants (each layout's "Arithmetic"
 * says what they are), so that the kernel's inner loop is 16-bit multiplies of packed weight
 * fields by broadcast multipliers. {@link Activations#quantize} fills them when a call's
 * {@link Repacking#multipliers} asks for a form.
 */
interface KQuantMultipliers {
    /** Ints per token of {@code cols} columns. */
    int perToken(int cols);

    /** One token's multipliers of its quants {@code q[qOff .. qOff+cols)} into {@code y} from {@code yOff}. */
    void write(float[] q, int qOff, int cols, int[] y, int yOff);
}
