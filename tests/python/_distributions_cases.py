"""tf.distributions calls shared by tools/make_distributions_fixtures.py (TF 2.21) and test_distributions.py."""

import numpy as np


def cases(tf):
    """name -> (tensor or static value). The same code runs with TensorFlow and with ferroflow."""
    d = tf.distributions
    x = np.array([-40.0, -15.0, -3.0, -0.5, 0.0, 0.7, 2.0, 6.0, 9.0], np.float32)
    n = d.Normal(loc=[[0.0], [1.5]], scale=[2.0, 0.5, 1.0])
    n1 = d.Normal(loc=0.0, scale=1.0)
    n64 = d.Normal(loc=np.float64(0.0), scale=np.float64(1.0))
    u = d.Uniform(low=[0.0, -1.0], high=[1.0, 3.0])
    be_l = d.Bernoulli(logits=[-2.0, 0.0, 3.0])
    be_p = d.Bernoulli(probs=[0.1, 0.5, 0.9])
    c_l = d.Categorical(logits=[[1.0, 2.0, 0.5], [0.0, -1.0, 3.0]])
    c_p = d.Categorical(probs=[[0.2, 0.3, 0.5], [0.6, 0.3, 0.1]])
    out = {
        "normal_log_prob": n.log_prob([[0.3], [-1.0]]),
        "normal_prob": n.prob(0.25),
        "normal_cdf": n1.cdf(x),
        "normal_log_cdf": n1.log_cdf(x),
        "normal_log_cdf64": n64.log_cdf(x.astype(np.float64) * 2.0),
        "normal_survival": n1.survival_function(x),
        "normal_log_survival": n1.log_survival_function(x),
        "normal_quantile": n1.quantile([0.01, 0.5, 0.975]),
        "normal_entropy": n.entropy(),
        "normal_mean": n.mean(),
        "normal_stddev": n.stddev(),
        "normal_variance": n.variance(),
        "normal_mode": n.mode(),
        "normal_kl": d.kl_divergence(n, d.Normal(loc=0.5, scale=[1.0, 2.0, 3.0])),
        "normal_cross_entropy": n.cross_entropy(n1),
        "normal_batch_shape": n.batch_shape.as_list(),
        "normal_batch_shape_tensor": n.batch_shape_tensor(),
        "normal_event_shape": n.event_shape.as_list(),
        "normal_sample_shape": n.sample([4, 5], seed=3).shape.as_list(),
        "normal_sample_scalar_shape": n1.sample(seed=3).shape.as_list(),
        "normal_sample_n_shape": n.sample(7, seed=3).shape.as_list(),
        "uniform_prob": u.prob([[0.5], [-0.5], [1.0], [2.9], [3.5]]),
        "uniform_log_prob": u.log_prob([0.5, 2.0]),
        "uniform_cdf": u.cdf([[-2.0], [0.25], [0.9], [1.0], [5.0]]),
        "uniform_entropy": u.entropy(),
        "uniform_mean": u.mean(),
        "uniform_variance": u.variance(),
        "uniform_stddev": u.stddev(),
        "uniform_sample_shape": u.sample(3, seed=1).shape.as_list(),
        "bernoulli_log_prob": be_l.log_prob([1, 0, 1]),
        "bernoulli_log_prob_broadcast": be_l.log_prob([[1], [0]]),
        "bernoulli_prob_from_probs": be_p.prob([0, 1, 1]),
        "bernoulli_logits_from_probs": be_p.logits,
        "bernoulli_probs_from_logits": be_l.probs,
        "bernoulli_entropy": be_l.entropy(),
        "bernoulli_mean": be_p.mean(),
        "bernoulli_variance": be_p.variance(),
        "bernoulli_mode": be_l.mode(),
        "bernoulli_kl": d.kl_divergence(be_l, be_p),
        "bernoulli_sample_shape": be_l.sample([2, 4], seed=2).shape.as_list(),
        "bernoulli_sample_dtype": be_l.sample(seed=2).dtype.name,
        "categorical_log_prob": c_l.log_prob([2, 0]),
        "categorical_log_prob_broadcast": c_l.log_prob([[0], [1], [2]]),
        "categorical_prob": c_p.prob([1, 1]),
        "categorical_entropy": c_l.entropy(),
        "categorical_mode": c_l.mode(),
        "categorical_kl": d.kl_divergence(c_l, c_p),
        "categorical_probs": c_l.probs,
        "categorical_event_size": c_l.event_size,
        "categorical_batch_shape": c_l.batch_shape.as_list(),
        "categorical_sample_shape": c_l.sample([3, 2], seed=4).shape.as_list(),
        "reparameterization": [
            str(n.reparameterization_type == d.FULLY_REPARAMETERIZED),
            str(be_l.reparameterization_type == d.NOT_REPARAMETERIZED),
        ],
    }
    # Gamma, Exponential, Beta and Laplace (the VI programs' priors); seeded samples are TF's bits.
    g = d.Gamma(concentration=[2.0, 9.0, 0.5], rate=[1.0, 2.0, 3.0])
    e = d.Exponential(rate=[0.5, 3.0])
    bt = d.Beta(concentration1=[2.0, 3.0, 0.5], concentration0=[5.0, 1.5, 0.8])
    la = d.Laplace(loc=[0.0, 1.0], scale=[1.0, 0.5])
    out.update({
        "gamma_log_prob": g.log_prob([1.5, 4.0, 0.2]),
        "gamma_cdf": g.cdf([1.5, 4.0, 0.2]),
        "gamma_entropy": g.entropy(),
        "gamma_mean": g.mean(),
        "gamma_variance": g.variance(),
        "gamma_stddev": g.stddev(),
        "gamma_mode": g.mode(),
        "gamma_sample": g.sample(2, seed=5),
        "gamma_kl": d.kl_divergence(g, d.Gamma(concentration=3.0, rate=[1.5, 0.5, 1.0])),
        "exponential_log_prob": e.log_prob([0.3, 2.0]),
        "exponential_cdf": e.cdf([0.3, 2.0]),
        "exponential_entropy": e.entropy(),
        "exponential_mean": e.mean(),
        "exponential_sample": e.sample([2, 2], seed=6),
        "beta_log_prob": bt.log_prob([0.3, 0.8, 0.05]),
        "beta_cdf": bt.cdf([0.3, 0.8, 0.05]),
        "beta_entropy": bt.entropy(),
        "beta_mean": bt.mean(),
        "beta_variance": bt.variance(),
        "beta_mode": bt.mode(),
        "beta_sample": bt.sample(2, seed=7),
        "beta_kl": d.kl_divergence(bt, d.Beta(concentration1=1.5, concentration0=[2.0, 4.0, 1.0])),
        "laplace_log_prob": la.log_prob([-0.5, 1.2]),
        "laplace_cdf": la.cdf([[-3.0], [0.5], [4.0]]),
        "laplace_log_cdf": la.log_cdf([[-30.0], [-0.5], [2.0]]),
        "laplace_entropy": la.entropy(),
        "laplace_stddev": la.stddev(),
        "laplace_sample": la.sample(3, seed=8),
        "scopes": [g.name, e.name, bt.name, la.name, la.log_prob(0.0).op.name, e.sample(seed=1).op.name],
        "batch_shapes": [g.batch_shape.as_list(), e.batch_shape.as_list(), bt.batch_shape.as_list()],
    })
    # StudentT, Dirichlet and Multinomial; seeded samples are TF's bits.
    st = d.StudentT(df=[3.0, 0.8, 1.5], loc=[0.0, 1.0, -2.0], scale=[1.0, 2.0, 0.5])
    di = d.Dirichlet(concentration=[[1.5, 2.0, 3.0], [0.5, 4.0, 1.2]])
    mu = d.Multinomial(total_count=[4.0, 6.0], probs=[[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]])
    mu_l = d.Multinomial(total_count=5.0, logits=[0.5, -1.0, 0.2, 0.0])
    out.update({
        "student_t_log_prob": st.log_prob([0.5, -1.0, -2.5]),
        "student_t_prob": st.prob([[0.0], [3.0]]),
        "student_t_cdf": st.cdf([0.5, -1.0, -2.5]),
        "student_t_entropy": st.entropy(),
        "student_t_mean": st.mean(),
        "student_t_variance": st.variance(),
        "student_t_stddev": st.stddev(),
        "student_t_mode": st.mode(),
        "student_t_sample": st.sample(3, seed=9),
        "dirichlet_log_prob": di.log_prob([[0.2, 0.3, 0.5], [0.1, 0.7, 0.2]]),
        "dirichlet_prob": di.prob([0.3, 0.3, 0.4]),
        "dirichlet_entropy": di.entropy(),
        "dirichlet_mean": di.mean(),
        "dirichlet_variance": di.variance(),
        "dirichlet_covariance": di.covariance(),
        "dirichlet_mode": d.Dirichlet(concentration=[2.0, 3.0, 1.5]).mode(),
        "dirichlet_sample": di.sample(2, seed=10),
        "dirichlet_kl": d.kl_divergence(di, d.Dirichlet(concentration=[1.0, 1.0, 2.0])),
        "multinomial_log_prob": mu.log_prob([[1.0, 1.0, 2.0], [3.0, 1.0, 2.0]]),
        "multinomial_prob": mu_l.prob([2.0, 0.0, 2.0, 1.0]),
        "multinomial_mean": mu.mean(),
        "multinomial_variance": mu.variance(),
        "multinomial_covariance": mu_l.covariance(),
        "multinomial_logits": mu.logits,
        # A batch draws in a map_fn whose iterations TF's executor runs in its own order: shapes only.
        "multinomial_sample_shape": mu.sample(3, seed=11).shape.as_list(),
        "multinomial_sample_logits": mu_l.sample([2, 2], seed=12),
        "new_shapes": [str(s.as_list()) for s in (st.batch_shape, st.event_shape, di.batch_shape, di.event_shape,
                                                  mu.batch_shape, mu.event_shape, mu_l.batch_shape)],
        "new_scopes": [st.name, di.name, mu.name, di.log_prob([0.2, 0.3, 0.5]).op.name, st.sample(seed=1).op.name],
        "new_reparameterization": [str(st.reparameterization_type), str(di.reparameterization_type),
                                   str(mu.reparameterization_type)],
    })
    return out
