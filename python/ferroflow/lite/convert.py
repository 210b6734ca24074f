"""``tf.lite.TFLiteConverter`` (TF1 API): freezes a session's graph and
converts it to a ``.tflite`` flatbuffer in ferroflow's Rust converter
(milliseconds, not seconds), with float16, dynamic-range or full-integer
(representative-dataset calibrated) post-training quantization on request."""

import enum

from ferroflow import _native


class OpsSet(enum.Enum):
    """Operator sets a converted model may use."""

    TFLITE_BUILTINS = "TFLITE_BUILTINS"
    SELECT_TF_OPS = "SELECT_TF_OPS"
    TFLITE_BUILTINS_INT8 = "TFLITE_BUILTINS_INT8"
    EXPERIMENTAL_TFLITE_BUILTINS_ACTIVATIONS_INT16_WEIGHTS_INT8 = (
        "EXPERIMENTAL_TFLITE_BUILTINS_ACTIVATIONS_INT16_WEIGHTS_INT8"
    )
    EXPERIMENTAL_STABLEHLO_OPS = "EXPERIMENTAL_STABLEHLO_OPS"

    def __str__(self):
        return str(self.value)

    @staticmethod
    def get_options():
        return [str(option) for option in list(OpsSet)]


class Optimize(enum.Enum):
    """Optimizations the converter may apply."""

    DEFAULT = "DEFAULT"
    OPTIMIZE_FOR_SIZE = "OPTIMIZE_FOR_SIZE"
    OPTIMIZE_FOR_LATENCY = "OPTIMIZE_FOR_LATENCY"
    EXPERIMENTAL_SPARSITY = "EXPERIMENTAL_SPARSITY"

    def __str__(self):
        return str(self.value)


class RepresentativeDataset:
    """A generator of sample inputs for calibrating full-integer quantization."""

    def __init__(self, input_gen):
        self.input_gen = input_gen


class TargetSpec:
    """Operator sets and types the converted model may use."""

    def __init__(
        self,
        supported_ops=None,
        supported_types=None,
        experimental_select_user_tf_ops=None,
        experimental_supported_backends=None,
    ):
        self.supported_ops = set(supported_ops) if supported_ops else {OpsSet.TFLITE_BUILTINS}
        self.supported_types = set(supported_types or ())
        self.experimental_select_user_tf_ops = experimental_select_user_tf_ops or set()
        self.experimental_supported_backends = experimental_supported_backends


def _tensor_name(t):
    return t if isinstance(t, str) else t.name


def _node_name(name):
    name = name[1:] if name.startswith("^") else name
    return name.split(":")[0] if ":" in name and name.rsplit(":", 1)[1].isdigit() else name


