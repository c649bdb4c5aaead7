package io.modelopt.cli.report;

import static io.modelopt.cli.report.Samples.fourStages;
import static io.modelopt.cli.report.Samples.stage;
import static io.modelopt.cli.report.Samples.verdict;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class RecommendationTest {
    @Test
    void withoutBoundsTheDefaultRuleTakesTheFastestStageWithSmallKlAndOnATextHighTop1() {
        Recommendation r = Recommendation.choose(fourStages(true), Bounds.NONE);
        assertEquals(Optional.of(Stage.INT4), r.chosen());
        assertTrue(r.rule().contains("mean KL <= 0.0500 nats and top-1 agreement >= 90 %"), r.rule());
        assertTrue(verdict(r, Stage.BASELINE).orElseThrow().reason().contains("slower"), r.lines().toString());
        assertTrue(verdict(r, Stage.INT4_KV8_ENGINE).orElseThrow().reason().startsWith("not available: needs the engine"));
        assertTrue(r.lines().get(1).startsWith("Recommended: stage 3 (int4: configuration of int4)"), r.lines().toString());
    }

    @Test
    void theDefaultRuleRejectsAFastStageThatDisagreesWithTheBaseline() {
        List<StageResult> s = List.of(stage(Stage.BASELINE, 40, 300, 0, 1, 20, 0), stage(Stage.INT4, 110, 100, 0.2, 0.80, 22, 10));
        Recommendation r = Recommendation.choose(s, Bounds.NONE);
        assertEquals(Optional.of(Stage.BASELINE), r.chosen());
        String why = verdict(r, Stage.INT4).orElseThrow().reason();
        assertTrue(why.contains("mean KL 0.2000 > 0.0500 nats") && why.contains("top-1 agreement 80.0 % < 90 %"), why);
    }

    @Test
    void onRandomTokensTheDefaultRuleLooksAtKlOnly() {
        // a random-weight model: small KL, yet the near-flat distributions' first tokens differ
        List<StageResult> s = List.of(stage(Stage.BASELINE, 12, 270, 0, 1, Double.NaN, Double.NaN),
                stage(Stage.INT4, 65, 150, 0.026, 0.30, Double.NaN, Double.NaN), stage(Stage.INT8, 48, 190, 0.06, 0.92, Double.NaN, Double.NaN));
        Recommendation r = Recommendation.choose(s, Bounds.NONE);
        assertEquals(Optional.of(Stage.INT4), r.chosen());
        assertTrue(r.rule().contains("top-1 agreement is not used on random tokens"), r.rule());
        assertEquals("mean KL 0.0600 > 0.0500 nats", verdict(r, Stage.INT8).orElseThrow().reason());
    }

    @Test
    void boundsMetPicksTheFastestThatMeetsThemAndSaysWhyTheOthersLost() {
        // KL bound 0.01 rules out stage 3 (0.04); memory 200 MiB rules out stage 1 (300 MiB): stage 2 remains
        Bounds b = new Bounds(200 * Samples.MIB, Double.NaN, 0.01);
        Recommendation r = Recommendation.choose(fourStages(false), b);
        assertEquals(Optional.of(Stage.INT8), r.chosen());
        assertEquals("memory 300.0 MiB > budget 200.0 MiB", verdict(r, Stage.BASELINE).orElseThrow().reason());
        assertEquals("mean KL 0.0400 > 0.0100 nats", verdict(r, Stage.INT4).orElseThrow().reason());
        assertTrue(verdict(r, Stage.INT8).orElseThrow().meetsBounds());
        assertFalse(r.rule().contains("default quality rule"), "a KL bound replaces the default quality rule: " + r.rule());
    }

    @Test
    void oneStageRejectedForMemoryOnlyTheOtherChosen() {
        // a generous quality bound; the budget excludes only the 300 MiB baseline
        Bounds b = new Bounds(250 * Samples.MIB, 10, Double.NaN);
        Recommendation r = Recommendation.choose(fourStages(true), b);
        assertEquals(Optional.of(Stage.INT4), r.chosen());
        Recommendation.Verdict base = verdict(r, Stage.BASELINE).orElseThrow();
        assertFalse(base.meetsBounds());
        assertTrue(base.reason().startsWith("memory 300.0 MiB > budget 250.0 MiB"), base.reason());
        assertTrue(verdict(r, Stage.INT8).orElseThrow().reason().contains("slower"));
    }

    @Test
    void perplexityBoundRejectsTheStageThatLosesTooMuch() {
        Recommendation r = Recommendation.choose(fourStages(true), new Bounds(-1, 1.0, Double.NaN));
        assertEquals(Optional.of(Stage.INT8), r.chosen());
        assertEquals("perplexity +5.00 % > +1 %", verdict(r, Stage.INT4).orElseThrow().reason());
    }

    @Test
    void noStageMeetingTheBoundsIsSaidWithEveryReason() {
        Recommendation r = Recommendation.choose(fourStages(false), new Bounds(50 * Samples.MIB, Double.NaN, Double.NaN));
        assertEquals(Optional.empty(), r.chosen());
        assertTrue(r.lines().get(1).startsWith("No stage meets the bounds"), r.lines().toString());
        for (Recommendation.Verdict v : r.verdicts()) assertFalse(v.meetsBounds(), v.toString());
        assertTrue(verdict(r, Stage.INT4).orElseThrow().reason().contains("memory 100.0 MiB > budget 50.0 MiB"));
    }

    @Test
    void boundsAreChecked() {
        assertThrowsIae(() -> new Bounds(0, Double.NaN, Double.NaN));
        assertThrowsIae(() -> new Bounds(-1, -1, Double.NaN));
        assertThrowsIae(() -> new Bounds(-1, Double.NaN, -0.5));
    }

    private static void assertThrowsIae(Runnable r) {
        org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class, r::run);
    }
}
