"""Write tests/fixtures/segment/cases.npz: TensorFlow 2.21's values and gradients of the segment and scatter ops.

Each case names a ``tf.compat.v1`` function (dotted path), its array inputs, its keyword constants,
which inputs to differentiate and whether the first input is a (ref) variable. TF runs every case in
graph mode; the value and, for float cases, ``tf.gradients(out, inputs, grad_ys=w)`` for fixed random
weights ``w`` are stored next to the inputs. The manifest (JSON) is stored in the same file, so
``tests/python/test_segment_scatter.py`` rebuilds each case with ferroflow from the file alone.

Run from the repository root (never needed by the tests):

    TF_CPP_MIN_LOG_LEVEL=3 /work/tfvenv/bin/python tools/make_segment_fixtures.py
"""

import json
import pathlib

import numpy as np

OUT = pathlib.Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "segment" / "cases.npz"


def cases():
    rng = np.random.default_rng(23)
    arrays, spec = {}, []

    def add(name, fn, inputs, kwargs=None, grad=(), var=False, outputs=1):
        keys = []
        for i, a in enumerate(inputs):
            if isinstance(a, list):  # a list input (dynamic_stitch): one array each
                keys.append([])
                for j, x in enumerate(a):
                    arrays[f"{name}__in{i}_{j}"] = np.asarray(x)
                    keys[-1].append(f"{name}__in{i}_{j}")
                continue
            k = f"{name}__in{i}"
            arrays[k] = np.asarray(a)
            keys.append(k)
        spec.append({"name": name, "fn": fn, "inputs": keys, "kwargs": kwargs or {}, "grad": list(grad),
                     "var": var, "outputs": outputs})

    def f32(*shape):
        return rng.standard_normal(shape).astype(np.float32)

    # Sorted segments: gaps (empty segments), ties for max/min, zeros for prod.
    d = np.array([[1, 2], [3, 2], [0, 5], [4, -1], [4, 7], [2, 2], [0, 0], [6, 1]], np.float32)
    ids = np.array([0, 0, 2, 2, 2, 3, 5, 5], np.int32)
    for op in ["segment_sum", "segment_mean", "segment_max", "segment_min", "segment_prod"]:
        add(f"{op}_f32", f"math.{op}", [d, ids], grad=[0])
        add(f"{op}_f64_3d", f"math.{op}", [f32(7, 2, 3).astype(np.float64), np.array([0, 1, 1, 1, 4, 4, 6], np.int64)],
            grad=[0])
        add(f"{op}_i32", f"math.{op}", [(d * 3).astype(np.int32), ids])
        add(f"{op}_1d", op, [f32(9), np.array([0, 0, 0, 1, 3, 3, 3, 3, 4], np.int32)], grad=[0])
    # Unsorted: negative ids dropped, 2-D ids, empty segments, int dtypes.
    du = f32(6, 3)
    du[4] = du[1]  # ties within segment 2
    idu = np.array([2, 2, -1, 0, 2, 4], np.int32)
    for op in ["unsorted_segment_sum", "unsorted_segment_max", "unsorted_segment_min", "unsorted_segment_prod",
               "unsorted_segment_mean", "unsorted_segment_sqrt_n"]:
        add(f"{op}_f32", f"math.{op}", [du, idu], {"num_segments": 6}, grad=[0])
        add(f"{op}_2d_ids", op, [f32(3, 2, 4).astype(np.float64), np.array([[1, 0], [-1, 1], [3, 1]], np.int64)],
            {"num_segments": 5}, grad=[0])
        if op not in ("unsorted_segment_mean", "unsorted_segment_sqrt_n"):
            add(f"{op}_i32", f"math.{op}", [(du * 10).astype(np.int32), idu], {"num_segments": 6})
            add(f"{op}_u8", f"math.{op}", [np.arange(12, dtype=np.uint8).reshape(6, 2), idu], {"num_segments": 6})
    dz = np.array([[1, 0], [0, 3], [2, 5], [0, 4], [3, 0]], np.float32)
    add("segment_prod_zeros", "math.segment_prod", [dz, np.array([0, 0, 1, 1, 1], np.int32)], grad=[0])
    add("unsorted_segment_prod_zeros", "math.unsorted_segment_prod", [dz, np.array([1, 1, 0, 0, 0], np.int32)],
        {"num_segments": 2}, grad=[0])
    # Sparse segments (already in ferroflow; checked here for values and gradients).
    ds = f32(5, 3)
    for op in ["sparse_segment_sum", "sparse_segment_mean", "sparse_segment_sqrt_n"]:
        add(f"{op}", op, [ds, np.array([0, 3, 3, 1, 4], np.int32), np.array([0, 0, 1, 3, 3], np.int32)], grad=[0])
        add(f"{op}_num", op, [ds, np.array([4, 0, 2], np.int64), np.array([0, 2, 2], np.int32)],
            {"num_segments": 4}, grad=[0])
    # scatter_nd and the tensor scatters.
    add("scatter_nd", "scatter_nd", [np.array([[0, 1], [2, 0], [0, 1]], np.int32), f32(3), np.array([3, 2], np.int32)],
        grad=[1])
    add("scatter_nd_slices", "scatter_nd", [np.array([[3], [1]], np.int64), f32(2, 4), np.array([5, 4], np.int64)],
        grad=[1])
    x = f32(4, 3)
    for op in ["tensor_scatter_nd_update", "tensor_scatter_nd_add", "tensor_scatter_nd_sub", "tensor_scatter_nd_max",
               "tensor_scatter_nd_min"]:
        idx = np.array([[2], [0]], np.int32) if op.endswith("update") else np.array([[2], [0], [2]], np.int32)
        upd = f32(len(idx), 3)
        if op.endswith(("max", "min")):
            upd[0, 0] = x[2, 0]  # a tie between the tensor and an update
        add(op, op, [x, idx, upd], grad=[0, 2])
        add(f"{op}_elems", op, [x, np.array([[1, 2], [3, 0]], np.int64), f32(2)], grad=[0, 2])
    add("tensor_scatter_update_i32", "tensor_scatter_update",
        [np.arange(8, dtype=np.int32).reshape(4, 2), np.array([[1], [3]], np.int32), np.array([[7, 7], [9, 9]], np.int32)])
    # Variable scatters (values after the update).
    v = (np.arange(8, dtype=np.float32).reshape(4, 2) + 1)
    for op, idx, upd in [
        ("scatter_mul", [0, 2, 0], [[2, 2], [3, 3], [4, 4]]),
        ("scatter_div", [0, 2], [[2, 2], [3, 3]]),
        ("scatter_max", [0, 2, 2], [[2, 2], [30, 3], [1, 40]]),
        ("scatter_min", [0, 2], [[2, 2], [30, 3]]),
        ("scatter_nd_add", [[0], [2], [0]], [[2, 2], [30, 3], [1, 1]]),
        ("scatter_nd_sub", [[0, 1], [2, 0]], [2, 30]),
        ("scatter_nd_update", [[0, 1], [2, 0]], [2, 30]),
    ]:
        add(op, op, [v, np.array(idx, np.int32), np.array(upd, np.float32)], var=True)
    add("scatter_mul_scalar", "scatter_mul", [v, np.array([1, 3], np.int32), np.float32(10)], var=True)
    add("batch_scatter_update", "batch_scatter_update",
        [f32(2, 3, 4), np.array([[1, 0], [2, 0]], np.int32), f32(2, 2, 4)], var=True)
    add("batch_gather", "batch_gather", [f32(2, 5, 3), np.array([[4, 0, 4], [1, 2, 3]], np.int32)], grad=[0])
    # Partition and stitch.
    add("dynamic_partition", "dynamic_partition", [f32(5, 2), np.array([1, 0, 2, 1, 1], np.int32)],
        {"num_partitions": 4}, grad=[0], outputs=4)
    add("dynamic_partition_2d", "dynamic_partition", [f32(2, 3, 2), np.array([[0, 1, 1], [1, 0, 0]], np.int32)],
        {"num_partitions": 2}, grad=[0], outputs=2)
    add("dynamic_stitch", "dynamic_stitch", [[np.array([0, 4], np.int32), np.array([[1, 4], [6, 2]], np.int32)],
                                             [f32(2, 3), f32(2, 2, 3)]], grad=[1])
    return arrays, spec


