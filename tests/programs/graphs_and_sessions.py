"""TF 1.x guide "Graphs and Sessions": several tf.Graph()s built with as_default() and run by
tf.Session(graph=g), ops and tensors named by scopes (tf.name_scope, get_tensor_by_name/get_operation_by_name,
as_graph_element), Session.run with nested fetch structures (lists, tuples, dicts, namedtuples, an op fetched
as None), feeding a non-placeholder tensor (an intermediate overridden by feed_dict), tf.RunOptions with
FULL_TRACE and tf.RunMetadata (step_stats filled), sess.graph / sess.graph_def, Graph.finalize()
refusing new ops, and tf.Session.reset-free closing through `with`.
"""

import collections

import numpy as np
from _common import run_as_script

TF_STEPS = 1

MyData = collections.namedtuple("MyData", ["a", "b"])


def main(tf, steps=1):
    tf.reset_default_graph()
    out = {}

    g_1 = tf.Graph()
    with g_1.as_default():
        c = tf.constant("Node in g_1")
        sess_1 = tf.Session()
    g_2 = tf.Graph()
    with g_2.as_default():
        d = tf.constant("Node in g_2")
    sess_2 = tf.Session(graph=g_2)
    out["graphs"] = [c.graph is g_1, sess_1.graph is g_1, d.graph is g_2, sess_2.graph is g_2,
                     tf.get_default_graph() is not g_1]
    out["strings"] = [sess_1.run(c).decode(), sess_2.run(d).decode()]
    sess_1.close()
    sess_2.close()

    g = tf.Graph()
    with g.as_default():
        c_0 = tf.constant(0, name="c")
        c_1 = tf.constant(2, name="c")
        with tf.name_scope("outer"):
            c_2 = tf.constant(2, name="c")
            with tf.name_scope("inner"):
                c_3 = tf.constant(3, name="c")
            c_4 = tf.constant(4, name="c")
            with tf.name_scope("inner"):
                c_5 = tf.constant(5, name="c")
        out["names"] = [t.op.name for t in (c_0, c_1, c_2, c_3, c_4, c_5)]

        x = tf.placeholder(tf.float32, shape=[3], name="x")
        y = tf.square(x, name="y")
        z = tf.reduce_sum(y, name="z")
        w = tf.Variable(tf.ones([3]), name="w")
        update = tf.assign_add(w, y, name="update")
        init = tf.global_variables_initializer()
        with tf.Session() as sess:
            sess.run(init)
            r = sess.run(
                {"k1": MyData(y, z), "k2": [x, (y, [z])], "op": update.op, "init": init},
                feed_dict={x: [1.0, 2.0, 3.0]},
            )
            out["fetch_dict_keys"] = sorted(r)
            out["fetch_namedtuple"] = [type(r["k1"]).__name__, r["k1"].a.tolist(), float(r["k1"].b)]
            out["fetch_nested"] = [r["k2"][0].tolist(), type(r["k2"][1]).__name__, r["k2"][1][1][0].item()]
            out["fetch_op"] = [r["op"], r["init"]]
            # Feeding an intermediate tensor replaces it: z from a fed y.
            out["fed_intermediate"] = float(sess.run(z, feed_dict={y: [10.0, 20.0, 30.0]}))
            out["by_name"] = float(sess.run("z:0", feed_dict={"x:0": [1.0, 1.0, 1.0]}))
            out["elements"] = [
                g.get_tensor_by_name("y:0").name,
                g.get_operation_by_name("update").type,
                g.as_graph_element("z").name,
                g.as_graph_element("z:0").name,
            ]
            options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
            run_metadata = tf.RunMetadata()
            val = sess.run(update, feed_dict={x: [1.0, 1.0, 1.0]}, options=options, run_metadata=run_metadata)
            out["traced_value"] = val.tolist()
            out["has_step_stats"] = len(run_metadata.step_stats.dev_stats) > 0
            out["graph_def_nodes"] = sorted(n.name for n in sess.graph_def.node)
            out["sess_graph"] = sess.graph is g
            out["run_single_list"] = [a.tolist() for a in sess.run([y], {x: np.ones(3, np.float32)})]
        g.finalize()
        try:
            tf.constant(1.0)
            out["finalized"] = "allowed"
        except RuntimeError as e:
            out["finalized"] = "RuntimeError: " + str(e)
        out["finalized_flag"] = g.finalized
    return out


if __name__ == "__main__":
    run_as_script(main, 1)
