"""Makes tests/fixtures/sdca/sdca.npz with TensorFlow 2.21's SDCA ops.

Run with the TensorFlow venv: /work/tfvenv/bin/python tools/make_sdca_fixtures.py
- fprint_*: SdcaFprint of strings of every length class (0 to 300 bytes).
- single_*: one SdcaOptimizer pass over examples with disjoint features (so the visiting order,
  random in TF, cannot change the result), for every loss, with and without L1.
- conv_*: weights after 200 passes over a small dense+sparse problem (converged: SDCA solves a
  strongly convex problem, so any visiting order reaches the same weights).
"""

import os

import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()
OUT = os.path.join(os.path.dirname(__file__), "..", "tests", "fixtures", "sdca", "sdca.npz")
LOSSES = ["logistic_loss", "squared_loss", "hinge_loss", "smooth_hinge_loss", "poisson_loss"]
data = {}

rng = np.random.RandomState(7)
strings = [bytes(rng.randint(0, 256, size=n).astype(np.uint8)) for n in
           [0, 1, 3, 4, 7, 8, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, 143, 144, 145, 200, 255, 256, 300]]
strings += [b"example_1", b"hello world", b"a" * 1000]
with tf.Graph().as_default(), tf.Session() as s:
    data["fprint_in"] = np.array(strings, dtype=object)
    data["fprint_out"] = s.run(tf.train.sdca_fprint(tf.constant(strings)))


def labels_for(loss, n, rng):
    if loss == "squared_loss":
        return rng.randn(n).astype(np.float32)
    if loss == "poisson_loss":
        return rng.poisson(2.0, size=n).astype(np.float32)
    return rng.randint(0, 2, size=n).astype(np.float32)


# One pass, disjoint features: example e has sparse features {2e, 2e+1} with values.
n = 6
for loss in LOSSES:
    for l1 in (0.0, 0.3):
        key = f"single_{loss}_{l1}"
        ex = np.repeat(np.arange(n), 2).astype(np.int64)
        feat = np.arange(2 * n).astype(np.int64)
        vals = rng.uniform(0.5, 1.5, size=2 * n).astype(np.float32)
        w_sparse = rng.uniform(-0.2, 0.2, size=2 * n).astype(np.float32)
        ew = rng.uniform(0.5, 2.0, size=n).astype(np.float32)
        lab = labels_for(loss, n, rng)
        state = np.zeros((n, 4), np.float32)
        state[:, 0] = 0.0
        with tf.Graph().as_default(), tf.Session() as s:
            out_state, d_sparse, _ = tf.train.sdca_optimizer(
                [ex], [feat], [vals], [], ew, lab, [feat], [w_sparse], [], state,
                loss_type=loss, l1=l1, l2=1.5, num_loss_partitions=1, num_inner_iterations=1, adaptative=False)
            st, ds = s.run([out_state, d_sparse[0]])
        for name, v in dict(ex=ex, feat=feat, vals=vals, w=w_sparse, ew=ew, lab=lab, state=st, delta=ds).items():
            data[f"{key}_{name}"] = v

# Convergence: 40 examples, 3 dense features, one sparse group of 10 features (2 per example).
n = 40
dense = rng.randn(n, 3).astype(np.float32)
ex = np.repeat(np.arange(n), 2).astype(np.int64)
feat = np.stack([rng.choice(10, 2, replace=False) for _ in range(n)]).reshape(-1).astype(np.int64)
ew = np.ones(n, np.float32)
data["conv_dense"], data["conv_ex"], data["conv_feat"] = dense, ex, feat
for loss in LOSSES:
    for l1, adaptive in ((0.0, False), (0.2, True)):
        lab = labels_for(loss, n, rng)
        key = f"conv_{loss}_{l1}"
        with tf.Graph().as_default(), tf.Session() as s:
            ws = tf.Variable(np.zeros(10, np.float32))
            wd = tf.Variable(np.zeros(3, np.float32))
            st = tf.Variable(np.zeros((n, 4), np.float32))
            out_state, d_sparse, d_dense = tf.train.sdca_optimizer(
                [ex], [feat], [], [dense], ew, lab, [np.arange(10, dtype=np.int64)], [ws], [wd], st,
                loss_type=loss, l1=l1, l2=1.0, num_loss_partitions=1, num_inner_iterations=1,
                adaptative=adaptive)
            with tf.control_dependencies([out_state, d_sparse[0], d_dense[0]]):
                step = tf.group(st.assign(out_state), ws.assign_add(d_sparse[0]), wd.assign_add(d_dense[0]))
            s.run(tf.global_variables_initializer())
            for _ in range(200):
                s.run(step)
            data[f"{key}_lab"] = lab
            data[f"{key}_ws"], data[f"{key}_wd"] = s.run([ws, wd])
            # The weights the model predicts with are the shrunk ones.
            shrink = tf.train.sdca_shrink_l1([ws, wd], l1=l1, l2=1.0)
            s.run(shrink)
            data[f"{key}_ws_shrunk"], data[f"{key}_wd_shrunk"] = s.run([ws, wd])

np.savez_compressed(OUT, **data)
print("wrote", OUT, len(data), "arrays")
