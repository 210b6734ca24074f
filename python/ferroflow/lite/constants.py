"""``tf.lite.constants``: the numpy types TF1's converter settings take."""

import numpy as np

FLOAT = np.float32
FLOAT16 = np.float16
INT32 = np.int32
INT64 = np.int64
INT8 = np.int8
INT16 = np.int16
QUANTIZED_UINT8 = np.uint8
STRING = np.bytes_
COMPLEX64 = np.complex64
TFLITE = "TFLITE"
GRAPHVIZ_DOT = "GRAPHVIZ_DOT"
