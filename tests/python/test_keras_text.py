"""tf.keras.preprocessing.text: Tokenizer and text_to_word_sequence give what TensorFlow 2.21's tf_keras gives
(tests/fixtures/keras/tokenizer.json, made by tools/make_keras_text_fixtures.py)."""

import json
import pathlib

import numpy as np
import pytest

import ferroflow as tf

FIXTURE = pathlib.Path(__file__).resolve().parents[1] / "fixtures" / "keras" / "tokenizer.json"
text = tf.keras.preprocessing.text
WANT = json.loads(FIXTURE.read_text())


@pytest.mark.parametrize("name", sorted(WANT["cases"]))
def test_tokenizer_matches_tf_keras(name):
    case = WANT["cases"][name]
    tok = text.Tokenizer(**case["kwargs"])
    tok.fit_on_texts(WANT["texts"])
    assert tok.word_index == case["word_index"]
    assert tok.document_count == case["document_count"]
    seqs = tok.texts_to_sequences(WANT["new"])
    assert seqs == case["sequences"]
    assert tok.sequences_to_texts(seqs) == case["texts_back"]
    for mode, matrix in case["matrices"].items():
        np.testing.assert_allclose(tok.texts_to_matrix(WANT["new"], mode=mode), matrix, rtol=1e-12, err_msg=mode)
    again = text.tokenizer_from_json(tok.to_json())
    assert again.word_index == tok.word_index and again.texts_to_sequences(WANT["new"]) == seqs


def test_word_sequence_and_errors():
    assert text.text_to_word_sequence(WANT["texts"][2]) == WANT["word_sequence"]
    with pytest.raises(ValueError, match="fit on some text"):
        text.Tokenizer().texts_to_matrix(["a"])
    with pytest.raises(ValueError, match="Unknown vectorization mode"):
        text.Tokenizer(num_words=3).sequences_to_matrix([[1]], mode="onehot")
