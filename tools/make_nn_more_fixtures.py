"""Makes tests/fixtures/nn_more/*.npz with real TensorFlow (2.21): values and gradients of the 3-D
convolutions and pools, the N-d convolution/pool dispatchers, transposed and atrous convolutions,
dilation/erosion, CTC loss and decoders, for tests/python/test_nn_more.py.

Each case stores its inputs, the output ``y`` and the gradients of ``sum(y * r)`` for a fixed random
``r`` (``r`` too). Run: /work/tfvenv/bin/python tools/make_nn_more_fixtures.py
"""

import os

import numpy as np
import tensorflow as tf

OUT = os.path.join(os.path.dirname(__file__), "..", "tests", "fixtures", "nn_more")
rng = np.random.default_rng(23)


def rand(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def grads(fn, *args):
    """y = fn(*args); the gradients of sum(y * r) with respect to args."""
    ts = [tf.constant(a) for a in args]
    with tf.GradientTape() as tape:
        for t in ts:
            tape.watch(t)
        y = fn(*ts)
    r = rand(*y.shape)
    gs = tape.gradient(y, ts, output_gradients=tf.constant(r))
    return y.numpy(), r, [g.numpy() for g in gs]


def save(name, cases):
    flat = {}
    for i, case in enumerate(cases):
        for k, v in case.items():
            flat[f"{i}/{k}"] = np.asarray(v)
    flat["count"] = np.array(len(cases))
    np.savez_compressed(os.path.join(OUT, name), **flat)


def conv3d_cases():
    cases = []
    for xs, ws, strides, padding in [
        ((2, 5, 6, 7, 3), (2, 3, 2, 3, 4), (1, 1, 1), "SAME"),
        ((1, 6, 5, 4, 2), (3, 2, 2, 2, 3), (2, 1, 2), "VALID"),
        ((2, 4, 4, 4, 3), (1, 1, 1, 3, 5), (1, 1, 1), "VALID"),
        ((1, 7, 6, 5, 2), (3, 3, 3, 2, 2), (2, 2, 2), "SAME"),
    ]:
        x, w = rand(*xs), rand(*ws)
        s = [1, *strides, 1]
        y, r, (dx, dw) = grads(lambda a, b, s=s, p=padding: tf.nn.conv3d(a, b, s, p), x, w)
        cases.append(dict(x=x, w=w, strides=s, padding=padding, y=y, r=r, dx=dx, dw=dw))
    return cases


def conv3d_dilated_cases():
    cases = []
    for xs, ws, dil, padding in [
        ((1, 7, 6, 8, 2), (2, 2, 3, 2, 3), (2, 1, 2), "VALID"),
        ((2, 6, 6, 6, 2), (3, 2, 2, 2, 2), (2, 2, 1), "SAME"),
    ]:
        x, w = rand(*xs), rand(*ws)
        y, r, (dx, dw) = grads(lambda a, b, d=dil, p=padding: tf.nn.convolution(a, b, padding=p, dilations=list(d)), x, w)
        cases.append(dict(x=x, w=w, dilations=list(dil), padding=padding, y=y, r=r, dx=dx, dw=dw))
    return cases


def conv3d_transpose_cases():
    cases = []
    for vs, ws, out, strides, padding in [
        ((2, 3, 4, 3, 4), (2, 3, 2, 3, 4), (2, 5, 7, 6, 3), (2, 2, 2), "SAME"),
        ((1, 4, 3, 3, 2), (3, 2, 2, 5, 2), (1, 6, 4, 4, 5), (1, 1, 1), "VALID"),
    ]:
        v, w = rand(*vs), rand(*ws)
        s = [1, *strides, 1]
        y, r, (dv, dw) = grads(lambda a, b, o=out, s=s, p=padding: tf.nn.conv3d_transpose(a, b, o, s, p), v, w)
        cases.append(dict(v=v, w=w, output_shape=list(out), strides=s, padding=padding, y=y, r=r, dv=dv, dw=dw))
    return cases


def conv_misc_cases():
    """conv1d_transpose, atrous_conv2d(_transpose), convolution 1-D/2-D with dilations."""
    cases = []
    v, w = rand(2, 5, 4), rand(3, 3, 4)
    y, r, (dv, dw) = grads(lambda a, b: tf.nn.conv1d_transpose(a, b, [2, 10, 3], 2, "SAME"), v, w)
    cases.append(dict(kind="conv1d_transpose", a=v, b=w, y=y, r=r, da=dv, db=dw))
    x, w = rand(2, 9, 8, 3), rand(3, 3, 3, 4)
    y, r, (dx, dw) = grads(lambda a, b: tf.nn.atrous_conv2d(a, b, 2, "SAME"), x, w)
    cases.append(dict(kind="atrous_conv2d_same", a=x, b=w, y=y, r=r, da=dx, db=dw))
    y, r, (dx, dw) = grads(lambda a, b: tf.nn.atrous_conv2d(a, b, 2, "VALID"), x, w)
    cases.append(dict(kind="atrous_conv2d_valid", a=x, b=w, y=y, r=r, da=dx, db=dw))
    v, w = rand(2, 8, 8, 4), rand(3, 3, 3, 4)
    y, r, (dv, dw) = grads(lambda a, b: tf.nn.atrous_conv2d_transpose(a, b, [2, 8, 8, 3], 2, "SAME"), v, w)
    cases.append(dict(kind="atrous_conv2d_transpose", a=v, b=w, y=y, r=r, da=dv, db=dw))
    x, w = rand(2, 11, 3), rand(3, 3, 2)
    y, r, (dx, dw) = grads(lambda a, b: tf.compat.v1.nn.convolution(a, b, "VALID", dilation_rate=[3]), x, w)
    cases.append(dict(kind="convolution_1d_dilated", a=x, b=w, y=y, r=r, da=dx, db=dw))
    x, w = rand(2, 7, 9, 3), rand(2, 3, 3, 2)
    y, r, (dx, dw) = grads(lambda a, b: tf.compat.v1.nn.convolution(a, b, "SAME", strides=[2, 1]), x, w)
    cases.append(dict(kind="convolution_2d_strided", a=x, b=w, y=y, r=r, da=dx, db=dw))
    x, w = rand(2, 9, 8, 3), rand(3, 2, 3, 2)
    y, r, (dx, dw) = grads(lambda a, b: tf.nn.with_space_to_batch(
        a, [2, 3], "SAME", lambda inp, n, pad: tf.nn.conv2d(inp, b, 1, pad), filter_shape=[3, 2]), x, w)
    cases.append(dict(kind="with_space_to_batch", a=x, b=w, y=y, r=r, da=dx, db=dw))
    return cases


def pool3d_cases():
    cases = []
    for kind, ksize, strides, padding in [
        ("max", (2, 2, 2), (2, 2, 2), "VALID"),
        ("max", (3, 2, 3), (1, 2, 2), "SAME"),
        ("avg", (2, 2, 2), (2, 2, 2), "VALID"),
        ("avg", (3, 2, 3), (2, 1, 2), "SAME"),
    ]:
        x = rand(2, 5, 6, 7, 3)
        fn = tf.nn.max_pool3d if kind == "max" else tf.nn.avg_pool3d
        k, s = [1, *ksize, 1], [1, *strides, 1]
        y, r, (dx,) = grads(lambda a, k=k, s=s, p=padding, fn=fn: fn(a, k, s, p), x)
        cases.append(dict(kind=kind, x=x, ksize=k, strides=s, padding=padding, y=y, r=r, dx=dx))
    return cases


def pool_misc_cases():
    """max_pool1d/avg_pool1d, the generic pool, max_pool_v2/avg_pool_v2."""
    cases = []
    x = rand(2, 9, 3)
    for kind, fn in [("max_pool1d", tf.nn.max_pool1d), ("avg_pool1d", tf.nn.avg_pool1d)]:
        y, r, (dx,) = grads(lambda a, fn=fn: fn(a, 3, 2, "SAME"), x)
        cases.append(dict(kind=kind, x=x, y=y, r=r, dx=dx))
    x = rand(2, 7, 6, 3)
    y, r, (dx,) = grads(lambda a: tf.compat.v1.nn.pool(a, [3, 2], "AVG", "SAME", strides=[2, 2]), x)
    cases.append(dict(kind="pool_avg_2d", x=x, y=y, r=r, dx=dx))
    x = rand(1, 5, 6, 4, 2)
    y, r, (dx,) = grads(lambda a: tf.compat.v1.nn.pool(a, [2, 2, 2], "MAX", "VALID", strides=[1, 2, 1]), x)
    cases.append(dict(kind="pool_max_3d", x=x, y=y, r=r, dx=dx))
    x = rand(2, 8, 3)
    y, r, (dx,) = grads(lambda a: tf.compat.v1.nn.max_pool_v2(a, [2], [2], "VALID"), x)
    cases.append(dict(kind="max_pool_v2_1d", x=x, y=y, r=r, dx=dx))
    x = rand(1, 4, 5, 6, 2)
    y, r, (dx,) = grads(lambda a: tf.compat.v1.nn.avg_pool_v2(a, 2, 2, "SAME", data_format="NDHWC"), x)
    cases.append(dict(kind="avg_pool_v2_3d", x=x, y=y, r=r, dx=dx))
    return cases


def dilation_cases():
    cases = []
    for kind, strides, rates, padding in [
        ("dilation", (1, 1), (1, 1), "SAME"),
        ("dilation", (2, 1), (1, 2), "VALID"),
        ("erosion", (1, 2), (2, 1), "SAME"),
    ]:
        x, k = rand(2, 7, 8, 3), rand(3, 2, 3)
        s, rt = [1, *strides, 1], [1, *rates, 1]
        if kind == "dilation":
            def fn(a, b, s=s, rt=rt, p=padding):
                return tf.compat.v1.nn.dilation2d(a, b, s, rt, p)
        else:
            def fn(a, b, s=s, rt=rt, p=padding):
                return tf.compat.v1.nn.erosion2d(a, b, s, rt, p)
        y, r, (dx, dk) = grads(fn, x, k)
        cases.append(dict(kind=kind, x=x, k=k, strides=s, rates=rt, padding=padding, y=y, r=r, dx=dx, dk=dk))
    return cases


def fractional_cases():
    """TensorFlow's regions and its gradients through them (the regions themselves are random)."""
    cases = []
    for kind, pseudo, overlapping in [("max", False, False), ("max", True, True), ("avg", True, False),
                                      ("avg", False, True)]:
        x = rand(2, 9, 11, 3)
        fn = tf.compat.v1.nn.fractional_max_pool if kind == "max" else tf.compat.v1.nn.fractional_avg_pool
        t = tf.constant(x)
        with tf.GradientTape() as tape:
            tape.watch(t)
            y, rows, cols = fn(t, [1.0, 1.44, 1.73, 1.0], pseudo_random=pseudo, overlapping=overlapping,
                               deterministic=True, seed=5, seed2=7)
        r = rand(*y.shape)
        (dx,) = tape.gradient(y, [t], output_gradients=tf.constant(r))
        cases.append(dict(kind=kind, pseudo=pseudo, overlapping=overlapping, x=x, y=y.numpy(), rows=rows.numpy(),
                          cols=cols.numpy(), r=r, dx=dx.numpy()))
    return cases


def sparse_of(labels, lengths):
    idx = [[b, i] for b, n in enumerate(lengths) for i in range(n)]
    vals = [labels[b][i] for b, n in enumerate(lengths) for i in range(n)]
    return np.array(idx, np.int64).reshape(-1, 2), np.array(vals, np.int32)


def ctc_cases():
    cases = []
    T, B, C = 8, 3, 5
    labels = [[1, 2, 2, 0], [3, 3, 1, 0], [0, 1, 2, 3]]
    lengths = [3, 2, 4]
    seq = np.array([8, 6, 7], np.int32)
    idx, vals = sparse_of(labels, lengths)
    for pre, merge, ignore in [(False, True, False), (True, True, False), (False, False, False),
                               (False, True, True)]:
        x = rand(T, B, C)
        s = seq if not ignore else np.array([8, 1, 7], np.int32)
        sp = tf.SparseTensor(idx, vals, [B, 4])

        def fn(a, pre=pre, merge=merge, ignore=ignore, s=s, sp=sp):
            return tf.compat.v1.nn.ctc_loss(sp, a, s, preprocess_collapse_repeated=pre, ctc_merge_repeated=merge,
                                            ignore_longer_outputs_than_inputs=ignore)
        y, r, (dx,) = grads(fn, x)
        cases.append(dict(kind="v1", x=x, idx=idx, vals=vals, seq=s, pre=pre, merge=merge, ignore=ignore,
                          y=y, r=r, dx=dx))
    # batch-major
    x = rand(B, T, C)
    sp = tf.SparseTensor(idx, vals, [B, 4])
    y, r, (dx,) = grads(lambda a: tf.compat.v1.nn.ctc_loss(sp, a, seq, time_major=False), x)
    cases.append(dict(kind="v1_batch_major", x=x, idx=idx, vals=vals, seq=seq, y=y, r=r, dx=dx))
    # v2 dense, blank 0 (labels are 1..C-1)
    dense = np.array([[1, 2, 2, 0], [3, 4, 1, 0], [4, 1, 2, 3]], np.int32)
    x = rand(T, B, C)
    y, r, (dx,) = grads(lambda a: tf.nn.ctc_loss(dense, a, np.array(lengths, np.int32), seq, blank_index=0), x)
    cases.append(dict(kind="v2_dense", x=x, labels=dense, label_length=np.array(lengths, np.int32), seq=seq,
                      blank=0, y=y, r=r, dx=dx))
    # v2 sparse, blank 2 (labels avoid 2)
    vals2 = np.array([1, 3, 3, 4, 4, 0, 1, 3, 4], np.int32)
    sp2 = tf.SparseTensor(idx, vals2, [B, 4])
    x = rand(T, B, C)
    y, r, (dx,) = grads(lambda a: tf.nn.ctc_loss(sp2, a, None, seq, blank_index=2), x)
    cases.append(dict(kind="v2_sparse", x=x, idx=idx, vals=vals2, seq=seq, blank=2, y=y, r=r, dx=dx))
    return cases


def decoder_cases():
    cases = []
    T, B, C = 9, 3, 4
    x = rand(T, B, C)
    x[2:4, 0, 1] += 5.0  # a repeat to merge
    seq = np.array([9, 5, 7], np.int32)
    for merge, blank in [(True, None), (False, None), (True, 0)]:
        (d,), lp = tf.compat.v1.nn.ctc_greedy_decoder(x, seq, merge_repeated=merge, blank_index=blank)
        cases.append(dict(x=x, seq=seq, merge=merge, blank=-1 if blank is None else blank,
                          indices=d.indices.numpy(), values=d.values.numpy(), shape=d.dense_shape.numpy(),
                          log_prob=lp.numpy()))
    return cases


def beam_cases():
    cases = []
    T, B, C = 7, 3, 4
    x = rand(T, B, C)
    x[1:3, 1, 0] += 2.0
    seq = np.array([7, 4, 6], np.int32)
    for width, top, merge in [(4, 2, True), (6, 3, False), (1, 1, True)]:
        ds, lp = tf.compat.v1.nn.ctc_beam_search_decoder(x, seq, beam_width=width, top_paths=top,
                                                         merge_repeated=merge)
        case = dict(x=x, seq=seq, width=width, top=top, merge=merge, log_prob=lp.numpy())
        for i, d in enumerate(ds):
            case[f"indices{i}"] = d.indices.numpy()
            case[f"values{i}"] = d.values.numpy()
            case[f"shape{i}"] = d.dense_shape.numpy()
        cases.append(case)
    return cases


def ctc_label_cases():
    labels = np.array([[1, 1, 2, 2, 3, 0], [4, 4, 4, 1, 1, 1], [2, 3, 3, 5, 5, 2]], np.int32)
    seq = np.array([5, 6, 3], np.int32)
    coll, new_len = tf.nn.collapse_repeated(labels, seq)
    uy, uidx = tf.nn.ctc_unique_labels(labels)
    return [dict(labels=labels, seq=seq, collapsed=coll.numpy(), new_len=new_len.numpy(), unique=uy.numpy(),
                 unique_idx=uidx.numpy())]


def loss_cases():
    per = rand(6)
    w = rand(6)
    return [dict(per=per, w=w, avg=tf.nn.compute_average_loss(per).numpy(),
                 avg_w=tf.nn.compute_average_loss(per, sample_weight=w, global_batch_size=8).numpy(),
                 reg=tf.nn.scale_regularization_loss(per).numpy())]


def main():
    os.makedirs(OUT, exist_ok=True)
    save("conv3d.npz", conv3d_cases())
    save("conv3d_dilated.npz", conv3d_dilated_cases())
    save("conv3d_transpose.npz", conv3d_transpose_cases())
    save("conv_misc.npz", conv_misc_cases())
    save("pool3d.npz", pool3d_cases())
    save("pool_misc.npz", pool_misc_cases())
    save("dilation.npz", dilation_cases())
    save("ctc.npz", ctc_cases())
    save("fractional.npz", fractional_cases())
    save("ctc_decoder.npz", decoder_cases())
    save("ctc_beam.npz", beam_cases())
    save("ctc_labels.npz", ctc_label_cases())
    save("losses.npz", loss_cases())


if __name__ == "__main__":
    main()
