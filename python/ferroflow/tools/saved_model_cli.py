"""Shows and runs SavedModels from the command line (what TensorFlow's ``saved_model_cli`` does).

``ferroflow saved-model show --dir DIR`` lists the tag sets;
``--tag_set serve`` the signature keys of that meta graph;
``--signature_def KEY`` that signature's inputs and outputs; ``--all``
everything. ``ferroflow saved-model run --dir DIR --tag_set serve
--signature_def KEY`` feeds inputs given as ``--inputs 'x=file.npy;y=f.npz[arr]'``,
``--input_exprs 'x=[[1.0, 2.0]]'`` (Python literals, or NumPy expressions
with ``np``) or ``--input_examples 'inputs=[{"age": [30.0]}]'``
(``tf.train.Example``s built from feature dicts), then prints each output or
saves it as ``OUTDIR/<key>.npy``.
"""

from __future__ import annotations

import ast
import os
import sys

import numpy as np


class SavedModelCliError(Exception):
    """A bad argument, directory, tag set or signature (the message says which)."""


def _tag_set(text):
    return [t for t in (s.strip() for s in text.split(",")) if t]


def _loader(directory):
    from ferroflow.saved_model import loader

    try:
        return loader.SavedModelLoader(directory)
    except OSError as e:
        raise SavedModelCliError(str(e)) from None


def _meta_graph(sm_loader, tag_set):
    try:
        return sm_loader.get_meta_graph_def_from_tags(_tag_set(tag_set))
    except RuntimeError as e:
        raise SavedModelCliError(str(e)) from None


def _signature(meta_graph_def, key, tag_set):
    if key not in meta_graph_def.signature_def:
        raise SavedModelCliError(f"MetaGraphDef with tag-set '{tag_set}' has no SignatureDef '{key}'; it has: "
                                 f"{', '.join(sorted(meta_graph_def.signature_def)) or 'none'}")
    return meta_graph_def.signature_def[key]


def _format_tensor_info(info, indent):
    pad = " " * indent
    lines = [f"{pad}dtype: {_dtype_enum_name(info.dtype)}"]
    shape = info.tensor_shape
    if shape.unknown_rank:
        lines.append(f"{pad}shape: unknown_rank")
    else:
        dims = [str(d.size) for d in shape.dim]
        lines.append(f"{pad}shape: ({', '.join(dims)})")
    encoding = info.WhichOneof("encoding")
    if encoding == "coo_sparse":
        coo = info.coo_sparse
        lines.append(f"{pad}SparseTensor: indices {coo.indices_tensor_name}, values {coo.values_tensor_name}, "
                     f"dense_shape {coo.dense_shape_tensor_name}")
    else:
        lines.append(f"{pad}name: {info.name}")
    return lines


def _dtype_enum_name(enum):
    from ferroflow.core.framework import types_pb2

    return types_pb2.DataType.Name(enum)


def format_signature(signature, indent=0):
    """The lines ``show --signature_def`` prints for one signature."""
    pad = " " * indent
    lines = [f"{pad}The given SavedModel SignatureDef contains the following input(s):"]
    for key in sorted(signature.inputs):
        lines.append(f"{pad}  inputs['{key}'] tensor_info:")
        lines.extend(_format_tensor_info(signature.inputs[key], indent + 6))
    lines.append(f"{pad}The given SavedModel SignatureDef contains the following output(s):")
    for key in sorted(signature.outputs):
        lines.append(f"{pad}  outputs['{key}'] tensor_info:")
        lines.extend(_format_tensor_info(signature.outputs[key], indent + 6))
    lines.append(f"{pad}Method name is: {signature.method_name}")
    return lines


def show(directory, tag_set=None, signature_def=None, all_=False, out=None):
    """Prints what ``saved_model_cli show`` prints for these arguments."""
    out = out or sys.stdout
    sm_loader = _loader(directory)
    meta_graphs = sm_loader.saved_model.meta_graphs
    if all_:
        for meta_graph_def in meta_graphs:
            tags = ", ".join(meta_graph_def.meta_info_def.tags)
            print(f"\nMetaGraphDef with tag-set: '{tags}' contains the following SignatureDefs:", file=out)
            for key in sorted(meta_graph_def.signature_def):
                print(f"\nsignature_def['{key}']:", file=out)
                print("\n".join(format_signature(meta_graph_def.signature_def[key], indent=2)), file=out)
            op_types = sorted({n.op for n in meta_graph_def.graph_def.node})
            print(f"The MetaGraph with tag set ['{tags}'] contains the following ops: {op_types}", file=out)
        return
    if tag_set is None:
        if signature_def is not None:
            raise SavedModelCliError("--signature_def needs --tag_set")
        print("The given SavedModel contains the following tag-sets:", file=out)
        for meta_graph_def in meta_graphs:
            print("'" + ", ".join(meta_graph_def.meta_info_def.tags) + "'", file=out)
        return
    meta_graph_def = _meta_graph(sm_loader, tag_set)
    if signature_def is None:
        print("The given SavedModel MetaGraphDef contains SignatureDefs with the following keys:", file=out)
        for key in sorted(meta_graph_def.signature_def):
            print(f'SignatureDef key: "{key}"', file=out)
        return
    print("\n".join(format_signature(_signature(meta_graph_def, signature_def, tag_set))), file=out)


