"""Checkpoint save and restore, side by side with TensorFlow and PyTorch.

    python benches/checkpoint.py [--quick] [--dir DIR]

1 GiB of float32 in 8 variables (``--quick``: 128 MiB), each framework in its
own worker process:

* ferroflow: ``tf.train.Saver`` when ferroflow has it, otherwise the same
  graph a Saver builds (one ``SaveV2`` op; one ``RestoreV2`` op and an
  ``Assign`` per variable), run in a ``Session``;
* TensorFlow: ``tf.compat.v1.train.Saver`` in graph mode;
* PyTorch: ``torch.save`` of the 8 tensors, ``torch.load`` then ``copy_``
  into the existing tensors.

Measured:

(a) durable save: from the call until the files are on disk. ferroflow's
    writer fsyncs before renaming into place; TensorFlow and PyTorch never
    fsync, so their files are fsync'ed right after the call (inside the
    timing). Compared with ``dd if=/dev/zero bs=1M count=1024
    conv=fdatasync`` on the same directory.
(b) save into the page cache: no fsync anywhere (ferroflow with
    ``FERROFLOW_CHECKPOINT_SYNC=0``).
(c) restore from a warm page cache, and cold: the files are fsync'ed and
    dropped from the page cache with ``posix_fadvise(POSIX_FADV_DONTNEED)``
    (no root needed), compared with ``dd`` reading a cold 1 GiB file.

Each figure is the median of ``--repeat`` runs after one untimed save; the
disk's dd figures are measured before and after the workers and their median
is used.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

from _disk import drop_cache, fsync_paths  # noqa: E402  (next to this script)

N_VARS = 8


def _files_under(path_prefix):
    """Every file of a checkpoint: ``prefix*`` in its directory."""
    d, base = os.path.split(path_prefix)
    return [os.path.join(d, f) for f in os.listdir(d) if f.startswith(base)]


def _cached_fraction(path):
    """Fraction of ``path``'s pages in the page cache (mincore), or None."""
    try:
        import ctypes
        import mmap

        size = os.path.getsize(path)
        if size == 0:
            return 1.0
        libc = ctypes.CDLL(None, use_errno=True)
        libc.mmap.restype = ctypes.c_void_p
        libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                              ctypes.c_long]
        libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
        libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p]
        fd = os.open(path, os.O_RDONLY)
        try:
            addr = libc.mmap(None, size, mmap.PROT_READ, mmap.MAP_SHARED, fd, 0)
            if addr in (None, ctypes.c_void_p(-1).value):
                return None
            pages = (size + mmap.PAGESIZE - 1) // mmap.PAGESIZE
            vec = ctypes.create_string_buffer(pages)
            ok = libc.mincore(ctypes.c_void_p(addr), size, vec) == 0
            libc.munmap(ctypes.c_void_p(addr), size)
        finally:
            os.close(fd)
        return sum(b & 1 for b in vec.raw) / pages if ok else None
    except OSError:
        return None


def _arrays(total_bytes, seed=0):
    import numpy as np

    n = total_bytes // 4 // N_VARS
    rng = np.random.default_rng(seed)
    return [rng.random(n, dtype=np.float32) for _ in range(N_VARS)]


def _median_time(fn, repeat):
    times = []
    for i in range(repeat):
        times.append(fn(i))
    return statistics.median(times)


