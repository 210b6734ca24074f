"""Chrome trace (``chrome://tracing``, Perfetto) JSON from the step stats of a traced run.

``Timeline(run_metadata.step_stats).generate_chrome_trace_format()`` gives the same kind of document as
TensorFlow's ``tensorflow.python.client.timeline``: one process per device with one complete ("X") event
per executed node (category ``Op``, name = op type, ``args`` holding the node name, op type and inputs), and,
with ``show_dataflow``, flow arrows from the node producing each input to the node consuming it.

ferroflow records no allocations, so ``show_memory`` adds nothing.
"""

from __future__ import annotations

import json
import re

__all__ = ["Timeline"]

_LABEL = re.compile(r"^(.*?) = (.*?)\((.*)\)$")


def _parse_label(label, node_name):
    """``(op_type, [inputs])`` of a ``name = Op(a, b)`` timeline label."""
    m = _LABEL.match(label or "")
    if not m:
        return node_name, []
    inputs = [s.strip() for s in m.group(3).split(",") if s.strip()]
    return m.group(2), inputs


def _times(ns):
    """``(start_us, duration_us)`` of a node, from its nanosecond fields when set."""
    if ns.all_start_nanos:
        return ns.all_start_nanos / 1000.0, ns.all_end_rel_nanos / 1000.0
    return float(ns.all_start_micros), float(ns.all_end_rel_micros)


class Timeline:
    """Chrome trace of one traced run. ``step_stats``: a ``StepStats`` (``run_metadata.step_stats``);
    ``graph`` is accepted for TensorFlow compatibility and not needed."""

    def __init__(self, step_stats, graph=None):
        self._step_stats = step_stats
        self._graph = graph

    def generate_chrome_trace_format(self, show_dataflow=True, show_memory=False):
        """The trace as a JSON string (``{"traceEvents": [...]}``)."""
        events = []
        producers = {}
        ops = []
        for pid, dev in enumerate(self._step_stats.dev_stats):
            events.append({"name": "process_name", "ph": "M", "pid": pid, "args": {"name": f"{dev.device} Compute"}})
            events.append({"name": "process_sort_index", "ph": "M", "pid": pid, "args": {"sort_index": pid}})
            for tid, tname in sorted(dev.thread_names.items()):
                events.append({"name": "thread_name", "ph": "M", "pid": pid, "tid": tid, "args": {"name": tname}})
            for ns in dev.node_stats:
                op_type, inputs = _parse_label(ns.timeline_label, ns.node_name)
                start, dur = _times(ns)
                args = {"name": ns.node_name, "op": op_type}
                for i, name in enumerate(inputs):
                    args[f"input{i}"] = name
                events.append(
                    {"ph": "X", "cat": "Op", "name": op_type, "pid": pid, "tid": ns.thread_id, "ts": start, "dur": dur,
                     "args": args}
                )
                producers[ns.node_name] = (start + dur, pid, ns.thread_id)
                ops.append((ns.node_name, inputs, start, pid, ns.thread_id))
        if show_dataflow:
            flow_id = 0
            for _, inputs, start, pid, tid in ops:
                for name in inputs:
                    if name.startswith("^"):
                        continue
                    producer = producers.get(name.rsplit(":", 1)[0] if ":" in name else name)
                    if producer is None:
                        continue
                    end, ppid, ptid = producer
                    events.append(
                        {"ph": "s", "cat": "DataFlow", "name": name, "pid": ppid, "tid": ptid, "ts": end, "id": flow_id}
                    )
                    events.append(
                        {"ph": "t", "cat": "DataFlow", "name": name, "pid": pid, "tid": tid, "ts": start, "id": flow_id}
                    )
                    flow_id += 1
        return json.dumps({"traceEvents": events}, separators=(",", ": "), indent=4)
