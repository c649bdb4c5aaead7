package io.modelopt.core.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class BatchTest {
    @Test
    void promptBatchFlagsTheLastTokenOnly() {
        Batch b = Batch.ofSequence(3, 10, new int[] {5, 6, 7}, false);
        assertEquals(3, b.size());
        assertEquals(1, b.logitsCount());
        assertEquals(2, b.logitsTokenIndex(0));
        assertEquals(12, b.position(2));
        assertEquals(1, b.sequenceCount());
        assertEquals(3, b.sequence(0));
        assertEquals(10, b.firstPosition(0));
        assertEquals(12, b.lastPosition(0));
        assertFalse(b.wantsLogits(0));
        assertEquals(3, Batch.ofSequence(0, 0, new int[] {1, 2, 3}, true).logitsCount());
    }

    @Test
    void interleavedSequencesKeepOrder() {
        Batch b = Batch.builder().add(1, 0, 4, false).add(2, 7, 1, true).add(3, 1, 4, true).add(4, 8, 1, false).build();
        assertEquals(2, b.sequenceCount());
        assertEquals(4, b.sequence(0));
        assertEquals(1, b.sequence(1));
        assertEquals(0, b.firstPosition(0));
        assertEquals(1, b.lastPosition(0));
        assertEquals(7, b.firstPosition(1));
        assertEquals(8, b.lastPosition(1));
        assertEquals(2, b.logitsCount());
        assertEquals(1, b.logitsTokenIndex(0));
        assertEquals(2, b.logitsTokenIndex(1));
        assertEquals(4, b.maxSequenceId());
    }

    @Test
    void decodeStepOfManySequences() {
        Batch b = Batch.decodeStep(new int[] {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17},
                new int[18], new int[] {5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 9});
        assertEquals(18, b.sequenceCount());
        assertEquals(18, b.logitsCount());
        assertEquals(9, b.firstPosition(17));
    }

    @Test
    void invalidBatchesNameTheToken() {
        assertMessage(() -> Batch.builder().build(), "at least one token");
        assertMessage(() -> Batch.builder().add(-1, 0, 0, true).build(), "token id -1");
        assertMessage(() -> Batch.builder().add(1, -2, 0, true).build(), "position -2");
        assertMessage(() -> Batch.builder().add(1, 0, -3, true).build(), "sequence id -3");
        assertMessage(() -> Batch.builder().add(1, 0, 0, true).add(1, 2, 0, true).build(), "position 2 does not follow position 0");
        assertMessage(() -> Batch.builder().add(1, 5, 0, true).add(1, 5, 0, true).build(), "batch token 1 (sequence 0)");
        assertMessage(() -> Batch.decodeStep(new int[2], new int[1], new int[2]), "differ in length");
    }

    @Test
    void builderIsReusableAndBatchImmutable() {
        Batch.Builder bb = Batch.builder(1);
        for (int i = 0; i < 40; i++) bb.add(i, i, 0, false);
        Batch first = bb.build();
        bb.clear().add(99, 0, 1, true);
        Batch second = bb.build();
        assertEquals(40, first.size());
        assertEquals(39, first.token(39));
        assertEquals(1, second.size());
        assertEquals(99, second.token(0));
    }

    private static void assertMessage(Runnable r, String part) {
        var e = assertThrows(IllegalArgumentException.class, r::run);
        assertTrue(e.getMessage().contains(part), "message '" + e.getMessage() + "' lacks '" + part + "'");
    }
}