class _Ferroflow:
    use_saver = True

    def __init__(self, arrays):
        import ferroflow as tf
        from ferroflow.framework import ops
        from ferroflow.ops._op_util import make_op

        self.tf = tf
        self.vars = [tf.get_variable(f"v{i}", shape=a.shape, dtype=tf.float32, initializer=tf.zeros_initializer())
                     for i, a in enumerate(arrays)]
        feeds = [tf.placeholder(tf.float32, a.shape) for a in arrays]
        init = tf.group(*[tf.assign(v, p) for v, p in zip(self.vars, feeds)])
        self.sess = tf.Session()
        self.sess.run(init, dict(zip(feeds, arrays)))
        self.saver = None
        try:
            if not self.use_saver:
                raise NotImplementedError
            self.saver = tf.train.Saver(self.vars)
            self.kind = "tf.train.Saver"
        except (AttributeError, NotImplementedError):
            # Until ferroflow has tf.train.Saver: the graph a Saver builds.
            self.kind = "SaveV2/RestoreV2 ops in a Session"
            self.prefix = tf.placeholder(tf.string, [])
            names = tf.constant([v.op.name for v in self.vars])
            slices = tf.constant([""] * len(self.vars))
            with ops.device("/cpu:0"):
                self.save_op = make_op("SaveV2", [self.prefix, names, slices] + [v.value() for v in self.vars],
                                       name="save")
                restore = make_op("RestoreV2", [self.prefix, names, slices],
                                  {"dtypes": ("list_type", [tf.float32.as_datatype_enum] * len(self.vars))},
                                  name="restore")
            self.restore_op = tf.group(*[tf.assign(v, t) for v, t in zip(self.vars, restore.outputs)])

    def save(self, prefix, durable):
        os.environ["FERROFLOW_CHECKPOINT_SYNC"] = "1" if durable else "0"
        if self.saver is not None:
            self.saver.save(self.sess, prefix, write_meta_graph=False, write_state=False)
        else:
            self.sess.run(self.save_op, {self.prefix: prefix})

    def restore(self, prefix):
        if self.saver is not None:
            self.saver.restore(self.sess, prefix)
        else:
            self.sess.run(self.restore_op, {self.prefix: prefix})

    def values(self):
        return self.sess.run(self.vars)


class _TensorFlow:
    def __init__(self, arrays):
        import tensorflow as tf

        tf1 = tf.compat.v1
        tf1.disable_eager_execution()
        self.vars = [tf1.get_variable(f"v{i}", shape=a.shape, dtype=tf.float32, initializer=tf1.zeros_initializer())
                     for i, a in enumerate(arrays)]
        feeds = [tf1.placeholder(tf.float32, a.shape) for a in arrays]
        init = tf.group(*[tf1.assign(v, p) for v, p in zip(self.vars, feeds)])
        self.sess = tf1.Session()
        self.sess.run(init, dict(zip(feeds, arrays)))
        self.saver = tf1.train.Saver(self.vars)
        self.kind = "tf.compat.v1.train.Saver"

    def save(self, prefix, durable):
        self.saver.save(self.sess, prefix, write_meta_graph=False, write_state=False)
        if durable:
            fsync_paths(_files_under(prefix) + [os.path.dirname(prefix)])

    def restore(self, prefix):
        self.saver.restore(self.sess, prefix)

    def values(self):
        return self.sess.run(self.vars)


class _Torch:
    def __init__(self, arrays):
        import torch

        self.torch = torch
        self.tensors = {f"v{i}": torch.from_numpy(a.copy()) for i, a in enumerate(arrays)}
        self.kind = "torch.save / torch.load + copy_"

    def save(self, prefix, durable):
        path = prefix + ".pt"
        self.torch.save(self.tensors, path)
        if durable:
            fsync_paths([path, os.path.dirname(prefix)])

    def restore(self, prefix):
        state = self.torch.load(prefix + ".pt")
        with self.torch.no_grad():
            for k, t in self.tensors.items():
                t.copy_(state[k])

    def values(self):
        return [t.numpy() for t in self.tensors.values()]


