"""``tf.import_graph_def``: a ``GraphDef``'s nodes into the default graph.

The nodes are created by the importer MetaGraphs use
(``framework.meta_graph.import_graph_def_nodes``); this module adds
TensorFlow's public surface on top: the ``import`` name scope, ``input_map``
rewiring (``"name:i"`` data inputs and ``"^name"`` control inputs),
``return_elements`` and TensorFlow's errors for names the GraphDef lacks.
"""

from __future__ import annotations

from ferroflow.framework import ops
from ferroflow.framework.meta_graph import import_graph_def_nodes

__all__ = ["import_graph_def"]


def _parse_tensor_name(name):
    """``"op:3"`` -> ("op", 3); ``"op"`` -> ("op", 0); more than one ``:`` is a ValueError."""
    parts = name.split(":")
    if len(parts) == 1:
        return parts[0], 0
    if len(parts) == 2:
        try:
            return parts[0], int(parts[1])
        except ValueError:
            raise ValueError(f"Cannot convert {name!r} to a tensor name. Second component of the name following "
                             f"the `:` should be an int. Got {parts[1]}.") from None
    raise ValueError(f"Cannot convert '{name}' to a tensor name. Tensor names should not contain more than 1 `:`. "
                     f"Obtained {len(parts) - 1}")


def _as_str(s):
    return s.decode() if isinstance(s, bytes) else s


def _check_graph_def(graph_def):
    from ferroflow.core.framework import graph_pb2

    if isinstance(graph_def, graph_pb2.GraphDef):
        return graph_def
    # Another GraphDef class (TensorFlow's own, say): copy it over by its wire format.
    try:
        return graph_pb2.GraphDef.FromString(graph_def.SerializeToString())
    except Exception:  # noqa: BLE001 - anything that is not a GraphDef
        raise TypeError("Argument `graph_def` must be a GraphDef proto.") from None


def _check_input_map(input_map):
    if input_map is None:
        return {}
    if not isinstance(input_map, dict):
        raise TypeError(f"Argument `input_map` must be a dictionary. Obtained {type(input_map).__name__}")
    if not all(isinstance(k, (str, bytes)) for k in input_map):
        raise TypeError(f"All keys for argument `input_map` must be strings. Obtained keys: {list(input_map)}")
    return {_as_str(k): v for k, v in input_map.items()}


def _check_return_elements(return_elements):
    if return_elements is None:
        return None
    if isinstance(return_elements, (str, bytes)) or not all(isinstance(x, (str, bytes)) for x in return_elements):
        raise TypeError(f"Argument `return_elements` must be a list of strings. Obtained {return_elements}.")
    return tuple(_as_str(x) for x in return_elements)


def _remove_producer_defaults(producer_op_list, graph_def):
    """Drops attrs ferroflow's op registry does not know when they hold the producer's default (TensorFlow's rule)."""
    from ferroflow.framework.op_signatures import op_signature

    producer = {op.name: op for op in producer_op_list.op}
    for node in graph_def.node:
        signature = op_signature(node.op)
        op_def = producer.get(node.op)
        if signature is None or op_def is None:
            continue
        known = signature.get("attrs", {})
        defaults = {a.name: a.default_value for a in op_def.attr if a.HasField("default_value")}
        for key in [k for k in node.attr if not k.startswith("_") and k not in known]:
            if key in defaults and defaults[key] == node.attr[key]:
                del node.attr[key]


