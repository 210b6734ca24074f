"""TensorFlow's op signatures, for giving exported NodeDefs every attr TensorFlow's op registry requires.

ferroflow's graph derives a node's dtypes from its inputs, so its nodes do
not carry the type attrs (``T``, ``Tidx``, ``SrcT``/``DstT``, ``out_type``, ...)
or list-length attrs (``N``) that TensorFlow's ``OpDef`` for the op declares;
TensorFlow refuses a NodeDef without them (``NodeDef missing attr 'T'``).
The signatures come from TensorFlow's registry, recorded under ``op_defs``
in ``ferroflow/core/_op_attr_defaults.json`` by ``tools/gen_op_attr_defaults.py``:
each op's input and output args (``name``; a fixed ``type``, or the
``type_attr`` / ``number_attr`` / ``type_list_attr`` naming the attr that
gives its type or length; ``is_ref``) and each attr's type (``"type"``,
``"int"``, ``"list(type)"``, ...).

:func:`add_signature_attrs` fills a NodeDef's missing type, type-list and
number attrs from the dtypes of the node's actual inputs and outputs, which
is what TensorFlow itself writes for every node (including the attrs that
have a registered default, such as ``Tidx``: the default could contradict
an int64 axis).
"""

from __future__ import annotations

__all__ = ["op_signature", "required_attrs", "add_signature_attrs"]


def op_signature(op_type):
    """TensorFlow's signature of ``op_type`` (``{"inputs", "outputs", "attrs"}``); None if TensorFlow lacks it."""
    from ferroflow.framework.op_attr_defaults import _document

    return _document()["op_defs"].get(op_type)


def required_attrs(op_type):
    """``{attr name: attr type}`` of the attrs of ``op_type`` that TensorFlow registers without a default.

    A NodeDef of ``op_type`` that lacks one of them does not import into
    TensorFlow. None for an op type TensorFlow does not know.
    """
    from ferroflow.framework.op_attr_defaults import _document

    doc = _document()
    signature = doc["op_defs"].get(op_type)
    if signature is None:
        return None
    defaults = doc["ops"][op_type]
    return {name: kind for name, kind in signature["attrs"].items() if name not in defaults}


def _arg_lengths(args, count, attr):
    """How many of ``count`` tensors each arg of ``args`` takes; None when that cannot be told.

    An arg is one tensor unless it has a ``number_attr`` or ``type_list_attr``;
    such a list's length comes from the attr when the node already has it,
    and otherwise from what is left over, which works while at most one
    list's length is unknown.
    """
    lengths, unknown = [], []
    for i, arg in enumerate(args):
        list_attr = arg.get("number_attr") or arg.get("type_list_attr")
        if list_attr is None:
            lengths.append(1)
        elif list_attr in attr:
            value = attr[list_attr]
            lengths.append(value.i if "number_attr" in arg else len(value.list.type))
        else:
            lengths.append(0)
            unknown.append(i)
    if len(unknown) > 1:
        return None
    rest = count - sum(lengths)
    if unknown:
        if rest < 0:
            return None
        lengths[unknown[0]] = rest
    elif rest != 0:
        return None
    return lengths


def add_signature_attrs(node_def, input_dtypes, output_dtypes):
    """Adds to ``node_def`` the type, type-list and number attrs its TensorFlow signature declares and it lacks.

    ``input_dtypes`` and ``output_dtypes`` are the ``DataType`` enum values of
    the node's data inputs and outputs (reference types allowed: attrs get
    the base type). Attrs the node already has are kept. Nodes of op types
    TensorFlow does not know, and args whose tensors cannot be matched up
    with the signature, are left alone.
    """
    signature = op_signature(node_def.op)
    if signature is None:
        return
    attr = node_def.attr
    for args, dtypes in ((signature["inputs"], input_dtypes), (signature["outputs"], output_dtypes)):
        lengths = _arg_lengths(args, len(dtypes), attr)
        if lengths is None:
            continue
        start = 0
        for arg, length in zip(args, lengths):
            types = [d - 100 if d > 100 else d for d in dtypes[start:start + length]]
            start += length
            if "number_attr" in arg and arg["number_attr"] not in attr:
                attr[arg["number_attr"]].i = length
            if "type_attr" in arg and arg["type_attr"] not in attr and types:
                attr[arg["type_attr"]].type = types[0]
            if "type_list_attr" in arg and arg["type_list_attr"] not in attr:
                value = attr[arg["type_list_attr"]].list
                value.SetInParent()  # an empty list is still a list
                value.type.extend(types)
