"""The ``ferroflow`` command.

``ferroflow demo`` builds a small graph and runs it: power iteration for the
dominant eigenvector of a matrix, with the vector held in a variable and
updated in place by each ``Session.run``.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np


def _demo(args):
    import ferroflow as tf

    rng = np.random.default_rng(args.seed)
    a = rng.standard_normal((args.size, args.size)).astype(np.float32)
    a = (a + a.T) / 2  # symmetric: real eigenvalues
    with tf.Graph().as_default():
        matrix = tf.constant(a, name="matrix")
        with tf.variable_scope("power_iteration"):
            v = tf.get_variable("v", [args.size, 1], initializer=tf.ones_initializer())
            av = tf.matmul(matrix, v)
            rayleigh = tf.reduce_sum(v * av) / tf.reduce_sum(v * v)
            step = v.assign(tf.nn.l2_normalize(av, axis=0))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            start = time.perf_counter()
            for i in range(args.steps):
                sess.run(step)
                if (i + 1) % max(1, args.steps // 5) == 0:
                    print(f"step {i + 1:4d}  rayleigh quotient = {sess.run(rayleigh):+.6f}")
            elapsed = time.perf_counter() - start
            estimate = float(sess.run(rayleigh))
    eig = np.linalg.eigvalsh(a.astype(np.float64))
    dominant = eig[np.argmax(np.abs(eig))]
    print(f"ferroflow estimate {estimate:+.6f}, numpy eigvalsh {dominant:+.6f}")
    print(f"{args.steps} session steps in {elapsed * 1e3:.1f} ms ({elapsed / args.steps * 1e6:.1f} us/step)")
    ok = abs(estimate - dominant) <= 1e-3 * max(1.0, abs(dominant))
    if not ok:
        print("warning: power iteration has not converged (try more --steps)")
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(prog="ferroflow", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    sub = parser.add_subparsers(dest="command")
    demo = sub.add_parser("demo", help="build a small graph and run it in a session")
    demo.add_argument("--size", type=int, default=64)
    demo.add_argument("--steps", type=int, default=300)
    demo.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.version:
        import ferroflow

        print(ferroflow.__version__)
        return 0
    if args.command in (None, "demo"):
        if args.command is None:
            args = parser.parse_args(["demo"])
        return _demo(args)
    parser.error(f"unknown command {args.command}")
    return 2


if __name__ == "__main__":
    sys.exit(main())
