"""Standard tags naming a SavedModel's meta graphs (``tf.saved_model.tag_constants``)."""

#: The graph for serving (TensorFlow Serving loads this tag set).
SERVING = "serve"
#: The graph for training.
TRAINING = "train"
#: Graphs meant for GPUs or TPUs (combined with one of the above).
GPU = "gpu"
TPU = "tpu"
