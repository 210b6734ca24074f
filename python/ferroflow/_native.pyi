"""Type stubs for the native extension module (crates/python)."""

import os
from typing import Any, Optional, Sequence, Union

TID_SHIFT: int

Shape = Optional[list[Optional[int]]]
OutputSpec = tuple[int, Shape, bool]
# (node_name, timeline_label, all_start_nanos, op_start_rel_nanos, op_end_rel_nanos, all_end_rel_nanos, thread_id)
NodeTiming = tuple[str, str, int, int, int, int, int]
# (device, node timings in execution order, [(thread_id, thread_name)])
StepTrace = tuple[str, list[NodeTiming], list[tuple[int, str]]]

class Graph:
    """A graph under construction, shared with the sessions that run it."""

    def __init__(self) -> None: ...
    def add_op(
        self,
        op_type: str,
        name: str,
        inputs: Sequence[int],
        control_inputs: Sequence[int],
        attrs: dict[str, Any],
        device: str,
    ) -> tuple[int, list[OutputSpec]]: ...
    def unique_name(self, name: str, mark_as_used: bool = True) -> str: ...
    def op_by_name(self, name: str) -> Optional[int]: ...
    def num_ops(self) -> int: ...
    def output_info(self, tid: int) -> OutputSpec: ...
    def set_shape(self, tid: int, dims: Shape) -> Shape: ...
    def node_def(self, op_id: int) -> dict[str, Any]: ...
    def set_device(self, op_id: int, device: str) -> None: ...
    def add_control_input(self, op_id: int, control: int) -> None: ...
    def const_value(self, tid: int) -> Any: ...
    def shape_value(self, tid: int) -> Shape: ...
    def is_list(self, tid: int) -> bool: ...
    def add_function(self, name: str, body: Graph, args: list[int], outputs: list[int]) -> None: ...
    def unique_function_name(self, base: str) -> str: ...
    def function_graph(self, name: str) -> tuple[Graph, list[int], list[int]]: ...
    def function_is_stateful(self, name: str) -> bool: ...
    def function_names(self) -> list[str]: ...
    def node_summaries(
        self, start: int
    ) -> list[tuple[int, str, str, list[int], list[int], str, list[OutputSpec]]]:
        """Nodes from ``start`` on, to mirror those the core added itself (gradients)."""
    def gradients_start(
        self,
        ys: Sequence[int],
        xs: Sequence[int],
        grad_ys: Sequence[Optional[int]],
        scope: str,
        stop_gradients: Sequence[int],
        unconnected_zero: bool,
        control_inputs: Sequence[int],
        external: Sequence[str],
        gate_gradients: bool = False,
    ) -> GradientRun:
        """Starts ``tf.gradients``; ops whose gradient type is in ``external`` are left to Python; ``gate_gradients``
        gathers each op's input gradients through a ``tuple`` of ``control_dependency`` identities."""
    def finalize(self) -> None: ...
    def unfinalize(self) -> None: ...
    @property
    def finalized(self) -> bool: ...

# A gradient: None, a tensor id, or (values, indices, dense_shape) ids of IndexedSlices.
GradientIds = Union[None, int, tuple[int, int, int]]

class GradientRun:
    """A ``tf.gradients`` computation that stops at ops whose gradient Python computes."""

    def step(
        self,
    ) -> Union[tuple[str, list[GradientIds]], tuple[str, int, str, list[GradientIds], str]]:
        """``("done", grads per x)`` or ``("external", op_id, grad_type, grads per output, scope)``."""
    def resume(self, in_grads: Sequence[GradientIds]) -> None:
        """The input gradients of the op the last ``step`` named."""

class PartialRun:
    """The values one ``Session.partial_run_setup`` handle was fed or kept (``client/partial_run.py``)."""

    def __init__(self, session: Session) -> None: ...
    def feed(self, feed_ids: Sequence[int], feed_values: Sequence[Any], feed_dtypes: Sequence[int]) -> None:
        """Stores fed values (tensor ids, values, dtype enums)."""
    def step(
        self, members: Sequence[int], fetch_ids: Sequence[int], keep_ids: Sequence[int], timeout_ms: int = 0
    ) -> list[Any]:
        """Runs the ops ``members`` fed with the stored values; keeps ``keep_ids``, returns ``fetch_ids``."""
    def clear(self) -> None:
        """Drops every stored value."""

class Runner:
    """A compiled run signature (``Session.make_callable``)."""

    def __call__(self, feed_values: Sequence[Any], trace: bool = False, timeout_ms: int = 0) -> Any:
        """The fetched values, or ``(values, StepTrace)`` when ``trace`` is set."""

