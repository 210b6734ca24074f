"""ferroflow: TensorFlow 1.x's training stack with a Rust core.

``import ferroflow as tf`` (or ``import ferroflow.compat.v1 as tf``) and write
TF1 code: graphs, placeholders, variables, ``Session.run``.
"""

from ferroflow.framework import errors as _errors_impl  # noqa: F401  (registers tf.errors with the core)

# isort: split
from ferroflow import compat  # noqa: F401
from ferroflow.client.session import InteractiveSession, Session, get_default_session  # noqa: F401
from ferroflow.framework.behavior import (  # noqa: F401
    control_flow_v2_enabled,
    disable_control_flow_v2,
    disable_eager_execution,
    disable_resource_variables,
    disable_tensor_equality,
    disable_v2_behavior,
    disable_v2_tensorshape,
    enable_control_flow_v2,
    enable_eager_execution,
    enable_resource_variables,
    enable_tensor_equality,
    enable_v2_behavior,
    enable_v2_tensorshape,
    executing_eagerly,
    executing_eagerly_outside_functions,
    get_logger,
    resource_variables_enabled,
)
from ferroflow.framework.constant_op import constant  # noqa: F401
from ferroflow.framework.device_spec import DeviceSpec  # noqa: F401
from ferroflow.framework.dtypes import (  # noqa: F401
    DType,
    as_dtype,
    bfloat16,
    bool,
    complex64,
    complex128,
    double,
    float16,
    float32,
    float64,
    half,
    int8,
    int16,
    int32,
    int64,
    qint8,
    qint16,
    qint32,
    quint8,
    quint16,
    string,
    uint8,
    uint16,
    uint32,
    uint64,
)
from ferroflow.framework.errors import OpError  # noqa: F401
from ferroflow.framework.gradient_registry import NoGradient, NotDifferentiable, RegisterGradient, no_gradient  # noqa: F401
from ferroflow.framework.indexed_slices import (  # noqa: F401
    IndexedSlices,
    IndexedSlicesValue,
    convert_to_tensor_or_indexed_slices,  # noqa: F401
)
from ferroflow.framework.load_library import load_file_system_library, load_library, load_op_library  # noqa: F401
from ferroflow.framework.ops import (  # noqa: F401  # noqa: F401
    Graph,
    GraphKeys,
    Operation,
    Tensor,
    add_to_collection,
    add_to_collections,
    colocate_with,
    container,
    control_dependencies,
    convert_n_to_tensor,
    convert_to_tensor,
    device,
    get_collection,
    get_collection_ref,
    get_default_graph,
    init_scope,
    is_symbolic_tensor,
    is_tensor,
    name_scope,
    op_scope,
    register_tensor_conversion_function,
    reset_default_graph,
)
from ferroflow.framework.protos import *  # noqa: F401,F403  (tf.GraphDef, tf.ConfigProto, ... messages)
from ferroflow.framework.random_seed import get_seed, set_random_seed  # noqa: F401
from ferroflow.framework.sparse_tensor import (  # noqa: F401
    SparseTensor,
    SparseTensorValue,
    convert_to_tensor_or_sparse_tensor,
)
from ferroflow.framework.tensor_shape import Dimension, TensorShape, dimension_at_index, dimension_value  # noqa: F401
from ferroflow.framework.tensor_util import make_ndarray, make_tensor_proto  # noqa: F401
from ferroflow.framework.type_spec import (  # noqa: F401
    IndexedSlicesSpec,
    NoneTensorSpec,
    SparseTensorSpec,
    TensorSpec,
    TypeSpec,
    type_spec_from_value,
)
from ferroflow.ops import control_flow_v1_gradients as _control_flow_v1_gradients  # noqa: F401  (registers the TF1 loop-gradient rebuilder)
from ferroflow.ops.array_ops import (  # noqa: F401
    bitcast,
    boolean_mask,
    broadcast_to,
    cast,
    concat,
    expand_dims,
    fill,
    gather,
    gather_nd,
    get_static_value,
    guarantee_const,  # noqa: F401
    identity,
    lin_space,
    linspace,
    matrix_transpose,
    newaxis,
    one_hot,
    ones,
    ones_like,
    pad,
    parallel_stack,
    placeholder,
    placeholder_with_default,
    range,
    rank,
    reshape,
    reverse,
    reverse_v2,
    sequence_mask,
    shape,
    shape_n,
    size,
    slice,
    split,
    squeeze,
    stack,
    stop_gradient,
    strided_slice,
    tile,
    transpose,
    unique,
    unstack,
    where,
    where_v2,
    zeros,
    zeros_like,
)
from ferroflow.ops.array_ops_extra import *  # noqa: F401,F403  (roll, sort, searchsorted, space_to_batch, ...)
from ferroflow.ops.check_ops import *  # noqa: F401,F403
from ferroflow.ops.clip_ops import *  # noqa: F401,F403
from ferroflow.ops.complex_ops import angle, complex, conj, imag, real, to_complex64, to_complex128  # noqa: F401
from ferroflow.ops.cond import case, cond, switch_case  # noqa: F401
from ferroflow.ops.control_flow_ops import (  # noqa: F401
    Assert,
    Print,
    group,
    no_op,
    timestamp,  # noqa: F401
    tuple,
    with_dependencies,
)
from ferroflow.ops.control_flow_ops import print_v2 as print  # noqa: F401
from ferroflow.ops.critical_section_ops import CriticalSection, nondifferentiable_batch_function  # noqa: F401
from ferroflow.ops.custom_gradient import custom_gradient, grad_pass_through, recompute_grad  # noqa: F401
from ferroflow.ops.data_flow_ops import *  # noqa: F401,F403  (queues, accumulators)
from ferroflow.ops.experimental_dataset_ops import check_pinned  # noqa: F401
from ferroflow.ops.fake_quant_ops import *  # noqa: F401,F403  (fake_quant_with_min_max_*)
from ferroflow.ops.functional_ops import (  # noqa: F401
    foldl,
    foldr,
    map_fn,
    scan,
    vectorized_map,  # noqa: F401
)
from ferroflow.ops.gradients_impl import AggregationMethod, UnconnectedGradients, gradients, hessians  # noqa: F401
from ferroflow.ops.init_ops import (  # noqa: F401
    constant_initializer,
    glorot_normal_initializer,
    glorot_uniform_initializer,
    ones_initializer,
    orthogonal_initializer,
    random_normal_initializer,
    random_uniform_initializer,
    truncated_normal_initializer,
    uniform_unit_scaling_initializer,
    variance_scaling_initializer,
    zeros_initializer,
)
from ferroflow.ops.io_ops import *  # noqa: F401,F403  (readers, read_file, matching_files)
from ferroflow.ops.linalg_ops import *  # noqa: F401,F403  (matrix ops: cholesky, svd, einsum, eye, norm, ...)
from ferroflow.ops.lookup_ops import initialize_all_tables, tables_initializer  # noqa: F401
from ferroflow.ops.math_ops import (  # noqa: F401
    abs,
    accumulate_n,
    add,
    add_n,
    arg_max,
    arg_min,
    argmax,
    argmin,
    atan2,
    ceil,
    clip_by_value,
    cos,
    count_nonzero,
    cumprod,
    cumsum,
    div,
    div_no_nan,
    divide,
    equal,
    exp,
    expm1,
    floor,
    floor_div,
    floordiv,
    floormod,
    greater,
    greater_equal,
    is_finite,
    is_inf,
    is_nan,
    less,
    less_equal,
    log,
    log1p,
    log_sigmoid,
    logical_and,
    logical_not,
    logical_or,
    logical_xor,
    matmul,
    maximum,
    minimum,
    mod,
    multiply,
    negative,
    not_equal,
    pow,
    realdiv,
    reciprocal,
    reduce_all,
    reduce_any,
    reduce_logsumexp,
    reduce_max,
    reduce_mean,
    reduce_min,
    reduce_prod,
    reduce_sum,
    round,
    rsqrt,
    saturate_cast,
    scalar_mul,
    sigmoid,
    sign,
    sin,
    sqrt,
    square,
    squared_difference,
    subtract,
    tan,
    tanh,
    tensordot,
    to_bfloat16,
    to_double,
    to_float,
    to_int32,
    to_int64,
    truediv,
    truncatemod,
)
from ferroflow.ops.nn_conv import conv2d_backprop_filter_v2, conv2d_backprop_input_v2  # noqa: F401
from ferroflow.ops.nn_impl import depth_to_space, space_to_depth  # noqa: F401
from ferroflow.ops.nn_ops import approx_top_k  # noqa: F401
from ferroflow.ops.optional_ops import OptionalSpec  # noqa: F401
from ferroflow.ops.parsing_ops import *  # noqa: F401,F403  (parse_example, FixedLenFeature, decode_raw, ...)
from ferroflow.ops.partitioned_variables import (  # noqa: F401
    create_partitioned_variables,
    fixed_size_partitioner,
    min_max_variable_partitioner,
    variable_axis_size_partitioner,
)
from ferroflow.ops.quantize_ops import dequantize, quantize, quantize_v2, quantized_concat  # noqa: F401
from ferroflow.ops.ragged import RaggedTensor, RaggedTensorSpec  # noqa: F401
from ferroflow.ops.ragged_array_ops import ragged_fill_empty_rows, ragged_fill_empty_rows_grad  # noqa: F401
from ferroflow.ops.random_ops import (  # noqa: F401
    random_crop,
    random_normal,
    random_shuffle,
    random_uniform,
    truncated_normal,
)
from ferroflow.ops.script_ops import numpy_function, py_func, py_function  # noqa: F401
from ferroflow.ops.segment_ops import *  # noqa: F401,F403  (segment_*, scatter_*, dynamic_partition, ...)
from ferroflow.ops.session_ops import delete_session_tensor, get_session_handle, get_session_tensor  # noqa: F401
from ferroflow.ops.sparse_ops import *  # noqa: F401,F403  (sparse_tensor_to_dense, sparse_placeholder, ...)
from ferroflow.ops.special_math_ops import (  # noqa: F401
    acos,
    acosh,
    asin,
    asinh,
    atan,
    atanh,
    betainc,
    bincount,
    confusion_matrix,
    cosh,
    digamma,
    erf,
    erfc,
    igamma,
    igammac,
    invert_permutation,
    lbeta,
    lgamma,
    polygamma,
    rint,
    sinh,
    truncatediv,
    zeta,
)
from ferroflow.ops.state_ops import assign, assign_add, assign_sub, scatter_add, scatter_sub, scatter_update  # noqa: F401
from ferroflow.ops.stateless_random_ops import index_shuffle as random_index_shuffle  # noqa: F401
from ferroflow.ops.stateless_random_ops import multinomial, random_gamma, random_poisson  # noqa: F401
from ferroflow.ops.string_ops import (  # noqa: F401
    as_string,
    fingerprint,
    reduce_join,
    regex_replace,
    string_join,
    string_split,
    string_strip,
    string_to_hash_bucket,
    string_to_hash_bucket_fast,
    string_to_hash_bucket_strong,
    string_to_number,
    substr,
)
from ferroflow.ops.template import make_template  # noqa: F401
from ferroflow.ops.tensor_array_ops import TensorArray, TensorArraySpec  # noqa: F401
from ferroflow.ops.variable_scope import (  # noqa: F401
    AUTO_REUSE,
    VariableScope,
    get_local_variable,
    get_variable,
    get_variable_scope,
    no_regularizer,
    variable_creator_scope,
    variable_op_scope,
    variable_scope,
)
from ferroflow.ops.variables import (  # noqa: F401
    Variable,
    VariableAggregation,
    VariableSynchronization,
    all_variables,
    assert_variables_initialized,
    global_variables,
    global_variables_initializer,
    initialize_all_variables,
    initialize_local_variables,
    initialize_variables,
    is_variable_initialized,
    local_variables,
    local_variables_initializer,
    model_variables,
    moving_average_variables,
    report_uninitialized_variables,
    trainable_variables,
    variables_initializer,
)
from ferroflow.ops.while_loop import while_loop  # noqa: F401
from ferroflow.summary.summary_ops import (  # noqa: F401
    audio_summary,
    histogram_summary,
    image_summary,
    merge_all_summaries,
    merge_summary,
    scalar_summary,
)

