"""Sampled losses (``tf.nn.nce_loss``, ``tf.nn.sampled_softmax_loss``) and candidate samplers.

The weights and biases are read with ``embedding_lookup`` for the true and
sampled classes only, so their gradients are ``IndexedSlices``: training a
large output layer touches only the rows a step used.
"""

from __future__ import annotations

from ferroflow.framework import dtypes, ops, random_seed
from ferroflow.ops import array_ops, math_ops, nn_ops
from ferroflow.ops._op_util import make_op

__all__ = [
    "log_uniform_candidate_sampler",
    "uniform_candidate_sampler",
    "nce_loss",
    "sampled_softmax_loss",
]


def _sampler(op_type, true_classes, num_true, num_sampled, unique, range_max, seed, name):
    with ops.name_scope(name, op_type, [true_classes]) as scope:
        t = ops.convert_to_tensor(true_classes, name="true_classes")
        if t.dtype != dtypes.int64:
            t = array_ops.cast(t, dtypes.int64)
        s1, s2 = random_seed.get_seed(seed)
        attrs = {
            "num_true": int(num_true),
            "num_sampled": int(num_sampled),
            "unique": bool(unique),
            "range_max": int(range_max),
            "seed": int(s1 or 0),
            "seed2": int(s2 or 0),
        }
        op = make_op(op_type, [t], attrs, scope)
        return tuple(op.outputs)


def log_uniform_candidate_sampler(true_classes, num_true, num_sampled, unique, range_max, seed=None, name=None):
    """Samples classes with ``P(k) = log((k+2)/(k+1)) / log(range_max+1)`` (frequent-first vocabularies).

    Returns ``(sampled_candidates, true_expected_count, sampled_expected_count)``.
    """
    return _sampler("LogUniformCandidateSampler", true_classes, num_true, num_sampled, unique, range_max, seed, name)


def uniform_candidate_sampler(true_classes, num_true, num_sampled, unique, range_max, seed=None, name=None):
    """Samples classes uniformly from ``[0, range_max)``."""
    return _sampler("UniformCandidateSampler", true_classes, num_true, num_sampled, unique, range_max, seed, name)


def _compute_sampled_logits(weights, biases, labels, inputs, num_sampled, num_classes, num_true, sampled_values,
                            subtract_log_q, remove_accidental_hits, partition_strategy, name, seed=None):
    if not isinstance(weights, (list, tuple)):
        weights = [weights]
    with ops.name_scope(name, "compute_sampled_logits", list(weights) + [biases, inputs, labels]):
        labels = ops.convert_to_tensor(labels)
        if labels.dtype != dtypes.int64:
            labels = array_ops.cast(labels, dtypes.int64)
        labels_flat = array_ops.reshape(labels, [-1])
        if sampled_values is None:
            sampled_values = log_uniform_candidate_sampler(
                true_classes=labels, num_true=num_true, num_sampled=num_sampled, unique=True,
                range_max=num_classes, seed=seed,
            )
        sampled, true_expected, sampled_expected = (array_ops.stop_gradient(s) for s in sampled_values)
        sampled = array_ops.cast(sampled, dtypes.int64)
        all_ids = array_ops.concat([labels_flat, sampled], 0)
        all_w = nn_ops.embedding_lookup(weights, all_ids, partition_strategy=partition_strategy)
        inputs = ops.convert_to_tensor(inputs, name="inputs")
        if all_w.dtype != inputs.dtype:
            all_w = array_ops.cast(all_w, inputs.dtype)
        n_true = array_ops.size(labels_flat)
        true_w = array_ops.slice(all_w, array_ops.stack([0, 0]), array_ops.stack([n_true, -1]))
        sampled_w = array_ops.slice(all_w, array_ops.stack([n_true, 0]), [-1, -1])
        sampled_logits = math_ops.matmul(inputs, sampled_w, transpose_b=True)
        all_b = nn_ops.embedding_lookup(biases, all_ids, partition_strategy=partition_strategy)
        if all_b.dtype != inputs.dtype:
            all_b = array_ops.cast(all_b, inputs.dtype)
        true_b = array_ops.slice(all_b, [0], array_ops.reshape(n_true, [1]))
        sampled_b = array_ops.slice(all_b, array_ops.reshape(n_true, [1]), [-1])
        dim = array_ops.shape(true_w)[1:2]
        new_true_w_shape = array_ops.concat([[-1, num_true], dim], 0)
        row_wise = math_ops.multiply(array_ops.expand_dims(inputs, 1), array_ops.reshape(true_w, new_true_w_shape))
        dots = array_ops.reshape(row_wise, array_ops.concat([[-1], dim], 0))
        true_logits = array_ops.reshape(math_ops.reduce_sum(dots, 1), [-1, num_true])
        true_logits = math_ops.add(true_logits, array_ops.reshape(true_b, [-1, num_true]))
        sampled_logits = math_ops.add(sampled_logits, sampled_b)
        if remove_accidental_hits:
            # A sampled class that is one of the row's true classes gets a huge
            # negative logit, so it does not count as a negative example.
            hits = math_ops.reduce_any(
                math_ops.equal(array_ops.reshape(labels, [-1, num_true, 1]), array_ops.reshape(sampled, [1, 1, -1])),
                axis=1,
            )
            penalty = ops.convert_to_tensor(-dtypes.float32.max, dtype=sampled_logits.dtype)
            sampled_logits = math_ops.add(
                sampled_logits, array_ops.where_v2(hits, penalty, array_ops.zeros([], sampled_logits.dtype))
            )
        if subtract_log_q:
            true_logits = math_ops.subtract(true_logits, math_ops.log(array_ops.cast(true_expected, true_logits.dtype)))
            sampled_logits = math_ops.subtract(
                sampled_logits, math_ops.log(array_ops.cast(sampled_expected, sampled_logits.dtype))
            )
        out_logits = array_ops.concat([true_logits, sampled_logits], 1)
        out_labels = array_ops.concat(
            [math_ops.divide(array_ops.ones_like(true_logits), float(num_true)), array_ops.zeros_like(sampled_logits)], 1
        )
        return out_logits, out_labels


def nce_loss(weights, biases, labels, inputs, num_sampled, num_classes, num_true=1, sampled_values=None,
             remove_accidental_hits=False, partition_strategy="mod", name="nce_loss"):
    """Noise-contrastive estimation loss per example: logistic losses of the true class and sampled negatives."""
    logits, labels = _compute_sampled_logits(
        weights, biases, labels, inputs, num_sampled, num_classes, num_true=num_true, sampled_values=sampled_values,
        subtract_log_q=True, remove_accidental_hits=remove_accidental_hits, partition_strategy=partition_strategy,
        name=name,
    )
    sampled_losses = nn_ops.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits, name="sampled_losses")
    return math_ops.reduce_sum(sampled_losses, 1)


def sampled_softmax_loss(weights, biases, labels, inputs, num_sampled, num_classes, num_true=1, sampled_values=None,
                         remove_accidental_hits=True, partition_strategy="mod", name="sampled_softmax_loss", seed=None):
    """Softmax cross-entropy over the true class and a sample of the others, per example."""
    logits, labels = _compute_sampled_logits(
        weights, biases, labels, inputs, num_sampled, num_classes, num_true=num_true, sampled_values=sampled_values,
        subtract_log_q=True, remove_accidental_hits=remove_accidental_hits, partition_strategy=partition_strategy,
        name=name, seed=seed,
    )
    labels = array_ops.stop_gradient(labels, name="labels_stop_gradient")
    return nn_ops.softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits)
