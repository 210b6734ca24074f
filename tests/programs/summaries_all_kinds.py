"""TF1 summaries of every kind written by one tf.summary.FileWriter: scalar, histogram, image (max_outputs),
audio (sample_rate, max_outputs), text, tensor_summary, a merge of a subset and merge_all with a collection,
family names, summaries inside name scopes, FileWriter.add_graph / add_run_metadata / add_session_log /
flush / close, and the event file read back with tf.train.summary_iterator: tags, value kinds, steps, scalar
values, histogram counts, image sizes, audio sample rates and frame counts, text strings.
"""

import glob
import os
import shutil
import tempfile

import numpy as np
from _common import run_as_script

TF_STEPS = 2


def main(tf, steps=2):
    tf.reset_default_graph()
    rng = np.random.RandomState(26)
    logdir = tempfile.mkdtemp()
    x = tf.placeholder(tf.float32, [None])
    img = tf.placeholder(tf.float32, [None, 6, 5, 3])
    wav = tf.placeholder(tf.float32, [None, 40, 1])
    with tf.name_scope("stats"):
        s1 = tf.summary.scalar("mean", tf.reduce_mean(x))
        s2 = tf.summary.histogram("values", x)
        s3 = tf.summary.scalar("max", tf.reduce_max(x), family="extremes")
    s4 = tf.summary.image("pictures", img, max_outputs=2)
    s5 = tf.summary.audio("sounds", wav, sample_rate=8000, max_outputs=1)
    s6 = tf.summary.text("notes", tf.constant(["hello", "world"]))
    s7 = tf.summary.tensor_summary("raw", tf.constant([[1, 2], [3, 4]]))
    s8 = tf.summary.scalar("other", tf.constant(1.5), collections=["extra"])
    subset = tf.summary.merge([s1, s3])
    merged = tf.summary.merge_all()
    extra = tf.summary.merge_all(key="extra")
    out = {"summary_op_names": [s.op.name for s in (s1, s2, s3, s4, s5, s6, s7, s8)]}

    with tf.Session() as sess:
        writer = tf.summary.FileWriter(logdir)
        writer.add_graph(sess.graph)
        for step in range(steps):
            feed = {x: rng.randn(50).astype(np.float32), img: rng.rand(3, 6, 5, 3).astype(np.float32),
                    wav: np.sin(np.linspace(0, 20, 80)).reshape(2, 40, 1).astype(np.float32)}
            opts = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
            meta = tf.RunMetadata()
            summ, part, ex = sess.run([merged, subset, extra], feed, options=opts, run_metadata=meta)
            writer.add_summary(summ, step)
            writer.add_summary(part, step + 100)
            writer.add_summary(ex, step + 200)
            writer.add_run_metadata(meta, "step%d" % step, step)
        writer.add_session_log(tf.SessionLog(status=tf.SessionLog.START), steps)
        writer.add_summary(sess.run(subset, {x: [1.0, 5.0]}), 999)
        writer.flush()
        writer.close()
        # (No reopen(): TF names event files by the second, so a reopen within the same second truncates the
        # first file, which made TF's own results depend on timing.)

    events = []
    for path in sorted(glob.glob(os.path.join(logdir, "events.out.tfevents.*"))):
        events.extend(tf.train.summary_iterator(path))
    kinds, scalars, details = [], {}, {}
    for e in events:
        if e.HasField("summary"):
            for v in e.summary.value:
                kind = v.WhichOneof("value")
                kinds.append((int(e.step), v.tag, kind))
                if kind == "simple_value":
                    scalars.setdefault(v.tag, []).append(round(float(v.simple_value), 5))
                elif kind == "histo":
                    details[v.tag] = [float(v.histo.num), round(float(v.histo.sum), 4), float(v.histo.min) < 0]
                elif kind == "image":
                    details[v.tag] = [v.image.height, v.image.width, v.image.colorspace]
                elif kind == "audio":
                    details[v.tag] = [v.audio.sample_rate, v.audio.num_channels, v.audio.length_frames,
                                      v.audio.content_type]
                elif kind == "tensor":
                    details[v.tag] = [v.metadata.plugin_data.plugin_name, list(tf.make_ndarray(v.tensor).shape)]
        else:
            what = e.WhichOneof("what")
            kinds.append((int(e.step), what, e.session_log.status if what == "session_log" else None))
    shutil.rmtree(logdir)
    out["events"] = sorted(kinds, key=lambda k: (k[0], str(k[1]), str(k[2])))
    out["scalars"] = scalars
    out["details"] = details
    return out


if __name__ == "__main__":
    run_as_script(main, 2)
