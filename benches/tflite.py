"""tf.lite invoke latency (issue 22): ferroflow's ``ferroflow.lite.Interpreter``
against TF 2.21's ``tf.lite.Interpreter`` (default resolver, XNNPACK on) and
``ai_edge_litert.interpreter.Interpreter``, batch 1, same thread count.

Models: the fixture MLP and convnet (float and full-int8, as TF's converter
wrote them, ``tests/fixtures/tflite``) and a MobileNet v1-shaped model with
seeded random weights (224x224x3 -> 1000 classes, float and full-int8), which
``tools/make_tflite_bench_models.py`` builds and converts with TF into a
temporary directory at bench time.

Each framework runs in its own worker process (ferroflow under this Python,
TF and LiteRT under ``$TFLITE_BENCH_TF_PYTHON``, default ``/work/tfvenv``'s),
so no runtime shares a process or thread pools with another. For one model
and thread count every worker loads the model, sets one seeded input and
warms up; then the workers take turns timing short runs of invokes (rounds),
so a change of machine load hits all of them alike. Reported: the median
per-invoke time over all rounds. Ratio: ferroflow / the faster of TF and
LiteRT (the issue's goal: at most 0.8).

    python benches/tflite.py [--threads 1 2] [--rounds 7] [--round-seconds 0.25]
                             [--size 224] [--alpha 1.0] [--models mlp_float ...]

Models an interpreter cannot run show its error and the bench goes on.
The last row times ``TFLiteConverter.from_session(sess, [input],
[output]).convert()`` on the frozen convnet (TF's and, once it exists,
ferroflow's; 'n/a' until then).
"""

import argparse
import json
import os
import pathlib
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "tflite"
FIXTURE_MODELS = ["mlp_float", "mlp_int8", "convnet_float", "convnet_int8"]
MOBILENET_MODELS = ["mobilenet_float", "mobilenet_int8"]
FRAMEWORKS = ["ferroflow", "tf", "litert"]
DEFAULT_TF_PYTHON = "/work/tfvenv/bin/python"


# --------------------------------------------------------------------------
# worker side


class Worker:
    """One framework's interpreter, driven by JSON commands."""

    def __init__(self, framework):
        self.framework = framework
        self.interp = None
        self.cls = None

    def _interpreter_class(self):
        if self.cls is None:
            if self.framework == "ferroflow":
                from ferroflow.lite import Interpreter
            elif self.framework == "tf":
                import tensorflow as tf

                Interpreter = tf.lite.Interpreter
            else:
                from ai_edge_litert.interpreter import Interpreter
            self.cls = Interpreter
        return self.cls

    def version(self):
        if self.framework == "ferroflow":
            import ferroflow

            return getattr(ferroflow, "__version__", "?")
        if self.framework == "tf":
            import tensorflow as tf

            return tf.__version__
        from importlib import metadata

        return metadata.version("ai-edge-litert")

    def load(self, path, threads, warmup_s):
        import numpy as np

        self.interp = None
        interp = self._interpreter_class()(model_path=path, num_threads=threads)
        interp.allocate_tensors()
        rng = np.random.RandomState(7)
        for d in interp.get_input_details():
            dtype = np.dtype(d["dtype"])
            if dtype.kind == "f":
                value = rng.uniform(-1.0, 1.0, d["shape"]).astype(dtype)
            else:
                info = np.iinfo(dtype)
                value = rng.randint(info.min, int(info.max) + 1, d["shape"]).astype(dtype)
            interp.set_tensor(d["index"], value)
        interp.invoke()
        t0 = time.perf_counter()
        n = 0
        while n < 3 or time.perf_counter() - t0 < warmup_s:
            interp.invoke()
            n += 1
        self.interp = interp
        return {"estimate_s": (time.perf_counter() - t0) / n}

    def time(self, n):
        invoke = self.interp.invoke
        clock = time.perf_counter
        times = []
        for _ in range(n):
            t0 = clock()
            invoke()
            times.append(clock() - t0)
        return {"times": times}

    def convert(self, frozen_path, repeats):
        """Median seconds of ``from_session(...).convert()`` on a frozen graph."""
        if self.framework == "ferroflow":
            import ferroflow as tf
            import ferroflow.lite as lite

            if not hasattr(lite, "TFLiteConverter"):
                return {"error": "n/a (ferroflow.lite.TFLiteConverter does not exist yet)"}
            converter_cls = lite.TFLiteConverter
            v1 = tf
        elif self.framework == "tf":
            import tensorflow as tf2

            v1 = tf2.compat.v1
            converter_cls = v1.lite.TFLiteConverter
        else:
            return {"error": "n/a (LiteRT has no converter)"}
        graph_def = v1.GraphDef()
        with open(frozen_path, "rb") as f:
            graph_def.ParseFromString(f.read())
        graph = v1.Graph()
        with graph.as_default():
            v1.import_graph_def(graph_def, name="")
            x = graph.get_tensor_by_name("input:0")
            y = graph.get_tensor_by_name("output:0")
            sess = v1.Session(graph=graph)
            times = []
            size = 0
            for _ in range(repeats):
                t0 = time.perf_counter()
                content = converter_cls.from_session(sess, [x], [y]).convert()
                times.append(time.perf_counter() - t0)
                size = len(content)
            sess.close()
        return {"seconds": statistics.median(times), "bytes": size}


