"""Branching in the graph: ``tf.cond``, ``tf.case`` and ``tf.switch_case``.

Each branch is built into a function graph (``framework/func_graph.py``);
one ``If`` op calls the branch its predicate picks, so only the taken
branch's ops run, side effects included. Its gradient is an ``If`` over the
branches' gradient functions.
"""

from __future__ import annotations

from ferroflow.framework import dtypes, ops
from ferroflow.framework.func_graph import (
    FuncGraph,
    call_function_op,
    leaf_to_tensor,
    to_function,
    unify_captures,
)
from ferroflow.framework.tensor_shape import TensorShape
from ferroflow.ops import _nest as nest


def build_branch(fn, name, outer, which="fn"):
    """Runs ``fn`` in a new function graph; returns ``(graph, structure, flat results)``."""
    from ferroflow.ops.tensor_array_ops import to_flow

    g = FuncGraph(name, outer)
    with g.as_default():
        structure = fn()
        if structure is None:
            raise ValueError(f"'{which}' must have a return value.")
        flat = [leaf_to_tensor(to_flow(x)) for x in nest.flatten(structure)]
    return g, structure, flat


def _as_outputs(g, flat):
    """Tensors the function returns: an Operation leaf becomes a bool that waits for it."""
    from ferroflow.framework import constant_op

    out = []
    with g.as_default():
        for x in flat:
            if isinstance(x, ops.Operation):
                with g.control_dependencies([x]):
                    x = constant_op.constant(True)
            out.append(x)
    return out


def _merged_shape(a, b):
    a, b = TensorShape(a), TensorShape(b)
    if a.rank is None or b.rank is None or a.rank != b.rank:
        return TensorShape(None)
    return TensorShape([x if x == y else None for x, y in zip(a.as_list(), b.as_list())])


def cond(pred, true_fn=None, false_fn=None, strict=False, name=None, fn1=None, fn2=None):
    """``true_fn()`` if ``pred`` is true, else ``false_fn()``; only the chosen branch runs."""
    if fn1 is not None:
        if true_fn is not None:
            raise TypeError("cond(): 'true_fn' and 'fn1' may not be set simultaneously.")
        true_fn = fn1
    if fn2 is not None:
        if false_fn is not None:
            raise TypeError("cond(): 'false_fn' and 'fn2' may not be set simultaneously.")
        false_fn = fn2
    if not callable(true_fn):
        raise TypeError("'true_fn' must be callable.")
    if not callable(false_fn):
        raise TypeError("'false_fn' must be callable.")
    if isinstance(pred, bool):
        raise TypeError("'pred' must not be a Python bool.")
    with ops.name_scope(name, "cond", [pred]) as scope:
        pred = ops.convert_to_tensor(pred)
        if pred.dtype.base_dtype != dtypes.bool:
            raise TypeError(
                f"Input 'pred' of 'If' Op has type {pred.dtype.base_dtype.name} that does not match expected "
                "type of bool."
            )
        if pred.shape.rank not in (None, 0):
            raise ValueError(f"Shape must be rank 0 but is rank {pred.shape.rank} for 'pred' ({pred.name})")
        outer = ops.get_default_graph()
        base = scope.rstrip("/") or "cond"
        g_true, s_true, f_true = build_branch(true_fn, base + "_true", outer, "true_fn")
        g_false, s_false, f_false = build_branch(false_fn, base + "_false", outer, "false_fn")
        try:
            nest.assert_same_structure(s_true, s_false)
        except (TypeError, ValueError) as e:
            raise ValueError(
                f"The two structures don't have the same nested structure (the results of 'true_fn' and "
                f"'false_fn').\n\n{e}"
            ) from None
        out_true = _as_outputs(g_true, f_true)
        out_false = _as_outputs(g_false, f_false)
        for a, b in zip(out_true, out_false):
            if a.dtype.base_dtype != b.dtype.base_dtype:
                raise ValueError(
                    f"Outputs of 'true_fn' and 'false_fn' must have the same type(s). Received "
                    f"{a.dtype.base_dtype.name} from 'true_fn' and {b.dtype.base_dtype.name} from 'false_fn'."
                )
        outer_inputs = unify_captures([g_true, g_false])
        for g in (g_true, g_false):
            with g.as_default():
                g.inputs = [g.capture(t) for t in outer_inputs]
        then_name = to_function(g_true, out_true, base + "_true")
        else_name = to_function(g_false, out_false, base + "_false")
        shapes = [_merged_shape(a.shape, b.shape) for a, b in zip(out_true, out_false)]
        op = call_function_op(
            outer, "If", [pred] + outer_inputs,
            {
                "then_branch": then_name,
                "else_branch": else_name,
                "Tout": ("list_type", [t.dtype.base_dtype.as_datatype_enum for t in out_true]),
                "output_shapes": ("list_shape", [s._as_native() for s in shapes]),
                # A gradient can then have the taken branch keep what it reads
                # (a dropout mask, say) instead of recomputing it.
                "_history": any(t.dtype.base_dtype.is_floating for t in outer_inputs + out_true),
            },
            "If", [g_true, g_false],
        )
        from ferroflow.ops.tensor_array_ops import from_flow

        flat_out = [
            op if isinstance(leaf, ops.Operation) else from_flow(tmpl, op._outputs[i])
            for i, (leaf, tmpl) in enumerate(zip(f_true, nest.flatten(s_true)))
        ]
        result = nest.pack_sequence_as(s_true, flat_out) if nest.is_sequence(s_true) else flat_out[0] if flat_out else None
        if not strict and isinstance(result, (list, tuple)) and len(result) == 1 and not hasattr(result, "_fields"):
            return result[0]
        return result


