package io.modelopt.scheduler;

import io.modelopt.kvcache.BlockManager;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Deque;
import java.util.List;

/**
 * The scheduling policy, vLLM v1's shape: each step, running sequences first (in admission
 * order: their decode token, or the next chunk of their prompt), then waiting ones are admitted in
 * FCFS order while the token budget ({@code maxBatchedTokens}), the sequence budget
 * ({@code maxNumSeqs}) and the KV blocks allow. The head of the queue is never overtaken, so no
 * request starves. When a running sequence needs a block and none is free, the most recently
 * admitted sequence is preempted: its blocks are freed and it goes back to the front of the queue,
 * to be recomputed (prompt and generated tokens, served by the prefix cache where its blocks
 * survived) when there is room. Not thread-safe: the step loop's.
 */
final class Scheduler {
    /** One step's work: {@code counts[i]} tokens of {@code samples.get(i)}, from its {@code computed}. */
    record Step(List<Sample> samples, int[] counts, int prefillTokens, List<Sample> preempted) {
        int tokens() { return Arrays.stream(counts).sum(); }
    }

    private final BlockManager blocks;
    private final int maxNumSeqs, maxBatchedTokens, maxRunnerTokens;
    private final boolean chunkedPrefill;
    final List<Sample> running = new ArrayList<>();
    final Deque<Sample> waiting = new ArrayDeque<>();
    private final ArrayDeque<Integer> freeSeqIds = new ArrayDeque<>();
    private long admissions;

    /** @param maxRunnerTokens the runner's batch limit: a whole prompt without chunked prefill is cut at it */
    Scheduler(BlockManager blocks, EngineConfig config, int maxRunnerTokens) {
        this.blocks = blocks;
        this.maxRunnerTokens = maxRunnerTokens;
        this.maxNumSeqs = config.maxNumSeqs();
        this.maxBatchedTokens = config.maxBatchedTokens();
        this.chunkedPrefill = config.chunkedPrefill();
        for (int i = 0; i < maxNumSeqs; i++) freeSeqIds.add(i);
    }

    /** Seats a waiting sample needs: sample 0 of a fresh request also holds the seats of the samples it will fork. */
    private static int seats(Sample s) { return s.forksPending ? s.request.samples.length : 1; }

    private int seatsTaken() {
        int n = 0;
        for (Sample s : running) n += seats(s);
        return n;
    }

    Step schedule() {
        // Without chunked prefill a prompt over the budget runs alone in its step. It used to wait
        // for a step with nothing else in it, which never comes while others decode: the long
        // prompt starved until the running requests ended (bench --arrivals: 512-token prompts
        // admitted only after four 256-token decodes finished). It now goes first, alone, pausing
        // the decodes for one step, as vLLM's scheduler without chunked prefill puts prefills first.
        Sample head = waiting.peekFirst();
        if (!chunkedPrefill && head != null && head.length > maxBatchedTokens && !running.isEmpty()
                && seatsTaken() + seats(head) <= maxNumSeqs) {
            Step alone = schedule(true);
            if (!alone.samples().isEmpty()) return alone;
        }
        return schedule(false);
    }

    /** @param waitingOnly schedule only the waiting queue's head (a long prompt alone, see {@link #schedule()}) */
    private Step schedule(boolean waitingOnly) {
        List<Sample> out = new ArrayList<>();
        List<Integer> counts = new ArrayList<>();
        List<Sample> preempted = new ArrayList<>();
        int budget = maxBatchedTokens, prefill = 0;
        // 1. running, oldest admitted first
        for (int i = 0; i < running.size() && budget > 0 && !waitingOnly; i++) {
            Sample s = running.get(i);
            int k = Math.min(s.pending(), budget);
            if (k == 0) continue;
            if (!chunkedPrefill && k < s.pending()) {
                if (!out.isEmpty()) continue; // alone in a later step
                k = Math.min(s.pending(), maxRunnerTokens);
            }
            int need = s.computed + k - blocks.length(s.seqId);
            boolean self = false;
            while (need > 0 && !blocks.canAppend(s.seqId, need)) {
                Sample victim = running.getLast();
                preempt(victim);
                preempted.add(victim);
                if (victim == s) {
                    self = true;
                    break;
                }
            }
            if (self) break;
            if (need > 0 && !blocks.appendSlots(s.seqId, Arrays.copyOfRange(s.ids, blocks.length(s.seqId), s.computed + k))) {
                throw new IllegalStateException("appendSlots failed after canAppend said yes");
            }
            out.add(s);
            counts.add(k);
            budget -= k;
            if (k > 1 || s.computed + k < s.length || s.computed == 0) prefill += k;
        }
        // 2. waiting, FCFS, unless this step had to preempt (no room then)
        while (preempted.isEmpty() && budget > 0 && !waiting.isEmpty()) {
            Sample s = waiting.peekFirst();
            if (seatsTaken() + seats(s) > maxNumSeqs) break;
            if (!chunkedPrefill && s.length > budget && !out.isEmpty()) break;
            int seq = freeSeqIds.peek();
            int cached = blocks.allocate(seq, s.knownTokens());
            if (cached == BlockManager.OUT_OF_BLOCKS) break;
            freeSeqIds.poll();
            waiting.pollFirst();
            s.seqId = seq;
            s.computed = cached;
            s.preempted = false;
            s.admitOrder = admissions++;
            running.add(s);
            int k = chunkedPrefill ? Math.min(s.pending(), budget) : Math.min(s.pending(), out.isEmpty() ? maxRunnerTokens : budget);
            out.add(s);
            counts.add(k);
            budget -= k;
            prefill += k;
        }
        return new Step(out, counts.stream().mapToInt(Integer::intValue).toArray(), prefill, preempted);
    }

    /** Frees {@code s}'s blocks and puts it back at the front of the queue, to be recomputed. */
    void preempt(Sample s) {
        release(s);
        s.computed = 0;
        s.preempted = true;
        waiting.addFirst(s);
    }

    /** Takes {@code s} out of the running set (finished, cancelled, expired, failed or preempted), freeing its blocks. */
    void release(Sample s) {
        if (s.seqId >= 0) {
            blocks.free(s.seqId);
            freeSeqIds.add(s.seqId);
            s.seqId = -1;
        }
        running.remove(s);
    }

    /** Starts {@code child} as a copy-on-write fork of running {@code parent}, right after it in the running order. */
    void fork(Sample parent, Sample child) {
        int seq = freeSeqIds.poll();
        blocks.fork(parent.seqId, seq);
        child.seqId = seq;
        child.computed = parent.computed;
        child.admitOrder = parent.admitOrder;
        running.add(running.indexOf(parent) + 1 + (child.index - 1), child);
    }

    /** Removes a waiting sample (cancelled or expired before it ran again). */
    void dropWaiting(Sample s) { waiting.remove(s); }

    int preemptedWaiting() {
        int n = 0;
        for (Sample s : waiting) if (s.preempted) n++;
        return n;
    }
}
