"""``import ferroflow.compat.v1 as tf``: the same API as ``import ferroflow as tf``.

The package's loaded public names are copied here; the rest (its lazy namespaces such as ``estimator`` and
``keras``, and anything set on it later) are looked up on the package on first use, so ``tf.compat.v1.X``
and ``tf.X`` are the same object and importing this module loads nothing more than the package.
"""

import ferroflow as _ff
from ferroflow.platform import lazy_loader as _lazy_loader

globals().update({_name: _value for _name, _value in vars(_ff).items() if not _name.startswith("_")})
__all__ = list(_ff.__all__)
__getattr__, __dir__ = _lazy_loader.alias(_ff.__name__, __name__)
