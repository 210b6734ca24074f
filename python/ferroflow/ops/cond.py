"""Branching in the graph: ``tf.cond``, ``tf.case`` and ``tf.switch_case``.

Each branch is built into a function graph (``framework/func_graph.py``);
one ``If`` op calls the branch its predicate picks, so only the taken
branch's ops run, side effects included. Its gradient runs the taken
branch's gradient function. ``tf.case`` is a chain of ``If``s, as TF1
builds it from conds; ``tf.switch_case`` is one ``Case`` op (a
``StatelessCase`` when no branch has side effects), as TensorFlow builds
it even in TF1 graphs, whose index out of range runs the last branch.
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
        def attrs(names, _):
            return {"then_branch": names[0], "else_branch": names[1]}

        op = _call_branches(outer, "If", pred, [g_true, g_false], [out_true, out_false],
                            [base + "_true", base + "_false"], attrs, "If")
        result = _results(op, op._outputs, f_true, s_true)
        if not strict and isinstance(result, (list, tuple)) and len(result) == 1 and not hasattr(result, "_fields"):
            return result[0]
        return result


def _call_branches(outer, op_type, selector, graphs, outs, base_names, branch_attrs, name):
    """The ``op_type`` op calling the branch ``selector`` picks of ``graphs`` (returning ``outs``):
    the branches share one argument list (every capture of any of them), each becomes a function
    named from ``base_names``, and ``branch_attrs(function names, outer inputs)`` names them.
    ``op_type`` may be a function of the function names."""
    outer_inputs = unify_captures(graphs)
    for g in graphs:
        with g.as_default():
            g.inputs = [g.capture(t) for t in outer_inputs]
    names = [to_function(g, out, base) for g, out, base in zip(graphs, outs, base_names)]
    shapes = [TensorShape(t.shape) for t in outs[0]]
    for other in outs[1:]:
        shapes = [_merged_shape(a, b.shape) for a, b in zip(shapes, other)]
    attrs = {
        "Tout": ("list_type", [t.dtype.base_dtype.as_datatype_enum for t in outs[0]]),
        "output_shapes": ("list_shape", [s._as_native() for s in shapes]),
        # A gradient can then have the taken branch keep what it reads
        # (a dropout mask, say) instead of recomputing it.
        "_history": any(t.dtype.base_dtype.is_floating for t in outer_inputs + outs[0]),
    }
    attrs.update(branch_attrs(names, outer_inputs))
    if callable(op_type):
        op_type = op_type(names)
    return call_function_op(outer, op_type, [selector] + outer_inputs, attrs, name, graphs)


def _results(op, outputs, flat, structure):
    """The branch op's ``outputs`` in the structure a branch returned (``flat`` its leaves): an
    Operation leaf stands for the op, a TensorArray is rebuilt around its flow."""
    from ferroflow.ops.tensor_array_ops import from_flow

    flat_out = [
        op if isinstance(leaf, ops.Operation) else from_flow(tmpl, outputs[i])
        for i, (leaf, tmpl) in enumerate(zip(flat, nest.flatten(structure)))
    ]
    if nest.is_sequence(structure):
        return nest.pack_sequence_as(structure, flat_out)
    return flat_out[0] if flat_out else None


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
    fns = [f for _, f in items]
    if default is not None:
        if not callable(default):
            raise TypeError("default must be callable.")
        fns.append(default)
    with ops.name_scope(name, "switch_case", [branch_index]):
        index = ops.convert_to_tensor(branch_index, name="branch_index")
        if not index.dtype.base_dtype.is_integer:
            raise TypeError(f"'branch_index' must be an integer Tensor, got <dtype: '{index.dtype.base_dtype.name}'>")
        return _indexed_case(index, fns)


def _indexed_case(index, fns):
    """One ``Case`` op over ``fns`` (the last runs for an index out of range), named as TensorFlow's
    ``indexed_case`` names it; its results pass through identities."""
    from ferroflow.ops import array_ops

    with ops.name_scope(None, "indexed_case") as scope:
        outer = ops.get_default_graph()
        base = scope.rstrip("/")
        built = [build_branch(fn, f"{base}/branch{k}", outer, f"branches[{k}]") for k, fn in enumerate(fns)]
        graphs = [g for g, _, _ in built]
        outs = [_as_outputs(g, flat) for g, _, flat in built]
        first = built[0][1]
        for k in range(1, len(built)):
            detail = None
            try:
                nest.assert_same_structure(first, built[k][1])
            except (TypeError, ValueError) as e:
                detail = str(e)
            for a, b in zip(outs[0], outs[k]):
                if detail is None and a.dtype.base_dtype != b.dtype.base_dtype:
                    detail = f"{a} and {b} have different types"
            if detail is not None:
                raise TypeError(
                    f"branches[0] and branches[{k}] arguments to tf.switch_case must have the same number, "
                    f"type, and overall structure of return values.\n\nbranches[0] output: {first}\n"
                    f"branches[{k}] output: {built[k][1]}\n\nError details:\n{detail}"
                )

        def attrs(names, outer_inputs):
            return {
                "branches": list(names),
                "Tin": ("list_type", [t.dtype.base_dtype.as_datatype_enum for t in outer_inputs]),
            }

        def op_type(names):
            # TensorFlow's rule: StatelessCase unless a branch has side effects.
            stateful = any(outer._native.function_is_stateful(n) for n in names)
            op_type = "Case" if stateful else "StatelessCase"
            if index.dtype.base_dtype != dtypes.int32:
                raise TypeError(
                    f"Input 'branch_index' of '{op_type}' Op has type {index.dtype.base_dtype.name} that does "
                    "not match expected type of int32."
                )
            return op_type

        op = _call_branches(outer, op_type, index, graphs, outs, [f"{base}/branch{k}" for k in range(len(fns))],
                            attrs, scope)
        outputs = [array_ops.identity(t) for t in op._outputs[: len(outs[0])]]
        return _results(op, outputs, built[0][2], first)
