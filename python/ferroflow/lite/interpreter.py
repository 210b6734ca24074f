"""``tf.lite.Interpreter``: runs TensorFlow Lite models in ferroflow's Rust
interpreter (float, int8 and hybrid kernels; TFLite's fixed-point
arithmetic, so int8 results match TensorFlow Lite's bit for bit)."""

import enum
import os

import numpy as np

from ferroflow import _native


class OpResolverType(enum.Enum):
    """Kernel sets TFLite can choose from. ferroflow has one kernel set whose
    integer results equal TFLite's reference kernels, so every value runs
    the same kernels."""

    AUTO = 0
    BUILTIN = 1
    BUILTIN_REF = 2
    BUILTIN_WITHOUT_DEFAULT_DELEGATES = 3


def _quantization_parameters(info):
    return {
        "scales": np.asarray(info["scales"], dtype=np.float32),
        "zero_points": np.asarray(info["zero_points"], dtype=np.int32),
        "quantized_dimension": int(info["quantized_dimension"]),
    }


def _details(info):
    scales, zeros = info["scales"], info["zero_points"]
    # TF reports per-tensor parameters as a pair and per-channel ones as (0.0, 0).
    quantization = (float(scales[0]), int(zeros[0])) if len(scales) == 1 else (0.0, 0)
    return {
        "name": info["name"],
        "index": int(info["index"]),
        "shape": np.asarray(info["shape"], dtype=np.int32),
        "shape_signature": np.asarray(info["shape_signature"], dtype=np.int32),
        "dtype": np.dtype(info["dtype"]).type,
        "quantization": quantization,
        "quantization_parameters": _quantization_parameters(info),
        "sparsity_parameters": {},
    }


