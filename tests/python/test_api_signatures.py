"""TensorFlow's own API listing is the oracle for names and argument lists."""

import importlib
import inspect
import json

import pytest

import ferroflow

MODULES = ["", "nn", "math", "debugging", "errors", "initializers", "random", "io.gfile", "dtypes", "io", "python_io",
           "summary", "test"]

# Names the core-engine issue requires at the top level of `tf`.
REQUIRED_TOP_LEVEL = """
Graph get_default_graph reset_default_graph Session InteractiveSession get_default_session
placeholder placeholder_with_default constant zeros ones fill zeros_like ones_like range linspace
random_normal random_uniform truncated_normal random_shuffle Variable get_variable variable_scope AUTO_REUSE
global_variables trainable_variables local_variables global_variables_initializer local_variables_initializer
variables_initializer report_uninitialized_variables is_variable_initialized assign assign_add assign_sub
scatter_update scatter_add scatter_sub name_scope control_dependencies group tuple identity no_op device
GraphKeys add_to_collection get_collection get_collection_ref add subtract multiply divide truediv floordiv mod
pow negative abs sign square sqrt rsqrt exp log log1p expm1 sin cos tanh sigmoid maximum minimum floor ceil
round reciprocal equal not_equal less less_equal greater greater_equal logical_and logical_or logical_not where
cast reduce_sum reduce_mean reduce_max reduce_min reduce_prod reduce_any reduce_all argmax argmin matmul add_n
reshape transpose expand_dims squeeze concat stack unstack split slice strided_slice gather gather_nd tile pad
one_hot shape size rank cumsum clip_by_value stop_gradient initialize_all_variables to_float to_int32 to_int64
zeros_initializer ones_initializer constant_initializer random_normal_initializer random_uniform_initializer
truncated_normal_initializer glorot_uniform_initializer glorot_normal_initializer variance_scaling_initializer
""".split()


def _manifest(fixtures):
    return json.loads((fixtures / "api" / "tf_compat_v1_api.json").read_text())["modules"]


def _resolve(module):
    obj = ferroflow
    for part in filter(None, module.split(".")):
        obj = getattr(obj, part)
    return obj


def _arg_names(obj):
    target = obj.__init__ if inspect.isclass(obj) else obj
    try:
        return [p.name for p in inspect.signature(target).parameters.values() if p.name != "self"]
    except (TypeError, ValueError):
        return None


def test_required_names_exist():
    missing = [n for n in REQUIRED_TOP_LEVEL if not hasattr(ferroflow, n)]
    assert not missing, missing
    v1 = importlib.import_module("ferroflow.compat.v1")
    assert all(hasattr(v1, n) for n in REQUIRED_TOP_LEVEL)
    assert v1.nn.relu is ferroflow.nn.relu


@pytest.mark.parametrize("module", MODULES)
def test_argument_lists_match_tensorflow(module, fixtures):
    entries = _manifest(fixtures)[module]
    mod = _resolve(module)
    mismatched = []
    for name, entry in entries.items():
        obj = getattr(mod, name, None)
        if obj is None or entry.get("args") is None or entry["kind"] == "constant":
            continue
        if entry["args"] in (["args", "kwargs"], ["args", "kwds"]) and entry["kind"] == "class":
            continue  # internal constructors: TF publishes no argument list
        got = _arg_names(obj)
        if got is not None and got != entry["args"]:
            mismatched.append(f"{module or 'tf'}.{name}: ours {got} vs TF {entry['args']}")
    assert not mismatched, "\n".join(mismatched)