class TFLiteConverter:
    """Converts a frozen TF1 graph (``GraphDef``) into a TFLite model."""

    def __init__(
        self,
        graph_def,
        input_tensors,
        output_tensors,
        input_arrays_with_shape=None,
        output_arrays=None,
        experimental_debug_info_func=None,
    ):
        self._graph_def = graph_def
        if input_tensors is not None:
            self._inputs = [_tensor_name(t) for t in input_tensors]
            self._input_shapes = [_static_shape(t) for t in input_tensors]
        else:
            if not input_arrays_with_shape:
                raise ValueError("input_arrays_with_shape is required when input_tensors is None")
            self._inputs = [name for name, _ in input_arrays_with_shape]
            self._input_shapes = [list(s) if s is not None else None for _, s in input_arrays_with_shape]
        if output_tensors is not None:
            self._outputs = [_tensor_name(t) for t in output_tensors]
        else:
            if not output_arrays:
                raise ValueError("output_arrays is required when output_tensors is None")
            self._outputs = list(output_arrays)
        self.inference_type = None
        self.inference_input_type = None
        self.inference_output_type = None
        self.quantized_input_stats = {}
        self.default_ranges_stats = None
        self.drop_control_dependency = True
        self.reorder_across_fake_quant = False
        self.change_concat_input_ranges = False
        self.allow_custom_ops = False
        self.post_training_quantize = False
        self.dump_graphviz_dir = None
        self.dump_graphviz_video = False
        self.conversion_summary_dir = None
        self.target_spec = TargetSpec()
        self.optimizations = []
        self.representative_dataset = None
        self.experimental_new_converter = True
        self.experimental_new_quantizer = True

    # TF1 spelled the supported ops on the converter itself.
    @property
    def target_ops(self):
        return self.target_spec.supported_ops

    @target_ops.setter
    def target_ops(self, value):
        self.target_spec.supported_ops = set(value)

    @classmethod
    def from_session(cls, sess, input_tensors, output_tensors):
        """Freezes ``sess``'s variables and converts the graph between
        ``input_tensors`` and ``output_tensors``."""
        from ferroflow.framework import graph_util

        graph_def = sess.graph.as_graph_def()
        frozen = graph_util.convert_variables_to_constants(
            sess, graph_def, sorted({_node_name(t.name) for t in output_tensors})
        )
        return cls(frozen, input_tensors, output_tensors)

    @classmethod
    def from_frozen_graph(cls, graph_def_file, input_arrays, output_arrays, input_shapes=None):
        """Converts a frozen ``GraphDef`` file (binary or text)."""
        from ferroflow.core.framework import graph_pb2
        from ferroflow.platform import gfile

        if not gfile.Exists(graph_def_file):
            raise OSError(f"File '{graph_def_file}' does not exist.")
        with gfile.GFile(graph_def_file, "rb") as f:
            content = f.read()
        graph_def = graph_pb2.GraphDef()
        try:
            graph_def.ParseFromString(content)
        except Exception:
            from google.protobuf import text_format

            try:
                text_format.Merge(content.decode("utf-8"), graph_def)
            except Exception:
                raise OSError(f"Unable to parse input file '{graph_def_file}'.") from None
        shapes = input_shapes or {}
        return cls(
            graph_def,
            None,
            None,
            input_arrays_with_shape=[(name, shapes.get(name)) for name in input_arrays],
            output_arrays=output_arrays,
        )

    @classmethod
    def from_saved_model(cls, saved_model_dir, input_arrays=None, input_shapes=None,
                         output_arrays=None, tag_set=None, signature_key=None):
        """Converts the signature of a SavedModel (loaded into a fresh graph)."""
        from ferroflow.client.session import Session
        from ferroflow.framework import ops
        from ferroflow.saved_model import loader, signature_constants, tag_constants

        tags = tag_set or {tag_constants.SERVING}
        key = signature_key or signature_constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY
        graph = ops.Graph()
        with graph.as_default(), Session(graph=graph) as sess:
            meta = loader.load(sess, list(tags), saved_model_dir)
            if key not in meta.signature_def:
                raise ValueError(f"Invalid signature key '{key}' found.")
            sig = meta.signature_def[key]
            ins = [graph.get_tensor_by_name(v.name) for _, v in sorted(sig.inputs.items())]
            outs = [graph.get_tensor_by_name(v.name) for _, v in sorted(sig.outputs.items())]
            if input_arrays:
                ins = [graph.get_tensor_by_name(n if ":" in n else n + ":0") for n in input_arrays]
            if output_arrays:
                outs = [graph.get_tensor_by_name(n if ":" in n else n + ":0") for n in output_arrays]
            conv = cls.from_session(sess, ins, outs)
            if input_shapes:
                conv._input_shapes = [
                    list(input_shapes[_node_name(n)]) if _node_name(n) in input_shapes else s
                    for n, s in zip(conv._inputs, conv._input_shapes)
                ]
            return conv

    @classmethod
    def from_keras_model_file(cls, model_file, input_arrays=None, input_shapes=None,
                              output_arrays=None, custom_objects=None):
        """Not available: Keras models are out of ferroflow's scope."""
        raise ValueError(
            "from_keras_model_file is not supported: ferroflow does not load Keras "
            "models. Build the model as a TF1 graph and use from_session."
        )

    def get_input_arrays(self):
        """The input tensor names."""
        return [_node_name(n) for n in self._inputs]

    def _quantization(self):
        optimize = bool(self.optimizations) or self.post_training_quantize
        types = {_type_name(t) for t in self.target_spec.supported_types}
        int8_ops = OpsSet.TFLITE_BUILTINS_INT8 in self.target_spec.supported_ops
        inference_type = _type_name(self.inference_type) if self.inference_type is not None else None
        if inference_type not in (None, "float32"):
            raise NotImplementedError(
                f"inference_type={inference_type} with quantized_input_stats (graphs trained "
                "with fake quantization) is not implemented by ferroflow's converter; use "
                "optimizations=[tf.lite.Optimize.DEFAULT] with a representative_dataset "
                "(post-training full-integer quantization) instead"
            )
        io_types = (
            _type_name(self.inference_input_type) if self.inference_input_type is not None else "float32",
            _type_name(self.inference_output_type) if self.inference_output_type is not None else "float32",
        )
        full_integer = (
            optimize and self.representative_dataset is not None and "float16" not in types
        )
        if full_integer:
            for t in io_types:
                if t not in ("float32", "int8", "uint8"):
                    raise ValueError(
                        "The inference_input_type and inference_output_type must be in "
                        "['tf.float32', 'tf.int8', 'tf.uint8']."
                    )
            return "full_integer"
        if int8_ops and optimize and "float16" not in types:
            raise ValueError(
                "For full integer quantization, a `representative_dataset` must be specified."
            )
        if io_types != ("float32", "float32"):
            raise ValueError(
                "The inference_input_type and inference_output_type must be tf.float32."
            )
        if not optimize:
            return ""
        if "float16" in types:
            return "float16"
        return "dynamic_range"

    def _representative_samples(self):
        """The representative dataset's samples as ``[(shape, float32 bytes)]``
        lists, one entry per model input."""
        import numpy as np

        dataset = self.representative_dataset
        gen = dataset.input_gen if isinstance(dataset, RepresentativeDataset) else dataset
        if not callable(gen):
            raise ValueError("representative_dataset must be a RepresentativeDataset or a generator function")
        samples = []
        for sample in gen():
            if isinstance(sample, dict):
                sample = [sample[_node_name(n)] if _node_name(n) in sample else sample[n]
                          for n in self._inputs]
            elif not isinstance(sample, (list, tuple)):
                sample = [sample]
            if len(sample) != len(self._inputs):
                raise ValueError(
                    f"representative_dataset yielded {len(sample)} arrays, but the model has "
                    f"{len(self._inputs)} inputs"
                )
            arrays = []
            for a in sample:
                a = np.ascontiguousarray(np.asarray(a, dtype=np.float32))
                arrays.append((list(a.shape), a.tobytes()))
            samples.append(arrays)
        if not samples:
            raise ValueError("representative_dataset yielded no samples")
        return samples

    def convert(self):
        """The converted model as flatbuffer bytes."""
        data = self._graph_def.SerializeToString()
        quantization = self._quantization()
        if quantization != "full_integer":
            return _native.lite_convert(
                data, list(self._inputs), list(self._input_shapes), list(self._outputs), quantization
            )
        ops = self.target_spec.supported_ops
        int8_only = OpsSet.TFLITE_BUILTINS_INT8 in ops and OpsSet.TFLITE_BUILTINS not in ops
        return _native.lite_convert(
            data,
            list(self._inputs),
            list(self._input_shapes),
            list(self._outputs),
            quantization,
            self._representative_samples(),
            _type_name(self.inference_input_type) if self.inference_input_type is not None else "float32",
            _type_name(self.inference_output_type) if self.inference_output_type is not None else "float32",
            int8_only,
        )


