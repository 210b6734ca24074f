"""``tf.app.flags`` / ``tf.flags``: command-line flags as TF1 programs use them.

TF1's module is ``absl.flags`` behind a thin wrapper; this is a self-contained implementation of the
parts TF1 programs use, with absl's behaviour:

* ``DEFINE_string``/``integer``/``float``/``boolean`` (``bool``)/``enum``/``list``/``multi_string``/
  ``multi_integer``/``multi_float``/``multi_enum`` register a flag on ``FLAGS`` (or ``flag_values=``)
  and return a ``FlagHolder``. TF's old keyword names ``flag_name``, ``default_value`` and
  ``docstring`` are accepted too.
* ``FLAGS(argv)`` parses ``--name=value``, ``--name value``, ``-name``, ``--bool``/``--nobool``, a
  short name (``-k 3``), ``--flagfile=FILE`` (one flag a line, ``#`` or ``//`` comments), and
  ``--undefok=a,b``; positional arguments may come between flags; ``--`` ends parsing. It returns
  ``argv[0]`` plus the arguments that are not flags. An unknown flag raises
  ``UnrecognizedFlagError`` unless ``known_only=True`` (what ``tf.app.run`` uses), which passes it
  through. A bad value raises ``IllegalFlagValueError`` naming the flag; validators
  (``mark_flag_as_required``, ``register_validator``, ...) run after parsing and on assignment.
* ``FLAGS.name`` reads a value. Reading ``FLAGS`` (the module's object, like TF's wrapper) before it
  was parsed parses ``sys.argv`` first; a ``FlagValues()`` you create raises
  ``UnparsedFlagAccessError`` instead.
* ``--help``/``--helpshort``/``-?`` print the flags of the main module, ``--helpfull`` all flags,
  then exit with status 1 (as absl does). They exist on ``FLAGS`` only.
"""

from __future__ import annotations

import csv
import difflib
import functools
import io
import logging
import os
import sys
import textwrap
import warnings

__all__ = [
    "DEFINE",
    "DEFINE_bool",
    "DEFINE_boolean",
    "DEFINE_enum",
    "DEFINE_flag",
    "DEFINE_float",
    "DEFINE_integer",
    "DEFINE_list",
    "DEFINE_multi_enum",
    "DEFINE_multi_float",
    "DEFINE_multi_integer",
    "DEFINE_multi_string",
    "DEFINE_string",
    "FLAGS",
    "ArgumentParser",
    "BooleanFlag",
    "BooleanParser",
    "CantOpenFlagFileError",
    "DuplicateFlagError",
    "EnumFlag",
    "EnumParser",
    "Error",
    "Flag",
    "FlagHolder",
    "FlagNameConflictsWithMethodError",
    "FlagValues",
    "FloatParser",
    "IllegalFlagValueError",
    "IntegerParser",
    "ListParser",
    "MultiFlag",
    "UnparsedFlagAccessError",
    "UnrecognizedFlagError",
    "ValidationError",
    "mark_flag_as_required",
    "mark_flags_as_mutual_exclusive",
    "mark_flags_as_required",
    "multi_flags_validator",
    "register_multi_flags_validator",
    "register_validator",
    "validator",
]

_logger = logging.getLogger(__name__)

# --------------------------------------------------------------------------------------------------
# Errors (absl.flags' classes)
# --------------------------------------------------------------------------------------------------


class Error(Exception):
    """The base class of all flag errors."""


class CantOpenFlagFileError(Error):
    """A ``--flagfile`` could not be read."""


class DuplicateFlagError(Error):
    """A flag name was defined twice."""


class IllegalFlagValueError(Error):
    """A flag got a value it cannot take (bad syntax, out of bounds, failed validation)."""


class UnrecognizedFlagError(Error):
    """The command line names a flag that is not defined. ``flagname``, ``flagvalue`` say which."""

    def __init__(self, flagname, flagvalue="", suggestions=()):
        self.flagname = flagname
        self.flagvalue = flagvalue
        tip = f". Did you mean: {', '.join(suggestions)} ?" if suggestions else ""
        super().__init__(f"Unknown command line flag '{flagname}'{tip}")


class UnparsedFlagAccessError(Error):
    """A flag value was read from a ``FlagValues`` that has not parsed a command line."""


class ValidationError(Error):
    """A validator's constraint does not hold (raise it from a checker to give your own message)."""


class FlagNameConflictsWithMethodError(Error):
    """A flag name would hide a ``FlagValues`` method."""


# --------------------------------------------------------------------------------------------------
# Argument parsers: text (or a Python value) -> flag value
# --------------------------------------------------------------------------------------------------


class ArgumentParser:
    """Parses strings (the base class accepts any string as is)."""

    syntactic_help = ""

    def parse(self, argument):
        if not isinstance(argument, str):
            raise TypeError(f"flag value must be a string, found {type(argument).__name__}")
        return argument

    def flag_type(self):
        return "string"


