"""SavedModel export and load of a 1 GiB model, side by side with TensorFlow, against the disk.

    python benches/saved_model.py [--quick] [--phases] [--tf-python /work/tfvenv/bin/python] [--dir DIR]

The model: 1 GiB of float32 reference variables (``tf.Variable(tf.fill(...))``)
feeding a chain of matmuls, in two layouts:

  few    8 variables of 128 MiB (4096x8192 and 8192x4096 alternating, relu between),
  many   1024 variables of 1 MiB (512x512 each, a chain of 1024 matmuls).

Each variable holds ``1 / fan_in``, so a ones input gives ones at every layer:
the first prediction is checked to be exactly 1.0 everywhere. The same graph is
built by ferroflow (``import ferroflow as tf``) and by TensorFlow 2.21
(``tf.compat.v1`` with ``disable_v2_behavior()``: graph mode, reference
variables), each framework in its own worker processes (``--tf-python`` names
the interpreter with TensorFlow).

Measured:

export    ``tf.saved_model.simple_save(sess, dir, {"x": x}, {"y": y})`` wall time, until the
          call returns ("call"), and then with every file and directory of the export
          fsync'ed right after the call, inside the timing ("durable"). ferroflow's writer
          fsyncs by default (so its "call" is already durable); TensorFlow's never does.
          "page cache": ferroflow with ``FERROFLOW_CHECKPOINT_SYNC=0`` (its
          ``saved_model.pb`` is still fsync'ed), TensorFlow's plain call. Each export runs in
          a fresh graph and session (initialisation is not timed) after one untimed export.
load      time to first prediction: in a fresh worker process with the framework already
          imported, from creating the ``Session`` through ``loader.load(sess, ["serve"],
          dir)`` to the first ``sess.run`` of the serving signature returning. Warm: the
          files in the page cache. Cold: the files fsync'ed and dropped from the page cache
          with ``posix_fadvise(POSIX_FADV_DONTNEED)`` first (no root needed; ``mincore``
          reports the residency left). The worker's import time is reported apart. Warm
          loads then load the model again into a new graph and session of the same process
          ("again in the same process": memory the first load freed is reused).
memory    a new process writing 1 GiB of new anonymous memory, in 4 KiB pages and with
          ``MADV_HUGEPAGE``: on a VM whose host backs guest memory lazily, the page faults of
          a fresh process's first load cost as much as the disk (``--no-thp`` runs the
          workers with transparent huge pages disabled).
disk      on the same directory: 1 GiB written in 8 MiB ``os.write`` calls and fsync'ed
          (and the same without fsync: the page-cache write rate), then read back in 8 MiB
          ``readinto`` calls after ``posix_fadvise(DONTNEED)`` (cold) and again (warm);
          measured before and after the workers.

``--phases`` adds warm loads that make ``loader.load``'s calls one by one (parse
``saved_model.pb``, import the meta graph, restore the variables, run the init
ops; ``SavedModelLoader`` in both frameworks) and time the first two predictions.
Every figure is the median of ``--repeat`` (default 3) runs.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

_T_START = time.perf_counter()
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

from _disk import drop_cache, fsync_paths  # noqa: E402  (next to this script)
from checkpoint import _cached_fraction  # noqa: E402

TF_PYTHON = "/work/tfvenv/bin/python"
CHUNK = 8 << 20
BATCH = 1


# -- the model -------------------------------------------------------------
def layer_shapes(variant, total_bytes):
    """The variables' shapes: 8 alternating [a, 2a] / [2a, a] layers, or N square [d, d] layers of 1 MiB."""
    floats = total_bytes // 4
    if variant == "few":
        a = 1
        while 2 * (2 * a) * (2 * a) * 8 <= floats:
            a *= 2
        return [(a, 2 * a) if i % 2 == 0 else (2 * a, a) for i in range(8)]
    d = 512  # 1 MiB of float32
    return [(d, d)] * max(1, floats // (d * d))


def build(tf, shapes):
    """Builds the chain in the default graph; returns ``(x, y, variables)``."""
    x = tf.placeholder(tf.float32, [None, shapes[0][0]], name="x")
    h = x
    variables = []
    for i, (fan_in, fan_out) in enumerate(shapes):
        v = tf.Variable(tf.fill([fan_in, fan_out], 1.0 / fan_in), name=f"w{i}")
        variables.append(v)
        h = tf.matmul(h, v)
        if len(shapes) <= 16 and i + 1 < len(shapes):
            h = tf.nn.relu(h)
    y = tf.identity(h, name="y")
    return x, y, variables


def import_framework(framework):
    if framework == "ferroflow":
        import ferroflow as tf

        return tf
    import tensorflow

    tf = tensorflow.compat.v1
    tf.disable_v2_behavior()
    return tf


# -- workers ---------------------------------------------------------------
def _files(export_dir):
    out = []
    for root, _dirs, files in os.walk(export_dir):
        out.extend(os.path.join(root, f) for f in files)
    return sorted(out)


def _durable(export_dir):
    """fsyncs every file and directory of the export, and the directory that holds it."""
    dirs = [root for root, _d, _f in os.walk(export_dir)]
    fsync_paths(_files(export_dir) + dirs + [os.path.dirname(os.path.abspath(export_dir))])


def export_worker(framework, variant, total_bytes, workdir, repeat):
    t0 = time.perf_counter()
    tf = import_framework(framework)
    import_s = time.perf_counter() - t0
    shapes = layer_shapes(variant, total_bytes)
    base = os.path.join(workdir, f"{framework}-{variant}")
    os.makedirs(base, exist_ok=True)
    out = {"import_s": import_s, "n_vars": len(shapes), "var_shape": list(shapes[0]),
           "model_bytes": sum(a * b * 4 for a, b in shapes)}
    if framework == "tensorflow":
        out["version"] = __import__("tensorflow").__version__
        out["variable_class"] = None

    def one(name, sync):
        """One export in a fresh graph and session; returns (call seconds, fsync-after seconds, build seconds)."""
        if framework == "ferroflow":
            os.environ["FERROFLOW_CHECKPOINT_SYNC"] = "1" if sync else "0"
        export_dir = os.path.join(base, name)
        tb = time.perf_counter()
        graph = tf.Graph()
        with graph.as_default():
            x, y, variables = build(tf, shapes)
            if "variable_class" in out:
                out["variable_class"] = type(variables[0]).__name__
            sess = tf.Session(graph=graph)
            sess.run(tf.global_variables_initializer())
            build_s = time.perf_counter() - tb
            t0 = time.perf_counter()
            tf.saved_model.simple_save(sess, export_dir, inputs={"x": x}, outputs={"y": y})
            t1 = time.perf_counter()
        _durable(export_dir)
        t2 = time.perf_counter()
        sess.close()
        return t1 - t0, t2 - t1, build_s

    one("warmup", True)
    shutil.rmtree(os.path.join(base, "warmup"))
    calls, durables, builds = [], [], []
    for i in range(repeat):
        call, fsync_after, build_s = one(f"default-{i}", True)
        calls.append(call)
        durables.append(call + fsync_after)
        builds.append(build_s)
        if i + 1 < repeat:
            shutil.rmtree(os.path.join(base, f"default-{i}"))
    keep = os.path.join(base, f"default-{repeat - 1}")
    os.rename(keep, os.path.join(base, "model"))
    out["export_call"] = calls
    out["export_durable"] = durables
    out["build_s"] = statistics.median(builds)
    if framework == "ferroflow":
        cached = []
        for i in range(repeat):
            call, _fsync_after, _ = one(f"cache-{i}", False)
            cached.append(call)
            shutil.rmtree(os.path.join(base, f"cache-{i}"))
        out["export_cache"] = cached
        os.environ.pop("FERROFLOW_CHECKPOINT_SYNC", None)
    else:
        out["export_cache"] = calls
    model = os.path.join(base, "model")
    out["files"] = {os.path.relpath(f, model): os.path.getsize(f) for f in _files(model)}
    out["model_dir"] = model
    print(json.dumps(out))


def _load_and_predict(tf, export_dir):
    """(seconds in loader.load, seconds to the first prediction, whether it is all ones), in a new graph and session."""
    import numpy as np

    serve = tf.saved_model.tag_constants.SERVING
    get = tf.saved_model.utils.get_tensor_from_tensor_info
    t0 = time.perf_counter()
    graph = tf.Graph()
    with graph.as_default():
        sess = tf.Session(graph=graph)
        meta = tf.saved_model.loader.load(sess, [serve], export_dir)
        t1 = time.perf_counter()
        sig = meta.signature_def["serving_default"]
        x = get(sig.inputs["x"], graph)
        y = get(sig.outputs["y"], graph)
        feed = np.ones([BATCH, x.shape.as_list()[1]], np.float32)
        got = sess.run(y, {x: feed})
        t2 = time.perf_counter()
    sess.close()
    return t1 - t0, t2 - t0, bool(np.array_equal(got, np.ones_like(got)))


def load_worker(framework, export_dir, reload):
    t0 = time.perf_counter()
    tf = import_framework(framework)
    out = {"import_s": time.perf_counter() - t0, "process_to_import_s": t0 - _T_START}
    out["load_s"], out["first_prediction_s"], out["correct"] = _load_and_predict(tf, export_dir)
    if reload:
        # The same model again into a new graph and session of this process: memory the first load
        # freed is reused, so this is the framework's own work without the fresh-memory page faults.
        out["reload_load_s"], out["reload_first_prediction_s"], ok = _load_and_predict(tf, export_dir)
        out["correct"] = out["correct"] and ok
    print(json.dumps(out))


def touch_worker(nbytes, huge):
    """Seconds to write ``nbytes`` of fresh anonymous memory (with MADV_HUGEPAGE when ``huge``)."""
    import ctypes
    import mmap

    m = mmap.mmap(-1, nbytes, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    m.madvise(mmap.MADV_HUGEPAGE if huge else mmap.MADV_NOHUGEPAGE)
    addr = ctypes.addressof(ctypes.c_char.from_buffer(m))
    t0 = time.perf_counter()
    ctypes.memset(addr, 1, nbytes)
    print(json.dumps({"touch_s": time.perf_counter() - t0}))


def phases_worker(framework, export_dir):
    """``loader.load``'s steps one by one (the same calls it makes), then the first and second prediction."""
    import numpy as np

    tf = import_framework(framework)
    if framework == "ferroflow":
        from ferroflow.saved_model.loader import SavedModelLoader
    else:
        from tensorflow.python.saved_model.loader_impl import SavedModelLoader
    serve = [tf.saved_model.tag_constants.SERVING]
    get = tf.saved_model.utils.get_tensor_from_tensor_info
    t = [time.perf_counter()]
    graph = tf.Graph()
    with graph.as_default():
        sess = tf.Session(graph=graph)
        t.append(time.perf_counter())
        loader = SavedModelLoader(export_dir)
        t.append(time.perf_counter())
        saver, _ = loader.load_graph(graph, serve)
        t.append(time.perf_counter())
        loader.restore_variables(sess, saver)
        t.append(time.perf_counter())
        loader.run_init_ops(sess, serve)
        t.append(time.perf_counter())
        sig = loader.get_meta_graph_def_from_tags(serve).signature_def["serving_default"]
        x, y = get(sig.inputs["x"], graph), get(sig.outputs["y"], graph)
        feed = np.ones([BATCH, x.shape.as_list()[1]], np.float32)
        for _ in range(2):
            sess.run(y, {x: feed})
            t.append(time.perf_counter())
    names = ["session", "parse saved_model.pb", "import meta graph", "restore variables", "init ops",
             "first prediction", "second prediction"]
    print(json.dumps(dict(zip(names, (b - a for a, b in zip(t, t[1:]))))))


# -- disk ------------------------------------------------------------------
def disk_figures(workdir, nbytes):
    """Seconds for: write+fsync, write to the page cache, cold read, warm read of ``nbytes``."""
    path = os.path.join(workdir, "disk.bin")
    buf = os.urandom(CHUNK)
    res = {}
    for key, sync in (("write_cache", False), ("write_durable", True)):
        if os.path.exists(path):
            os.remove(path)
        t0 = time.perf_counter()
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            left = nbytes
            while left > 0:
                left -= os.write(fd, buf[:min(CHUNK, left)])
            if sync:
                os.fsync(fd)
        finally:
            os.close(fd)
        res[key] = time.perf_counter() - t0
        if not sync:
            fsync_paths([path])
    mem = bytearray(CHUNK)
    view = memoryview(mem)
    for key in ("read_cold", "read_warm"):
        if key == "read_cold":
            drop_cache([path])
        t0 = time.perf_counter()
        with open(path, "rb", buffering=0) as f:
            while f.readinto(view):
                pass
        res[key] = time.perf_counter() - t0
    os.remove(path)
    return res


# -- driver ----------------------------------------------------------------
def _disable_thp():
    """In a worker about to start: no transparent huge pages for it (inherited across exec)."""
    import ctypes

    pr_set_thp_disable = 41
    if ctypes.CDLL(None, use_errno=True).prctl(pr_set_thp_disable, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_THP_DISABLE)")


_NO_THP = False


def _run(cmd):
    proc = subprocess.run(cmd, capture_output=True, text=True, preexec_fn=_disable_thp if _NO_THP else None)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if proc.returncode != 0 or not lines:
        sys.stderr.write(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stderr[-4000:]}\n")
        return None
    return json.loads(lines[-1])


def _read_all(paths):
    for p in paths:
        with open(p, "rb") as f:
            while f.read(CHUNK):
                pass


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="256 MiB instead of 1 GiB")
    parser.add_argument("--tf-python", default=TF_PYTHON if os.path.exists(TF_PYTHON) else sys.executable,
                        help="interpreter with TensorFlow")
    parser.add_argument("--dir", default=None, help="where to write (default: a temporary directory in the "
                                                   "system's temp dir)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--variants", default="few,many")
    parser.add_argument("--frameworks", default="ferroflow,tensorflow")
    parser.add_argument("--phases", action="store_true", help="also time loader.load's steps one by one (warm "
                                                                   "cache) and the first two predictions")
    parser.add_argument("--no-thp", action="store_true", help="run the workers with transparent huge pages "
                                                               "disabled (prctl PR_SET_THP_DISABLE)")
    parser.add_argument("--worker", choices=["export", "load", "reload", "phases", "touch", "touch-huge"],
                        help=argparse.SUPPRESS)
    parser.add_argument("--framework", help=argparse.SUPPRESS)
    parser.add_argument("--variant", help=argparse.SUPPRESS)
    parser.add_argument("--bytes", type=int, default=1 << 30, help=argparse.SUPPRESS)
    parser.add_argument("--model", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker == "export":
        export_worker(args.framework, args.variant, args.bytes, args.dir, args.repeat)
        return
    if args.worker in ("load", "reload"):
        load_worker(args.framework, args.model, args.worker == "reload")
        return
    if args.worker in ("touch", "touch-huge"):
        touch_worker(args.bytes, args.worker == "touch-huge")
        return
    if args.worker == "phases":
        phases_worker(args.framework, args.model)
        return

    global _NO_THP
    _NO_THP = args.no_thp
    total = (256 << 20) if args.quick else args.bytes
    pythons = {"ferroflow": sys.executable, "tensorflow": args.tf_python}
    frameworks = args.frameworks.split(",")
    variants = args.variants.split(",")
    script = os.path.abspath(__file__)
    workdir = tempfile.mkdtemp(prefix="bench-saved-model-", dir=args.dir)
    fs = subprocess.run(["df", "-T", workdir], capture_output=True, text=True).stdout.splitlines()[-1].split()
    t_begin = time.perf_counter()
    disk_runs, exports, loads, load_avgs, touch = [], {}, {}, [], {"touch": [], "touch-huge": []}
    try:
        for _ in range(args.repeat):
            disk_runs.append(disk_figures(workdir, total))
            for kind in touch:
                r = _run([sys.executable, script, "--worker", kind, "--bytes", str(total)])
                touch[kind].append(r and r["touch_s"])
        for variant in variants:
            for fw in frameworks:
                load_avgs.append(os.getloadavg()[0])
                exports[fw, variant] = _run([pythons[fw], script, "--worker", "export", "--framework", fw,
                                             "--variant", variant, "--dir", workdir, "--bytes", str(total),
                                             "--repeat", str(args.repeat)])
            for kind in ("warm", "cold") + (("phases",) if args.phases else ()):
                for _ in range(args.repeat):
                    for fw in frameworks:  # interleaved, so a slow moment of the machine hits both
                        e = exports.get((fw, variant))
                        if not e:
                            continue
                        files = _files(e["model_dir"])
                        if kind != "cold":
                            _read_all(files)
                        else:
                            drop_cache(files)
                            resident = max((_cached_fraction(f) or 0.0) for f in files)
                        worker = {"warm": "reload", "cold": "load", "phases": "phases"}[kind]
                        r = _run([pythons[fw], script, "--worker", worker, "--framework", fw,
                                  "--model", e["model_dir"]])
                        if r is not None and kind == "cold":
                            r["resident_before"] = resident
                        loads.setdefault((fw, variant, kind), []).append(r)
            for fw in frameworks:
                e = exports.get((fw, variant))
                if e:
                    shutil.rmtree(os.path.dirname(e["model_dir"]), ignore_errors=True)
        for _ in range(args.repeat):
            disk_runs.append(disk_figures(workdir, total))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    elapsed = time.perf_counter() - t_begin
    report(args, total, fs, disk_runs, exports, loads, load_avgs, elapsed, touch)


def _med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def report(args, total, fs, disk_runs, exports, loads, load_avgs, elapsed, touch):
    gb = total / 1e9
    disk = {k: _med([d[k] for d in disk_runs]) for k in disk_runs[0]}
    print(f"SavedModel benchmark: {total / (1 << 20):.0f} MiB of float32; median of {args.repeat}; "
          f"{os.cpu_count()} CPUs, {platform.processor() or platform.machine()}; {elapsed:.0f} s in all")
    print(f"files on {fs[0]} ({fs[1]}), mounted on {fs[-1]}; load average at each export worker's start: "
          + ", ".join(f"{x:.1f}" for x in load_avgs))
    print("disk (GB/s, median of {} runs: before and after the workers): write+fsync {:.2f} (runs {}), "
          "write to page cache {:.2f}, cold read {:.2f} (runs {}), warm read {:.2f}".format(
              len(disk_runs), gb / disk["write_durable"],
              ", ".join(f"{gb / d['write_durable']:.2f}" for d in disk_runs), gb / disk["write_cache"],
              gb / disk["read_cold"], ", ".join(f"{gb / d['read_cold']:.2f}" for d in disk_runs),
              gb / disk["read_warm"]))
    print("fresh memory (a new process writing {:.0f} MiB of new anonymous memory, median): {:.3f} s in 4 KiB pages "
          "(runs {}), {:.3f} s with MADV_HUGEPAGE (runs {}){}".format(
              total / (1 << 20), _med(touch["touch"]) or 0, ", ".join(f"{x:.2f}" for x in touch["touch"] if x),
              _med(touch["touch-huge"]) or 0, ", ".join(f"{x:.2f}" for x in touch["touch-huge"] if x),
              "; workers run with transparent huge pages disabled" if args.no_thp else ""))
    frameworks = args.frameworks.split(",")
    for variant in args.variants.split(","):
        print(f"\n== {variant} ==")
        for fw in frameworks:
            e = exports.get((fw, variant))
            if not e:
                print(f"  {fw}: failed")
                continue
            pb = e["files"].get("saved_model.pb", 0)
            cold = [r for r in loads.get((fw, variant, "cold"), []) if r]
            wrong = [r for k in ("warm", "cold") for r in loads.get((fw, variant, k), []) if r and not r["correct"]]
            print(f"  {fw} {e.get('version', '')}: {e['n_vars']} variables of {e['var_shape']}"
                  f"{' (' + e['variable_class'] + ')' if e.get('variable_class') else ''}; saved_model.pb "
                  f"{pb / 1e6:.2f} MB; files {sum(e['files'].values()) / 1e9:.3f} GB; import "
                  f"{_med([r['import_s'] for r in cold]) or 0:.2f} s; build+init {e['build_s']:.2f} s; "
                  f"residency before cold loads {max([r['resident_before'] for r in cold] or [0]):.0%}; "
                  f"predictions correct: {not wrong and bool(cold)}")
        rows = [("export, call returns", lambda e, _ld: _med(e["export_call"]), "w"),
                ("export, durable", lambda e, _ld: _med(e["export_durable"]), "w"),
                ("export, page cache", lambda e, _ld: _med(e["export_cache"]), "c"),
                ("load->1st prediction, warm", lambda _e, ld: _med([r["first_prediction_s"] for r in ld["warm"] if r]),
                 "rw"),
                ("  of which loader.load", lambda _e, ld: _med([r["load_s"] for r in ld["warm"] if r]), None),
                ("  again in the same process", lambda _e, ld: _med([r["reload_first_prediction_s"]
                                                                    for r in ld["warm"] if r]), "rw"),
                ("    of which loader.load", lambda _e, ld: _med([r["reload_load_s"] for r in ld["warm"] if r]),
                 None),
                ("load->1st prediction, cold", lambda _e, ld: _med([r["first_prediction_s"] for r in ld["cold"] if r]),
                 "r"),
                ("  of which loader.load", lambda _e, ld: _med([r["load_s"] for r in ld["cold"] if r]), None)]
        print(f"  {'':30s}" + "".join(f"{fw:>12s}" for fw in frameworks) + f"{'TF/ff':>8s}   ferroflow GB/s")
        for label, fn, disk_key in rows:
            vals = {}
            for fw in frameworks:
                e = exports.get((fw, variant))
                if e:
                    lk = {k: loads.get((fw, variant, k), []) for k in ("warm", "cold")}
                    vals[fw] = fn(e, lk)
            line = f"  {label:30s}" + "".join(f"{vals[fw]:11.3f}s" if vals.get(fw) else f"{'-':>12s}"
                                              for fw in frameworks)
            if vals.get("ferroflow") and vals.get("tensorflow"):
                line += f"{vals['tensorflow'] / vals['ferroflow']:7.2f}x"
            if disk_key and vals.get("ferroflow"):
                rate = exports[("ferroflow", variant)]["model_bytes"] / 1e9 / vals["ferroflow"]
                ref = {"w": ("write_durable", "disk write+fsync"), "c": ("write_cache", "page-cache write"),
                       "r": ("read_cold", "disk cold read"), "rw": ("read_warm", "warm read")}[disk_key]
                line += f"   {rate:.2f} = {rate / (gb / disk[ref[0]]):.0%} of {ref[1]}"
            print(line)
        if args.phases:
            print(f"  {'warm load, step by step':30s}" + "".join(f"{fw:>12s}" for fw in frameworks))
            steps = next((r for fw in frameworks for r in loads.get((fw, variant, "phases"), []) if r), {})
            for step in steps:
                print(f"    {step:28s}" + "".join(
                    f"{_med([r[step] for r in loads.get((fw, variant, 'phases'), []) if r]) or 0:11.3f}s"
                    for fw in frameworks))
    print("\nraw:", json.dumps({"disk": disk_runs, "exports": {f"{k[0]}/{k[1]}": v for k, v in exports.items()},
                                "loads": {"/".join(k): v for k, v in loads.items()}}))


if __name__ == "__main__":
    main()