# isort: split
from ferroflow import (  # noqa: E402,F401
    audio,
    bitwise,
    debugging,
    dtypes,
    errors,
    gfile,
    initializers,
    linalg,
    logging,
    lookup,
    math,
    nest,
    python_io,
    quantization,
    queue,
    raw_ops,
    sets,
    sparse,
    strings,
    summary,
    version,
)
from ferroflow.eager.backprop import GradientTape  # noqa: F401,E402
from ferroflow.eager.def_function import function  # noqa: F401,E402
from ferroflow.eager.wrap_function import wrap_function  # noqa: F401,E402
from ferroflow.framework.dtypes import QUANTIZED_DTYPES  # noqa: F401,E402
from ferroflow.framework.versions import (  # noqa: F401
    COMPILER_VERSION,
    GIT_VERSION,
    GRAPH_DEF_VERSION,
    GRAPH_DEF_VERSION_MIN_CONSUMER,
    GRAPH_DEF_VERSION_MIN_PRODUCER,
    VERSION,
    __version__,
)
from ferroflow.module.module import Module  # noqa: F401,E402  (after the ops: tracking imports variables)
from ferroflow.platform import lazy_loader as _lazy_loader  # noqa: E402
from ferroflow.training import queue_runner_impl as _queue_runner_impl  # noqa: F401,E402  (QUEUE_RUNNERS proto functions)