def _split_assignments(text, what):
    pairs = []
    for part in (p for p in text.split(";") if p.strip()):
        key, sep, value = part.partition("=")
        if not sep or not key.strip():
            raise SavedModelCliError(f"{what} '{part}' is not of the form <input_key>=<value>")
        pairs.append((key.strip(), value.strip()))
    return pairs


def _load_input_file(spec):
    path, variable = spec, None
    if spec.endswith("]") and "[" in spec:
        path, _, variable = spec[:-1].partition("[")
    if not os.path.isfile(path):
        raise SavedModelCliError(f"input file {path} does not exist")
    try:
        data = np.load(path, allow_pickle=False)
    except (OSError, ValueError) as e:
        raise SavedModelCliError(f"cannot read {path} as .npy/.npz: {e}") from None
    if isinstance(data, np.lib.npyio.NpzFile):
        names = list(data.files)
        if variable is None:
            if len(names) != 1:
                raise SavedModelCliError(f"{path} holds several arrays ({', '.join(names)}); name one as "
                                         f"{path}[name]")
            variable = names[0]
        if variable not in names:
            raise SavedModelCliError(f"{path} has no array '{variable}' (it has {', '.join(names)})")
        return data[variable]
    if variable is not None:
        raise SavedModelCliError(f"{path} is a .npy file; [{variable}] only selects an array of a .npz")
    return data


def _eval_expression(key, text):
    try:
        return np.asarray(ast.literal_eval(text))
    except (ValueError, SyntaxError):
        pass
    # As TensorFlow's saved_model_cli: a NumPy expression, evaluated with only `np` in scope.
    try:
        return np.asarray(eval(text, {"__builtins__": {}, "np": np, "numpy": np}))  # noqa: S307
    except Exception as e:  # noqa: BLE001 - any failure is the user's expression
        raise SavedModelCliError(f"--input_exprs for '{key}': cannot evaluate {text!r}: {e}") from None


def _example_bytes(features):
    from ferroflow.protos import Example

    example = Example()
    for name, values in features.items():
        values = values if isinstance(values, (list, tuple)) else [values]
        feature = example.features.feature[name]
        if all(isinstance(v, (bytes, str)) for v in values):
            feature.bytes_list.value.extend(v.encode() if isinstance(v, str) else v for v in values)
        elif all(isinstance(v, int) and not isinstance(v, bool) for v in values):
            feature.int64_list.value.extend(values)
        elif all(isinstance(v, (int, float)) for v in values):
            feature.float_list.value.extend(float(v) for v in values)
        else:
            raise SavedModelCliError(f"feature '{name}': values must be all strings, all ints or all floats")
    return example.SerializeToString()


def collect_inputs(inputs=None, input_exprs=None, input_examples=None):
    """``{input_key: ndarray}`` from the three ways ``run`` takes inputs."""
    feeds = {}
    for key, spec in _split_assignments(inputs or "", "--inputs"):
        feeds[key] = _load_input_file(spec)
    for key, text in _split_assignments(input_exprs or "", "--input_exprs"):
        if key in feeds:
            raise SavedModelCliError(f"input '{key}' is given twice")
        feeds[key] = _eval_expression(key, text)
    for key, text in _split_assignments(input_examples or "", "--input_examples"):
        if key in feeds:
            raise SavedModelCliError(f"input '{key}' is given twice")
        try:
            dicts = ast.literal_eval(text)
        except (ValueError, SyntaxError) as e:
            raise SavedModelCliError(f"--input_examples for '{key}': {e}") from None
        if not isinstance(dicts, list) or not all(isinstance(d, dict) for d in dicts):
            raise SavedModelCliError(f"--input_examples for '{key}' must be a list of feature dicts")
        feeds[key] = np.array([_example_bytes(d) for d in dicts], dtype=object)
    return feeds