class Interpreter:
    """Runs a ``.tflite`` model: ``allocate_tensors()``, ``set_tensor``,
    ``invoke()``, ``get_tensor``, as TensorFlow's ``tf.lite.Interpreter``."""

    def __init__(
        self,
        model_path=None,
        model_content=None,
        experimental_delegates=None,
        num_threads=None,
        experimental_op_resolver_type=OpResolverType.AUTO,
        experimental_preserve_all_tensors=False,
        experimental_disable_delegate_clustering=False,
        experimental_default_delegate_latest_features=False,
    ):
        if num_threads is not None:
            if not isinstance(num_threads, int):
                raise ValueError("type of num_threads should be int")
            if num_threads < 1 and num_threads != -1:
                raise ValueError("num_threads should >= 1")
        if experimental_delegates:
            raise ValueError(
                "ferroflow's interpreter runs models on the CPU itself; it does not "
                "load TensorFlow Lite delegates"
            )
        if model_path and not model_content:
            try:
                with open(os.fspath(model_path), "rb") as f:
                    model_content = f.read()
            except OSError:
                raise ValueError(f"Could not open '{model_path}'.") from None
        elif not model_content:
            raise ValueError("`model_path` or `model_content` must be specified.")
        threads = 1 if num_threads is None else (0 if num_threads == -1 else num_threads)
        self._native = _native.LiteInterpreter(bytes(model_content), threads)
        self._preserve_all_tensors = experimental_preserve_all_tensors

    # -- tensors -------------------------------------------------------------

    def allocate_tensors(self):
        """Computes every tensor's shape from the inputs' and allocates it."""
        self._native.allocate_tensors()

    def _info(self, index):
        return self._native.tensor_info(int(index))

    def get_input_details(self):
        """Name, index, shape, dtype and quantization of each input."""
        return [_details(self._info(i)) for i in self._native.input_indices()]

    def get_output_details(self):
        """Name, index, shape, dtype and quantization of each output."""
        return [_details(self._info(i)) for i in self._native.output_indices()]

    def get_tensor_details(self):
        """Details of every tensor of the main subgraph."""
        return [_details(self._info(i)) for i in range(self._native.tensor_count())]

    def set_tensor(self, tensor_index, value):
        """Copies ``value`` into input ``tensor_index`` (shape and dtype must
        match the tensor's)."""
        value = np.asarray(value)
        if value.dtype == object or value.dtype.kind in "SU":
            raise ValueError("Cannot set tensor: string tensors are not supported")
        value = np.ascontiguousarray(value)
        self._native.set_tensor(
            int(tensor_index), value.dtype.name, list(value.shape), value.tobytes()
        )

    def get_tensor(self, tensor_index, subgraph_index=0):
        """A copy of tensor ``tensor_index``."""
        if subgraph_index != 0:
            raise ValueError(f"Invalid subgraph index {subgraph_index}")
        info = self._info(tensor_index)
        raw = self._native.get_tensor_bytes(int(tensor_index))
        return np.frombuffer(raw, dtype=np.dtype(info["dtype"])).reshape(info["shape"]).copy()

    def tensor(self, tensor_index):
        """A function returning the current value of tensor ``tensor_index``
        (a copy in ferroflow, where TF returns a view)."""
        return lambda: self.get_tensor(tensor_index)

    def resize_tensor_input(self, input_index, tensor_size, strict=False):
        """Gives an input a new shape; call ``allocate_tensors()`` afterwards."""
        shape = np.asarray(tensor_size)
        if shape.dtype.kind not in "iu":
            raise ValueError("tensor_size must be a list of integers")
        self._native.resize_input(int(input_index), [int(d) for d in shape.ravel()], bool(strict))

    def invoke(self):
        """Runs the model on the current inputs."""
        try:
            self._native.invoke()
        except Exception as e:  # TF raises RuntimeError for every invoke failure.
            if isinstance(e, RuntimeError):
                raise
            raise RuntimeError(str(e).split("\n")[0]) from None

    def reset_all_variables(self):
        """Zeroes the model's variable tensors."""
        self._native.reset_all_variables()

    def num_subgraphs(self):
        """The number of subgraphs ferroflow runs (the main one)."""
        return 1

    # -- signatures ----------------------------------------------------------

    def get_signature_list(self):
        """``{key: {'inputs': [...], 'outputs': [...]}}`` of the model's signatures."""
        return {
            key: {"inputs": sorted(n for n, _ in ins), "outputs": sorted(n for n, _ in outs)}
            for key, ins, outs, _ in self._native.signatures()
        }

    def get_signature_runner(self, signature_key=None):
        """A callable running signature ``signature_key`` with keyword inputs."""
        sigs = {key: (ins, outs) for key, ins, outs, _ in self._native.signatures()}
        if not sigs:
            raise ValueError("SignatureDef signature_key is None and model has 0 Signatures")
        if signature_key is None:
            if len(sigs) != 1:
                raise ValueError(
                    f"SignatureDef signature_key is None and model has {len(sigs)} Signatures"
                )
            signature_key = next(iter(sigs))
        if signature_key not in sigs:
            raise ValueError(f"Invalid signature_key provided: {signature_key!r}")
        return SignatureRunner(self, *sigs[signature_key])


class SignatureRunner:
    """Runs one signature: ``runner(x=...)`` returns ``{output_name: array}``."""

    def __init__(self, interpreter, inputs, outputs):
        self._interpreter = interpreter
        self._inputs = dict(inputs)
        self._outputs = dict(outputs)

    def get_input_details(self):
        return {n: _details(self._interpreter._info(i)) for n, i in self._inputs.items()}

    def get_output_details(self):
        return {n: _details(self._interpreter._info(i)) for n, i in self._outputs.items()}

    def __call__(self, **kwargs):
        if len(kwargs) != len(self._inputs):
            raise ValueError(
                "Invalid number of inputs provided for running a SignatureDef, "
                f"expected {len(self._inputs)} vs provided {len(kwargs)}"
            )
        interp = self._interpreter
        for name, value in kwargs.items():
            if name not in self._inputs:
                raise ValueError(f"Invalid Input name ({name}) for SignatureDef")
            value = np.asarray(value)
            index = self._inputs[name]
            if list(value.shape) != list(interp._info(index)["shape"]):
                interp.resize_tensor_input(index, value.shape)
        if not interp._native.is_allocated():
            interp.allocate_tensors()
        for name, value in kwargs.items():
            interp.set_tensor(self._inputs[name], value)
        interp.invoke()
        return {n: interp.get_tensor(i) for n, i in self._outputs.items()}