class BooleanParser(ArgumentParser):
    """``true``/``t``/``1`` and ``false``/``f``/``0`` (any case), or a bool (or the ints 0 and 1)."""

    def parse(self, argument):
        if isinstance(argument, str):
            low = argument.lower()
            if low in ("true", "t", "1"):
                return True
            if low in ("false", "f", "0"):
                return False
            raise ValueError(f"Non-boolean argument to boolean flag: {argument!r}")
        if isinstance(argument, int) and argument in (0, 1):
            return bool(argument)
        raise TypeError(f"Non-boolean argument to boolean flag: {argument!r}")

    def flag_type(self):
        return "bool"


class _NumericParser(ArgumentParser):
    number_article = ""
    number_name = ""

    def __init__(self, lower_bound=None, upper_bound=None):
        self.lower_bound = lower_bound
        self.upper_bound = upper_bound
        self.syntactic_help = self._describe(lower_bound, upper_bound)

    def _describe(self, lo, hi):
        base = f"{self.number_article} {self.number_name}"
        if lo is not None and hi is not None:
            return f"{base} in the range [{lo}, {hi}]"
        if lo == 0:
            return f"a non-negative {self.number_name}"
        if hi == 0:
            return f"a non-positive {self.number_name}"
        if hi is not None:
            return f"{self.number_name} <= {hi}"
        if lo is not None:
            return f"{self.number_name} >= {lo}"
        return base

    def parse(self, argument):
        value = self.convert(argument)
        if (self.lower_bound is not None and value < self.lower_bound) or (
            self.upper_bound is not None and value > self.upper_bound
        ):
            raise ValueError(f"{value} is not {self.syntactic_help}")
        return value


class IntegerParser(_NumericParser):
    """Integers in decimal, or with a ``0x``/``0o`` prefix; optional bounds."""

    number_article = "an"
    number_name = "integer"

    def _describe(self, lo, hi):
        if lo is not None and hi is not None:
            return super()._describe(lo, hi)
        if lo == 1:
            return "a positive integer"
        if hi == -1:
            return "a negative integer"
        return super()._describe(lo, hi)

    def convert(self, argument):
        if isinstance(argument, bool):
            raise TypeError(f"Expect argument to be a string or int, found {type(argument).__name__}")
        if isinstance(argument, int):
            return argument
        if isinstance(argument, str):
            base = 10
            if len(argument) > 2 and argument[0] == "0" and argument[1] in "ox":
                base = 8 if argument[1] == "o" else 16
            return int(argument, base)
        raise TypeError(f"Expect argument to be a string or int, found {type(argument).__name__}")

    def flag_type(self):
        return "int"


class FloatParser(_NumericParser):
    """Floating-point numbers; optional bounds."""

    number_article = "a"
    number_name = "number"

    def convert(self, argument):
        if isinstance(argument, (str, float)) or (
            isinstance(argument, int) and not isinstance(argument, bool)
        ):
            return float(argument)
        raise TypeError(f"Expect argument to be a string, int, or float, found {type(argument).__name__}")

    def flag_type(self):
        return "float"


class EnumParser(ArgumentParser):
    """One of ``enum_values`` (compared case-insensitively unless ``case_sensitive``)."""

    def __init__(self, enum_values, case_sensitive=True):
        if not enum_values or isinstance(enum_values, str):
            raise ValueError(f"enum_values must be a non-empty list of strings, found {enum_values!r}")
        self.enum_values = list(enum_values)
        self.case_sensitive = case_sensitive

    def parse(self, argument):
        if self.case_sensitive:
            if argument in self.enum_values:
                return argument
        else:
            for value in self.enum_values:
                if str(value).upper() == str(argument).upper():
                    return value
        raise ValueError(f"value should be one of <{'|'.join(self.enum_values)}>")

    def flag_type(self):
        return "string enum"


class ListParser(ArgumentParser):
    """A comma-separated list (CSV quoting allowed); a list passes through."""

    syntactic_help = "a comma separated list"

    def parse(self, argument):
        if isinstance(argument, list):
            return argument
        if not argument:
            return []
        try:
            return [s.strip() for s in next(csv.reader([argument], strict=True))]
        except csv.Error as e:
            raise ValueError(f"Unable to parse the value {argument!r} as a comma separated list: {e}") from e

    def flag_type(self):
        return "list"