class Session:
    """A session over a Graph; ``run`` releases the GIL while the step runs. With a ``grpc://host:port``
    target the graph runs across that server's cluster (credentials from ``FERROFLOW_CLUSTER_TOKEN[_FILE]``
    and ``FERROFLOW_TLS_*``)."""

    def __init__(
        self,
        graph: Graph,
        intra_op_threads: int = 0,
        target: str = "",
        connect_timeout_ms: int = 0,
        mixed_precision_bf16: bool = False,
        inter_op_threads: int = 0,
    ) -> None: ...
    def run(
        self,
        feed_ids: Sequence[int],
        feed_values: Sequence[Any],
        feed_dtypes: Sequence[int],
        fetch_ids: Sequence[int],
        target_ids: Sequence[int],
        trace: bool = False,
        timeout_ms: int = 0,
    ) -> Any:
        """The fetched values, or ``(values, StepTrace)`` when ``trace`` is set; ``timeout_ms > 0`` fails a run
        still waiting (on a queue, an iterator) after that long with DeadlineExceededError."""
    def run_target(self, target_id: int) -> None:
        """Runs one op and what it depends on (no feeds, no fetches)."""
    def run_fetch(self, fetch_id: int) -> Any:
        """Evaluates one tensor with no feeds."""
    @property
    def intra_op_threads(self) -> int: ...
    @property
    def inter_op_threads(self) -> int: ...
    def make_callable(
        self, feed_ids: Sequence[int], feed_dtypes: Sequence[int], fetch_ids: Sequence[int], target_ids: Sequence[int]
    ) -> Runner: ...
    @property
    def default_task(self) -> tuple[str, int] | None:
        """For a cluster session, the ``(job, task)`` nodes without a job run on; None in-process."""
    def shutdown_cluster(self) -> None:
        """Tells the cluster's other tasks that training is done (a no-op in-process)."""
    def close(self) -> None: ...
    @property
    def closed(self) -> bool: ...

class Server:
    """One task's server of a cluster, running in this process (127.0.0.1 unless ``bind`` is given; a
    non-loopback bind needs a token, mutual TLS, or ``insecure``)."""

    def __init__(
        self,
        cluster_json: str,
        job: str,
        task: int,
        bind: str | None = None,
        token: bytes | None = None,
        token_file: str | None = None,
        tls_cert: str | None = None,
        tls_key: str | None = None,
        tls_ca: str | None = None,
        insecure: bool = False,
        exit_when_chief_done: bool = False,
        ps_allowlist: bool = False,
    ) -> None: ...
    @property
    def target(self) -> str: ...
    @property
    def port(self) -> int: ...
    @property
    def incarnation(self) -> int: ...
    def join(self, timeout_s: float | None = None) -> bool:
        """Blocks until the server stops or ``timeout_s`` passes; True once stopped."""
    def stop(self) -> None: ...

def parse_tf_config(text: str) -> tuple[str, tuple[str, int] | None, str]:
    """``(cluster JSON, (job, index) or None, rpc_layer)`` of a TF_CONFIG value (evaluator left out)."""
def serve(argv: list[str]) -> int:
    """Runs ``ferroflow server`` with these flags until it stops; the exit status."""

def registered_ops() -> list[str]: ...
def has_gradient(name: str) -> bool: ...
def tf_update_ops() -> list[dict[str, Any]]: ...
def optimizer_rules() -> dict[str, dict[str, list[str]]]: ...
def _set_error_classes(classes: dict[int, type]) -> None: ...
def _raise_status(code: int, message: str) -> None: ...

class CheckpointReader:
    """Reads a TensorFlow V2 checkpoint (tensor bundle) at ``prefix``.

    Raises NotFoundError if ``prefix.index`` does not exist and DataLossError
    if it is corrupt; every tensor's CRC-32C is checked when it is read.
    """

    def __init__(self, prefix: Union[str, os.PathLike[str]]) -> None: ...
    def get_tensor(self, name: str) -> Any:
        """The value as NumPy (0-d tensors as NumPy scalars, strings as bytes,
        bfloat16 as its uint16 bit pattern, complex64 as complex64);
        partitioned tensors are assembled from their slices."""
        ...
    def has_tensor(self, name: str) -> bool: ...
    def variable_to_shape_map(self) -> dict[str, list[int]]: ...
    def variable_to_dtype_map(self) -> dict[str, int]:
        """Name -> TensorFlow DataType enum value."""
        ...
    def debug_string(self) -> bytes:
        """TensorFlow's format: one ``name (DT_...) [dims]`` line per stored entry."""
        ...
    def verify(self) -> None:
        """Checks every stored tensor's checksum (DataLossError on the first bad one)."""
        ...
    @property
    def prefix(self) -> str: ...

