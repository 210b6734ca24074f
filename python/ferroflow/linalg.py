"""``tf.linalg``: TF1's linear-algebra namespace (aliases of the matrix ops in ``ferroflow.ops.linalg_ops``).

``tf.linalg.diag``/``diag_part`` are the batched ``matrix_diag``/``matrix_diag_part`` (as in TensorFlow);
the rank-``2k`` ``tf.diag`` is ``tensor_diag``. Not provided: the ``LinearOperator`` classes, ``logm``
(TensorFlow's is complex-only; ferroflow has no complex runtime tensors yet) and the tridiagonal ops.
"""

from ferroflow.ops.array_ops import matrix_transpose  # noqa: F401
from ferroflow.ops.array_ops import matrix_transpose as transpose  # noqa: F401
from ferroflow.ops.clip_ops import global_norm  # noqa: F401
from ferroflow.ops.linalg_ops import (  # noqa: F401
    adjoint,
    cholesky,
    cholesky_solve,
    cross,
    einsum,
    eye,
    logdet,
    lu,
    matvec,
    norm,
    qr,
    slogdet,
    svd,
    trace,
)
from ferroflow.ops.linalg_ops import diag as tensor_diag  # noqa: F401
from ferroflow.ops.linalg_ops import diag_part as tensor_diag_part  # noqa: F401
from ferroflow.ops.linalg_ops import matrix_band_part as band_part  # noqa: F401
from ferroflow.ops.linalg_ops import matrix_determinant as det  # noqa: F401
from ferroflow.ops.linalg_ops import matrix_diag as diag  # noqa: F401
from ferroflow.ops.linalg_ops import matrix_diag_part as diag_part  # noqa: F401
from ferroflow.ops.linalg_ops import matrix_exponential as expm  # noqa: F401
from ferroflow.ops.linalg_ops import matrix_inverse as inv  # noqa: F401
from ferroflow.ops.linalg_ops import matrix_set_diag as set_diag  # noqa: F401
from ferroflow.ops.linalg_ops import matrix_solve as solve  # noqa: F401
from ferroflow.ops.linalg_ops import matrix_solve_ls as lstsq  # noqa: F401
from ferroflow.ops.linalg_ops import matrix_square_root as sqrtm  # noqa: F401
from ferroflow.ops.linalg_ops import matrix_triangular_solve as triangular_solve  # noqa: F401
from ferroflow.ops.linalg_ops import self_adjoint_eig as eigh  # noqa: F401
from ferroflow.ops.linalg_ops import self_adjoint_eigvals as eigvalsh  # noqa: F401
from ferroflow.ops.math_ops import matmul, tensordot  # noqa: F401
from ferroflow.ops.nn_ops import l2_normalize  # noqa: F401
