"""``import ferroflow.compat.v1 as tf``: the same API as ``import ferroflow as tf``."""

import ferroflow as _ff
from ferroflow import *  # noqa: F401,F403
from ferroflow import (  # noqa: F401
    app,
    compat,
    debugging,
    dtypes,
    errors,
    flags,
    gfile,
    initializers,
    io,
    losses,
    math,
    nn,
    random,
    test,
    train,
)

for _name in getattr(_ff, "_SUBMODULES", ()):
    globals()[_name] = getattr(_ff, _name)
del _name