def run(directory, tag_set, signature_def, inputs=None, input_exprs=None, input_examples=None, outdir=None,
        overwrite=False, out=None):
    """Runs one signature on the given inputs; prints the outputs or writes ``outdir/<key>.npy``."""
    import ferroflow as tf
    from ferroflow.framework import errors
    from ferroflow.saved_model import utils

    out = out or sys.stdout
    sm_loader = _loader(directory)
    meta_graph_def = _meta_graph(sm_loader, tag_set)
    signature = _signature(meta_graph_def, signature_def, tag_set)
    feeds = collect_inputs(inputs, input_exprs, input_examples)
    unknown = sorted(set(feeds) - set(signature.inputs))
    if unknown:
        raise SavedModelCliError(f"signature '{signature_def}' has no input(s) {', '.join(unknown)}; its inputs "
                                 f"are {', '.join(sorted(signature.inputs))}")
    missing = sorted(set(signature.inputs) - set(feeds) - set(signature.defaults))
    if missing:
        raise SavedModelCliError(f"no value given for input(s) {', '.join(missing)} of signature '{signature_def}'")
    with tf.Session(graph=tf.Graph()) as sess:
        try:
            sm_loader.load(sess, _tag_set(tag_set))
            feed_dict = {utils.get_tensor_from_tensor_info(signature.inputs[k], sess.graph): v for k, v in feeds.items()}
            keys = sorted(signature.outputs)
            fetches = [utils.get_tensor_from_tensor_info(signature.outputs[k], sess.graph) for k in keys]
            results = sess.run(fetches, feed_dict)
        except (errors.OpError, ValueError, TypeError) as e:
            raise SavedModelCliError(str(e)) from None
    for key, value in zip(keys, results):
        if outdir is None:
            print(f"Result for output key {key}:\n{value}", file=out)
            continue
        os.makedirs(outdir, exist_ok=True)
        path = os.path.join(outdir, key + ".npy")
        if os.path.exists(path) and not overwrite:
            raise SavedModelCliError(f"output file {path} already exists; add --overwrite to replace it")
        np.save(path, np.asarray(value))
        print(f"Output {key} is saved to {path}", file=out)


def add_parser(sub):
    """Adds the ``saved-model`` command (with ``show`` and ``run``) to the ``ferroflow`` argument parser."""
    p = sub.add_parser("saved-model", help="show a SavedModel's tag sets and signatures, or run a signature",
                       description="Inspect and run SavedModels (what TensorFlow's saved_model_cli does).")
    actions = p.add_subparsers(dest="action")
    show_p = actions.add_parser("show", help="list tag sets, signature keys, or a signature's inputs/outputs")
    show_p.add_argument("--dir", required=True, help="the SavedModel directory")
    show_p.add_argument("--tag_set", default=None, help="comma-separated tags of one meta graph, e.g. serve")
    show_p.add_argument("--signature_def", default=None, metavar="KEY", help="a signature key, e.g. serving_default")
    show_p.add_argument("--all", action="store_true", help="show every meta graph and signature")
    run_p = actions.add_parser("run", help="run a signature on inputs from files, expressions or Examples")
    run_p.add_argument("--dir", required=True, help="the SavedModel directory")
    run_p.add_argument("--tag_set", required=True, help="comma-separated tags of one meta graph, e.g. serve")
    run_p.add_argument("--signature_def", required=True, metavar="KEY", help="the signature to run")
    run_p.add_argument("--inputs", default=None, help="'key=file.npy;key2=file.npz[array]'")
    run_p.add_argument("--input_exprs", default=None, help="'key=[[1.0, 2.0]];key2=np.ones((2, 3))'")
    run_p.add_argument("--input_examples", default=None, help="'key=[{\"feature\": [1.0]}]' (tf.train.Examples)")
    run_p.add_argument("--outdir", default=None, help="save each output as OUTDIR/<key>.npy instead of printing")
    run_p.add_argument("--overwrite", action="store_true", help="replace existing files in --outdir")
    return p


def main(args):
    """Runs ``ferroflow saved-model`` with parsed ``args``; returns the exit status."""
    try:
        if args.action == "show":
            show(args.dir, args.tag_set, args.signature_def, args.all)
        elif args.action == "run":
            run(args.dir, args.tag_set, args.signature_def, args.inputs, args.input_exprs, args.input_examples,
                args.outdir, args.overwrite)
        else:
            print("ferroflow saved-model: error: give an action: show or run", file=sys.stderr)
            return 2
    except SavedModelCliError as e:
        print(f"ferroflow saved-model: error: {e}", file=sys.stderr)
        return 1
    return 0
