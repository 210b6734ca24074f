"""``tf.app.run``: parse the command-line flags, then run ``main`` and exit with what it returns."""

from __future__ import annotations

import sys

from ferroflow.platform import flags

__all__ = ["run"]


def run(main=None, argv=None):
    """Parses flags from ``argv`` (default ``sys.argv``) into ``tf.app.flags.FLAGS``, calls
    ``main(remaining_argv)`` (default: the ``main`` function of the ``__main__`` module), and
    exits with its return value (``None`` -> status 0).

    As in TF1, flags the program does not define are not an error here: they are left in the
    argument list passed to ``main`` along with the positional arguments (``argv[0]`` first).
    Invalid values of defined flags, and failed validators such as required flags, raise
    ``flags.IllegalFlagValueError``; ``--help``/``--helpfull`` print the flags and exit.
    """
    main = main or sys.modules["__main__"].main
    remaining = flags.FLAGS(sys.argv if argv is None else argv, known_only=True)
    sys.exit(main(remaining))
