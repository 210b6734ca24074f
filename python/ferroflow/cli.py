"""The ``ferroflow`` command.

``ferroflow server`` runs one task of a ps/worker cluster (``TF_CONFIG`` or flags; see its ``--help``).

``ferroflow demo`` trains a digit classifier with ``tf.train.MonitoredTrainingSession``
(see ``ferroflow.demo.digits``): progress on stderr, checkpoints and TensorBoard
events in a log directory, and a resumed run when started again.
"""

from __future__ import annotations

import argparse
import sys


class _Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line on stderr (exit status 2)."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _demo(args):
    from ferroflow.demo import digits

    try:
        digits.run(steps=args.steps, batch_size=args.batch_size, optimizer=args.optimizer,
                   learning_rate=args.learning_rate, logdir=args.logdir, seed=args.seed, hidden=args.hidden)
    except digits.DemoError as e:
        print(f"ferroflow demo: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("\nferroflow demo: interrupted", file=sys.stderr)
        return 130
    return 0


def _add_demo_parser(sub):
    from ferroflow.demo import digits

    demo = sub.add_parser(
        "demo",
        help="train a digit classifier with MonitoredTrainingSession (checkpoints, TensorBoard events, resume)",
        description="Trains a small classifier on the 8x8 UCI handwritten digits shipped with ferroflow, "
        "saving checkpoints and TensorBoard events in --logdir; run it again to resume from the last checkpoint.",
    )
    demo.add_argument("--steps", type=int, default=2000, help="training steps to run (default: %(default)s)")
    demo.add_argument("--batch-size", type=int, default=64, help="images per step (default: %(default)s)")
    demo.add_argument("--optimizer", default="adam", metavar="NAME",
                      help=f"a tf.train optimizer: {', '.join(digits.optimizer_names())} (default: %(default)s)")
    demo.add_argument("--learning-rate", type=float, default=None,
                      help="learning rate (default: one tuned for each optimizer)")
    demo.add_argument("--logdir", default=None,
                      help=f"checkpoint and event directory (default: {digits.default_logdir()})")
    demo.add_argument("--seed", type=int, default=0, help="graph-level random seed and shuffling seed")
    demo.add_argument("--hidden", type=int, default=64, help="units in the hidden layer (default: %(default)s)")
    return demo


def _inspect_checkpoint(args):
    from ferroflow.tools import inspect_checkpoint

    try:
        inspect_checkpoint.inspect(args.path, tensor_name=args.tensor, all_tensors=args.all)
    except inspect_checkpoint.InspectError as e:
        print(f"ferroflow inspect-checkpoint: error: {e}", file=sys.stderr)
        return 1
    return 0


def _add_inspect_checkpoint_parser(sub):
    p = sub.add_parser(
        "inspect-checkpoint",
        help="list a checkpoint's tensors (names, dtypes, shapes) or print their values",
        description="Lists the tensors of a TensorFlow/ferroflow checkpoint as 'name (DT_...) [dims]' lines. "
        "PATH is a checkpoint prefix (model.ckpt-100) or a directory with a 'checkpoint' state file.",
    )
    p.add_argument("path", metavar="PATH", help="checkpoint prefix or directory")
    p.add_argument("--tensor", metavar="NAME", default=None, help="print the value of this tensor")
    p.add_argument("--all", action="store_true", help="print the value of every tensor")
    return p


def _server(argv):
    """``ferroflow server``: its flags are parsed by the Rust core (shared with the ferroflow-server binary)."""
    import signal

    from ferroflow import _native

    # SIGTERM (Kubernetes stopping the pod) stops the server cleanly, like Ctrl-C.
    def _interrupt(signum, frame):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, _interrupt)
    try:
        return _native.serve(list(argv))
    except KeyboardInterrupt:
        return 0


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["server"]:
        return _server(argv[1:])
    parser = _Parser(prog="ferroflow", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    sub = parser.add_subparsers(dest="command")
    _add_demo_parser(sub)
    _add_inspect_checkpoint_parser(sub)
    sub.add_parser("server", add_help=False,
                   help="run one task (ps/worker) of a cluster from TF_CONFIG or flags (see ferroflow server --help)")
    from ferroflow.tools import saved_model_cli

    saved_model_cli.add_parser(sub)
    args = parser.parse_args(argv)
    if args.version:
        import ferroflow

        print(ferroflow.__version__)
        return 0
    if args.command in (None, "demo"):
        if args.command is None:
            args = parser.parse_args(["demo"])
        return _demo(args)
    if args.command == "inspect-checkpoint":
        return _inspect_checkpoint(args)
    if args.command == "saved-model":
        return saved_model_cli.main(args)
    parser.error(f"unknown command {args.command}")
    return 2


if __name__ == "__main__":
    sys.exit(main())
