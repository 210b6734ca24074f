"""TF1 queue pipelines built by hand (the "Threading and Queues" guide and pre-tf.data seq2seq input code):
a tf.FIFOQueue filled by enqueue_many from a tf.train.QueueRunner with two enqueue ops, a
tf.train.Coordinator with start_queue_runners and request_stop/join; a tf.PaddingFIFOQueue batching
variable-length sequences with dequeue_many (padded_shapes [None]); tf.train.batch(dynamic_pad=True,
allow_smaller_final_batch=True) over a range_input_producer of lengths; tf.train.batch_join over two
readers' tensors; a tf.RandomShuffleQueue with seed and min_after_dequeue drained in full (its contents
compared as a set); queue.size(), close(cancel_pending_enqueues), and the OutOfRangeError at the end; a
tiny model averaging the padded batches' masked lengths.

Deterministic: the queues' orders are FIFO and the shuffled queue is compared as a multiset.
"""

import numpy as np
from _common import run_as_script

TF_STEPS = 4


def main(tf, steps=4):
    tf.reset_default_graph()
    out = {}
    # FIFOQueue + QueueRunner + Coordinator.
    q = tf.FIFOQueue(capacity=20, dtypes=[tf.float32, tf.int32], shapes=[[2], []], name="fifo")
    data = tf.constant(np.arange(16, dtype=np.float32).reshape(8, 2))
    ids = tf.range(8)
    enqueue_op = q.enqueue_many([data, ids])
    qr = tf.train.QueueRunner(q, [enqueue_op] * 1)
    tf.train.add_queue_runner(qr)
    x, i = q.dequeue_many(4)
    size = q.size()

    # PaddingFIFOQueue of variable-length sequences.
    pq = tf.PaddingFIFOQueue(capacity=10, dtypes=[tf.int32, tf.int32], shapes=[[None], []])
    seq = tf.placeholder(tf.int32, [None])
    penq = pq.enqueue([seq, tf.size(seq)])
    padded, lens = pq.dequeue_many(3)

    # tf.train.batch with dynamic_pad over a producer of lengths.
    length = tf.train.range_input_producer(5, shuffle=False).dequeue() + 1
    ragged = tf.range(length)
    dyn_batch, dyn_len = tf.train.batch([ragged, length], batch_size=2, dynamic_pad=True,
                                        allow_smaller_final_batch=True, num_threads=1, capacity=8)
    mask = tf.sequence_mask(dyn_len, tf.shape(dyn_batch)[1])
    masked_mean = tf.reduce_sum(tf.cast(dyn_batch, tf.float32) * tf.cast(mask, tf.float32)) / tf.cast(
        tf.reduce_sum(dyn_len), tf.float32)

    # batch_join over two sources.
    a = tf.train.limit_epochs(tf.constant([1.0, 2.0, 3.0]), num_epochs=1)
    b = tf.train.limit_epochs(tf.constant([10.0, 20.0, 30.0]), num_epochs=1)
    joined = tf.train.batch_join([[a], [b]], batch_size=2, enqueue_many=True, allow_smaller_final_batch=True)

    # RandomShuffleQueue.
    rq = tf.RandomShuffleQueue(capacity=10, min_after_dequeue=0, dtypes=[tf.int64], shapes=[[]], seed=3)
    renq = rq.enqueue_many([tf.range(6, dtype=tf.int64)])
    rdeq = rq.dequeue()
    rclose = rq.close()

    with tf.Session() as sess:
        sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess=sess, coord=coord)
        fifo = []
        for _ in range(steps):
            xv, iv = sess.run([x, i])
            fifo.append([xv.ravel().tolist(), iv.tolist()])
        out["fifo"] = fifo
        out["fifo_size_type"] = sess.run(size).dtype.name
        for s in ([1, 2, 3], [4], [5, 6]):
            sess.run(penq, {seq: s})
        pv, lv = sess.run([padded, lens])
        out["padded"] = pv.tolist()
        out["padded_lengths"] = lv.tolist()
        dyn = []
        for _ in range(3):
            bv, blv, mm = sess.run([dyn_batch, dyn_len, masked_mean])
            dyn.append([bv.tolist(), blv.tolist(), float(mm)])
        out["dynamic_pad"] = dyn
        joined_all = []
        try:
            while True:
                joined_all.extend(sess.run(joined).tolist())
        except tf.errors.OutOfRangeError:
            out["join_ended"] = "OutOfRangeError"
        out["joined_sorted"] = sorted(joined_all)
        sess.run(renq)
        sess.run(rclose)
        drained = []
        try:
            while True:
                drained.append(int(sess.run(rdeq)))
        except tf.errors.OutOfRangeError:
            out["shuffle_end"] = "OutOfRangeError"
        out["shuffle_sorted"] = sorted(drained)
        coord.request_stop()
        sess.run(q.close(cancel_pending_enqueues=True))
        coord.join(threads)
        out["queue_runners"] = len(tf.get_collection(tf.GraphKeys.QUEUE_RUNNERS))
    out["losses"] = [float(v[2]) for v in dyn]
    return out


if __name__ == "__main__":
    run_as_script(main, TF_STEPS)