def worker_main(framework):
    # Protocol on a private copy of stdout; anything the runtimes print
    # (TF's C++ logging, XNNPACK's notice) goes to stderr.
    proto = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    w = Worker(framework)
    for line in sys.stdin:
        req = json.loads(line)
        try:
            cmd = req.pop("cmd")
            if cmd == "quit":
                break
            reply = getattr(w, cmd)(**req)
        except Exception as e:  # report every failure to the driver
            reply = {"error": f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"}
        proto.write(json.dumps(reply) + "\n")


# --------------------------------------------------------------------------
# driver side


class Client:
    def __init__(self, framework, python, log_dir):
        env = dict(os.environ)
        env.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
        if framework == "ferroflow":
            env["PYTHONPATH"] = os.pathsep.join(
                [str(ROOT / "python")] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])
            )
        self.framework = framework
        self.log = open(pathlib.Path(log_dir) / f"{framework}.log", "w")
        self.proc = subprocess.Popen(
            [python, __file__, "--worker", framework],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.log,
            text=True,
            env=env,
        )

    def call(self, cmd, **kw):
        self.proc.stdin.write(json.dumps({"cmd": cmd, **kw}) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"{self.framework} worker died (see {self.log.name})")
        return json.loads(line)

    def close(self):
        try:
            self.call("quit")
        except (RuntimeError, BrokenPipeError, ValueError):
            pass
        self.proc.wait(timeout=30)
        self.log.close()


def fmt_time(s):
    if s is None:
        return "-"
    if s < 1e-3:
        return f"{s * 1e6:.1f} µs"
    if s < 1.0:
        return f"{s * 1e3:.2f} ms"
    return f"{s:.2f} s"


def bench_model(clients, path, threads, rounds, round_s, warmup_s):
    """{framework: median seconds or error string}."""
    result, estimate = {}, {}
    for name, c in clients.items():
        r = c.call("load", path=str(path), threads=threads, warmup_s=warmup_s)
        if "error" in r:
            result[name] = r["error"]
        else:
            estimate[name] = r["estimate_s"]
    times = {name: [] for name in estimate}
    for _ in range(rounds):
        for name in estimate:
            n = max(3, min(2000, int(round_s / max(estimate[name], 1e-7))))
            r = clients[name].call("time", n=n)
            if "error" in r:
                result[name] = r["error"]
                estimate.pop(name)
                break
            times[name].extend(r["times"])
    for name in estimate:
        result[name] = statistics.median(times[name])
    return result


def tf_python():
    python = os.environ.get("TFLITE_BENCH_TF_PYTHON")
    if python:
        return python
    return DEFAULT_TF_PYTHON if os.path.exists(DEFAULT_TF_PYTHON) else sys.executable


