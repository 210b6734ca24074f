"""Process plumbing TF1 programs use: ``tf.app``, ``tf.flags``, ``tf.gfile``."""
