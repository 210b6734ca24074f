"""``tf.app.run``: ``absl.app.run`` with TF1's flag parsing (flags nobody defined are not an error)."""

from __future__ import annotations

import sys

from absl import app as _absl_app

from ferroflow.platform import flags

__all__ = ["run"]


def _parse_known_flags(argv):
    # TF1 leaves flags the program does not define in the arguments given to main, where absl's
    # own parser would stop on them with UnrecognizedFlagError.
    return flags.FLAGS(argv, known_only=True)


def run(main=None, argv=None):
    """Parses flags from ``argv`` (default ``sys.argv``) into ``tf.app.flags.FLAGS``, calls
    ``main(remaining_argv)`` (default: the ``main`` function of the ``__main__`` module), and
    exits with its return value (``None`` -> status 0).

    The program runs under ``absl.app.run`` (absl's logging handler, ``--helpfull``,
    ``--only_check_args``, ``--pdb_post_mortem`` and so on). Flags the program does not define are
    left in the argument list passed to ``main``, after ``argv[0]`` and among the positional
    arguments. Invalid values of defined flags, and failed validators such as required flags,
    raise ``flags.IllegalFlagValueError``; ``--help``/``--helpfull`` print the flags and exit.
    """
    main = main or sys.modules["__main__"].main
    _absl_app.run(main=main, argv=argv, flags_parser=_parse_known_flags)
