"""``tf.image``: image codecs, resizing, cropping, color, augmentation, boxes and quality measures."""

from ferroflow.ops.image_boxes import *  # noqa: F401,F403
from ferroflow.ops.image_codecs import *  # noqa: F401,F403
from ferroflow.ops.image_ops import *  # noqa: F401,F403
from ferroflow.ops.random_ops import random_crop  # noqa: F401
