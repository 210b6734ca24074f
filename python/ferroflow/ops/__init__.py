"""TensorFlow's Python op library, built on the native graph."""
