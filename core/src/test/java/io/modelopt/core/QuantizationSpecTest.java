package io.modelopt.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.modelopt.core.QuantizationSpec.LayerRule;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The spec's defaults and the builder's validation. */
class QuantizationSpecTest {

    @Test
    void factoriesCarryTheUsualDefaults() {
        QuantizationSpec i4 = QuantizationSpec.RTN_INT4;
        assertEquals("rtn", i4.method());
        assertEquals(4, i4.bits());
        assertEquals(128, i4.groupSize());
        assertFalse(i4.symmetric(), "AutoAWQ's default INT4 has zero points");
        assertTrue(i4.keepEmbeddingAndOutput());
        QuantizationSpec i8 = QuantizationSpec.RTN_INT8;
        assertEquals(8, i8.bits());
        assertEquals(QuantizationSpec.PER_CHANNEL, i8.groupSize());
        assertTrue(i8.symmetric());
        QuantizationSpec g = QuantizationSpec.gguf("Q4_K_M").build();
        assertEquals("q4_k_m", g.method());
        assertTrue(g.isGguf());
        assertFalse(g.keepEmbeddingAndOutput(), "GGUF presets follow llama-quantize's choices for token_embd and output");
        assertEquals("awq", QuantizationSpec.awq().build().method());
        assertEquals("gptq", QuantizationSpec.gptq().build().method());
        assertEquals(3, QuantizationSpec.method("RTN").bits(3).groupSize(64).build().bits());
    }

    @Test
    void rulesKeepTheirOrderAndParse() {
        QuantizationSpec s = QuantizationSpec.int4().rule("blk.*.attn_*", "INT8").keep("blk.3.*")
                .rule(LayerRule.parse("token_embd.weight=Q4_K")).build();
        assertEquals(List.of(new LayerRule("blk.*.attn_*", "INT8"), new LayerRule("blk.3.*", "keep"), new LayerRule("token_embd.weight", "Q4_K")),
                s.rules());
        assertEquals(s, s.toBuilder().build());
        assertThrows(IllegalArgumentException.class, () -> LayerRule.parse("no-equals-sign"));
        assertThrows(IllegalArgumentException.class, () -> LayerRule.parse("=INT8"));
        assertThrows(IllegalArgumentException.class, () -> LayerRule.parse("blk.*="));
    }

    @Test
    void badParametersAreRefusedNamingThem() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> QuantizationSpec.method("smoothquant").build());
        assertTrue(e.getMessage().contains("smoothquant") && e.getMessage().contains("rtn") && e.getMessage().contains("q4_k_m"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> QuantizationSpec.int4().bits(5).build());
        assertTrue(e.getMessage().contains("bits") && e.getMessage().contains("5"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> QuantizationSpec.int4().groupSize(100).build());
        assertTrue(e.getMessage().contains("group size") && e.getMessage().contains("100"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> QuantizationSpec.gguf("q4_0").clipSearch(true).build());
        assertThrows(IllegalArgumentException.class, () -> QuantizationSpec.awq().clipSearch(true).build());
        assertTrue(QuantizationSpec.gptq().clipSearch(true).build().clipSearch(), "GPTQ takes the clip search (find_params with mse)");
        assertTrue(QuantizationSpec.awqGptq().clipSearch(true).build().clipSearch(), "and so does AWQ+GPTQ's GPTQ");
        assertTrue(QuantizationSpec.awq().build().duoScaling(), "AWQ searches AutoAWQ's duo scales unless told");
        assertFalse(QuantizationSpec.awqGptq().duoScaling(false).build().duoScaling());
        assertTrue(QuantizationSpec.awq().duoScaling(false).build().toString().contains("no-duo-scaling"));
        e = assertThrows(IllegalArgumentException.class, () -> QuantizationSpec.gptq().duoScaling(false).build());
        assertTrue(e.getMessage().contains("duo scaling") && e.getMessage().contains("gptq"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> QuantizationSpec.gguf("q4_k_m").duoScaling(false).build());
        assertThrows(IllegalArgumentException.class, () -> QuantizationSpec.method(" ").build());
        assertThrows(IllegalArgumentException.class, () -> new QuantizationSpec.CalibrationSpec(List.of(), 128, 512, 0));
        assertThrows(IllegalArgumentException.class, () -> new QuantizationSpec.CalibrationSpec(List.of(Path.of("t.txt")), 0, 512, 0));
        assertEquals(128, QuantizationSpec.awq().calibration(new QuantizationSpec.CalibrationSpec(List.of(Path.of("t.txt")), 128, 512, 7))
                .build().calibration().samples());
    }
}
