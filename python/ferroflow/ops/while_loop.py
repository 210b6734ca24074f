"""Loops in the graph: ``tf.while_loop``.

The condition and the body are each built once into a function graph
(``framework/func_graph.py``); one ``While`` op runs the loop in Rust,
calling the compiled condition and body per iteration. Tensors the two
functions capture from outside become extra loop variables that the body
passes through unchanged. For the gradient, the op keeps the loop
variables' value at the start of each iteration (its history outputs, kept
only when a gradient reads them), and a ``WhileGrad`` op runs the body's
gradient over them backwards.

An ``IndexedSlices`` loop variable flows as its component tensors (values,
indices, and dense_shape when it has one), as in TF1; its shape invariant is
that of its values (indices then ``[rows]``, dense_shape ``[rank]``).
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
from ferroflow.framework.indexed_slices import IndexedSlices
from ferroflow.framework.tensor_shape import TensorShape
from ferroflow.ops import _nest as nest
from ferroflow.ops.tensor_array_ops import TensorArray, from_flow, to_flow


def _shape_text(s):
    s = TensorShape(s)
    if s.rank is None:
        return "<unknown>"
    return "(" + ", ".join("None" if d is None else str(d) for d in s.as_list()) + ("," if s.rank == 1 else "") + ")"


def _check_invariant(inp, invariant):
    if not TensorShape(invariant).is_compatible_with(inp.shape):
        raise ValueError(
            f"The shape invariant specified for {inp.name} is not compatible with the initial shape of the "
            f"loop variable. It enters the loop with shape {_shape_text(inp.shape)}, but the specified shape "
            f"invariant is {_shape_text(invariant)}."
        )


def _check_result(inp, invariant, out):
    if inp.dtype.base_dtype != out.dtype.base_dtype:
        raise TypeError(
            f"The loop variable {inp.name} enters the loop with dtype {inp.dtype.base_dtype.name}, but has "
            f"dtype {out.dtype.base_dtype.name} after one iteration."
        )
    inv = TensorShape(invariant)
    got = TensorShape(out.shape)
    ok = inv.rank is None or (
        got.rank == inv.rank and all(a is None or a == b for a, b in zip(inv.as_list(), got.as_list()))
    )
    if not ok:
        raise ValueError(
            f"Input tensor '{inp.name}' enters the loop with shape {_shape_text(inv)}, but has shape "
            f"{_shape_text(got)} after one iteration. To allow the shape to vary across iterations, use the "
            "`shape_invariants` argument of tf.while_loop to specify a less-specific shape."
        )


def _slices_invariants(slices, invariant):
    """The invariants of an IndexedSlices loop variable's components, from that of its values."""
    s = TensorShape(invariant)
    rows = TensorShape(None) if s.rank is None else TensorShape([s.as_list()[0] if s.rank else None])
    out = [s, rows]
    if slices.dense_shape is not None:
        out.append(TensorShape(None) if s.rank is None else TensorShape([s.rank]))
    return out


def _check_leaves(entered, returned):
    """The body returns a loop variable of the kind it entered as (TensorArray, IndexedSlices with or
    without a dense_shape, tensor)."""
    for x, r in zip(entered, returned):
        if isinstance(x, TensorArray) != isinstance(r, TensorArray):
            raise TypeError(
                f"A loop variable is {type(x).__name__} on entry but the body returned "
                f"{type(r).__name__} for it."
            )
        if isinstance(x, IndexedSlices) != isinstance(r, IndexedSlices):
            raise TypeError(
                f"A loop variable is {type(x).__name__} on entry but the body returned "
                f"{type(r).__name__} for it."
            )
        if isinstance(x, IndexedSlices) and (x.dense_shape is None) != (r.dense_shape is None):
            raise TypeError(
                "An IndexedSlices loop variable enters the loop with"
                + ("out" if x.dense_shape is None else "")
                + " a dense_shape, but the body returned one with"
                + ("out" if r.dense_shape is None else "")
                + " a dense_shape."
            )


