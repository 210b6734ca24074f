"""Write tests/fixtures/nn_extra/*.npz: values and gradients of TF1's depthwise/separable convolutions, fused and
composed batch normalization, the moments helpers, conv1d, crelu, lrn, space_to_depth/depth_to_space and
max_pool_with_argmax, computed by real TensorFlow (tf.compat.v1 graphs) for
tests/python/test_nn_depthwise_batchnorm.py.

Each case stores its inputs (``<case>/x``, ...), its outputs and the gradients of ``sum(out * r)`` for a stored
random ``r`` (``<case>/dx``, ...). Run from the repository root with a Python that has TensorFlow 2.21:

    TF_CPP_MIN_LOG_LEVEL=3 /work/tfvenv/bin/python tools/make_nn_extra_fixtures.py
"""

import pathlib

import numpy as np
import tensorflow as tf

tf1 = tf.compat.v1
tf1.disable_eager_execution()

OUT = pathlib.Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "nn_extra"
rng = np.random.RandomState(23)


def arr(*shape):
    return rng.uniform(-1, 1, size=shape).astype(np.float32)


def run_case(store, case, inputs, build, grad_wrt):
    """Builds ``build(*placeholders)`` (a tensor or tuple), fetches it and d(sum(out0 * r))/d(inputs in grad_wrt)."""
    g = tf1.Graph()
    with g.as_default():
        phs = {k: tf1.placeholder(tf.float32, v.shape, name=k) for k, v in inputs.items()}
        outs = build(**phs)
        outs = outs if isinstance(outs, tuple) else (outs,)
        with tf1.Session() as s:
            vals = s.run(list(outs), {phs[k]: v for k, v in inputs.items()})
            r = arr(*vals[0].shape)
            grads = tf1.gradients(tf1.reduce_sum(outs[0] * r), [phs[k] for k in grad_wrt]) if grad_wrt else []
            gvals = s.run(grads, {phs[k]: v for k, v in inputs.items()}) if grads else []
    for k, v in inputs.items():
        store[f"{case}/{k}"] = v
    for i, v in enumerate(vals):
        store[f"{case}/out{i}"] = np.asarray(v)
    store[f"{case}/r"] = r
    for k, v in zip(grad_wrt, gvals):
        store[f"{case}/d{k}"] = v


def depthwise():
    st = {}
    run_case(st, "same_m2", {"x": arr(2, 7, 6, 3), "w": arr(3, 3, 3, 2)},
             lambda x, w: tf1.nn.depthwise_conv2d(x, w, [1, 1, 1, 1], "SAME"), ["x", "w"])
    run_case(st, "valid_s2", {"x": arr(1, 9, 8, 4), "w": arr(3, 2, 4, 1)},
             lambda x, w: tf1.nn.depthwise_conv2d(x, w, [1, 2, 2, 1], "VALID"), ["x", "w"])
    run_case(st, "rate2", {"x": arr(1, 8, 9, 2), "w": arr(3, 3, 2, 1)},
             lambda x, w: tf1.nn.depthwise_conv2d(x, w, [1, 1, 1, 1], "SAME", rate=[2, 2]), ["x", "w"])
    run_case(st, "native_s2_same", {"x": arr(2, 6, 7, 5), "w": arr(2, 3, 5, 3)},
             lambda x, w: tf1.nn.depthwise_conv2d_native(x, w, [1, 2, 2, 1], "SAME"), ["x", "w"])
    run_case(st, "explicit", {"x": arr(1, 5, 6, 2), "w": arr(3, 3, 2, 2)},
             lambda x, w: tf1.nn.depthwise_conv2d_native(x, w, [1, 1, 1, 1], [[0, 0], [1, 2], [0, 1], [0, 0]]),
             ["x", "w"])
    run_case(st, "separable", {"x": arr(2, 6, 6, 3), "dw": arr(3, 3, 3, 2), "pw": arr(1, 1, 6, 4)},
             lambda x, dw, pw: tf1.nn.separable_conv2d(x, dw, pw, [1, 1, 1, 1], "SAME"), ["x", "dw", "pw"])
    return st


