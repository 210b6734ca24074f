"""tf.nn.log_uniform_candidate_sampler, uniform_candidate_sampler, fixed_unigram_candidate_sampler (reserved ids,
distortion, shards) and learned_unigram_candidate_sampler (its counts growing run by run) give TensorFlow 2.21's
candidates and expected counts for fixed seeds, run after run (tests/fixtures/random/candidate_samplers.json, written by
tools/make_candidate_sampler_fixtures.py): a seeded tf.nn.sampled_softmax_loss or nce_loss then trains as
TF's does (tests/programs/gru_language_model.py)."""

import importlib.util
import json
import pathlib

import numpy as np
import pytest

import ferroflow as tf

ROOT = pathlib.Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("candidate_fixtures", ROOT / "tools" / "make_candidate_sampler_fixtures.py")
_tool = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_tool)
FIXTURE = json.loads((ROOT / "tests" / "fixtures" / "random" / "candidate_samplers.json").read_text())


@pytest.mark.parametrize("name", sorted(FIXTURE))
def test_candidates_and_expected_counts_are_tensorflows(name):
    case = FIXTURE[name]
    got = _tool.run(tf, tuple(case["case"]))
    for run, (want, have) in enumerate(zip(case["runs"], got)):
        assert have[0] == want[0], (name, run)
        # Expected counts are TF's float32 values (computed in float as TF does).
        np.testing.assert_array_equal(np.float32(have[1]), np.float32(want[1]), err_msg=f"{name} run {run}")
        np.testing.assert_array_equal(np.float32(have[2]), np.float32(want[2]), err_msg=f"{name} run {run}")


def test_true_classes_out_of_range_are_an_invalid_argument():
    # TF's kernel checks every true class against [0, range_max) (the expected counts need its probability).
    labels = tf.placeholder(tf.int64, [1, 1])
    out_of_range = tf.nn.uniform_candidate_sampler(labels, 1, 2, False, 5, seed=1)
    with tf.Session() as sess:
        assert sess.run(out_of_range, {labels: [[4]]})[0].shape == (2,)
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"out of range \[0, 5\), received 7"):
            sess.run(out_of_range, {labels: [[7]]})
