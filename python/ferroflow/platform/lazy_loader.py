"""Package attributes that load on first use (PEP 562 module ``__getattr__`` and ``__dir__``).

TensorFlow 1.x itself loads ``tf.estimator`` and ``tf.keras`` only when a program first touches them;
ferroflow does the same for its heavier optional namespaces, so that ``import ferroflow`` (which every
program and every test subprocess pays) stays short. A lazy attribute is either a submodule of the
package (``tf.estimator``: imported on first access, after which the import system has set it on the
package) or a name defined in another module (bound on the package on first access, so later lookups
are plain attribute reads). ``dir()`` and ``__all__`` list lazy attributes next to the loaded ones, so
``dir(tf)`` and ``from ferroflow import *`` see the same names as when everything loaded eagerly.
"""

from __future__ import annotations

import importlib
import sys


def attach(package, submodules=(), names=None):
    """``(__getattr__, __dir__, __all__)`` for the package named ``package``; call it after its imports.

    ``submodules``: names of the package's submodules to import on first access. ``names``: a mapping
    from an attribute name to ``(module, name)``, the module that defines it and its name there.
    ``__all__`` holds the public names loaded so far and every lazy one.
    """
    submodules = frozenset(submodules)
    names = dict(names or {})
    overlap = submodules & names.keys()
    if overlap:
        raise ValueError(f"{package}: lazy attributes listed both as submodules and as names: {sorted(overlap)}")
    loaded = vars(sys.modules[package])

    def __getattr__(name):
        if name in submodules:
            return importlib.import_module(f"{package}.{name}")
        if name in names:
            module, attr = names[name]
            value = getattr(importlib.import_module(module), attr)
            setattr(sys.modules[package], name, value)
            return value
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__():
        return sorted(set(vars(sys.modules[package])) | submodules | names.keys())

    public = sorted({n for n in loaded if not n.startswith("_")} | submodules | names.keys())
    return __getattr__, __dir__, public


def alias(target, alias_name):
    """``(__getattr__, __dir__)`` for a module ``alias_name`` that mirrors the package ``target``.

    ``tf.compat.v1`` is the whole package again: a public name it has not copied (a lazy attribute of the
    package, or one set on it later) is looked up on the package, so both paths give the same object.
    """

    def __getattr__(name):
        if not name.startswith("_"):
            try:
                value = getattr(sys.modules[target], name)
            except AttributeError:
                pass
            else:
                setattr(sys.modules[alias_name], name, value)
                return value
        raise AttributeError(f"module {alias_name!r} has no attribute {name!r}")

    def __dir__():
        own = set(vars(sys.modules[alias_name]))
        return sorted(own | {n for n in dir(sys.modules[target]) if not n.startswith("_")})

    return __getattr__, __dir__
