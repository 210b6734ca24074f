"""Write tests/fixtures/random/candidate_samplers.json: what TensorFlow 2.21's LogUniformCandidateSampler,
UniformCandidateSampler, FixedUnigramCandidateSampler and LearnedUnigramCandidateSampler return on CPU for fixed
seeds, over three successive Session.run calls (each run
reserves a fresh stretch of the node's Philox stream), for tests/python/test_candidate_sampler_tf_bits.py.

Each case names the sampler, its arguments and the seeds; ``build`` makes the op with whichever ``tf`` module it
is handed (real TF here, ferroflow in the test). Run from the repository root:

    TF_CPP_MIN_LOG_LEVEL=3 /work/tfvenv/bin/python tools/make_candidate_sampler_fixtures.py
"""

import json
import pathlib

import numpy as np

OUT = pathlib.Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "random" / "candidate_samplers.json"
RUNS = 3

CASES = {
    # name: (sampler, true_classes, num_sampled, unique, range_max, graph_seed, op_seed[, sampler keywords])
    "log_uniform_unique": ("log_uniform", [[0, 3], [7, 29]], 8, True, 30, None, 3),
    "log_uniform_replacement": ("log_uniform", [[1], [4]], 10, False, 50, 13, None),
    "log_uniform_big_range": ("log_uniform", [[5], [70000]], 16, True, 100000, 7, 11),
    "log_uniform_all_of_range": ("log_uniform", [[2]], 6, True, 6, 2, 2),
    "uniform_unique": ("uniform", [[0], [9]], 6, True, 10, None, 5),
    "uniform_power_of_two": ("uniform", [[3]], 12, False, 64, 21, None),
    "uniform_big_range": ("uniform", [[1], [2]], 9, False, 3 * 10**9 + 7, 4, 8),
    "fixed_unigram_unique": (
        "fixed_unigram", [[0, 3], [7, 9]], 5, True, 10, None, 3,
        {"unigrams": [5.0, 1.0, 3.0, 8.0, 2.0, 1.0, 4.0, 6.0, 2.0, 3.0]},
    ),
    "fixed_unigram_distortion_reserved": (
        "fixed_unigram", [[2], [21]], 12, False, 22, 9, None,
        {"unigrams": [float(k % 7 + 1) * 1.5 for k in range(20)], "distortion": 0.75, "num_reserved_ids": 2},
    ),
    "fixed_unigram_shard": (
        "fixed_unigram", [[0], [6]], 4, True, 7, 5, 6,
        {"unigrams": [float(k + 1) for k in range(12)], "num_reserved_ids": 3, "num_shards": 2, "shard": 1},
    ),
    "fixed_unigram_skewed": (
        "fixed_unigram", [[1]], 16, False, 6, 12, 1, {"unigrams": [100.0, 0.5, 0.25, 3.0, 0.0, 40.0]},
    ),
    "learned_unigram_unique": ("learned_unigram", [[1, 2], [3, 3]], 6, True, 15, None, 4),
    "learned_unigram_replacement": ("learned_unigram", [[5], [5], [39]], 20, False, 40, 17, 2),
}


def build(tf, case):
    sampler, true_classes, num_sampled, unique, range_max, graph_seed, op_seed, *extra = case
    if graph_seed is not None:
        tf.set_random_seed(graph_seed)
    fn = {
        "log_uniform": tf.nn.log_uniform_candidate_sampler,
        "uniform": tf.nn.uniform_candidate_sampler,
        "fixed_unigram": tf.nn.fixed_unigram_candidate_sampler,
        "learned_unigram": tf.nn.learned_unigram_candidate_sampler,
    }[sampler]
    labels = tf.constant(np.asarray(true_classes, np.int64))
    return fn(labels, num_true=len(true_classes[0]), num_sampled=num_sampled, unique=unique, range_max=range_max,
              seed=op_seed, **(extra[0] if extra else {}))


def run(tf, case):
    """[[sampled, true_expected, sampled_expected] per run] as lists."""
    with tf.Graph().as_default():
        op = build(tf, case)
        with tf.Session() as sess:
            return [[np.asarray(v).tolist() for v in sess.run(op)] for _ in range(RUNS)]


def main():
    import tensorflow.compat.v1 as tf

    tf.disable_v2_behavior()
    out = {name: {"case": list(case), "runs": run(tf, case)} for name, case in CASES.items()}
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(out, indent=1) + "\n")
    print("wrote", OUT)


if __name__ == "__main__":
    main()
