package io.modelopt.quantization.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.modelopt.core.QuantizationSpec;
import io.modelopt.core.gguf.GgufFile;
import io.modelopt.core.loader.ModelSources;
import io.modelopt.core.model.ModelSource;
import io.modelopt.core.testing.Fixtures;
import io.modelopt.quantization.gguf.GgufQuantizer;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Which target each tensor gets: defaults, rules (later wins), shape fallbacks and refusals, on the fixture models. */
class LayerPolicyTest {

    private static QuantizationPlan plan(Path model, QuantizationSpec spec) throws IOException {
        try (ModelSource s = ModelSources.open(model)) {
            return LayerPolicy.plan(s, spec);
        }
    }

    @Test
    void defaultsKeepEmbeddingOutputAndNormsAndLaterRulesWin() throws IOException {
        QuantizationSpec spec = QuantizationSpec.int4()
                .rule("blk.*.attn_*", "INT8")            // attention at INT8, MLP at the default INT4
                .rule("blk.1.*", "F16")                   // one layer at F16 (its norms stay F32: 1-D)
                .rule("re:attn_v", "keep")                // a regex, found anywhere in the name
                .rule("output", "Q6_K")                   // the lm_head named without .weight
                .build();
        QuantizationPlan p = plan(Fixtures.brownGguf("f32"), spec);
        assertEquals("keep", p.targetOf("token_embd.weight"));
        assertEquals("Q6_K", p.targetOf("output.weight"));
        assertEquals("keep", p.targetOf("output_norm.weight"));
        assertEquals("INT8_CHANNEL_SYM", p.targetOf("blk.0.attn_q.weight"));
        assertEquals("INT8_CHANNEL_SYM", p.targetOf("blk.2.attn_output.weight"));
        assertEquals("keep", p.targetOf("blk.2.attn_v.weight"));
        assertEquals("INT4_G128_ASYM", p.targetOf("blk.0.ffn_down.weight"));
        assertEquals("F16", p.targetOf("blk.1.ffn_up.weight"));
        assertEquals("keep", p.targetOf("blk.1.attn_v.weight"), "the attn_v rule comes after blk.1.*");
        assertEquals("keep", p.targetOf("blk.1.attn_norm.weight"), "1-D tensors are never rewritten");
        assertEquals("rule blk.1.*=F16", p.entry("blk.1.attn_q.weight").reason());
        assertEquals(List.of(), p.unmatchedPatterns());
        String text = p.toString();
        assertTrue(text.contains("block linears") && text.contains("INT4_G128_ASYM"), text);
    }

    @Test
    void aPatternThatMatchesNothingIsReported() throws IOException {
        QuantizationPlan p = plan(Fixtures.brownGguf("f32"), QuantizationSpec.int8().rule("blk.99.*", "F16").rule("blk.0.*", "F16").build());
        assertEquals(List.of("blk.99.*"), p.unmatchedPatterns());
        assertTrue(p.toString().contains("pattern 'blk.99.*' matches no tensor"), p.toString());
    }

    @Test
    void stories260KFfnDownFallsBackToInt8PerChannel() throws IOException {
        QuantizationPlan p = plan(Fixtures.storiesGguf("f32"), QuantizationSpec.int4().groupSize(32).build());
        for (int l = 0; l < 5; l++) {
            // 172 inputs: no group of 32 or more divides them, and INT4 rows must be whole int32 words (8 codes)
            QuantizationPlan.Entry down = p.entry("blk." + l + ".ffn_down.weight");
            assertEquals("INT8_CHANNEL_SYM", down.target().name(), down.toString());
            assertTrue(down.reason().startsWith("fallback"), down.reason());
            assertEquals("INT4_G32_ASYM", p.targetOf("blk." + l + ".ffn_up.weight"));
        }
        // A ggml type has no such fallback in llama-quantize for Q4_0; here the tensor is kept.
        QuantizationPlan q = plan(Fixtures.storiesGguf("f32"), QuantizationSpec.gguf("q4_0").build());
        assertEquals("keep", q.targetOf("blk.0.ffn_down.weight"));
        assertEquals("Q4_0", q.targetOf("blk.0.ffn_up.weight"));
    }

    @Test
    void anExplicitRequestForTheImpossibleNamesTheTensorAndWhatWouldWork() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> plan(Fixtures.storiesGguf("f32"),
                QuantizationSpec.int8().rule("blk.*.ffn_down.weight", "INT4_G32").build()));
        assertTrue(e.getMessage().contains("blk.0.ffn_down.weight") && e.getMessage().contains("172")
                && e.getMessage().contains("INT8 per channel would"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> plan(Fixtures.storiesGguf("f32"),
                QuantizationSpec.int8().rule("blk.0.ffn_down.weight", "Q4_K").build()));
        assertTrue(e.getMessage().contains("blk.0.ffn_down.weight") && e.getMessage().contains("256") && e.getMessage().contains("F16"), e.getMessage());
        // stories260K's 64-wide attention rows are too short for INT3 g128: the message lists the group sizes that fit
        e = assertThrows(IllegalArgumentException.class, () -> plan(Fixtures.storiesGguf("f32"),
                QuantizationSpec.int8().rule("blk.0.attn_q.weight", "INT3_G128").build()));
        assertTrue(e.getMessage().contains("blk.0.attn_q.weight") && e.getMessage().contains("group sizes that would work at 3 bits: 32, 64"), e.getMessage());
    }

    @Test
    void badTargetsAndQuantizedInputsAreRefused() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> plan(Fixtures.brownGguf("f32"),
                QuantizationSpec.int4().rule("blk.*", "INT5").build()));
        assertTrue(e.getMessage().contains("INT5") && e.getMessage().contains("known") && e.getMessage().contains("Q4_K"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> plan(Fixtures.brownGguf("f32"),
                QuantizationSpec.int4().scaleType(QuantizationSpec.ScaleType.F32).build()));
        assertTrue(e.getMessage().contains("INT4_G128_ASYM_F32"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> plan(Fixtures.brownGguf("q8_0"), QuantizationSpec.RTN_INT4));
        assertTrue(e.getMessage().contains("already quantized") && e.getMessage().contains("Q8_0"), e.getMessage());
    }

    @Test
    void ggufPresetDefaultsAreLlamaQuantizesChoices() throws IOException {
        QuantizationPlan p = plan(Fixtures.brownGguf("f32"), QuantizationSpec.gguf("q4_k_m").build());
        try (GgufFile f = GgufFile.open(Fixtures.brownGguf("f32"))) {
            for (GgufQuantizer.TensorPlan t : GgufQuantizer.forPreset("q4_k_m").plan(f)) {
                String expected = t.quantized() ? t.type().name() : "keep";
                assertEquals(expected, p.targetOf(t.name()), t.name());
            }
        }
    }
}
