package io.modelopt.core.kernel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.modelopt.core.tensor.GgmlType;
import java.util.EnumSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The weight-format table: each of core's formats takes its geometry from its ggml type (block
 * sizes are written once, in {@link GgmlType}), every format has a reference decoder and both
 * kernels, the name and type indexes agree, and a second registration of a name or a type is refused.
 */
class WeightFormatsTest {
    /** The ggml types the engine multiplies with, as the README lists them. */
    static final Set<GgmlType> CORE = EnumSet.of(GgmlType.F32, GgmlType.F16, GgmlType.BF16, GgmlType.Q8_0, GgmlType.Q4_0, GgmlType.Q4_1,
            GgmlType.Q5_0, GgmlType.Q5_1, GgmlType.Q2_K, GgmlType.Q3_K, GgmlType.Q4_K, GgmlType.Q5_K, GgmlType.Q6_K, GgmlType.IQ4_NL);

    @Test void everyCoreTypeHasOneFormatWithTheTypesGeometry() {
        for (GgmlType t : CORE) {
            WeightFormat f = WeightFormats.forFileType(t).orElseThrow(() -> new AssertionError("no format for " + t));
            assertEquals(t.name(), f.name());
            assertSame(f, WeightFormats.named(t.name()).orElseThrow());
            assertEquals(t.blockSize(), f.blockSize(), t + " block size");
            assertEquals(t.typeSize(), f.blockBytes(), t + " block bytes");
            assertEquals(8L * t.typeSize(), f.rowBytes(t.blockSize() * 8L), t + " row bytes");
            assertNotNull(f.kernel(KernelMode.SCALAR), t + " scalar kernel");
            if (KernelMode.vectorApiAvailable()) assertNotNull(f.kernel(KernelMode.VECTOR), t + " vector kernel");
        }
        assertTrue(WeightFormats.fileTypes().containsAll(CORE), "bound types " + WeightFormats.fileTypes());
        for (WeightFormat f : WeightFormats.all()) {
            if (f.fileType() != null) assertSame(f, WeightFormats.forFileType(f.fileType()).orElseThrow(), f + " is the format of its type");
        }
    }

    @Test void theQuantClassesBlockConstantsAreTheTypes() {
        assertEquals(GgmlType.Q4_0.typeSize(), io.modelopt.core.quant.Q4_0.BLOCK_BYTES);
        assertEquals(GgmlType.Q8_0.typeSize(), Q8_0Kernel.BLOCK_BYTES);
        assertEquals(GgmlType.Q4_K.blockSize(), io.modelopt.core.quant.Q4_K.BLOCK_ELEMENTS);
        assertEquals(GgmlType.Q6_K.typeSize(), Q6_KKernel.BLOCK_BYTES);
    }

    @Test void aSecondRegistrationOfANameOrATypeIsRefused() {
        WeightFormat q8 = WeightFormats.forFileType(GgmlType.Q8_0).orElseThrow();
        var name = assertThrows(IllegalStateException.class, () -> WeightFormats.register(WeightFormat.builder("Q8_0").geometry(32, 34)
                .decoder((w, r, d, o) -> {}).scalar(q8.kernel(KernelMode.SCALAR)).build()));
        assertTrue(name.getMessage().contains("Q8_0") && name.getMessage().contains("twice"), name.getMessage());
        var type = assertThrows(IllegalStateException.class, () -> WeightFormats.register(WeightFormat.builder("MY_Q8").fileType(GgmlType.Q8_0)
                .decoder((w, r, d, o) -> {}).scalar(q8.kernel(KernelMode.SCALAR)).build()));
        assertTrue(type.getMessage().contains("already belongs to Q8_0"), type.getMessage());
        assertTrue(WeightFormats.named("MY_Q8").isEmpty(), "a refused format leaves no entry");
        assertSame(q8, WeightFormats.forFileType(GgmlType.Q8_0).orElseThrow());
    }
}