def checkpoint_write(
    prefix: Union[str, os.PathLike[str]],
    names: Sequence[str],
    tensors: Sequence[Any],
    dtypes: Optional[Sequence[Optional[int]]] = None,
    shape_and_slices: Optional[Sequence[str]] = None,
) -> None:
    """Writes a one-shard checkpoint (arrays, or ``("strings", shape, [bytes])``);
    ``dtypes`` (DataType enums or None) mark uint16 arrays as bfloat16, and a
    non-empty ``shape_and_slices`` entry stores that tensor as a slice, as SaveV2 does."""
    ...

class RecordWriter:
    """Writes TFRecord files (``tf.io.TFRecordWriter``); compression ``""``, ``"ZLIB"`` or ``"GZIP"``."""

    def __init__(self, path: Union[str, os.PathLike[str]], compression_type: str = "") -> None: ...
    def write(self, record: bytes) -> None: ...
    def flush(self) -> None: ...
    def sync(self) -> None: ...
    def close(self) -> None: ...
    @property
    def offset(self) -> int: ...
    @property
    def closed(self) -> bool: ...
    @property
    def path(self) -> str: ...

class RecordReader:
    """Iterates over the records of a TFRecord file; raises DataLossError on corrupt data."""

    def __init__(
        self, path: Union[str, os.PathLike[str]], compression_type: str = "", tolerate_truncated_tail: bool = False
    ) -> None: ...
    def __iter__(self) -> RecordReader: ...
    def __next__(self) -> bytes: ...
    @property
    def offset(self) -> int: ...
    def close(self) -> None: ...

class EventFileWriter:
    """An event file written from a background thread (``tf.summary.FileWriter``'s writer)."""

    def __init__(
        self,
        logdir: Union[str, os.PathLike[str]],
        filename_suffix: str = "",
        max_queue: int = 10,
        flush_secs: float = 120.0,
    ) -> None: ...
    def add_event(self, event: bytes) -> None: ...
    def add_summary(self, summary: bytes, step: Optional[int] = None) -> None: ...
    def flush(self) -> None: ...
    def close(self) -> None: ...
    def reopen(self) -> None: ...
    @property
    def path(self) -> str: ...
    @property
    def logdir(self) -> str: ...
    @property
    def closed(self) -> bool: ...

def graph_def(graph: Graph, start: int = 0, add_shapes: bool = False, producer: int = 0) -> bytes: ...
TF_FORM_ORIGINAL_ATTR: str
def tf_op_registry() -> str: ...
def default_valued_attrs(graph_def: bytes) -> list[list[str]]: ...
def missing_default_attrs(node_def: bytes) -> dict[str, bytes]: ...
def output_arg_lengths(node_def: bytes, count: int) -> list[int] | None: ...
def fused_groups(names: list[str], groups: list[tuple[int, bytes]]) -> tuple[list[tuple[int, bytes]], list[int]]: ...
def function_attr_names() -> tuple[list[str], list[str]]: ...

class LiteInterpreter:
    """A TFLite model loaded for running (``tf.lite.Interpreter``'s engine)."""

    def __init__(self, model_content: bytes, num_threads: int = 1) -> None: ...
    def allocate_tensors(self) -> None: ...
    def invoke(self) -> None: ...
    def input_indices(self) -> list[int]: ...
    def output_indices(self) -> list[int]: ...
    def tensor_count(self) -> int: ...
    def is_allocated(self) -> bool: ...
    def tensor_info(self, index: int) -> dict[str, Any]: ...
    def get_tensor_bytes(self, index: int) -> bytes: ...
    def set_tensor(self, index: int, dtype: str, shape: list[int], data: bytes) -> None: ...
    def resize_input(self, index: int, shape: list[int], strict: bool = False) -> None: ...
    def reset_all_variables(self) -> None: ...
    def signatures(self) -> list[tuple[str, list[tuple[str, int]], list[tuple[str, int]], int]]: ...
    def metadata(self, name: str) -> Optional[str]: ...
    def operator_names(self) -> list[str]: ...

def lite_convert(
    graph_def: bytes,
    inputs: list[str],
    input_shapes: list[Optional[list[int]]],
    outputs: list[str],
    quantization: str = "",
    representative: Optional[list[list[tuple[list[int], bytes]]]] = None,
    inference_input_type: str = "float32",
    inference_output_type: str = "float32",
    int8_only: bool = False,
) -> bytes: ...
