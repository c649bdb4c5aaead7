package io.modelopt.scheduler;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;

import io.modelopt.core.ModelOptimizer;
import io.modelopt.core.OptimizedModel;
import io.modelopt.core.generate.GenerationOptions;
import io.modelopt.core.generate.GenerationResult;
import io.modelopt.core.generate.TokenListener;
import io.modelopt.core.kv.KvDtype;
import io.modelopt.core.testing.Fixtures;
import org.junit.jupiter.api.Test;

/** The fluent API's {@code engine()} finds this module's engine through the SPI, and generates what {@code generate} does. */
class OptimizedModelEngineTest {
    @Test
    void engineComesThroughTheSpiAndMatchesGenerate() {
        try (OptimizedModel model = ModelOptimizer.load(Fixtures.storiesGguf("f32")).withKvCache(KvDtype.F32).withThreads(2).build()) {
            GenerationOptions o = GenerationOptions.builder().maxTokens(24).build();
            GenerationResult direct = model.generate("Once upon a time", o, null);
            Engine engine = assertInstanceOf(Engine.class, model.engine());
            assertSame(engine, model.engine(), "one engine per model");
            StringBuilder streamed = new StringBuilder();
            GenerationResult viaEngine = engine.generate("Once upon a time", o, TokenListener.text(streamed::append));
            assertArrayEquals(direct.tokenIds(), viaEngine.tokenIds());
            assertEquals(direct.text(), viaEngine.text());
            assertEquals(viaEngine.text(), streamed.toString(), "the listener saw every piece before generate returned");
            assertEquals(direct.finishReason(), viaEngine.finishReason());
        }
    }
}
