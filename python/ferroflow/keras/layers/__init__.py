"""``tf.keras.layers``: the Keras layers on TF1 graphs (see ``engine/base_layer.py`` for names and scopes)."""

from ferroflow.keras.engine.base_layer import InputSpec, Layer
from ferroflow.keras.engine.input_layer import Input, InputLayer
from ferroflow.keras.layers.advanced_activations import ELU, LeakyReLU, PReLU, ReLU, Softmax, ThresholdedReLU
from ferroflow.keras.layers.attention import AdditiveAttention, Attention, MultiHeadAttention
from ferroflow.keras.layers.convolutional import (
    Conv1D,
    Conv2D,
    Conv2DTranspose,
    Conv3D,
    Convolution1D,
    Convolution2D,
    Convolution3D,
    Cropping1D,
    Cropping2D,
    DepthwiseConv2D,
    SeparableConv1D,
    SeparableConv2D,
    UpSampling1D,
    UpSampling2D,
    ZeroPadding1D,
    ZeroPadding2D,
)
from ferroflow.keras.layers.convolutional_recurrent import ConvLSTM2D
from ferroflow.keras.layers.core import (
    Activation,
    ActivityRegularization,
    Dense,
    Dropout,
    Flatten,
    Lambda,
    Masking,
    Permute,
    RepeatVector,
    Reshape,
)
from ferroflow.keras.layers.embeddings import Embedding
from ferroflow.keras.layers.merge import (
    Add,
    Average,
    Concatenate,
    Dot,
    Maximum,
    Minimum,
    Multiply,
    Subtract,
    add,
    average,
    concatenate,
    dot,
    maximum,
    minimum,
    multiply,
    subtract,
)
from ferroflow.keras.layers.noise import GaussianDropout, GaussianNoise, SpatialDropout1D, SpatialDropout2D
from ferroflow.keras.layers.normalization import BatchNormalization, LayerNormalization
from ferroflow.keras.layers.pooling import (
    AveragePooling1D,
    AveragePooling2D,
    AveragePooling3D,
    AvgPool1D,
    AvgPool2D,
    AvgPool3D,
    GlobalAveragePooling1D,
    GlobalAveragePooling2D,
    GlobalAveragePooling3D,
    GlobalAvgPool1D,
    GlobalAvgPool2D,
    GlobalMaxPool1D,
    GlobalMaxPool2D,
    GlobalMaxPooling1D,
    GlobalMaxPooling2D,
    GlobalMaxPooling3D,
    MaxPool1D,
    MaxPool2D,
    MaxPool3D,
    MaxPooling1D,
    MaxPooling2D,
    MaxPooling3D,
)
from ferroflow.keras.layers.recurrent import GRU, LSTM, RNN, GRUCell, LSTMCell, SimpleRNN, SimpleRNNCell
from ferroflow.keras.layers.wrappers import Bidirectional, TimeDistributed, Wrapper

__all__ = [
    "Activation", "ActivityRegularization", "Add", "AdditiveAttention", "Attention", "Average", "AveragePooling1D", "AveragePooling2D",
    "AveragePooling3D", "AvgPool1D", "AvgPool2D", "AvgPool3D", "BatchNormalization", "Bidirectional",
    "Concatenate", "ConvLSTM2D", "Conv1D", "Conv2D", "Conv2DTranspose", "Conv3D", "Convolution1D", "Convolution2D",
    "Convolution3D", "Cropping1D", "Cropping2D", "Dense", "DepthwiseConv2D", "Dot", "Dropout", "ELU", "Embedding", "Flatten",
    "GRU", "GRUCell", "GaussianDropout", "GaussianNoise", "GlobalAveragePooling1D", "GlobalAveragePooling2D",
    "GlobalAveragePooling3D", "GlobalAvgPool1D", "GlobalAvgPool2D", "GlobalMaxPool1D", "GlobalMaxPool2D",
    "GlobalMaxPooling1D", "GlobalMaxPooling2D", "GlobalMaxPooling3D", "Input", "InputLayer", "InputSpec",
    "LSTM", "LSTMCell", "Lambda", "Layer", "LayerNormalization", "LeakyReLU", "Masking", "MaxPool1D", "MaxPool2D", "MaxPool3D",
    "MaxPooling1D", "MaxPooling2D", "MaxPooling3D", "Maximum", "Minimum", "MultiHeadAttention", "Multiply", "PReLU", "Permute",
    "RNN", "ReLU", "RepeatVector", "Reshape", "SeparableConv1D", "SeparableConv2D", "SimpleRNN",
    "SimpleRNNCell", "Softmax", "SpatialDropout1D", "SpatialDropout2D", "Subtract", "ThresholdedReLU",
    "TimeDistributed", "UpSampling1D", "UpSampling2D", "Wrapper", "ZeroPadding1D", "ZeroPadding2D", "add",
    "average", "concatenate", "dot", "maximum", "minimum", "multiply", "subtract",
]
