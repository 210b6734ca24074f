"""``tf.keras.preprocessing.text``: ``Tokenizer`` (word or character vocabularies ranked by frequency, texts to
id sequences or count/binary/frequency/tf-idf matrices) and ``text_to_word_sequence``, as Keras's text
preprocessing does them: ids start at 1 (0 is left for padding), the most frequent word first, ties in the order
words were first seen; the ``oov_token``, when given, takes id 1; ``num_words`` keeps ids below it when texts are
turned into sequences or matrices (the vocabulary itself keeps every word)."""

from __future__ import annotations

import json
import math
from collections import OrderedDict, defaultdict

import numpy as np

__all__ = ["Tokenizer", "text_to_word_sequence", "tokenizer_from_json"]

DEFAULT_FILTERS = '!"#$%&()*+,-./:;<=>?@[\\]^_`{|}~\t\n'


def text_to_word_sequence(input_text, filters=DEFAULT_FILTERS, lower=True, split=" "):
    """The words of ``input_text``: lower-cased, every ``filters`` character made a separator, split on ``split``."""
    if lower:
        input_text = input_text.lower()
    input_text = input_text.translate(str.maketrans({c: split for c in filters}))
    return [w for w in input_text.split(split) if w]


class Tokenizer:
    """Builds a vocabulary with ``fit_on_texts`` (or ``fit_on_sequences``) and turns texts into ids."""

    def __init__(self, num_words=None, filters=DEFAULT_FILTERS, lower=True, split=" ", char_level=False,
                 oov_token=None, document_count=0, **kwargs):
        if kwargs:
            raise TypeError(f"Unrecognized keyword arguments: {sorted(kwargs)}")
        self.word_counts = OrderedDict()
        self.word_docs = defaultdict(int)
        self.filters = filters
        self.split = split
        self.lower = lower
        self.num_words = num_words
        self.document_count = document_count
        self.char_level = char_level
        self.oov_token = oov_token
        self.index_docs = defaultdict(int)
        self.word_index = {}
        self.index_word = {}

    def _units(self, text):
        """The tokens of one text: its characters (``char_level``), the items of a list, or its words."""
        if self.char_level or isinstance(text, list):
            if self.lower:
                text = [t.lower() for t in text] if isinstance(text, list) else text.lower()
            return list(text)
        return text_to_word_sequence(text, self.filters, self.lower, self.split)

    def fit_on_texts(self, texts):
        """Counts the tokens of ``texts`` (and in how many texts each occurs), then ranks them into ``word_index``."""
        for text in texts:
            self.document_count += 1
            units = self._units(text)
            for w in units:
                self.word_counts[w] = self.word_counts.get(w, 0) + 1
            for w in set(units):
                self.word_docs[w] += 1
        ranked = sorted(self.word_counts.items(), key=lambda item: item[1], reverse=True)  # stable: ties keep order
        vocabulary = ([] if self.oov_token is None else [self.oov_token]) + [w for w, _ in ranked]
        self.word_index = {w: i for i, w in enumerate(vocabulary, start=1)}
        self.index_word = {i: w for w, i in self.word_index.items()}
        for w, c in list(self.word_docs.items()):
            self.index_docs[self.word_index[w]] = c

    def fit_on_sequences(self, sequences):
        """Counts in how many sequences each id occurs (for ``sequences_to_matrix(mode='tfidf')``)."""
        self.document_count += len(sequences)
        for seq in sequences:
            for i in set(seq):
                self.index_docs[i] += 1

    def _keep(self, i):
        return not self.num_words or i < self.num_words

    def texts_to_sequences(self, texts):
        """Each text as a list of ids (tokens outside the vocabulary or ``num_words``: the ``oov_token``'s, or none)."""
        return list(self.texts_to_sequences_generator(texts))

    def texts_to_sequences_generator(self, texts):
        oov = self.word_index.get(self.oov_token) if self.oov_token is not None else None
        for text in texts:
            ids = []
            for w in self._units(text):
                i = self.word_index.get(w)
                if i is not None and self._keep(i):
                    ids.append(i)
                elif oov is not None:
                    ids.append(oov)
            yield ids

    def sequences_to_texts(self, sequences):
        """Ids back to space-joined words (unknown or cut ids: the ``oov_token``, or dropped)."""
        return list(self.sequences_to_texts_generator(sequences))

    def sequences_to_texts_generator(self, sequences):
        oov = self.word_index.get(self.oov_token) if self.oov_token is not None else None
        for seq in sequences:
            words = []
            for i in seq:
                w = self.index_word.get(i)
                if w is not None and self._keep(i):
                    words.append(w)
                elif oov is not None:
                    words.append(self.index_word[oov])
            yield " ".join(words)

    def texts_to_matrix(self, texts, mode="binary"):
        """``sequences_to_matrix(texts_to_sequences(texts), mode)``."""
        return self.sequences_to_matrix(self.texts_to_sequences(texts), mode=mode)

    def sequences_to_matrix(self, sequences, mode="binary"):
        """One row per sequence, one column per id: ``binary`` (present), ``count``, ``freq`` (count / length)
        or ``tfidf`` (``(1 + log count) * log(1 + documents / (1 + documents with the id))``)."""
        if mode not in ("binary", "count", "tfidf", "freq"):
            raise ValueError(f"Unknown vectorization mode: {mode}")
        if self.num_words:
            width = self.num_words
        elif self.word_index:
            width = len(self.word_index) + 1
        else:
            raise ValueError("Specify a dimension (`num_words` argument), or fit on some text data first.")
        if mode == "tfidf" and not self.document_count:
            raise ValueError("Fit the Tokenizer on some data before using tfidf mode.")
        x = np.zeros((len(sequences), width))
        for row, seq in enumerate(sequences):
            if not seq:
                continue
            counts = defaultdict(int)
            for j in seq:
                if j < width:
                    counts[j] += 1
            for j, c in counts.items():
                if mode == "count":
                    x[row, j] = c
                elif mode == "freq":
                    x[row, j] = c / len(seq)
                elif mode == "binary":
                    x[row, j] = 1
                else:
                    idf = math.log(1 + self.document_count / (1 + self.index_docs.get(j, 0)))
                    x[row, j] = (1 + math.log(c)) * idf
        return x

    def get_config(self):
        return {
            "num_words": self.num_words, "filters": self.filters, "lower": self.lower, "split": self.split,
            "char_level": self.char_level, "oov_token": self.oov_token, "document_count": self.document_count,
            "word_counts": json.dumps(self.word_counts), "word_docs": json.dumps(self.word_docs),
            "index_docs": json.dumps(self.index_docs), "index_word": json.dumps(self.index_word),
            "word_index": json.dumps(self.word_index),
        }

    def to_json(self, **kwargs):
        """The tokenizer (settings and vocabulary) as JSON; ``tokenizer_from_json`` reads it back."""
        return json.dumps({"class_name": type(self).__name__, "config": self.get_config()}, **kwargs)


def tokenizer_from_json(json_string):
    """A ``Tokenizer`` from ``Tokenizer.to_json()``."""
    config = dict(json.loads(json_string)["config"])
    tables = {key: json.loads(config.pop(key)) for key in
              ("word_counts", "word_docs", "index_docs", "word_index", "index_word")}
    tokenizer = Tokenizer(**config)
    tokenizer.word_counts = OrderedDict(tables["word_counts"])
    tokenizer.word_docs = defaultdict(int, tables["word_docs"])
    tokenizer.index_docs = defaultdict(int, {int(k): v for k, v in tables["index_docs"].items()})
    tokenizer.word_index = tables["word_index"]
    tokenizer.index_word = {int(k): v for k, v in tables["index_word"].items()}
    return tokenizer