def worker(framework, total_bytes, workdir, repeat, ferroflow_path):
    import numpy as np

    _Ferroflow.use_saver = ferroflow_path != "ops"
    arrays = _arrays(total_bytes)
    try:
        impl = {"ferroflow": _Ferroflow, "tensorflow": _TensorFlow, "torch": _Torch}[framework](arrays)
    except ImportError:
        print(json.dumps(None))
        return
    out = {"kind": impl.kind}
    base = os.path.join(workdir, framework)
    os.makedirs(base, exist_ok=True)

    def save(durable):
        def run(i):
            prefix = os.path.join(base, f"{'durable' if durable else 'cached'}-{i}", "model.ckpt")
            os.makedirs(os.path.dirname(prefix))
            t0 = time.perf_counter()
            impl.save(prefix, durable)
            dt = time.perf_counter() - t0
            shutil.rmtree(os.path.dirname(prefix))
            return dt

        return run

    # One untimed save first: on a VM, memory the guest never used before
    # is slow to touch the first time (the host backs it lazily), and the
    # first save's page cache lands on such memory.
    save(False)("warmup")
    out["save_cached"] = _median_time(save(False), repeat)
    out["save_durable"] = _median_time(save(True), repeat)

    prefix = os.path.join(base, "restore", "model.ckpt")
    os.makedirs(os.path.dirname(prefix))
    impl.save(prefix, True)
    files = _files_under(prefix)
    out["file_bytes"] = sum(os.path.getsize(f) for f in files)
    # Restore into zeroed variables, then check every value came back.
    zeros = _Zeroer(impl, arrays)

    def restore(cold):
        def run(_):
            zeros.zero()
            if cold:
                drop_cache(files)
                out["cached_before_cold"] = max(_cached_fraction(f) or 0.0 for f in files)
            else:
                impl.restore(prefix)  # warms the cache
                zeros.zero()
            t0 = time.perf_counter()
            impl.restore(prefix)
            dt = time.perf_counter() - t0
            return dt

        return run

    out["restore_warm"] = _median_time(restore(False), repeat)
    out["restore_cold"] = _median_time(restore(True), repeat)
    got = impl.values()
    out["restored_exactly"] = all(np.array_equal(g, a) for g, a in zip(got, arrays))
    shutil.rmtree(os.path.dirname(prefix))
    print(json.dumps(out))


class _Zeroer:
    """Sets the worker's variables to zero between restores (so a restore must really write them)."""

    def __init__(self, impl, arrays):
        self.impl = impl
        if isinstance(impl, _Torch):
            self.zero = lambda: [t.zero_() for t in impl.tensors.values()]
            return
        tf = impl.tf if isinstance(impl, _Ferroflow) else __import__("tensorflow").compat.v1
        ops = [v.assign(tf.zeros_like(v)) for v in impl.vars]
        group = tf.group(*ops)
        self.zero = lambda: impl.sess.run(group)


