package io.modelopt.core.model;

/**
 * RoPE frequency scaling. {@code type} is "llama3" (Llama 3.1+: {@code factor},
 * {@code lowFreqFactor}, {@code highFreqFactor}, {@code originalMaxPositions}) or "linear"
 * (positions divided by {@code factor}). A model without scaling has {@code null} here.
 */
public record RopeScaling(String type, double factor, double lowFreqFactor, double highFreqFactor, int originalMaxPositions) {
    public static RopeScaling linear(double factor) { return new RopeScaling("linear", factor, 0, 0, 0); }
}
