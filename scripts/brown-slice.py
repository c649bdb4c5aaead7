#!/usr/bin/env python3
"""Writes the documents of a Brown split whose ids start with the given genre prefixes.

The corpus files of ../shared/fixtures/corpora/brown hold one document after another, separated by
one blank line, in the order their .docs file lists the ids (see that directory's README). This cuts
such a file into its documents, keeps those whose id starts with one of the prefixes, and writes
them in the same layout (documents separated by one blank line, a final newline), so that

    scripts/brown-slice.py test.txt test.docs ck cl cm cn cp

reproduces fiction-test.txt byte for byte. Used for the calibration-domain table of
docs/QUANTIZATION.md (fiction = genres K, L, M, N, P: ck..cp; press = A, B, C: ca..cc). Output goes
to stdout; nothing of the corpus is stored in the repository.

usage: brown-slice.py CORPUS.txt CORPUS.docs PREFIX [PREFIX...] > OUT.txt
"""
import sys


def main(argv):
    if len(argv) < 4:
        sys.exit(__doc__.strip().splitlines()[-1])
    text = open(argv[1], encoding="utf-8").read()
    ids = open(argv[2], encoding="utf-8").read().split()
    docs = text.rstrip("\n").split("\n\n")
    if len(docs) != len(ids):
        sys.exit(f"{argv[1]} has {len(docs)} documents but {argv[2]} lists {len(ids)} ids")
    prefixes = tuple(argv[3:])
    kept = [d for i, d in zip(ids, docs) if i.startswith(prefixes)]
    if not kept:
        sys.exit(f"no document id of {argv[2]} starts with {' '.join(prefixes)}")
    sys.stdout.write("\n\n".join(kept) + "\n")
    print(f"{len(kept)} of {len(ids)} documents: {' '.join(i for i in ids if i.startswith(prefixes))}", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv)