def make_mobilenet(python, out_dir, size, alpha):
    cmd = [python, str(ROOT / "tools" / "make_tflite_bench_models.py"), str(out_dir),
           "--size", str(size), "--alpha", str(alpha)]
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    t0 = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        print("MobileNet generation failed:\n" + r.stderr[-2000:], file=sys.stderr)
        return {}
    print(f"MobileNet {size}x{size} alpha {alpha} written by TF in {time.perf_counter() - t0:.1f} s")
    return {name: out_dir / f"{name}.tflite" for name in MOBILENET_MODELS}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--worker", choices=FRAMEWORKS, help=argparse.SUPPRESS)
    p.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--round-seconds", type=float, default=0.25)
    p.add_argument("--warmup-seconds", type=float, default=0.3)
    p.add_argument("--size", type=int, default=224, help="MobileNet input size")
    p.add_argument("--alpha", type=float, default=1.0, help="MobileNet width multiplier")
    p.add_argument("--models", nargs="+", default=FIXTURE_MODELS + MOBILENET_MODELS)
    p.add_argument("--keep", help="write the generated models here instead of a temp dir")
    args = p.parse_args(argv)
    if args.worker:
        return worker_main(args.worker)

    tmp = pathlib.Path(args.keep or tempfile.mkdtemp(prefix="ferroflow_tflite_bench_"))
    tmp.mkdir(parents=True, exist_ok=True)
    pythons = {"ferroflow": sys.executable, "tf": tf_python(), "litert": tf_python()}
    try:
        paths = {m: FIXTURES / f"{m}.tflite" for m in FIXTURE_MODELS if m in args.models}
        if any(m in args.models for m in MOBILENET_MODELS):
            generated = make_mobilenet(pythons["tf"], tmp, args.size, args.alpha)
            paths.update({m: v for m, v in generated.items() if m in args.models})
        clients = {f: Client(f, pythons[f], tmp) for f in FRAMEWORKS}
        versions = {}
        for f, c in clients.items():
            r = c.call("version")
            versions[f] = r if isinstance(r, str) else r.get("error", "?")
        load = os.getloadavg()
        print(f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
              f"load average {load[0]:.2f} at start; ferroflow {versions['ferroflow']}, "
              f"TF {versions['tf']}, ai-edge-litert {versions['litert']}")
        print(f"median invoke latency, batch 1, {args.rounds} interleaved rounds of "
              f"~{args.round_seconds} s per framework\n")
        header = ("| model | threads | ferroflow | TF tf.lite (XNNPACK) | ai-edge-litert "
                  "| ferroflow / faster |")
        print(header)
        print("|---|---|---|---|---|---|")
        errors = []
        for model, path in paths.items():
            for threads in args.threads:
                r = bench_model(clients, path, threads, args.rounds, args.round_seconds,
                                args.warmup_seconds)
                cells = []
                for f in FRAMEWORKS:
                    if isinstance(r.get(f), float):
                        cells.append(fmt_time(r[f]))
                    else:
                        cells.append("error")
                        errors.append(f"{model}, {threads} thread(s), {f}: {r.get(f)}")
                others = [r[f] for f in ("tf", "litert") if isinstance(r.get(f), float)]
                ratio = "-"
                if isinstance(r.get("ferroflow"), float) and others:
                    ratio = f"{r['ferroflow'] / min(others):.2f}"
                print(f"| {model} | {threads} | " + " | ".join(cells) + f" | {ratio} |", flush=True)
        conv = {}
        frozen = FIXTURES / "convnet_frozen.pb"
        for f in ("ferroflow", "tf"):
            conv[f] = clients[f].call("convert", frozen_path=str(frozen), repeats=3)
        cells = []
        for f in ("ferroflow", "tf"):
            if "seconds" in conv[f]:
                cells.append(fmt_time(conv[f]["seconds"]))
            elif conv[f]["error"].startswith("n/a"):
                cells.append("n/a")
            else:
                cells.append("error")
                errors.append(f"conversion, {f}: {conv[f]['error']}")
        ratio = "-"
        if all("seconds" in conv[f] for f in ("ferroflow", "tf")):
            ratio = f"{conv['ferroflow']['seconds'] / conv['tf']['seconds']:.3f}"
        print(f"| conversion time, convnet (from_session().convert()) | - | {cells[0]} | "
              f"{cells[1]} | - | {ratio} |")
        if errors:
            print("\nerrors:")
            for e in errors:
                print("  " + e)
        for c in clients.values():
            c.close()
        print(f"\nload average at end {os.getloadavg()[0]:.2f}")
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
