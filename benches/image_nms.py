"""Box-op benchmarks: non-max suppression of 10,000 boxes and crop_and_resize of a
detection batch, ferroflow side by side with TensorFlow 2.21 (``tf.compat.v1`` graphs).

    python benches/image_nms.py [--quick] [--tf-python /work/tfvenv/bin/python]

  nms        tf.image.non_max_suppression of 10,000 random boxes (sizes 2-60 px in a 1000x1000
             frame, uniform scores), iou_threshold 0.5, max_output_size 100 / 1,000 / 10,000;
             and soft-NMS (non_max_suppression_with_scores, sigma 0.5, 200 outputs).
  crop       tf.image.crop_and_resize of 300 boxes from a [2, 50, 50, 256] feature map to 14x14
             (a Faster R-CNN ROI crop), bilinear; and the same with its gradient to the image and
             the boxes.

Inputs live in variables (no feed, no constant folding). Each framework runs in its own
process; ``--tf-python`` names the interpreter with TensorFlow (default: this one). Every
figure is the median of timed repetitions after a warm-up (milliseconds per Session.run). The
selected indices are checked to be identical between the two.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

N_BOXES = 10_000


def med(fn, repeat, number):
    fn()
    out = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        out.append((time.perf_counter() - t0) / number)
    return statistics.median(out)


def data():
    rng = np.random.default_rng(0)
    yx = rng.uniform(0, 1000, size=(N_BOXES, 2)).astype(np.float32)
    hw = rng.uniform(2, 60, size=(N_BOXES, 2)).astype(np.float32)
    boxes = np.concatenate([yx, yx + hw], axis=1)
    scores = rng.random(N_BOXES).astype(np.float32)
    feat = rng.random((2, 50, 50, 256)).astype(np.float32)
    c = rng.uniform(0, 0.8, size=(300, 2)).astype(np.float32)
    crop_boxes = np.concatenate([c, c + rng.uniform(0.05, 0.2, size=(300, 2)).astype(np.float32)], axis=1)
    ind = (np.arange(300) % 2).astype(np.int32)
    return boxes, scores, feat, crop_boxes, ind


def worker(framework, quick):
    if framework == "tf":
        import tensorflow.compat.v1 as tf

        tf.disable_v2_behavior()
        image = tf.image
    else:
        import ferroflow as tf
        from ferroflow.ops import image_boxes as image
    boxes, scores, feat, crop_boxes, ind = data()
    repeat, number = (3, 2) if quick else (7, 5)
    res = {"framework": framework, "times": {}, "selected": {}}
    with tf.Graph().as_default():
        vb = tf.Variable(boxes)
        vs = tf.Variable(scores)
        vf = tf.Variable(feat)
        vc = tf.Variable(crop_boxes)
        vi = tf.Variable(ind)
        nms = {k: image.non_max_suppression(vb, vs, k, 0.5) for k in (100, 1000, N_BOXES)}
        soft = image.non_max_suppression_with_scores(vb, vs, 200, 0.5, soft_nms_sigma=0.5)
        crops = image.crop_and_resize(vf, vc, vi, (14, 14))
        loss = tf.reduce_sum(crops)
        grads = tf.gradients(loss, [vf, vc])
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for k, t in nms.items():
                res["selected"][str(k)] = sess.run(t).tolist()
                res["times"][f"nms k={k}"] = med(lambda t=t: sess.run(t.op), repeat, number)
            idx, sc = sess.run(soft)
            res["selected"]["soft"] = idx.tolist()
            res["times"]["soft-nms k=200"] = med(lambda: sess.run(soft[0].op), repeat, number)
            res["times"]["crop 300x14x14x256"] = med(lambda: sess.run(crops.op), repeat, number)
            res["times"]["crop + grads"] = med(lambda: sess.run([g.op for g in grads]), repeat, number)
    print(json.dumps(res))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--tf-python", default=sys.executable, help="interpreter with TensorFlow")
    parser.add_argument("--worker", choices=["ferroflow", "tf"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker, args.quick)
        return
    results = {}
    for fw, py in (("ferroflow", sys.executable), ("tf", args.tf_python)):
        cmd = [py, os.path.abspath(__file__), "--worker", fw] + (["--quick"] if args.quick else [])
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            print(f"{fw}: not available ({proc.stderr.strip().splitlines()[-1:]})")
            continue
        results[fw] = json.loads(proc.stdout.strip().splitlines()[-1])
    print(f"box ops on {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs "
          "(ms per Session.run, median)")
    names = list(next(iter(results.values()))["times"]) if results else []
    print(f"{'case':<22}{'ferroflow':>12}{'TF 2.21':>12}{'speed-up':>10}")
    for n in names:
        a = results.get("ferroflow", {}).get("times", {}).get(n)
        b = results.get("tf", {}).get("times", {}).get(n)
        fa = f"{a * 1e3:.3f}" if a else "-"
        fb = f"{b * 1e3:.3f}" if b else "-"
        sp = f"{b / a:.1f}x" if a and b else "-"
        print(f"{n:<22}{fa:>12}{fb:>12}{sp:>10}")
    if len(results) == 2:
        same = results["ferroflow"]["selected"] == results["tf"]["selected"]
        print("selected indices identical to TF:", same)


if __name__ == "__main__":
    main()
