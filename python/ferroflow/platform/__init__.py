"""Process plumbing and files: ``tf.app``, ``tf.flags``, ``tf.logging``, ``tf.gfile`` and TFRecord files.

With ``framework`` it forms the package's base layer (gfile raises the framework's error classes; the
framework writes graphs through gfile); neither imports ``ops`` or anything above.
"""