def import_graph_def(graph_def, input_map=None, return_elements=None, name=None, op_dict=None, producer_op_list=None):
    """Imports the nodes of ``graph_def`` into the default graph; returns the ``return_elements``.

    Args:
      graph_def: a ``GraphDef`` proto.
      input_map: ``{name in graph_def: Tensor}``. ``"op:i"`` (or ``"op"``,
        output 0) replaces that tensor wherever an imported node reads it;
        ``"^op"`` replaces the control input ``^op`` with the value's op. The
        mapped node itself is still imported. Values that are not Tensors are
        converted (under ``<name>/_inputs``), which needs a non-empty ``name``.
      return_elements: names in ``graph_def``: ``"op"`` returns the imported
        Operation, ``"op:i"`` the imported Tensor (or the mapped one, when the
        tensor is in ``input_map``), in the order given.
      name: prefix of the imported names (default ``"import"``, made unique
        the way name scopes are; ``""`` for none, in which case a name already
        taken in the graph gets a fresh ``_N`` suffix).
      op_dict: unused (deprecated in TensorFlow too).
      producer_op_list: an ``OpList`` of the producer's op definitions: attrs
        ferroflow's op registry lacks that hold the producer's default value
        are dropped before import.

    Returns:
      The list of Operations and Tensors named by ``return_elements``, or
      None when it is None.

    Raises:
      TypeError: ``graph_def`` is not a GraphDef, ``input_map`` not a dict
        keyed by strings, or ``return_elements`` not a list of strings.
      ValueError: ``input_map`` or ``return_elements`` names something not in
        ``graph_def``, or ``graph_def`` is malformed (an input naming no node,
        a cycle, an attribute ferroflow cannot represent).
    """
    graph_def = _check_graph_def(graph_def)
    input_map = _check_input_map(input_map)
    return_elements = _check_return_elements(return_elements)
    del op_dict  # TensorFlow ignores it as well.
    if producer_op_list is not None:
        copy = type(graph_def)()
        copy.CopyFrom(graph_def)
        graph_def = copy
        _remove_producer_defaults(producer_op_list, graph_def)

    graph = ops.get_default_graph()
    with graph.as_default(), ops.name_scope(name, "import", list(input_map.values())) as scope:
        prefix = scope[:-1] if scope else ""
        if not all(isinstance(v, ops.Tensor) or (k.startswith("^") and isinstance(v, ops.Operation))
                   for k, v in input_map.items()):
            if name == "":
                raise ValueError("tf.import_graph_def() requires a non-empty `name` if `input_map` contains "
                                 "non-Tensor values. Try calling tf.convert_to_tensor() on `input_map` values before "
                                 "calling tf.import_graph_def().")
            with ops.name_scope("_inputs"):
                input_map = {k: v if isinstance(v, (ops.Tensor, ops.Operation)) else ops.convert_to_tensor(v)
                             for k, v in input_map.items()}

    mapping = {}
    for key, value in input_map.items():
        if value.graph is not graph:
            raise ValueError(f"input_map value for '{key}' ({value.name}) must be from the graph being imported into")
        if key.startswith("^"):
            mapping[(key[1:], None)] = value if isinstance(value, ops.Operation) else value.op
        else:
            if isinstance(value, ops.Operation):
                raise TypeError(f"input_map value for '{key}' must be a Tensor, got the Operation {value.name}")
            mapping[_parse_tensor_name(key)] = value

    node_names = {n.name for n in graph_def.node}
    # TensorFlow rejects the keys that no node reads and that name no output of graph_def. It checks after
    # importing; keys naming no node are checked here, so the graph is left as it was. Bad indices: below.
    read = {_input_key(x) for n in graph_def.node for x in n.input} if mapping else set()
    missing = [k for k in mapping if k[0] not in node_names and k not in read]
    if missing:
        _raise_missing_inputs(missing)
    for element in return_elements or ():
        if ":" in element:
            op_name, index = _parse_tensor_name(element)
            if op_name not in node_names and (op_name, index) not in mapping:
                raise ValueError(f"Requested return tensor '{op_name}:{index}' not found in graph def")
        elif element not in node_names:
            raise ValueError(f"Requested return node '{element}' not found in graph def")

    created = import_graph_def_nodes(graph_def, graph, import_scope=prefix, input_map=mapping, uniquify_names=True)

    bad_index = [k for k in mapping if k[1] is not None and k not in read and k[0] in created
                 and k[1] >= len(created[k[0]].outputs)]
    if bad_index:
        _raise_missing_inputs(bad_index)
    if return_elements is None:
        return None
    results = []
    for element in return_elements:
        if ":" not in element:
            results.append(_imported(created, element))
            continue
        key = _parse_tensor_name(element)
        if key in mapping:
            results.append(mapping[key])
            continue
        op = _imported(created, key[0])
        if key[1] >= len(op.outputs):
            raise ValueError(f"Invalid return output {key[1]} of node '{key[0]}', which has {len(op.outputs)} "
                             "output(s)")
        results.append(op.outputs[key[1]])
    return results


def _input_key(name):
    """A NodeDef input string as an ``input_map`` key: ``(op, index)``, or ``(op, None)`` for ``^op``."""
    if name.startswith("^"):
        return name[1:], None
    op, sep, index = name.rpartition(":")
    return (op, int(index)) if sep and index.isdigit() else (name, 0)


def _imported(created, node_name):
    op = created.get(node_name)
    if op is None:  # a per-variable update op that import folded back into ferroflow's fused update
        raise ValueError(f"Requested return node '{node_name}' was folded into a fused update on import; "
                         "ask for the fused update node instead")
    return op


def _raise_missing_inputs(keys):
    names = ", ".join(f"^{op}" if index is None else f"{op}:{index}" for op, index in keys)
    raise ValueError(f"Attempted to map inputs that were not found in graph_def: [{names}]")
