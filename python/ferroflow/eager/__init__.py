"""TF 2's function and gradient machinery (TensorFlow's ``python/eager``) with the meaning a TF1 graph gives
it: ``tf.function`` and ``wrap_function`` trace Python into graph functions called by op, ``GradientTape``
differentiates through the ops built while it records. Nothing here runs eagerly."""
