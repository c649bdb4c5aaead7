package io.modelopt.scheduler;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;

import io.modelopt.core.ModelOptimizer;
import io.modelopt.core.OptimizedModel;
import io.modelopt.core.generate.FinishReason;
import io.modelopt.core.generate.GenerationOptions;
import io.modelopt.core.generate.GenerationResult;
import io.modelopt.core.generate.Generator;
import io.modelopt.core.generate.TokenListener;
import io.modelopt.core.kv.KvDtype;
import io.modelopt.core.testing.Fixtures;
import org.junit.jupiter.api.Test;

/**
 * The fluent API's {@code engine()} finds this module's engine through the SPI; {@code OptimizedModel.generate}
 * runs on it and gives what the single-sequence {@link Generator} gives, a full context included.
 */
class OptimizedModelEngineTest {
    @Test
    void generateRunsOnTheEngineAndMatchesTheSingleSequenceGenerator() {
        try (OptimizedModel model = ModelOptimizer.load(Fixtures.storiesGguf("f32")).withKvCache(KvDtype.F32).withThreads(2).build()) {
            GenerationOptions o = GenerationOptions.builder().maxTokens(24).build();
            GenerationResult reference;
            try (Generator g = new Generator(model.runner(), model.tokenizer())) {
                reference = g.generate("Once upon a time", o, TokenListener.NONE);
            }
            StringBuilder streamed = new StringBuilder();
            GenerationResult viaModel = model.generate("Once upon a time", o, TokenListener.text(streamed::append));
            Engine engine = assertInstanceOf(Engine.class, model.engine());
            assertSame(engine, model.engine(), "one engine per model");
            assertEquals(1, engine.metrics().submitted(), "OptimizedModel.generate went through the engine");
            assertArrayEquals(reference.tokenIds(), viaModel.tokenIds());
            assertArrayEquals(reference.promptTokenIds(), viaModel.promptTokenIds());
            assertEquals(reference.text(), viaModel.text());
            assertEquals(viaModel.text(), streamed.toString(), "the listener saw every piece before generate returned");
            assertEquals(reference.finishReason(), viaModel.finishReason());
        }
    }

    @Test
    void aBudgetPastTheContextEndsAsContextFullAsWithTheGenerator() {
        try (OptimizedModel model = ModelOptimizer.load(Fixtures.storiesGguf("f32")).withKvCache(KvDtype.F32).withThreads(2).withContextLength(32).build()) {
            GenerationOptions o = GenerationOptions.builder().maxTokens(100).build();
            GenerationResult reference;
            try (Generator g = new Generator(model.runner(), model.tokenizer())) {
                reference = g.generate("Once upon a time", o, TokenListener.NONE);
            }
            FinishReason[] streamedReason = new FinishReason[1];
            GenerationResult viaModel = model.generate("Once upon a time", o, new TokenListener() {
                @Override public void onToken(int tokenId, String text) { }

                @Override public void onFinish(String text, FinishReason reason) { streamedReason[0] = reason; }
            });
            assertEquals(FinishReason.CONTEXT_FULL, reference.finishReason());
            assertEquals(FinishReason.CONTEXT_FULL, viaModel.finishReason());
            assertEquals(FinishReason.CONTEXT_FULL, streamedReason[0]);
            assertEquals(32 - reference.promptTokenIds().length, viaModel.tokenIds().length);
            assertArrayEquals(reference.tokenIds(), viaModel.tokenIds());
        }
    }
}
