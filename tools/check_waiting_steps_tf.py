"""What TensorFlow 2.21 (tf.compat.v1, v2 behaviour off) gives for runs whose ops wait for each other: the
expectations of tests/python/test_waiting_steps.py. Run with a Python that has TensorFlow; prints one line per
case (2.21 printed: 1 [3.0, None]; 2 OutOfRangeError; 3 [None, [1, 2, 3]]; 4 [10.0, None]; 5 [4.0, None];
6 [(3, 6.0), None]; 7 InvalidArgumentError; 8 1; 9 [(3, 66.0), None, None])."""

import tensorflow.compat.v1 as tf


def queue(capacity=10):
    return tf.FIFOQueue(capacity, tf.float32, shapes=[])


def main():
    tf.disable_v2_behavior()
    s = tf.Session()
    q = queue()
    print(1, s.run([q.dequeue(), q.enqueue(3.0)]))
    q2 = queue()
    try:
        s.run([q2.dequeue(), q2.close()])
    except tf.errors.OpError as e:
        print(2, type(e).__name__)
    q1 = queue(1)
    print(3, s.run([q1.enqueue_many([[1.0, 2.0, 3.0]]), q1.dequeue_many(3)]))
    a, b = queue(), queue()
    put_b = b.enqueue(a.dequeue() * 2)
    with tf.control_dependencies([put_b]):
        y = tf.identity(b.dequeue())
    print(4, s.run([y, a.enqueue(5.0)]))
    acc = tf.ConditionalAccumulator(tf.float32, shape=[])
    print(5, s.run([acc.take_grad(1), acc.apply_grad(4.0, local_step=0)]))
    q3 = queue()
    loop = tf.while_loop(lambda i, t: i < 3, lambda i, t: (i + 1, t + q3.dequeue()), [0, 0.0])
    print(6, s.run([loop, q3.enqueue_many([[1.0, 2.0, 3.0]])]))
    qa, qb = queue(), queue()
    try:
        s.run([qa.dequeue(), qb.dequeue(), tf.assert_equal(1, 2)])
    except tf.errors.OpError as e:
        print(7, type(e).__name__)
    s.run(qa.enqueue(1.0))
    print(8, s.run(qa.size()))
    qc, qd = queue(), queue()
    loop2 = tf.while_loop(lambda i, t: i < 3, lambda i, t: (i + 1, t + qc.dequeue() + qd.dequeue()), [0, 0.0])
    print(9, s.run([loop2, qc.enqueue_many([[1.0, 2.0, 3.0]]), qd.enqueue_many([[10.0, 20.0, 30.0]])]))


if __name__ == "__main__":
    main()