def dd_figures(workdir, nbytes):
    """(durable write MB/s with conv=fdatasync, cold sequential read MB/s) of a file of ``nbytes``."""
    path = os.path.join(workdir, "dd.bin")
    count = max(1, nbytes // (1 << 20))

    def mbs(stderr):
        m = re.search(r"(\d+) bytes .* copied, ([\d.]+) s", stderr)
        return int(m.group(1)) / float(m.group(2)) / 1e6

    writes, reads = [], []
    for _ in range(2):
        if os.path.exists(path):
            os.remove(path)
        writes.append(mbs(subprocess.run(["dd", "if=/dev/zero", f"of={path}", "bs=1M", f"count={count}",
                                          "conv=fdatasync"], capture_output=True, text=True).stderr))
        drop_cache([path])
        reads.append(mbs(subprocess.run(["dd", f"if={path}", "of=/dev/null", "bs=1M"], capture_output=True,
                                        text=True).stderr))
    os.remove(path)
    return writes, reads


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="128 MiB instead of 1 GiB, 2 repeats")
    parser.add_argument("--dir", default=None, help="where to write (default: a temporary directory under target/ "
                                                   "of this checkout, on its disk)")
    parser.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--bytes", type=int, default=1 << 30, help=argparse.SUPPRESS)
    parser.add_argument("--repeat", type=int, default=3, help=argparse.SUPPRESS)
    parser.add_argument("--frameworks", default="ferroflow,tensorflow,torch", help=argparse.SUPPRESS)
    parser.add_argument("--ferroflow-path", choices=("saver", "ops"), default="saver",
                        help="ferroflow through tf.train.Saver (when it exists) or through SaveV2/RestoreV2 ops")
    args = parser.parse_args()
    if args.worker:
        worker(args.worker, args.bytes, args.dir, args.repeat, args.ferroflow_path)
        return
    total = (128 << 20) if args.quick else args.bytes
    repeat = 2 if args.quick else args.repeat
    base = args.dir or os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "target")
    os.makedirs(base, exist_ok=True)
    workdir = tempfile.mkdtemp(prefix="bench-checkpoint-", dir=base)
    res, loads = {}, {}
    try:
        dd_w, dd_r = dd_figures(workdir, total)
        for fw in args.frameworks.split(","):
            loads[fw] = os.getloadavg()[0]
            cmd = [sys.executable, __file__, "--worker", fw, "--dir", workdir, "--bytes", str(total),
                   "--repeat", str(repeat), "--ferroflow-path", args.ferroflow_path]
            proc = subprocess.run(cmd, capture_output=True, text=True)
            lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{") or ln == "null"]
            res[fw] = json.loads(lines[-1]) if lines else None
            if proc.returncode != 0:
                sys.stderr.write(proc.stderr[-4000:])
                if fw == "ferroflow":
                    raise SystemExit(1)
        w2, r2 = dd_figures(workdir, total)
        dd_w += w2
        dd_r += r2
    finally:
        shutil.rmtree(workdir, ignore_errors=True)

    dd_write, dd_read = statistics.median(dd_w), statistics.median(dd_r)
    mb = total / 1e6
    print(f"{total / (1 << 20):.0f} MiB of float32 in {N_VARS} variables; median of {repeat}; "
          f"load average at each worker's start: " + ", ".join(f"{k} {v:.1f}" for k, v in loads.items()))
    print(f"disk (dd, bs=1M): write+fdatasync {dd_write:.0f} MB/s (runs: {', '.join(f'{x:.0f}' for x in dd_w)}); "
          f"cold sequential read {dd_read:.0f} MB/s (runs: {', '.join(f'{x:.0f}' for x in dd_r)})")
    for k, v in res.items():
        if v:
            print(f"  {k}: {v['kind']}; restored exactly: {v['restored_exactly']}; "
                  f"page-cache residency before cold restores: {v.get('cached_before_cold', 0):.0%}")
    print(f"\n{'':26s}" + "".join(f"{k:>14s}" for k in res if res[k]))
    rows = [("save, durable (s)", "save_durable"), ("save, page cache (s)", "save_cached"),
            ("restore, warm cache (s)", "restore_warm"), ("restore, cold (s)", "restore_cold")]
    for label, key in rows:
        print(f"{label:26s}" + "".join(f"{v[key]:14.3f}" for v in res.values() if v))
    ff = res["ferroflow"]
    print()
    print(f"(a) durable save: ferroflow {mb / ff['save_durable']:.0f} MB/s = "
          f"{mb / ff['save_durable'] / dd_write:.2f}x dd (goal >= 0.9)")
    for other in ("tensorflow", "torch"):
        o = res.get(other)
        if not o:
            continue
        print(f"    vs {other}: durable save {o['save_durable'] / ff['save_durable']:.2f}x, "
              f"page-cache save {o['save_cached'] / ff['save_cached']:.2f}x (goal >= 2), "
              f"warm restore {o['restore_warm'] / ff['restore_warm']:.2f}x"
              f"{' (goal >= 1.5)' if other == 'tensorflow' else ''}, "
              f"cold restore {o['restore_cold'] / ff['restore_cold']:.2f}x")
    print(f"(b) page-cache save: ferroflow {mb / ff['save_cached']:.0f} MB/s")
    print(f"(c) warm restore: ferroflow {mb / ff['restore_warm']:.0f} MB/s; cold restore "
          f"{mb / ff['restore_cold']:.0f} MB/s = {mb / ff['restore_cold'] / dd_read:.2f}x dd's cold read (goal >= 0.8)")


if __name__ == "__main__":
    main()
