"""Write tests/fixtures/distributions.json: TensorFlow 2.21's tf.compat.v1.distributions results (Normal,
Uniform, Bernoulli, Categorical, Gamma, Exponential, Beta, Laplace, StudentT, Dirichlet, Multinomial: densities, CDFs in the tails, statistics, KL
divergences, sample shapes, seeded samples, name scopes)
for tests/python/test_distributions.py. The calls are ``cases`` in tests/python/_distributions_cases.py, which
the test builds again with ferroflow. Run from the repository root:

    TF_CPP_MIN_LOG_LEVEL=3 /work/tfvenv/bin/python tools/make_distributions_fixtures.py
"""

import json
import pathlib
import sys

import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "fixtures" / "distributions.json"
sys.path.insert(0, str(ROOT / "tests" / "python"))

from _distributions_cases import cases  # noqa: E402


def main():
    tensors = cases(tf)
    with tf.Session() as sess:
        values = sess.run({k: v for k, v in tensors.items() if isinstance(v, tf.Tensor)})
    result = {}
    for k, v in tensors.items():
        v = values.get(k, v)
        result[k] = v.tolist() if isinstance(v, (np.ndarray, np.floating)) else (int(v) if isinstance(v, np.integer) else v)
    OUT.write_text(json.dumps(result, indent=1, sort_keys=True) + "\n")
    print("wrote", OUT)


if __name__ == "__main__":
    main()
