package io.modelopt.core.tokenizer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The heap-and-linked-list merge loop against the textbook quadratic loop (find the lowest-rank
 * adjacent pair, leftmost on ties, merge it, repeat) on seeded random tables and inputs,
 * including tables where many pairs share a rank (SentencePiece scores) and negative symbol ids.
 */
class PairMergerTest {
    @Test
    void agreesWithTheQuadraticLoopOnRandomInputs() {
        Random rnd = new Random(20240611);
        for (int trial = 0; trial < 400; trial++) {
            int alphabet = 2 + rnd.nextInt(6);
            int nMerges = 1 + rnd.nextInt(40);
            boolean sharedRanks = rnd.nextBoolean();
            MergeTable table = new MergeTable(nMerges);
            List<int[]> entries = new ArrayList<>();
            int next = 100;
            List<Integer> symbols = new ArrayList<>();
            for (int a = 0; a < alphabet; a++) symbols.add(trial % 3 == 0 ? -(a + 1) : a);
            for (int m = 0; m < nMerges; m++) {
                int l = symbols.get(rnd.nextInt(symbols.size())), r = symbols.get(rnd.nextInt(symbols.size()));
                int rank = sharedRanks ? rnd.nextInt(5) : m;
                if (table.put(l, r, rank, next, true)) {
                    entries.add(new int[] {l, r, rank, next});
                    symbols.add(next++);
                }
            }
            int len = rnd.nextInt(60);
            int[] input = new int[len];
            for (int i = 0; i < len; i++) input[i] = trial % 3 == 0 ? -(rnd.nextInt(alphabet) + 1) : rnd.nextInt(alphabet);

            int[] fast = input.clone();
            int n = PairMerger.merge(fast, len, table);
            assertArrayEquals(quadratic(input, table), Arrays.copyOf(fast, n), "trial " + trial + " input " + Arrays.toString(input));
        }
    }

    @Test
    void cuttingWhereNoMergeCanCrossChangesNothing() {
        Random rnd = new Random(7);
        String alphabet = "ab▁c.";
        for (int trial = 0; trial < 300; trial++) {
            // a vocabulary of texts: the single characters, then merges of random existing pairs
            List<String> texts = new ArrayList<>();
            for (char c : alphabet.toCharArray()) texts.add(String.valueOf(c));
            MergeTable table = new MergeTable(64);
            List<String> results = new ArrayList<>();
            for (int m = 0; m < 1 + rnd.nextInt(30); m++) {
                int l = rnd.nextInt(texts.size()), r = rnd.nextInt(texts.size());
                String joined = texts.get(l) + texts.get(r);
                if (texts.contains(joined) || joined.length() > 6) continue;
                texts.add(joined);
                results.add(joined);
                table.put(l, r, rnd.nextInt(8), texts.size() - 1, true);
            }
            MergeBoundaries b = new MergeBoundaries(results, MergeBoundaries.countPairs(results));
            int len = rnd.nextInt(80);
            int[] input = new int[len];
            for (int i = 0; i < len; i++) input[i] = rnd.nextInt(alphabet.length());
            int[] cut = input.clone();
            int n = PairMerger.merge(cut, len, table, (l, r) -> b.mayJoin(
                    MergeBoundaries.lastCodePoint(texts.get(l)), MergeBoundaries.firstCodePoint(texts.get(r))));
            assertArrayEquals(quadratic(input, table), Arrays.copyOf(cut, n), "trial " + trial);
        }
    }

    @Test
    void emptyAndSingleInputsAreLeftAlone() {
        MergeTable t = new MergeTable(1);
        t.put(1, 1, 0, 2, true);
        assertEquals(0, PairMerger.merge(new int[0], 0, t));
        int[] one = {1};
        assertEquals(1, PairMerger.merge(one, 1, t));
        assertEquals(1, one[0]);
        int[] chain = {1, 1, 1, 1};
        t.put(2, 2, 1, 3, true);
        assertEquals(1, PairMerger.merge(chain, 4, t));
        assertEquals(3, chain[0]);
    }

    private static int[] quadratic(int[] input, MergeTable table) {
        List<Integer> s = new ArrayList<>();
        for (int v : input) s.add(v);
        while (true) {
            int best = -1, bestRank = Integer.MAX_VALUE, bestSlot = -1;
            for (int i = 0; i + 1 < s.size(); i++) {
                int slot = table.find(s.get(i), s.get(i + 1));
                if (slot >= 0 && table.rankAt(slot) < bestRank) { best = i; bestRank = table.rankAt(slot); bestSlot = slot; }
            }
            if (best < 0) break;
            s.set(best, table.resultAt(bestSlot));
            s.remove(best + 1);
        }
        return s.stream().mapToInt(Integer::intValue).toArray();
    }
}