def _pairs(pred_fn_pairs):
    if isinstance(pred_fn_pairs, dict):
        pairs = list(pred_fn_pairs.items())
    elif isinstance(pred_fn_pairs, (list, tuple)):
        pairs = list(pred_fn_pairs)
    else:
        raise TypeError("pred_fn_pairs must be a list, tuple, or dict")
    for p in pairs:
        if not isinstance(p, tuple) or len(p) != 2:
            raise TypeError("Each entry in pred_fn_pairs must be a 2-tuple")
        pred, fn = p
        if not callable(fn):
            raise TypeError("fn for pred {} must be callable.".format(getattr(pred, "name", pred)))
        if isinstance(pred, ops.Tensor) and pred.dtype.base_dtype != dtypes.bool:
            raise TypeError(f"pred must be Tensor of type bool: {pred.name}")
    return pairs


def case(pred_fn_pairs, default=None, exclusive=False, strict=False, name="case"):
    """The result of the first ``fn`` whose ``pred`` is true (``default()`` if none is)."""
    from ferroflow.ops import array_ops, control_flow_ops, math_ops

    pairs = _pairs(pred_fn_pairs)
    if default is not None and not callable(default):
        raise TypeError("default must be callable.")
    if default is None and not pairs:
        raise ValueError("pred_fn_pairs must not be empty when no default is given")
    with ops.name_scope(name, "case", [p for p, _ in pairs]):
        preds = [ops.convert_to_tensor(p) for p, _ in pairs]
        fns = [f for _, f in pairs]
        if default is None:
            # The last pair's function is the default; TF checks that some predicate holds.
            stacked = array_ops.stack(preds)
            msg = "Input error: None of conditions evaluated as True:"
            check = control_flow_ops.Assert(math_ops.reduce_any(stacked), [msg, stacked], summarize=len(preds))
            with ops.control_dependencies([check]):
                preds = [array_ops.identity(p) for p in preds]
            preds, default = preds[:-1], fns[-1]
            fns = fns[:-1]
        if not preds:
            return default()

        def build(i):
            if i == len(preds):
                return default()
            return cond(preds[i], fns[i], lambda: build(i + 1), strict=True, name=f"case_{i}" if i else None)

        if exclusive and len(preds) > 1:
            count = math_ops.reduce_sum(math_ops.cast(array_ops.stack(preds), dtypes.int32))
            ok = math_ops.less_equal(count, 1)
            msg = "Input error: exclusive=True: more than 1 conditions evaluated as True:"
            check = control_flow_ops.Assert(ok, [msg, array_ops.stack(preds)], summarize=len(preds))
            with ops.control_dependencies([check]):
                preds = [array_ops.identity(p) for p in preds]
        result = build(0)
        if not strict and isinstance(result, (list, tuple)) and len(result) == 1 and not hasattr(result, "_fields"):
            return result[0]
        return result


def switch_case(branch_index, branch_fns, default=None, name="switch_case"):
    """``branch_fns[branch_index]()``; ``default()`` (else the last branch) for any other index."""
    from ferroflow.ops import math_ops

    if isinstance(branch_fns, dict):
        items = sorted(branch_fns.items())
        if any(not isinstance(k, int) for k, _ in items):
            raise TypeError("branch_fns dict keys must be ints")
        keys = [k for k, _ in items]
        if keys != list(range(len(keys))):
            found = ",".join(str(k) for k in keys)
            raise ValueError(
                f"branch indices (keys) must form contiguous range of [0 to {len(keys)}) but found {{{found}}}"
            )
    elif isinstance(branch_fns, (list, tuple)):
        items = list(enumerate(branch_fns))
    else:
        raise TypeError("branch_fns must be a list, tuple, or dict")
    if not items:
        raise ValueError("Must provide at least one item in 'branch_fns'")
    for _, f in items:
        if not callable(f):
            raise TypeError("branch_fns values must be callable")
    with ops.name_scope(name, "switch_case", [branch_index]):
        index = ops.convert_to_tensor(branch_index, name="branch_index")
        if not index.dtype.base_dtype.is_integer:
            raise TypeError(f"'branch_index' must be an integer Tensor, got <dtype: '{index.dtype.base_dtype.name}'>")
        if default is None:
            items, default = items[:-1], items[-1][1]
        pairs = [(math_ops.equal(index, k), f) for k, f in items]
        return case(pairs, default=default, strict=True, name=None) if pairs else default()