def resolve(tf1, path):
    obj = tf1
    for part in path.split("."):
        obj = getattr(obj, part)
    return obj


def main():
    import tensorflow as tf

    tf1 = tf.compat.v1
    tf1.disable_eager_execution()
    arrays, spec = cases()
    rng = np.random.default_rng(5)
    for case in spec:
        g = tf.Graph()
        with g.as_default():
            ins = []
            for k in case["inputs"]:
                if isinstance(k, list):
                    ins.append([tf.constant(arrays[x]) for x in k])
                else:
                    ins.append(tf.constant(arrays[k]))
            if case["var"]:
                ins[0] = tf1.Variable(arrays[case["inputs"][0]], use_resource=False)
            out = resolve(tf1, case["fn"])(*ins, **case["kwargs"])
            outs = out if isinstance(out, list) else [out]
            fetch = {"out": outs}
            ws = []
            if case["grad"]:
                targets = []
                for i in case["grad"]:
                    targets.extend(ins[i] if isinstance(ins[i], list) else [ins[i]])
            with tf1.Session() as s:
                s.run(tf1.global_variables_initializer())
                if case["grad"]:
                    # Shapes of dynamic outputs are only known after a run.
                    vals = s.run(outs)
                    ws = [rng.standard_normal(v.shape).astype(v.dtype) for v in vals]
                    grads = tf.gradients(outs, targets, grad_ys=[tf.constant(w) for w in ws])
                    fetch["grads"] = grads
                res = s.run(fetch)
        name = case["name"]
        for j, o in enumerate(res["out"]):
            arrays[f"{name}__out{j}"] = o
        for j, w in enumerate(ws):
            arrays[f"{name}__w{j}"] = w
        for j, gr in enumerate(res.get("grads", [])):
            arrays[f"{name}__grad{j}"] = gr
        print(name, [o.shape for o in res["out"]])
    arrays["manifest"] = np.array(json.dumps(spec))
    OUT.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(OUT, **arrays)
    print("wrote", OUT)


if __name__ == "__main__":
    main()