# Loaded on first use (PEP 562), as TF 1.x loads tf.estimator and tf.keras: `import ferroflow` stays short
# for every program and test subprocess. Nothing here registers ops, gradients, flags or collections that a
# program could need before touching the namespace (tests/python/test_lazy_import.py checks they stay unloaded).
_LAZY_SUBMODULES = (
    "app",
    "config",
    "data",
    "distribute",
    "distributions",
    "estimator",
    "feature_column",
    "flags",
    "graph_util",
    "image",
    "io",
    "keras",
    "layers",
    "lite",
    "losses",
    "metrics",
    "mixed_precision",
    "nn",
    "profiler",
    "ragged",
    "random",
    "saved_model",
    "signal",
    "spectral",
    "test",
    "train",
)
# Names whose modules nothing else loaded needs (tf.import_graph_def: the meta-graph machinery).
_LAZY_NAMES = {
    "conv": ("ferroflow.ops.nn_conv_nd", "conv"),
    "extract_image_patches": ("ferroflow.ops.image_ops", "extract_image_patches"),
    "import_graph_def": ("ferroflow.framework.importer", "import_graph_def"),
    # tf.signal's transforms; TF1's top-level N-D names are the bare ops.
    **{n: ("ferroflow.signal.fft_ops", n) for n in ("fft", "fft2d", "fft3d", "ifft", "ifft2d", "ifft3d")},
    **{n: ("ferroflow.signal.fft_ops", f"raw_{n}") for n in ("fftnd", "ifftnd", "irfftnd", "rfftnd")},
}
__getattr__, __dir__, __all__ = _lazy_loader.attach(__name__, _LAZY_SUBMODULES, _LAZY_NAMES)

_SUBMODULES = (
    "app", "audio", "bitwise", "compat", "config", "data", "debugging", "distribute", "distributions", "dtypes", "errors", "estimator", "feature_column", "flags", "gfile", "graph_util", "image",
    "initializers", "io", "keras",
    "layers", "linalg", "lite", "logging", "losses", "math", "metrics", "mixed_precision", "nest", "nn", "profiler", "python_io", "quantization", "queue", "ragged", "random", "raw_ops", "saved_model", "sets", "signal", "sparse", "spectral", "strings", "summary",
    "test", "train", "version",
)
