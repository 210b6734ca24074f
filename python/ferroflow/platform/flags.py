"""``tf.app.flags`` / ``tf.flags``: ``absl.flags`` with the few things TF1 adds on top.

As in TensorFlow, every name of ``absl.flags`` is here unchanged (``DEFINE_*``, ``FlagValues``, the
error classes, the validators) and the flags live in absl's one global registry, so flags defined
through ``tf.flags``, through ``absl.flags`` and by absl itself (``absl.logging``'s ``--verbosity``,
``--log_dir``, ...) are parsed together, by ``tf.app.run`` as by ``absl.app.run``. TF1's additions:

* ``FLAGS`` is a view of ``absl.flags.FLAGS`` that parses ``sys.argv`` the first time a defined flag
  is read before any parse (absl itself raises ``UnparsedFlagAccessError``; a ``FlagValues()`` you
  create still does).
* The ``DEFINE_*`` functions also take TF's old keyword names ``flag_name``, ``default_value`` and
  ``docstring`` (with a deprecation warning in the log).
* ``--help``/``--helpshort``/``-?``/``--helpfull`` exist from import on (absl adds them when
  ``app.run`` starts), so a program that only reads ``FLAGS`` answers them too.
"""

from __future__ import annotations

import functools
import logging
import sys

from absl import app as _absl_app
from absl import flags as _absl_flags
from absl.flags import *  # noqa: F403 - this module is absl.flags' public face

__all__ = list(_absl_flags.__all__)

_logger = logging.getLogger(__name__)

# The DEFINE_* wrappers below call absl's from this module; without this, absl would record this
# module (not the program that called DEFINE_*) as the one that defined every flag, and ``--help``
# would list no flags of the main module.
_absl_flags.disclaim_key_flags()

# --------------------------------------------------------------------------------------------------
# DEFINE_* with TF's old keyword names
# --------------------------------------------------------------------------------------------------

_OLD_KEYWORDS = {"flag_name": "name", "default_value": "default", "docstring": "help"}


def _with_old_keywords(define):
    """``define`` (an absl ``DEFINE_*``), also accepting ``flag_name``/``default_value``/``docstring``."""

    @functools.wraps(define)
    def define_flag(*args, **kwargs):
        renamed = [key for key in _OLD_KEYWORDS if key in kwargs]
        for key in renamed:
            kwargs[_OLD_KEYWORDS[key]] = kwargs.pop(key)
        if renamed:
            _logger.warning(
                "DEFINE_* keyword arguments %s are TF's old names; use name, default and help instead.",
                ", ".join(renamed),
            )
        return define(*args, **kwargs)

    return define_flag


DEFINE_string = _with_old_keywords(_absl_flags.DEFINE_string)  # noqa: N816 - absl's names
DEFINE_boolean = _with_old_keywords(_absl_flags.DEFINE_boolean)  # noqa: N816
DEFINE_bool = DEFINE_boolean  # noqa: N816
DEFINE_float = _with_old_keywords(_absl_flags.DEFINE_float)  # noqa: N816
DEFINE_integer = _with_old_keywords(_absl_flags.DEFINE_integer)  # noqa: N816
DEFINE_enum = _with_old_keywords(_absl_flags.DEFINE_enum)  # noqa: N816
DEFINE_list = _with_old_keywords(_absl_flags.DEFINE_list)  # noqa: N816
DEFINE_multi_string = _with_old_keywords(_absl_flags.DEFINE_multi_string)  # noqa: N816
DEFINE_multi_integer = _with_old_keywords(_absl_flags.DEFINE_multi_integer)  # noqa: N816
DEFINE_multi_float = _with_old_keywords(_absl_flags.DEFINE_multi_float)  # noqa: N816
DEFINE_multi_enum = _with_old_keywords(_absl_flags.DEFINE_multi_enum)  # noqa: N816

# --------------------------------------------------------------------------------------------------
# FLAGS: absl's registry, parsed from sys.argv on first read
# --------------------------------------------------------------------------------------------------


class _ParseOnFirstRead:
    """Stands for a ``FlagValues`` (``isinstance`` and ``type(...)`` aside, it behaves as one) and
    parses ``sys.argv`` into it when a defined flag is read while it is still unparsed."""

    def __init__(self, flag_values):
        object.__setattr__(self, "_target", flag_values)

    def __getattribute__(self, name):
        target = object.__getattribute__(self, "_target")
        if name in target and not target.is_parsed():
            target(sys.argv)
        return getattr(target, name)

    def __setattr__(self, name, value):
        setattr(object.__getattribute__(self, "_target"), name, value)

    def __delattr__(self, name):
        delattr(object.__getattribute__(self, "_target"), name)

    def __dir__(self):
        return dir(object.__getattribute__(self, "_target"))

    def __call__(self, *args, **kwargs):
        return object.__getattribute__(self, "_target")(*args, **kwargs)

    def __getitem__(self, name):
        return object.__getattribute__(self, "_target")[name]

    def __setitem__(self, name, flag):
        object.__getattribute__(self, "_target")[name] = flag

    def __contains__(self, name):
        return name in object.__getattribute__(self, "_target")

    def __iter__(self):
        return iter(object.__getattribute__(self, "_target"))

    def __len__(self):
        return len(object.__getattribute__(self, "_target"))

    def __str__(self):
        return str(object.__getattribute__(self, "_target"))

    def __repr__(self):
        return repr(object.__getattribute__(self, "_target"))


FLAGS = _ParseOnFirstRead(_absl_flags.FLAGS)

# absl.app defines these when app.run starts (idempotently); defining them now lets a program that
# parses FLAGS lazily answer --help as well.
_absl_app.define_help_flags()