def batch_norm():
    st = {}
    c = 3
    x, scale, offset = arr(2, 4, 5, c), arr(c) + 1.5, arr(c)
    mean, var = arr(c), arr(c) + 1.5
    run_case(st, "train", {"x": x, "scale": scale, "offset": offset},
             lambda x, scale, offset: tf1.nn.fused_batch_norm(x, scale, offset, epsilon=0.001),
             ["x", "scale", "offset"])
    run_case(st, "train_factor", {"x": x, "scale": scale, "offset": offset, "mean": mean, "var": var},
             lambda x, scale, offset, mean, var: tf1.nn.fused_batch_norm(
                 x, scale, offset, mean, var, epsilon=0.01, exponential_avg_factor=0.3),
             ["x", "scale", "offset"])
    run_case(st, "infer", {"x": x, "scale": scale, "offset": offset, "mean": mean, "var": var},
             lambda x, scale, offset, mean, var: tf1.nn.fused_batch_norm(
                 x, scale, offset, mean, var, is_training=False),
             ["x", "scale", "offset"])
    run_case(st, "tiny_eps", {"x": x, "scale": scale, "offset": offset},
             lambda x, scale, offset: tf1.nn.fused_batch_norm(x * 0.001, scale, offset, epsilon=1e-8),
             ["x"])
    xc = arr(2, c, 4, 3)
    run_case(st, "nchw_train", {"x": xc, "scale": scale, "offset": offset},
             lambda x, scale, offset: tf1.nn.fused_batch_norm(x, scale, offset, data_format="NCHW"),
             ["x", "scale", "offset"])
    run_case(st, "batch_normalization", {"x": x, "mean": mean, "var": var, "offset": offset, "scale": scale},
             lambda x, mean, var, offset, scale: tf1.nn.batch_normalization(x, mean, var, offset, scale, 0.01),
             ["x", "mean", "var", "offset", "scale"])
    run_case(st, "global_norm", {"x": x, "mean": mean, "var": var, "offset": offset, "scale": scale},
             lambda x, mean, var, offset, scale: tf1.nn.batch_norm_with_global_normalization(
                 x, mean, var, offset, scale, 0.01, False),
             ["x", "mean", "var"])
    return st


def moments():
    st = {}
    x = arr(3, 4, 5)
    run_case(st, "sufficient", {"x": x},
             lambda x: tf1.nn.sufficient_statistics(x, [0, 2], shift=None)[1:3], ["x"])
    run_case(st, "sufficient_shift", {"x": x, "shift": arr(4, 1)},
             lambda x, shift: tf1.nn.sufficient_statistics(x, [0, 2], shift=shift, keepdims=True)[1:3], ["x"])
    run_case(st, "normalize", {"x": x, "shift": arr(4)},
             lambda x, shift: tf1.nn.normalize_moments(
                 *tf1.nn.sufficient_statistics(tf1.transpose(x, [0, 2, 1]), [0, 1], shift=shift)),
             ["x"])
    run_case(st, "weighted", {"x": x, "w": np.abs(arr(3, 4, 1))},
             lambda x, w: tf1.nn.weighted_moments(x, [0, 2], w), ["x", "w"])
    run_case(st, "conv1d", {"x": arr(2, 9, 3), "w": arr(3, 3, 4)},
             lambda x, w: tf1.nn.conv1d(x, w, 2, "SAME"), ["x", "w"])
    run_case(st, "crelu", {"x": arr(2, 5)}, lambda x: tf1.nn.crelu(x), ["x"])
    run_case(st, "lrn", {"x": arr(2, 3, 2, 9)},
             lambda x: tf1.nn.lrn(x, depth_radius=2, bias=1.5, alpha=0.4, beta=0.75), ["x"])
    run_case(st, "lrn_default", {"x": arr(1, 2, 2, 12)}, lambda x: tf1.nn.local_response_normalization(x), ["x"])
    run_case(st, "space_to_depth", {"x": arr(2, 4, 6, 3)}, lambda x: tf1.nn.space_to_depth(x, 2), ["x"])
    run_case(st, "argmax", {"x": arr(2, 5, 6, 3)},
             lambda x: tf1.nn.max_pool_with_argmax(x, [1, 2, 2, 1], [1, 2, 2, 1], "SAME"), ["x"])
    run_case(st, "argmax_batch", {"x": arr(2, 5, 6, 3)},
             lambda x: tf1.nn.max_pool_with_argmax(x, [1, 3, 3, 1], [1, 1, 2, 1], "VALID",
                                                   include_batch_in_index=True), ["x"])
    # TensorFlow's CPU kernels have no gradient for int32 indices.
    run_case(st, "argmax_i32", {"x": arr(1, 4, 5, 2)},
             lambda x: tf1.nn.max_pool_with_argmax(x, [1, 2, 2, 1], [1, 2, 2, 1], "SAME", Targmax=tf.int32), [])
    run_case(st, "depth_to_space", {"x": arr(2, 2, 3, 8)}, lambda x: tf1.nn.depth_to_space(x, 2), ["x"])
    return st


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    for name, make in [("depthwise", depthwise), ("batch_norm", batch_norm), ("moments", moments)]:
        st = make()
        np.savez_compressed(OUT / f"{name}.npz", **st)
        print(name, len(st), "arrays")


if __name__ == "__main__":
    main()
