"""TF1 checkpoint bookkeeping beyond save/restore: tf.train.Saver(max_to_keep=3,
keep_checkpoint_every_n_hours=...) over a run of saves (which files stay, saver.last_checkpoints),
save(write_meta_graph=False), save with latest_filename, Saver(sharded=True) and its .data-0000x-of files,
Saver(var_list=[...]) restoring only part of a model, Saver(save_relative_paths=True),
tf.train.update_checkpoint_state / get_checkpoint_state / checkpoint_exists / get_checkpoint_mtimes,
tf.train.list_variables / load_variable / load_checkpoint, saver.recover_last_checkpoints after a restart,
tf.train.export_meta_graph(clear_devices=True) + import_meta_graph(import_scope=...), Saver.as_saver_def and
Saver.from_proto, and restoring a missing variable (NotFoundError naming the key).

Deterministic: values come from numpy and the file names from the steps.
"""

import os
import shutil
import tempfile

import numpy as np
from _common import fixed_init, run_as_script

TF_STEPS = 7


def build(tf):
    w = tf.get_variable("w", initializer=fixed_init([3, 2], 1800))
    b = tf.get_variable("b", initializer=np.zeros(2, np.float32))
    step = tf.train.get_or_create_global_step()
    inc = tf.assign_add(step, 1)
    upd = tf.group(tf.assign_add(w, tf.ones_like(w) * 0.5), tf.assign_add(b, [1.0, -1.0]), inc)
    return w, b, step, upd


def main(tf, steps=7):
    root = tempfile.mkdtemp()
    out = {}
    tf.reset_default_graph()
    w, b, step, upd = build(tf)
    saver = tf.train.Saver(max_to_keep=3, keep_checkpoint_every_n_hours=10000.0)
    d1 = os.path.join(root, "run1")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        paths = []
        for _ in range(steps):
            sess.run(upd)
            paths.append(os.path.basename(saver.save(sess, os.path.join(d1, "model.ckpt"), global_step=step)))
        out["returned_paths"] = paths
        out["last_checkpoints"] = [os.path.basename(p) for p in saver.last_checkpoints]
        saver.save(sess, os.path.join(d1, "nometa"), write_meta_graph=False)
        saver.save(sess, os.path.join(d1, "other"), latest_filename="other_checkpoint")
        final_w = sess.run(w)
    out["files_run1"] = sorted(os.listdir(d1))
    state = tf.train.get_checkpoint_state(d1)
    out["state_latest"] = os.path.basename(state.model_checkpoint_path)
    out["state_all"] = [os.path.basename(p) for p in state.all_model_checkpoint_paths]
    other = tf.train.get_checkpoint_state(d1, latest_filename="other_checkpoint")
    out["other_latest"] = os.path.basename(other.model_checkpoint_path)
    latest = tf.train.latest_checkpoint(d1)
    out["exists"] = [tf.train.checkpoint_exists(latest), tf.train.checkpoint_exists(os.path.join(d1, "nope"))]
    out["n_mtimes"] = len(tf.train.get_checkpoint_mtimes(state.all_model_checkpoint_paths))
    out["list_variables"] = [[n, list(s)] for n, s in tf.train.list_variables(latest)]
    out["load_variable_b"] = tf.train.load_variable(latest, "b").tolist()
    reader = tf.train.load_checkpoint(d1)
    out["reader_step"] = int(reader.get_tensor("global_step"))
    out["reader_has"] = [reader.has_tensor("w"), reader.has_tensor("missing")]
    out["final_w"] = final_w.ravel().tolist()

    # update_checkpoint_state by hand, then a restarted Saver recovering the list.
    tf.train.update_checkpoint_state(d1, os.path.join(d1, "model.ckpt-7"),
                                     all_model_checkpoint_paths=[os.path.join(d1, "nometa"),
                                                                 os.path.join(d1, "model.ckpt-7")])
    out["after_update"] = os.path.basename(tf.train.latest_checkpoint(d1))
    tf.reset_default_graph()
    w, b, step, upd = build(tf)
    saver2 = tf.train.Saver(max_to_keep=2)
    saver2.recover_last_checkpoints(tf.train.get_checkpoint_state(d1).all_model_checkpoint_paths)
    out["recovered"] = [os.path.basename(p) for p in saver2.last_checkpoints]
    with tf.Session() as sess:
        saver2.restore(sess, os.path.join(d1, "model.ckpt-7"))
        sess.run(upd)
        saver2.save(sess, os.path.join(d1, "model.ckpt"), global_step=step)
        out["after_resave"] = [os.path.basename(p) for p in saver2.last_checkpoints]
        out["restored_step"] = int(sess.run(step))
    out["files_after_resave"] = sorted(f for f in os.listdir(d1) if f.startswith("model.ckpt-"))

    # Sharded and relative-path savers; a partial var_list.
    tf.reset_default_graph()
    with tf.device("/cpu:0"):
        w, b, step, upd = build(tf)
    d2 = os.path.join(root, "run2")
    sharded = tf.train.Saver(sharded=True, save_relative_paths=True)
    partial = tf.train.Saver(var_list=[w])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(upd)
        try:
            sharded.save(sess, os.path.join(d2, "model"), global_step=1)
            out["sharded_without_dir"] = "saved"
        except ValueError as e:
            out["sharded_without_dir"] = ["ValueError", "Parent directory" in str(e)]
        os.makedirs(d2)
        sharded.save(sess, os.path.join(d2, "model"), global_step=1)
        with open(os.path.join(d2, "checkpoint")) as f:
            out["relative_state"] = f.read().replace(root, "ROOT")
        partial.save(sess, os.path.join(d2, "only_w"))
        sess.run(upd)
        partial.restore(sess, os.path.join(d2, "only_w"))
        out["partial_restore"] = [sess.run(w).ravel().tolist(), sess.run(b).tolist()]
        try:
            tf.train.Saver(var_list={"not_there": b}).restore(sess, os.path.join(d2, "only_w"))
            out["missing_key"] = "no error"
        except tf.errors.NotFoundError as e:
            out["missing_key"] = ["NotFoundError", "not_there" in str(e)]
    out["files_run2"] = sorted(os.listdir(d2))
    saver_def = sharded.as_saver_def()
    out["saver_def"] = [saver_def.sharded, saver_def.max_to_keep, saver_def.version]
    out["from_proto_type"] = type(tf.train.Saver.from_proto(saver_def)).__name__

    # export_meta_graph(clear_devices) + import_meta_graph(import_scope).
    meta = os.path.join(d2, "exported.meta")
    tf.train.export_meta_graph(meta, clear_devices=True)
    tf.reset_default_graph()
    tf.train.import_meta_graph(meta, import_scope="imported")
    out["imported_vars"] = sorted(v.op.name for v in tf.global_variables())
    shutil.rmtree(root)
    return out


if __name__ == "__main__":
    run_as_script(main, TF_STEPS)
