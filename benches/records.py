"""Event-file and TFRecord benchmarks, side by side with TensorFlow and PyTorch.

    python benches/records.py [--quick] [--dir DIR]

Events: 100k scalar summaries written to a new event file, from building the
``Summary`` message to the closed file: ``FileWriter.add_summary(Summary(...),
step)`` for ferroflow and TensorFlow (``tf.compat.v1.summary.FileWriter``),
``SummaryWriter.add_scalar(tag, value, step)`` for
``torch.utils.tensorboard``. TFRecords: 100k records of 1 KiB written with
``TFRecordWriter`` (to the page cache, and with an fsync at the end) and read
back with ``tf_record_iterator`` from the page cache and cold (the file
dropped from the cache with ``posix_fadvise(DONTNEED)``), compared with the
disk's sequential throughput as ``dd`` measures it: ``conv=fdatasync`` for
writing; for reading, the cached file and the same file cold. dd runs before
and after the workers (median of all runs). Each framework runs in its own
worker process (TensorFlow and PyTorch cannot share one).
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

RECORD_SIZE = 1024


def _best(fn, repeat):
    """Median seconds of ``repeat`` runs of ``fn(run_index)``."""
    return statistics.median(fn(i) for i in range(repeat))


def _records(n):
    rng = __import__("numpy").random.default_rng(0)
    blob = rng.bytes(RECORD_SIZE * 64)
    return [blob[(i % 64) * RECORD_SIZE:(i % 64 + 1) * RECORD_SIZE] for i in range(n)]


def bench_events(framework, mod, n, workdir, repeat):
    def run(i):
        logdir = os.path.join(workdir, f"{framework}-events-{i}")
        if framework == "torch":
            from torch.utils.tensorboard import SummaryWriter

            t0 = time.perf_counter()
            w = SummaryWriter(logdir)
            for step in range(n):
                w.add_scalar("loss", step * 0.5, step)
            w.close()
        else:
            summary = mod.compat.v1.Summary if framework == "tensorflow" else mod.Summary
            writer_cls = mod.compat.v1.summary.FileWriter if framework == "tensorflow" else mod.summary.FileWriter
            t0 = time.perf_counter()
            w = writer_cls(logdir)
            for step in range(n):
                w.add_summary(summary(value=[summary.Value(tag="loss", simple_value=step * 0.5)]), step)
            w.close()
        dt = time.perf_counter() - t0
        size = sum(os.path.getsize(os.path.join(logdir, f)) for f in os.listdir(logdir))
        assert size > n * 20, (framework, size)
        shutil.rmtree(logdir)
        return dt

    return _best(run, repeat)


def bench_tfrecord(framework, mod, n, workdir, repeat):
    records = _records(n)
    if framework == "tensorflow":
        writer_cls, iterator = mod.io.TFRecordWriter, mod.compat.v1.io.tf_record_iterator
    else:
        writer_cls, iterator = mod.io.TFRecordWriter, mod.io.tf_record_iterator
    path = os.path.join(workdir, f"{framework}.tfrecord")

    def write(sync):
        def run(_):
            if os.path.exists(path):
                os.remove(path)
            t0 = time.perf_counter()
            w = writer_cls(path)
            for r in records:
                w.write(r)
            w.close()
            if sync:
                fsync_paths([path])
            return time.perf_counter() - t0

        return run

    out = {"write": _best(write(False), repeat), "write_sync": _best(write(True), repeat)}

    def read(cold):
        def run(_):
            if cold:
                drop_cache([path])
            t0 = time.perf_counter()
            count = 0
            for _r in iterator(path):
                count += 1
            dt = time.perf_counter() - t0
            assert count == n
            return dt

        return run

    out["read"] = _best(read(False), repeat)
    out["read_cold"] = _best(read(True), repeat)
    out["file_bytes"] = os.path.getsize(path)
    os.remove(path)
    return out


def dd_throughput(workdir, nbytes):
    """MB/s lists of dd on a file of ``nbytes``: writes with conv=fdatasync, cached reads, cold reads."""
    path = os.path.join(workdir, "dd.bin")
    count = max(1, nbytes // (1 << 20))

    def dd(*args):
        stderr = subprocess.run(["dd", *args, "bs=1M"], capture_output=True, text=True).stderr
        m = re.search(r"(\d+) bytes .* copied, ([\d.]+) s", stderr)
        return int(m.group(1)) / float(m.group(2)) / 1e6

    writes, cached, cold = [], [], []
    for _ in range(3):
        if os.path.exists(path):
            os.remove(path)
        writes.append(dd("if=/dev/zero", f"of={path}", f"count={count}", "conv=fdatasync"))
        cached.append(dd(f"if={path}", "of=/dev/null"))
        drop_cache([path])
        cold.append(dd(f"if={path}", "of=/dev/null"))
    os.remove(path)
    return writes, cached, cold


def worker(framework, n_events, n_records, workdir, repeat):
    if framework == "tensorflow":
        try:
            import tensorflow as mod
        except ImportError:
            print(json.dumps(None))
            return
        mod.compat.v1.disable_eager_execution()
    elif framework == "torch":
        try:
            import torch as mod
            from torch.utils.tensorboard import SummaryWriter  # noqa: F401
        except ImportError:
            print(json.dumps(None))
            return
    else:
        import ferroflow as mod
    out = {"events": bench_events(framework, mod, n_events, workdir, repeat)}
    if framework != "torch":
        out["tfrecord"] = bench_tfrecord(framework, mod, n_records, workdir, repeat)
    print(json.dumps(out))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--dir", default=None, help="where to write (default: a temporary directory on the disk of "
                                                   "this checkout, not tmpfs)")
    parser.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--n-events", type=int, default=100_000, help=argparse.SUPPRESS)
    parser.add_argument("--n-records", type=int, default=100_000, help=argparse.SUPPRESS)
    parser.add_argument("--repeat", type=int, default=5, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker, args.n_events, args.n_records, args.dir, args.repeat)
        return
    n_events = 20_000 if args.quick else args.n_events
    n_records = 20_000 if args.quick else args.n_records
    repeat = 3 if args.quick else args.repeat
    base = args.dir or os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "target")
    os.makedirs(base, exist_ok=True)
    workdir = tempfile.mkdtemp(prefix="bench-records-", dir=base)
    try:
        res, loads = {}, {}
        dd_runs = dd_throughput(workdir, n_records * RECORD_SIZE)
        for fw in ("ferroflow", "tensorflow", "torch"):
            loads[fw] = os.getloadavg()[0]
            cmd = [sys.executable, __file__, "--worker", fw, "--dir", workdir, "--n-events", str(n_events),
                   "--n-records", str(n_records), "--repeat", str(repeat)]
            proc = subprocess.run(cmd, capture_output=True, text=True)
            lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{") or ln == "null"]
            res[fw] = json.loads(lines[-1]) if lines else None
            if proc.returncode != 0:
                sys.stderr.write(proc.stderr[-4000:])
                if fw == "ferroflow":
                    raise SystemExit(1)
        after = dd_throughput(workdir, n_records * RECORD_SIZE)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)

    dd_runs = [a + b for a, b in zip(dd_runs, after)]
    dd_write, dd_read, dd_cold = (statistics.median(r) for r in dd_runs)
    tfr, tor = res["tensorflow"], res["torch"]
    print(f"TensorFlow: {'present' if tfr else 'absent'}, PyTorch: {'present' if tor else 'absent'}; "
          f"load average at each worker's start: " + ", ".join(f"{k} {v:.1f}" for k, v in loads.items()))
    print(f"\n{n_events} scalar summaries into a new event file (events/s, higher is better; median of {repeat})")
    rate = {k: n_events / v["events"] for k, v in res.items() if v}
    for k, r in rate.items():
        ratio = "" if k == "ferroflow" else f"   ferroflow is {rate['ferroflow'] / r:.2f}x"
        print(f"  {k:10s} {r:12,.0f}{ratio}")
    print(f"\n{n_records} TFRecords of {RECORD_SIZE} B (records/s and MB/s of the file; median of {repeat})")
    print(f"  disk (dd, bs=1M): write with fdatasync {dd_write:.0f} MB/s, read cached {dd_read:.0f} MB/s, "
          f"read cold {dd_cold:.0f} MB/s")
    for name, runs in zip(("write+fdatasync", "read cached", "read cold"), dd_runs):
        print(f"    dd {name} runs: " + ", ".join(f"{x:.0f}" for x in runs))
    for k in ("ferroflow", "tensorflow"):
        v = res[k]
        if not v:
            continue
        t = v["tfrecord"]
        mb = t["file_bytes"] / 1e6
        for label, key, ref in (("write", "write", None), ("write+fsync", "write_sync", dd_write),
                                ("read cached", "read", dd_read), ("read cold", "read_cold", dd_cold)):
            line = f"  {k:10s} {label:12s} {n_records / t[key]:12,.0f} rec/s {mb / t[key]:8.1f} MB/s"
            if ref:
                line += f"  ({mb / t[key] / ref:.2f}x dd)"
            if k == "ferroflow" and tfr:
                line += f"  ferroflow is {tfr['tfrecord'][key] / t[key]:.2f}x TF"
            print(line)


if __name__ == "__main__":
    main()