def _serialize_value(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return ",".join(str(v) for v in value)
    return str(value)


# --------------------------------------------------------------------------------------------------
# Flags
# --------------------------------------------------------------------------------------------------


class Flag:
    """One flag: its ``name``, ``default``, current ``value``, ``help``, and how often it was given
    (``present``). ``using_default_value`` is False once the command line or code set it."""

    def __init__(
        self,
        parser,
        serializer,
        name,
        default,
        help_string,
        short_name=None,
        boolean=False,
        allow_override=False,
        allow_override_cpp=False,
        allow_hide_cpp=False,
        allow_using_method_names=False,
    ):
        del serializer, allow_override_cpp, allow_hide_cpp  # values serialize by type; no C++ flags here
        if not isinstance(name, str) or not name:
            raise Error(f"Flag name must be a non-empty string, got {name!r}")
        self.parser = parser
        self.name = name
        self.short_name = short_name
        self.help = help_string if help_string is not None else "(no help available)"
        self.boolean = boolean
        self.allow_override = allow_override
        self.allow_using_method_names = allow_using_method_names
        self.present = 0
        self.using_default_value = True
        self.validators = []
        self.default_unparsed = default
        self._value = None
        self.default = None
        self._set_default(default)

    @property
    def value(self):
        return self._value

    @value.setter
    def value(self, value):
        self._value = value

    def _parse(self, argument):
        try:
            return self.parser.parse(argument)
        except (TypeError, ValueError) as e:
            raise IllegalFlagValueError(f"flag --{self.name}={argument}: {e}") from None

    def parse(self, argument):
        """Sets the value from ``argument`` (text from the command line, or a Python value)."""
        self.value = self._parse(argument)
        self.present += 1

    def unparse(self):
        """Back to the default, as if never given."""
        self.value = self.default
        self.using_default_value = True
        self.present = 0

    def _set_default(self, value):
        self.default_unparsed = value
        self.default = None if value is None else self._parse(value)
        if self.using_default_value:
            self.value = self.default

    def serialize(self):
        """The flag as a command-line argument (``--name=value``), or ``""`` when its value is None."""
        if self.value is None:
            return ""
        if self.boolean:
            return f"--{self.name}" if self.value else f"--no{self.name}"
        return f"--{self.name}={_serialize_value(self.value)}"

    def flag_type(self):
        return self.parser.flag_type()

    def _default_for_help(self):
        if self.default is None:
            return None
        return _serialize_value(self.default)

    def _help_text(self):
        return self.help

    def __repr__(self):
        return f"<{type(self).__name__} --{self.name}={self.value!r}>"


class BooleanFlag(Flag):
    """A flag given as ``--name``/``--noname`` (or ``--name=true|false``)."""

    def __init__(self, name, default, help_string, short_name=None, **kwargs):
        super().__init__(
            BooleanParser(), None, name, default, help_string, short_name, boolean=True, **kwargs
        )


class EnumFlag(Flag):
    """A string flag restricted to ``enum_values``."""

    def __init__(
        self, name, default, help_string, enum_values, short_name=None, case_sensitive=True, **kwargs
    ):
        parser = EnumParser(enum_values, case_sensitive)
        super().__init__(parser, None, name, default, help_string, short_name, **kwargs)

    def _help_text(self):
        return f"<{'|'.join(self.parser.enum_values)}>: {self.help}"


class MultiFlag(Flag):
    """A flag that may be repeated; its value is the list of all values given."""

    def _parse(self, arguments):
        if isinstance(arguments, (list, tuple)):
            items = list(arguments)
        else:
            items = [arguments]
        return [Flag._parse(self, item) for item in items]

    def parse(self, arguments):
        new_values = self._parse(arguments)
        if self.present:
            self.value.extend(new_values)
        else:
            self.value = new_values
        self.present += len(new_values)

    def serialize(self):
        if not self.value:
            return ""
        return "\n".join(f"--{self.name}={_serialize_value(v)}" for v in self.value)

    def _default_for_help(self):
        if self.default_unparsed is None:
            return None
        return repr([] if self.default is None else self.default)

    def _help_text(self):
        return f"{self.help};\n    repeat this option to specify a list of values"


# --------------------------------------------------------------------------------------------------
# Validators
# --------------------------------------------------------------------------------------------------

_validator_count = 0


class _Validator:
    def __init__(self, flag_names, checker, message, single):
        global _validator_count
        _validator_count += 1
        self.insertion_index = _validator_count
        self.flag_names = list(flag_names)
        self.checker = checker
        self.message = message
        self.single = single

    def verify(self, flag_values):
        fl = flag_values._flags()
        if self.single:
            arg = fl[self.flag_names[0]].value
        else:
            arg = {name: fl[name].value for name in self.flag_names}
        if not self.checker(arg):
            raise ValidationError(self.message)

    def describe(self, flag_values):
        fl = flag_values._flags()
        if self.single:
            name = self.flag_names[0]
            return f"flag --{name}={fl[name].value}"
        return "flags " + ", ".join(f"{name}={fl[name].value}" for name in self.flag_names)


# --------------------------------------------------------------------------------------------------
# FlagValues
# --------------------------------------------------------------------------------------------------

_THIS_MODULE = __name__


def _calling_module():
    """(name, module id) of the module whose code called into this file; ``__main__`` is named by
    ``sys.argv[0]`` as absl does."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_globals.get("__name__") == _THIS_MODULE:
        frame = frame.f_back
    if frame is None:
        return "<unknown>", None
    name = frame.f_globals.get("__name__", "<unknown>")
    module = sys.modules.get(name)
    if name == "__main__" and sys.argv and sys.argv[0]:
        name = sys.argv[0]
    return name, id(module) if module is not None else None


class FlagValues:
    """A registry of flags and their values; ``FLAGS`` is the program's."""

    def __init__(self):
        d = self.__dict__
        d["__flags"] = {}  # name and short name -> Flag
        d["__flag_modules"] = {}  # long name -> (module name, module id)
        d["__flags_parsed"] = False
        d["__use_gnu_getopt"] = True

    # registry --------------------------------------------------------------------------------------

    def _flags(self):
        return self.__dict__["__flags"]

    def _register(self, flag, module=None):
        fl = self._flags()
        modules = self.__dict__["__flag_modules"]
        module = module or _calling_module()
        conflicts = callable(getattr(type(self), flag.name, None)) and not flag.allow_using_method_names
        if conflicts or flag.name in self.__dict__:
            raise FlagNameConflictsWithMethodError(
                f'Cannot define a flag named "{flag.name}": it conflicts with a method of FlagValues.'
            )
        for key in filter(None, (flag.name, flag.short_name)):
            old = fl.get(key)
            if old is None or old is flag or flag.allow_override or old.allow_override:
                continue
            old_module = modules.get(old.name, ("<unknown>", None))
            if key == old.name and old_module[0] == module[0] and old_module[1] != module[1]:
                continue  # the defining module was reloaded
            raise DuplicateFlagError(
                f"The flag '{key}' is defined twice. First from {old_module[0]}, second from {module[0]}. "
                f"Description from first occurrence: {old.help}"
            )
        for key in filter(None, (flag.name, flag.short_name)):
            old = fl.get(key)
            if old is not None and old is not flag:
                self._forget(old)
            fl[key] = flag
        modules[flag.name] = module

    def _forget(self, flag):
        fl = self._flags()
        for key in (flag.name, flag.short_name):
            if key is not None and fl.get(key) is flag:
                del fl[key]
        self.__dict__["__flag_modules"].pop(flag.name, None)

    def __setitem__(self, name, flag):
        if name != flag.name:
            raise Error(f"Flag name mismatch: registering {flag.name!r} as {name!r}")
        self._register(flag)

    def __getitem__(self, name):
        """The ``Flag`` object (``KeyError`` if there is none)."""
        return self._flags()[name]

    def __contains__(self, name):
        return name in self._flags()

    def __iter__(self):
        return iter(list(self._flags()))

    def __len__(self):
        return len(self._flags())

    def __delattr__(self, name):
        flag = self._flags().get(name)
        if flag is None:
            raise AttributeError(name)
        self._forget(flag)

    def find_module_defining_flag(self, flagname, default=None):
        flag = self._flags().get(flagname)
        if flag is None:
            return default
        return self.__dict__["__flag_modules"].get(flag.name, (default, None))[0]

    # values ----------------------------------------------------------------------------------------

    def __getattr__(self, name):
        flag = self._flags().get(name)
        if flag is None:
            raise AttributeError(name)
        if self.__dict__["__flags_parsed"] or flag.present:
            return flag.value
        raise UnparsedFlagAccessError(f"Trying to access flag --{name} before flags were parsed.")

    def __setattr__(self, name, value):
        flag = self._flags().get(name)
        if flag is None:
            raise UnrecognizedFlagError(name, value)
        old_value, old_default = flag.value, flag.using_default_value
        flag.value = value
        flag.using_default_value = False
        try:
            self._assert_validators(flag.validators)
        except Exception:
            flag.value, flag.using_default_value = old_value, old_default
            raise

    def get_flag_value(self, name, default):
        """The value of flag ``name``, or ``default`` if there is no such flag."""
        flag = self._flags().get(name)
        return default if flag is None else flag.value

    def set_default(self, name, value):
        """Changes the default of flag ``name`` (and its value, if it still has the default)."""
        flag = self._flags().get(name)
        if flag is None:
            raise UnrecognizedFlagError(name, value)
        flag._set_default(value)
        self._assert_validators(flag.validators)

    def flag_values_dict(self):
        """``{name: value}`` for every flag (short names included, as in absl)."""
        return {name: flag.value for name, flag in self._flags().items()}

    def is_parsed(self):
        return self.__dict__["__flags_parsed"]

    def mark_as_parsed(self):
        self.__dict__["__flags_parsed"] = True

    def unparse_flags(self):
        """Resets every flag to its default and marks the values unparsed."""
        for flag in set(self._flags().values()):
            flag.unparse()
        self.__dict__["__flags_parsed"] = False

    def set_gnu_getopt(self, gnu_getopt=True):
        """With GNU getopt (the default) flags may follow positional arguments."""
        self.__dict__["__use_gnu_getopt"] = gnu_getopt

    def is_gnu_getopt(self):
        return self.__dict__["__use_gnu_getopt"]

    # validation ------------------------------------------------------------------------------------

    def _add_validator(self, v):
        fl = self._flags()
        for name in v.flag_names:
            fl[name].validators.append(v)

    def _assert_validators(self, validators):
        messages = []
        bad = set()
        for v in sorted(set(validators), key=lambda v: v.insertion_index):
            if bad.intersection(v.flag_names):
                continue
            try:
                v.verify(self)
            except ValidationError as e:
                bad.update(v.flag_names)
                messages.append(f"{v.describe(self)}: {e}")
        if messages:
            raise IllegalFlagValueError("\n".join(messages))

    def validate_all_flags(self):
        """Runs every registered validator (``IllegalFlagValueError`` listing the failures)."""
        validators = []
        for flag in set(self._flags().values()):
            validators.extend(flag.validators)
        self._assert_validators(validators)

    # parsing ---------------------------------------------------------------------------------------

    def __call__(self, argv, known_only=False):
        """Parses the flags in ``argv`` (``argv[0]`` is the program); returns ``argv[0]`` and the
        remaining arguments."""
        if isinstance(argv, (str, bytes)):
            raise TypeError("argv should be a tuple/list of strings, not bytes or string.")
        argv = list(argv)
        if not argv:
            raise ValueError(
                "argv cannot be an empty list, and must contain the program name as the first element."
            )
        program, args = argv[0], self.read_flags_from_files(argv[1:], force_gnu=False)
        unknown, rest = self._parse_args(args, known_only)
        for name, _arg in unknown:
            suggestions = difflib.get_close_matches(
                name, [n for n in self._flags() if len(n) > 1], n=3, cutoff=0.75
            )
            raise UnrecognizedFlagError(name, _arg, suggestions)
        self.mark_as_parsed()
        self.validate_all_flags()
        return [program] + rest

    def _parse_args(self, args, known_only):
        fl = self._flags()
        gnu = self.is_gnu_getopt()
        undefok = set()
        unparsed = []  # (flag name or None for positional, arg)
        it = iter(args)
        for arg in it:
            if not arg.startswith("-"):
                unparsed.append((None, arg))
                if gnu:
                    continue
                break
            if arg == "--":
                if known_only:
                    unparsed.append((None, arg))
                break
            body = arg[2:] if arg.startswith("--") else arg[1:]
            name, eq, value = body.partition("=")
            value = value if eq else None
            if not name:
                unparsed.append((None, arg))
                if gnu:
                    continue
                break
            if name == "undefok":
                value = self._next_value(arg, value, it)
                names = [v.strip() for v in value.split(",")]
                undefok.update(names)
                undefok.update("no" + v for v in names)
                continue
            flag = fl.get(name)
            if flag is not None:
                if flag.boolean and value is None:
                    value = "true"
                else:
                    value = self._next_value(arg, value, it)
            elif name.startswith("no") and len(name) > 2:
                noflag = fl.get(name[2:])
                if noflag is not None and noflag.boolean:
                    if value is not None:
                        raise IllegalFlagValueError(f"{arg} does not take an argument")
                    flag, value = noflag, "false"
            if flag is None:
                unparsed.append((name, arg))
                continue
            flag.parse(value)
            flag.using_default_value = False
        unknown, rest = [], []
        for name, arg in unparsed:
            if name is None:
                rest.append(arg)
            elif name in undefok:
                continue
            elif known_only:
                rest.append(arg)
            else:
                unknown.append((name, arg))
        rest.extend(it)
        return unknown, rest

    @staticmethod
    def _next_value(arg, value, it):
        if value is not None:
            return value
        try:
            return next(it)
        except StopIteration:
            raise Error(f"Missing value for flag {arg}") from None

    # flag files ------------------------------------------------------------------------------------

    @staticmethod
    def _flagfile_name(arg):
        """The file of a ``--flagfile=F`` / ``-flagfile=F`` argument, or None if ``arg`` is not one."""
        arg = arg.strip()
        for prefix in ("--flagfile=", "-flagfile="):
            if arg.startswith(prefix):
                return os.path.expanduser(arg[len(prefix) :].strip())
        return None

    def _flag_file_lines(self, filename, stack):
        if not filename:
            return []
        if filename in stack:
            sys.stderr.write(f"Warning: Hit circular flagfile dependency. Ignoring flagfile: {filename}\n")
            return []
        stack.append(filename)
        try:
            with open(filename) as f:
                lines = f.readlines()
        except OSError as e:
            raise CantOpenFlagFileError(f"ERROR:: Unable to open flagfile: {e}") from None
        out = []
        for line in lines:
            if line.isspace() or line.startswith("#") or line.startswith("//"):
                continue
            nested = self._flagfile_name(line)
            if nested is not None:
                out.extend(self._flag_file_lines(nested, stack))
            else:
                out.append(line.strip())
        stack.pop()
        return out

    def read_flags_from_files(self, argv, force_gnu=True):
        """``argv`` (without the program name) with each ``--flagfile`` replaced by its flags."""
        fl = self._flags()
        rest = list(argv)
        out = []
        while rest:
            arg = rest.pop(0)
            if arg in ("--flagfile", "-flagfile"):
                if not rest:
                    raise IllegalFlagValueError("--flagfile with no argument")
                out.extend(self._flag_file_lines(os.path.expanduser(rest.pop(0)), []))
                continue
            filename = self._flagfile_name(arg)
            if filename is not None:
                out.extend(self._flag_file_lines(filename, []))
                continue
            out.append(arg)
            if arg == "--":
                break
            if not arg.startswith("-"):
                if not force_gnu and not self.is_gnu_getopt():
                    break
            elif "=" not in arg and rest and not rest[0].startswith("-"):
                # "--name value": keep the value with its flag so it is not taken for a file directive.
                flag = fl.get(arg.lstrip("-"))
                if flag is not None and not flag.boolean:
                    out.append(rest.pop(0))
        return out + rest

    def flags_into_string(self):
        """Every flag with a value as ``--name=value`` lines (loadable with ``--flagfile``)."""
        lines = []
        for flag in sorted(set(self._flags().values()), key=lambda f: f.name):
            text = flag.serialize()
            if text:
                lines.append(text + "\n")
        return "".join(lines)

    def append_flags_into_file(self, filename):
        with open(filename, "a") as f:
            f.write(self.flags_into_string())

    # help ------------------------------------------------------------------------------------------

    def _flags_by_module(self):
        modules = self.__dict__["__flag_modules"]
        by_module = {}
        for flag in set(self._flags().values()):
            by_module.setdefault(modules.get(flag.name, ("<unknown>", None))[0], []).append(flag)
        return by_module

    @staticmethod
    def _render(flags_):
        out = []
        for flag in sorted(flags_, key=lambda f: f.name):
            names = f"--[no]{flag.name}" if flag.boolean else f"--{flag.name}"
            if flag.short_name:
                names = f"-{flag.short_name},{names}"
            text = f"{names}: {flag._help_text()}"
            default = flag._default_for_help()
            if default is not None:
                text += f"\n(default: {default!r})"
            if flag.parser.syntactic_help:
                text += f"\n({flag.parser.syntactic_help})"
            for i, para in enumerate(text.split("\n")):
                indent = "  " if i == 0 else "    "
                out.append(
                    textwrap.fill(para.strip(), width=80, initial_indent=indent, subsequent_indent="    ")
                )
        return "\n".join(out)

    def module_help(self, module):
        """Help text for the flags defined in ``module`` (a module or its name)."""
        name = getattr(module, "__name__", module)
        return self._render(self._flags_by_module().get(name, []))

    def main_module_help(self):
        """Help text for the flags the main program defined."""
        return self.module_help(sys.argv[0] if sys.argv and sys.argv[0] else "__main__")

    def get_help(self, prefix="", include_special_flags=True):
        """Help text for every flag, grouped by defining module."""
        parts = []
        for module, flags_ in sorted(self._flags_by_module().items()):
            parts.append(f"\n{prefix}{module}:\n{self._render(flags_)}")
        return "\n".join(parts)

    def __str__(self):
        return self.get_help()


class _TFFlagValues(FlagValues):
    """``tf.flags.FLAGS``: reading a flag before any parse parses ``sys.argv`` (TF's wrapper does)."""

    def __getattr__(self, name):
        if not self.__dict__["__flags_parsed"] and name in self._flags():
            self(sys.argv)
        return super().__getattr__(name)


FLAGS = _TFFlagValues()


class FlagHolder:
    """What ``DEFINE_*`` returns: ``.value`` reads the flag from its ``FlagValues``."""

    def __init__(self, flag_values, flag):
        self._flagvalues = flag_values
        self._name = flag.name
        self._flag = flag

    @property
    def name(self):
        return self._name

    @property
    def value(self):
        return getattr(self._flagvalues, self._name)

    @property
    def default(self):
        return self._flag.default

    @property
    def present(self):
        return bool(self._flag.present)

    def __repr__(self):
        return f"FlagHolder({self._name!r})"


# --------------------------------------------------------------------------------------------------
# DEFINE_*
# --------------------------------------------------------------------------------------------------

_RENAMED_ARGUMENTS = {"flag_name": "name", "default_value": "default", "docstring": "help"}


def _accept_old_names(fn):
    """Lets ``fn`` take TF's old keyword names (``flag_name``, ``default_value``, ``docstring``)."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        old = [k for k in _RENAMED_ARGUMENTS if k in kwargs]
        if old:
            for key in old:
                kwargs[_RENAMED_ARGUMENTS[key]] = kwargs.pop(key)
            _logger.warning(
                "Use of the keyword argument names (flag_name, default_value, docstring) is deprecated, "
                "please use (name, default, help) instead."
            )
        return fn(*args, **kwargs)

    return wrapper


def _mark_required(flag, flag_values):
    register_validator(
        flag.name,
        lambda value: value is not None,
        message=f"Flag --{flag.name} must have a value other than None.",
        flag_values=flag_values,
    )


def DEFINE_flag(flag, flag_values=FLAGS, module_name=None, required=False):  # noqa: N802 - absl's names
    """Registers a ``Flag`` object; returns its ``FlagHolder``."""
    module = (module_name, None) if module_name else _calling_module()
    flag_values._register(flag, module)
    if required:
        _mark_required(flag, flag_values)
    return FlagHolder(flag_values, flag)


def DEFINE(
    parser, name, default, help, flag_values=FLAGS, serializer=None, module_name=None, required=False, **args
):  # noqa: N802
    """Defines a flag whose values ``parser`` (an ``ArgumentParser``) parses."""
    return DEFINE_flag(
        Flag(parser, serializer, name, default, help, **args), flag_values, module_name, required
    )


@_accept_old_names
def DEFINE_string(name, default, help, flag_values=FLAGS, required=False, **args):  # noqa: N802
    """A string flag."""
    return DEFINE_flag(Flag(ArgumentParser(), None, name, default, help, **args), flag_values, None, required)


@_accept_old_names
def DEFINE_boolean(name, default, help, flag_values=FLAGS, module_name=None, required=False, **args):  # noqa: N802
    """A boolean flag: ``--name``, ``--noname``, ``--name=true|false|1|0``."""
    return DEFINE_flag(BooleanFlag(name, default, help, **args), flag_values, module_name, required)


DEFINE_bool = DEFINE_boolean


@_accept_old_names
def DEFINE_float(
    name, default, help, lower_bound=None, upper_bound=None, flag_values=FLAGS, required=False, **args
):  # noqa: N802
    """A float flag, optionally bounded (inclusive)."""
    parser = FloatParser(lower_bound, upper_bound)
    return DEFINE_flag(Flag(parser, None, name, default, help, **args), flag_values, None, required)


@_accept_old_names
def DEFINE_integer(
    name, default, help, lower_bound=None, upper_bound=None, flag_values=FLAGS, required=False, **args
):  # noqa: N802
    """An integer flag, optionally bounded (inclusive)."""
    parser = IntegerParser(lower_bound, upper_bound)
    return DEFINE_flag(Flag(parser, None, name, default, help, **args), flag_values, None, required)


@_accept_old_names
def DEFINE_enum(
    name, default, enum_values, help, flag_values=FLAGS, module_name=None, required=False, **args
):  # noqa: N802
    """A string flag limited to ``enum_values`` (``case_sensitive=False`` to ignore case)."""
    return DEFINE_flag(EnumFlag(name, default, help, enum_values, **args), flag_values, module_name, required)


@_accept_old_names
def DEFINE_list(name, default, help, flag_values=FLAGS, required=False, **args):  # noqa: N802
    """A comma-separated list of strings."""
    return DEFINE_flag(Flag(ListParser(), None, name, default, help, **args), flag_values, None, required)


@_accept_old_names
def DEFINE_multi_string(name, default, help, flag_values=FLAGS, required=False, **args):  # noqa: N802
    """A repeatable string flag; its value is the list of every value given."""
    return DEFINE_flag(
        MultiFlag(ArgumentParser(), None, name, default, help, **args), flag_values, None, required
    )


@_accept_old_names
def DEFINE_multi_integer(  # noqa: N802
    name, default, help, lower_bound=None, upper_bound=None, flag_values=FLAGS, required=False, **args
):
    """A repeatable integer flag."""
    parser = IntegerParser(lower_bound, upper_bound)
    return DEFINE_flag(MultiFlag(parser, None, name, default, help, **args), flag_values, None, required)


@_accept_old_names
def DEFINE_multi_float(  # noqa: N802
    name, default, help, lower_bound=None, upper_bound=None, flag_values=FLAGS, required=False, **args
):
    """A repeatable float flag."""
    parser = FloatParser(lower_bound, upper_bound)
    return DEFINE_flag(MultiFlag(parser, None, name, default, help, **args), flag_values, None, required)


@_accept_old_names
def DEFINE_multi_enum(  # noqa: N802
    name, default, enum_values, help, flag_values=FLAGS, case_sensitive=True, required=False, **args
):
    """A repeatable flag whose values come from ``enum_values``."""
    parser = EnumParser(enum_values, case_sensitive)
    return DEFINE_flag(MultiFlag(parser, None, name, default, help, **args), flag_values, None, required)


# --------------------------------------------------------------------------------------------------
# Validators and required flags
# --------------------------------------------------------------------------------------------------


def register_validator(flag_name, checker, message="Flag validation failed", flag_values=FLAGS):
    """Checks flag ``flag_name`` with ``checker(value)`` (False or ``ValidationError`` = invalid) after
    every parse and assignment."""
    flag_values[flag_name]  # noqa: B018 - KeyError for an undefined flag, as absl
    flag_values._add_validator(_Validator([flag_name], checker, message, single=True))


def validator(flag_name, message="Flag validation failed", flag_values=FLAGS):
    """Decorator form of ``register_validator``."""

    def decorate(function):
        register_validator(flag_name, function, message=message, flag_values=flag_values)
        return function

    return decorate


def register_multi_flags_validator(
    flag_names, multi_flags_checker, message="Flags validation failed", flag_values=FLAGS
):
    """Checks several flags together: ``multi_flags_checker({name: value})``."""
    for name in flag_names:
        flag_values[name]  # noqa: B018
    flag_values._add_validator(_Validator(flag_names, multi_flags_checker, message, single=False))


def multi_flags_validator(flag_names, message="Flag validation failed", flag_values=FLAGS):
    """Decorator form of ``register_multi_flags_validator``."""

    def decorate(function):
        register_multi_flags_validator(flag_names, function, message=message, flag_values=flag_values)
        return function

    return decorate


def mark_flag_as_required(flag_name, flag_values=FLAGS):
    """Parsing fails unless flag ``flag_name`` ends up with a value other than None."""
    flag = flag_values[flag_name]
    if flag.default is not None:
        warnings.warn(
            f"Flag --{flag_name} has a non-None default value; therefore, mark_flag_as_required will pass "
            "even if flag is not specified in the command line!",
            stacklevel=2,
        )
    _mark_required(flag, flag_values)


def mark_flags_as_required(flag_names, flag_values=FLAGS):
    """``mark_flag_as_required`` for each name."""
    for name in flag_names:
        mark_flag_as_required(name, flag_values)


def mark_flags_as_mutual_exclusive(flag_names, required=False, flag_values=FLAGS):
    """At most one (exactly one if ``required``) of ``flag_names`` may have a value other than None."""
    flag_names = list(flag_names)

    def check(values):
        count = sum(1 for v in values.values() if v is not None)
        if count == 1 or (not required and count == 0):
            return True
        raise ValidationError(
            f"{'Exactly' if required else 'At most'} one of ({', '.join(flag_names)}) must have a value other than None."
        )

    register_multi_flags_validator(flag_names, check, flag_values=flag_values)


# --------------------------------------------------------------------------------------------------
# --help, --helpshort, -?, --helpfull (on FLAGS, like absl.app defines them)
# --------------------------------------------------------------------------------------------------


def _usage(flag_values, shorthelp):
    doc = getattr(sys.modules.get("__main__"), "__doc__", None)
    program = sys.argv[0] if sys.argv else ""
    if not doc:
        doc = f"\nUSAGE: {program} [flags]\n"
    else:
        count = doc.count("%") - 2 * doc.count("%%")
        try:
            doc %= (program,) * count
        except (OverflowError, TypeError, ValueError):
            pass
    flag_str = flag_values.main_module_help() if shorthelp else flag_values.get_help()
    out = io.StringIO()
    out.write(doc)
    if flag_str:
        out.write("\nflags:\n")
        out.write(flag_str)
    out.write("\n")
    if shorthelp:
        out.write("\nTry --helpfull to get a list of all flags.\n")
    sys.stdout.write(out.getvalue())
    sys.stdout.flush()


class _HelpFlag(BooleanFlag):
    def __init__(self, name, help_string, short_name, flag_values, shorthelp):
        super().__init__(name, False, help_string, short_name=short_name)
        self._help_flag_values = flag_values
        self._shorthelp = shorthelp

    def parse(self, argument):
        if self._parse(argument):
            _usage(self._help_flag_values, self._shorthelp)
            sys.exit(1)


def _define_help_flags(flag_values):
    module = ("ferroflow.flags", None)
    flag_values._register(_HelpFlag("help", "show this help", "?", flag_values, True), module)
    flag_values._register(
        _HelpFlag("helpshort", "show usage only for this module", None, flag_values, True), module
    )
    flag_values._register(_HelpFlag("helpfull", "show full help", None, flag_values, False), module)


_define_help_flags(FLAGS)
