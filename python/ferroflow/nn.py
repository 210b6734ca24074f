"""``tf.nn``: activations, softmax and losses, normalisation, embeddings."""

from ferroflow.ops import rnn_cell  # noqa: F401  (tf.nn.rnn_cell)
from ferroflow.ops.array_ops import stop_gradient  # noqa: F401
from ferroflow.ops.array_ops_extra import space_to_batch  # noqa: F401
from ferroflow.ops.candidate_sampling_ops import *  # noqa: F401,F403,E402
from ferroflow.ops.embedding_ops import embedding_lookup_sparse, safe_embedding_lookup_sparse  # noqa: F401
from ferroflow.ops.nn_conv import *  # noqa: F401,F403
from ferroflow.ops.nn_impl import *  # noqa: F401,F403
from ferroflow.ops.nn_more import *  # noqa: F401,F403
from ferroflow.ops.nn_ops import (  # noqa: F401
    approx_max_k,
    approx_min_k,
    bias_add,
    dropout,
    elu,
    embedding_lookup,
    in_top_k,
    l2_loss,
    l2_normalize,
    leaky_relu,
    log_poisson_loss,
    log_softmax,
    moments,
    relu,
    relu6,
    relu_layer,
    selu,
    sigmoid,
    sigmoid_cross_entropy_with_logits,
    silu,
    softmax,
    softmax_cross_entropy_with_logits,
    softmax_cross_entropy_with_logits_v2,
    softplus,
    softsign,
    sparse_softmax_cross_entropy_with_logits,
    swish,
    tanh,
    top_k,
    weighted_cross_entropy_with_logits,
    xw_plus_b,
    zero_fraction,
)
from ferroflow.ops.nn_sampled import *  # noqa: F401,F403,E402
from ferroflow.ops.quantized_nn_ops import *  # noqa: F401,F403,E402
from ferroflow.ops.rnn import (  # noqa: F401,E402
    bidirectional_dynamic_rnn,
    dynamic_rnn,
    raw_rnn,
    static_bidirectional_rnn,
    static_rnn,
    static_state_saving_rnn,
)
