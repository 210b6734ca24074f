"""tf.profiler graphs shared by tools/make_profiler_fixtures.py (TF 2.21) and test_profiler.py."""


def cases(tf):
    out = {}
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [8, 28, 28, 3])
        c = tf.layers.conv2d(x, 4, 3, padding="same", activation=tf.nn.relu, name="conv")
        p = tf.layers.max_pooling2d(c, 2, 2)
        a = tf.nn.avg_pool(p, [1, 2, 2, 1], [1, 2, 2, 1], "VALID")
        dw = tf.nn.depthwise_conv2d(a, tf.ones([3, 3, 4, 2]), [1, 1, 1, 1], "SAME")
        f = tf.reshape(dw, [8, -1])
        with tf.variable_scope("head"):
            d = tf.layers.dense(f, 10, use_bias=False)
            e = tf.nn.bias_add(d, tf.get_variable("b", [10]))
        s = tf.nn.softmax(e)
        m = tf.reduce_mean(tf.square(s - 0.1)) + tf.reduce_sum(tf.log(s + 1.0)) + tf.nn.l2_loss(e)
        bm = tf.matmul(tf.ones([2, 3, 4]), tf.ones([2, 4, 5]))
        tf.add_n([m, m, m])
        tf.argmax(bm, 1)
        tf.Variable(tf.zeros([7]), trainable=False, name="not_trainable")
        unknown = tf.placeholder(tf.float32, [None, 5])
        tf.matmul(unknown, tf.ones([5, 2]))
        flops = tf.profiler.profile(g, options=tf.profiler.ProfileOptionBuilder.float_operation())
        params = tf.profiler.profile(
            g, options=tf.profiler.ProfileOptionBuilder.trainable_variables_parameter()
        )
        by_type = tf.profiler.profile(g, cmd="op", options=tf.profiler.ProfileOptionBuilder.float_operation())
    out["forward_flops"] = flops.total_float_ops
    out["forward_flops_top"] = sorted((ch.name, ch.total_float_ops) for ch in flops.children)
    out["params"] = params.total_parameters
    out["params_tree"] = [
        (ch.name, ch.total_parameters, sorted((gc.name, gc.parameters) for gc in ch.children))
        for ch in params.children
    ]
    chain, node = [], by_type
    while node.children:
        node = node.children[0]
        chain.append((node.name, node.float_ops, node.total_float_ops, len(node.children)))
    out["op_view_total"] = by_type.total_float_ops
    out["op_view_chain"] = chain
    return out
