"""The candidate samplers beyond uniform/log-uniform (``all_candidate_sampler``, ``fixed_unigram_candidate_sampler``,
``learned_unigram_candidate_sampler``) and ``compute_accidental_hits``, as TensorFlow's ops with its attrs."""

from __future__ import annotations

from ferroflow.framework import dtypes, ops, random_seed
from ferroflow.ops import array_ops
from ferroflow.ops._op_util import make_op

__all__ = [
    "all_candidate_sampler",
    "compute_accidental_hits",
    "fixed_unigram_candidate_sampler",
    "learned_unigram_candidate_sampler",
]


def _int64(t, name):
    t = ops.convert_to_tensor(t, name=name)
    return t if t.dtype == dtypes.int64 else array_ops.cast(t, dtypes.int64)


def _seeds(seed):
    s1, s2 = random_seed.get_seed(seed)
    return {"seed": int(s1 or 0), "seed2": int(s2 or 0)}


def _sampler(op_type, default_name, true_classes, name, **attrs):
    with ops.name_scope(name, default_name, [true_classes]) as scope:
        t = _int64(true_classes, "true_classes")
        op = make_op(op_type, [t], attrs, scope)
        return tuple(op.outputs)


def all_candidate_sampler(true_classes, num_true, num_sampled, unique, seed=None, name=None):
    """Every class of ``[0, num_sampled)``, each with expected count 1 (for testing sampled losses)."""
    return _sampler("AllCandidateSampler", "AllCandidateSampler", true_classes, name, num_true=int(num_true),
                    num_sampled=int(num_sampled), unique=bool(unique), **_seeds(seed))


def fixed_unigram_candidate_sampler(true_classes, num_true, num_sampled, unique, range_max, vocab_file="",
                                    distortion=1.0, num_reserved_ids=0, num_shards=1, shard=0, unigrams=(),
                                    seed=None, name=None):
    """Classes drawn with probability proportional to ``unigram ** distortion`` (from ``unigrams`` or the last
    comma-separated field of each line of ``vocab_file``); the first ``num_reserved_ids`` ids are never drawn, and
    with ``num_shards`` only ids ``id % num_shards == shard`` count."""
    return _sampler("FixedUnigramCandidateSampler", "FixedUnigramCandidateSampler", true_classes, name,
                    num_true=int(num_true), num_sampled=int(num_sampled), unique=bool(unique),
                    range_max=int(range_max), vocab_file=str(vocab_file), distortion=float(distortion),
                    num_reserved_ids=int(num_reserved_ids), num_shards=int(num_shards), shard=int(shard),
                    unigrams=[float(u) for u in unigrams], **_seeds(seed))


def learned_unigram_candidate_sampler(true_classes, num_true, num_sampled, unique, range_max, seed=None, name=None):
    """Classes drawn in proportion to how often they have been seen among the true classes so far (every class
    starts with a count of 1; the counts are updated after each draw, as TensorFlow does)."""
    return _sampler("LearnedUnigramCandidateSampler", "LearnedUnigramCandidateSampler", true_classes, name,
                    num_true=int(num_true), num_sampled=int(num_sampled), unique=bool(unique),
                    range_max=int(range_max), **_seeds(seed))


def compute_accidental_hits(true_classes, sampled_candidates, num_true, seed=None, name=None):
    """Where a sampled candidate equals one of a row's true classes: ``(indices, ids, weights)`` with row indices,
    positions in ``sampled_candidates`` and weights of ``-FLT_MAX`` (add them to the sampled logits)."""
    with ops.name_scope(name, "ComputeAccidentalHits", [true_classes, sampled_candidates]) as scope:
        t = _int64(true_classes, "true_classes")
        s = _int64(sampled_candidates, "sampled_candidates")
        op = make_op("ComputeAccidentalHits", [t, s], dict(num_true=int(num_true), **_seeds(seed)), scope)
        return tuple(op.outputs)