def _exits(outs, is_list, back_prop):
    """The loop's results as TF1 graphs name them, ``<loop>/Exit``, ``<loop>/Exit_1``, ... (programs fetch
    ``while/Exit:0`` by name): an identity per loop variable (a stop_gradient without ``back_prop``), numbered
    by its place among the flattened loop variables. A TensorArray's flow stays the While op's output."""
    from ferroflow.ops import array_ops

    named = []
    for k, (t, listed) in enumerate(zip(outs, is_list)):
        if listed:
            named.append(t)
            continue
        name = "Exit" if k == 0 else f"Exit_{k}"
        named.append(array_ops.identity(t, name=name) if back_prop else array_ops.stop_gradient(t, name=name))
    return named


def while_loop(cond, body, loop_vars, shape_invariants=None, parallel_iterations=10, back_prop=True,
               swap_memory=False, name=None, maximum_iterations=None, return_same_structure=False):
    """Repeats ``body`` while ``cond`` is true; returns the loop variables' final values."""
    if not callable(cond):
        raise TypeError("'cond' must be callable.")
    if not callable(body):
        raise TypeError("'body' must be callable.")
    if parallel_iterations < 1:
        raise TypeError("parallel_iterations must be a positive integer.")
    if not isinstance(loop_vars, (list, tuple)) or hasattr(loop_vars, "_fields"):
        loop_vars = [loop_vars]
        if shape_invariants is not None:
            shape_invariants = [shape_invariants]
    if not loop_vars:
        raise ValueError("'loop_vars' must be provided.")
    single = len(loop_vars) == 1 and not return_same_structure
    with ops.name_scope(name, "while", nest.flatten(loop_vars)) as scope:
        if maximum_iterations is not None:
            from ferroflow.framework import constant_op
            from ferroflow.ops import math_ops

            maximum_iterations = ops.convert_to_tensor(maximum_iterations, name="maximum_iterations")
            if maximum_iterations.shape.rank not in (None, 0):
                raise ValueError(
                    f"maximum_iterations must be a scalar, saw shape: {maximum_iterations.shape}"
                )
            counter = constant_op.constant(0, dtype=maximum_iterations.dtype, name="iteration_counter")
            user_cond, user_body = cond, body
            if single:
                def cond(i, lv):
                    return math_ops.logical_and(i < maximum_iterations, user_cond(lv))

                def body(i, lv):
                    return (i + 1, user_body(lv))

                loop_vars = [counter, loop_vars[0]]
            else:
                def cond(i, lv):
                    return math_ops.logical_and(i < maximum_iterations, user_cond(*lv))

                def body(i, lv):
                    return (i + 1, user_body(*lv))

                # The caller's own container: TensorFlow compares its type with the body's result's.
                loop_vars = [counter, loop_vars]
            if shape_invariants is not None:
                if not single:
                    shape_invariants = (tuple if isinstance(loop_vars[1], tuple) else list)(shape_invariants)
                shape_invariants = [TensorShape([]), shape_invariants[0] if single else shape_invariants]
        structure = list(loop_vars)
        leaves = nest.flatten(structure)
        # IndexedSlices flow as their components.
        templates = nest.flatten(structure, expand_composites=True)
        flat_in = [ops.convert_to_tensor(to_flow(x)) for x in templates]
        is_list = [t.graph._native.is_list(t._tid) for t in flat_in]
        if shape_invariants is None:
            invariants = [t.shape for t in flat_in]
        else:
            try:
                per_leaf = nest.flatten_up_to(structure, list(shape_invariants))
            except (TypeError, ValueError) as e:
                raise ValueError(f"shape_invariants must have the structure of loop_vars: {e}") from None
            invariants = []
            for leaf, s in zip(leaves, per_leaf):
                invariants.extend(_slices_invariants(leaf, s) if isinstance(leaf, IndexedSlices) else [s])
            invariants = [
                t.shape if listed else TensorShape(s) for t, s, listed in zip(flat_in, invariants, is_list)
            ]
            for t, s in zip(flat_in, invariants):
                _check_invariant(t, s)
        outer = ops.get_default_graph()
        base = scope.rstrip("/") or "while"

        def new_graph(kind):
            g = FuncGraph(base + "_" + kind, outer)
            args = [
                g.add_arg(t.dtype, s, name=t.op.name.rsplit("/", 1)[-1], is_list=listed)
                for t, s, listed in zip(flat_in, invariants, is_list)
            ]
            return g, args

        def packed(args):
            return nest.pack_sequence_as(
                structure, [from_flow(x, a) for x, a in zip(templates, args)], expand_composites=True
            )

        g_cond, cond_args = new_graph("cond")
        with g_cond.as_default():
            pred = leaf_to_tensor(cond(*packed(cond_args)))
            if pred.dtype.base_dtype != dtypes.bool:
                raise TypeError(f"A while loop's condition must be a bool tensor, got {pred.dtype.name}")
            if pred.shape.rank not in (None, 0):
                raise ValueError(
                    f"Shape must be rank 0 but is rank {pred.shape.rank} for the condition of while loop '{base}'"
                )
        g_body, body_args = new_graph("body")
        with g_body.as_default():
            result = body(*packed(body_args))
            if len(structure) == 1 and not (isinstance(result, (list, tuple)) and len(result) == 1):
                result = [result]
            body_returned_tuple = isinstance(result, tuple) and not hasattr(result, "_fields")
            if body_returned_tuple:
                result = list(result)
            # As TensorFlow: the outermost containers may differ (a list of loop_vars, a tuple returned),
            # nested ones must be of one type (TypeError), and the structures alike (ValueError).
            try:
                nest.assert_same_structure(structure, result, check_types=True)
            except (TypeError, ValueError) as e:
                raise type(e)(
                    f"The two structures don't have the same nested structure (loop_vars and the body's "
                    f"result).\n\n{e}"
                ) from None
            _check_leaves(leaves, nest.flatten(result))
            result_templates = nest.flatten(result, expand_composites=True)
            flat_out = [leaf_to_tensor(to_flow(x)) for x in result_templates]
        for t, s, o, listed in zip(flat_in, invariants, flat_out, is_list):
            if not listed:
                _check_result(t, s, o)
        captured = unify_captures([g_cond, g_body])
        with g_cond.as_default():
            g_cond.inputs = cond_args + [g_cond.capture(t) for t in captured]
        with g_body.as_default():
            extra = [g_body.capture(t) for t in captured]
            g_body.inputs = body_args + extra
        cond_name = to_function(g_cond, [pred], base + "_cond")
        body_name = to_function(g_body, flat_out + extra, base + "_body")
        inputs = flat_in + captured
        history = bool(back_prop) and any(t.dtype.base_dtype.is_floating for t in inputs)
        shapes = list(invariants) + [t.shape for t in captured]
        op = call_function_op(
            outer, "While", inputs,
            {
                "cond": cond_name,
                "body": body_name,
                "output_shapes": ("list_shape", [TensorShape(s)._as_native() for s in shapes]),
                "parallel_iterations": int(parallel_iterations),
                "_history": history,
            },
            "While", [g_cond, g_body],
        )
        outs = _exits(op._outputs[: len(flat_in)], is_list, back_prop)
        # As TF1's: the result has the structure the body returned (a tuple for a body returning one).
        shape_of_result = structure if not body_returned_tuple else tuple(structure)
        result = nest.pack_sequence_as(
            shape_of_result, [from_flow(r, o) for r, o in zip(result_templates, outs)], expand_composites=True
        )
        if maximum_iterations is not None:
            return result[1]
        return result[0] if single else result