def _type_name(t):
    """``tf.int8``, ``np.int8``, ``"int8"`` -> ``"int8"``."""
    name = getattr(t, "name", None)
    if isinstance(name, str):
        return name
    try:
        import numpy as np

        return np.dtype(t).name
    except TypeError:
        return str(t)


def _static_shape(t):
    shape = t.get_shape()
    if shape.dims is None:
        return None
    return [-1 if d is None else int(d) for d in shape.as_list()]


class TocoConverter:
    """The deprecated name of ``TFLiteConverter`` (its ``from_*`` constructors)."""

    from_session = TFLiteConverter.from_session
    from_frozen_graph = TFLiteConverter.from_frozen_graph
    from_saved_model = TFLiteConverter.from_saved_model
    from_keras_model_file = TFLiteConverter.from_keras_model_file


def toco_convert(input_data, input_tensors, output_tensors, *args, **kwargs):
    """Deprecated: converts ``input_data`` (a frozen GraphDef) between the tensors."""
    return TFLiteConverter(input_data, input_tensors, output_tensors).convert()


class OpHint:
    """TF1's op-hint annotation for fusing composite ops. ferroflow's converter
    does not read hints: constructing one raises NotImplementedError."""

    def __init__(self, function_name, level=1, children_inputs_mappings=None, **kwargs):
        raise NotImplementedError(
            "tf.lite.OpHint is not supported by ferroflow's converter (TF deprecated it too)"
        )
