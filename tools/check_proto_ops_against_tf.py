"""Differential check of tf.io.decode_proto: ferroflow against TensorFlow 2.21 on mutated messages.

Mutates serialized ferroflow.test.AllTypes messages (tools/make_proto_ops_fixtures.py's seeds: every
scalar field set, repeated and packed fields, extensions) by overwriting, deleting and inserting bytes and
splicing in pieces of other messages, decodes each with both libraries (every field whose type ferroflow
has) and compares the outputs, or the error class and message. Prints each mismatch and a summary.

    PYTHONPATH=python TF_CPP_MIN_LOG_LEVEL=3 /work/tfvenv/bin/python tools/check_proto_ops_against_tf.py \
        [--seed 1] [--count 500] [--max-mutations 2]
"""

import argparse
import os
import random
import sys

import numpy as np

import ferroflow as ff

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_proto_ops_fixtures as M  # noqa: E402

FIELDS = [(n, t) for n, t in M.SCALARS + M.REPEATED + M.PACKED if t not in ("uint32", "uint64")]
NAMES = [n for n, _ in FIELDS]
TYPES = [t for _, t in FIELDS]
tf = None
SEEDS = [M.full_message().SerializeToString(), M.repeated_message(3).SerializeToString(), M._ext_message()]


def mutate(rng, data, max_mutations):
    b = bytearray(data)
    for _ in range(rng.randint(1, max_mutations)):
        op = rng.randint(0, 3)
        if op == 0 and b:
            b[rng.randrange(len(b))] = rng.randrange(256)
        elif op == 1 and b:
            i = rng.randrange(len(b))
            del b[i:i + 1 + rng.randrange(3)]
        elif op == 2:
            i = rng.randrange(len(b) + 1)
            b[i:i] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 3)))
        else:
            s = rng.choice(SEEDS)
            i, j = sorted((rng.randrange(len(s) + 1), rng.randrange(len(s) + 1)))
            b += s[i:j]
    return bytes(b)


def first_line(message):
    lines = [ln for ln in message.split("\n")
             if ln and not ln.startswith(("Graph execution", "Detected at", "  ", "Node:", "\t"))]
    return lines[0] if lines else ""


def run(lib, message):
    with lib.Graph().as_default():
        sizes, values = lib.io.decode_proto([message], M.ALL, NAMES, [lib.as_dtype(t) for t in TYPES],
                                            descriptor_source=M.DESC)
        try:
            with lib.compat.v1.Session() as sess:
                return sess.run([sizes, values])
        except lib.errors.OpError as e:
            return f"{type(e).__name__}: {first_line(e.message)}"


def same(a, b):
    if isinstance(a, str) or isinstance(b, str):
        return a == b
    if not np.array_equal(a[0], b[0]):
        return False
    for x, y in zip(a[1], b[1]):
        if x.shape != y.shape:
            return False
        if x.dtype == object:
            if [bytes(q) for q in x.ravel()] != [bytes(q) for q in y.ravel()]:
                return False
        elif not np.array_equal(x, y, equal_nan=True):
            return False
    return True


def main():
    global tf
    import tensorflow as tf  # after ferroflow, as the README says

    p = argparse.ArgumentParser()
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--count", type=int, default=500)
    p.add_argument("--max-mutations", type=int, default=2)
    args = p.parse_args()
    rng = random.Random(args.seed)
    errors = mismatches = 0
    for i in range(args.count):
        m = mutate(rng, rng.choice(SEEDS), args.max_mutations)
        want, got = run(tf.compat.v1, m), run(ff, m)
        errors += isinstance(want, str)
        if not same(want, got):
            mismatches += 1
            print(f"mismatch {i}: {m.hex()}\n  tensorflow: {want if isinstance(want, str) else 'values'}\n"
                  f"  ferroflow:  {got if isinstance(got, str) else 'values'}")
    print(f"{args.count} messages ({errors} errors in TensorFlow), {mismatches} mismatches")


if __name__ == "__main__":
    main()
