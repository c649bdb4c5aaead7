package io.modelopt.core.tokenizer;

import java.util.Arrays;

/** A growable int array, so that encoding a long text does not box every id. */
final class IntList {
    private int[] a;
    private int size;

    IntList(int capacity) { a = new int[Math.max(8, capacity)]; }

    void add(int v) {
        if (size == a.length) a = Arrays.copyOf(a, a.length * 2);
        a[size++] = v;
    }

    void addAll(int[] v, int n) {
        if (size + n > a.length) a = Arrays.copyOf(a, Math.max(a.length * 2, size + n));
        System.arraycopy(v, 0, a, size, n);
        size += n;
    }

    int size() { return size; }

    int[] toArray() { return Arrays.copyOf(a, size); }
}
