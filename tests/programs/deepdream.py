"""TF 1.x's DeepDream notebook (examples/tutorials/deepdream), with a small fixed convnet in place of Inception:
a T(layer) lookup of tensors by graph name (graph.get_tensor_by_name('import/...:0') after
tf.import_graph_def of the net's GraphDef under the 'import' prefix), an input placeholder with the
imagenet mean subtracted and tf.expand_dims, the objective tf.reduce_mean of a channel, t_grad =
tf.gradients(t_score, t_input)[0], gradient ascent normalized by the gradient's std, render_multiscale with
resize by tf.image.resize_bilinear through a tffunc-style wrapper (placeholders fed into a one-op graph),
tiled gradients over a random shift (np.random with a seed), and the Laplacian pyramid normalization
(lap_split/lap_merge with tf.nn.conv2d and conv2d_transpose of a 5x5 binomial kernel) of render_lapnorm.

Deterministic: fixed weights, a seeded numpy shift, a fixed starting image.
"""

import numpy as np
from _common import fixed_init, run_as_script

TF_STEPS = 3


def build_net_graphdef(tf):
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, None, None, 3], name="input")
        w1 = tf.constant(fixed_init([3, 3, 3, 8], 2300, 0.3), name="w1")
        w2 = tf.constant(fixed_init([3, 3, 8, 12], 2301, 0.3), name="w2")
        h1 = tf.nn.relu(tf.nn.conv2d(x, w1, [1, 1, 1, 1], "SAME"), name="mixed3a")
        tf.nn.relu(tf.nn.conv2d(tf.nn.max_pool(h1, [1, 2, 2, 1], [1, 2, 2, 1], "SAME"), w2, [1, 1, 1, 1], "SAME"),
                   name="mixed4b")
    return g.as_graph_def()


def main(tf, steps=3):
    tf.reset_default_graph()
    graph = tf.get_default_graph()
    sess = tf.InteractiveSession(graph=graph)
    graph_def = build_net_graphdef(tf)
    t_input = tf.placeholder(np.float32, name="input")
    imagenet_mean = 117.0
    t_preprocessed = tf.expand_dims(t_input - imagenet_mean, 0)
    tf.import_graph_def(graph_def, {"input": t_preprocessed})

    def T(layer):
        return graph.get_tensor_by_name("import/%s:0" % layer)

    def tffunc(*argtypes):
        placeholders = list(map(tf.placeholder, argtypes))

        def wrap(f):
            out = f(*placeholders)

            def wrapper(*args, **kw):
                return out.eval(dict(zip(placeholders, args)), session=kw.get("session"))

            return wrapper

        return wrap

    def resize(img, size):
        img = tf.expand_dims(img, 0)
        return tf.image.resize_bilinear(img, size)[0, :, :, :]

    resize = tffunc(np.float32, np.int32)(resize)

    rng = np.random.RandomState(230)

    def calc_grad_tiled(img, t_grad, tile_size=16):
        sz = tile_size
        h, w = img.shape[:2]
        sx, sy = rng.randint(sz, size=2)
        img_shift = np.roll(np.roll(img, sx, 1), sy, 0)
        grad = np.zeros_like(img)
        for y in range(0, max(h - sz // 2, sz), sz):
            for x in range(0, max(w - sz // 2, sz), sz):
                sub = img_shift[y:y + sz, x:x + sz]
                g = sess.run(t_grad, {t_input: sub})
                grad[y:y + sz, x:x + sz] = g
        return np.roll(np.roll(grad, -sx, 1), -sy, 0)

    layer = "mixed4b"
    channel = 3
    t_obj = T(layer)[:, :, :, channel]
    t_score = tf.reduce_mean(t_obj)
    t_grad = tf.gradients(t_score, t_input)[0]

    img_noise = (np.random.RandomState(231).uniform(size=(24, 24, 3)) + 100.0).astype(np.float32)
    out = {"layer_shape": str(T(layer).shape), "n_import_ops": len([o for o in graph.get_operations()
                                                                   if o.name.startswith("import/")])}
    # render_naive
    img = img_noise.copy()
    scores = []
    for _ in range(steps):
        g, score = sess.run([t_grad, t_score], {t_input: img})
        g /= g.std() + 1e-8
        img += g
        scores.append(float(score))
    out["naive_scores"] = scores

    # render_multiscale
    img = img_noise.copy()
    for octave in range(2):
        if octave > 0:
            hw = np.float32(img.shape[:2]) * 1.4
            img = resize(img, np.int32(hw))
        for _ in range(steps):
            g = calc_grad_tiled(img, t_grad)
            g /= g.std() + 1e-8
            img += g
    out["multiscale_shape"] = list(img.shape)
    out["multiscale_mean"] = float(img.mean())

    # Laplacian pyramid normalization.
    k = np.float32([1, 4, 6, 4, 1])
    k = np.outer(k, k)
    k5x5 = k[:, :, None, None] / k.sum() * np.eye(3, dtype=np.float32)

    def lap_split(img):
        with tf.name_scope("split"):
            lo = tf.nn.conv2d(img, k5x5, [1, 2, 2, 1], "SAME")
            lo2 = tf.nn.conv2d_transpose(lo, k5x5 * 4, tf.shape(img), [1, 2, 2, 1])
            hi = img - lo2
        return lo, hi

    def lap_split_n(img, n):
        levels = []
        for _ in range(n):
            img, hi = lap_split(img)
            levels.append(hi)
        levels.append(img)
        return levels[::-1]

    def lap_merge(levels):
        img = levels[0]
        for hi in levels[1:]:
            with tf.name_scope("merge"):
                img = tf.nn.conv2d_transpose(img, k5x5 * 4, tf.shape(hi), [1, 2, 2, 1]) + hi
        return img

    def normalize_std(img, eps=1e-10):
        with tf.name_scope("normalize"):
            std = tf.sqrt(tf.reduce_mean(tf.square(img)))
            return img / tf.maximum(std, eps)

    def lap_normalize(img, scale_n=2):
        img = tf.expand_dims(img, 0)
        tlevels = lap_split_n(img, scale_n)
        tlevels = list(map(normalize_std, tlevels))
        out = lap_merge(tlevels)
        return out[0, :, :, :]

    lap_norm_func = tffunc(np.float32)(lap_normalize)
    img = img_noise.copy()
    for _ in range(steps):
        g = calc_grad_tiled(img, t_grad)
        g = lap_norm_func(g)
        img += g
    out["lapnorm_mean"] = float(img.mean())
    out["lapnorm_patch"] = img[:3, :3, 0].ravel().tolist()
    sess.close()
    out["losses"] = [-s for s in scores]
    return out


if __name__ == "__main__":
    run_as_script(main, TF_STEPS)
