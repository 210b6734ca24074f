"""What TensorFlow 2.21's tf_keras Tokenizer gives for the texts of tests/python/test_keras_text.py's cases,
in tests/fixtures/keras/tokenizer.json (TF_USE_LEGACY_KERAS=1):

    TF_CPP_MIN_LOG_LEVEL=3 /work/tfvenv/bin/python tools/make_keras_text_fixtures.py
"""

import json
import os
import pathlib

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")

import tensorflow.compat.v1 as tf1  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parent.parent
TEXTS = ["The cat sat on the mat.", "The dog ate my homework!", "Cats and dogs: cats, dogs & a mat",
         "", "Hello, WORLD -- hello again\tworld\nthe end"]
NEW = ["the unknown cat", "zebra dogs dogs hello", "mat mat mat"]
CASES = {
    "plain": {},
    "num_words_oov": {"num_words": 6, "oov_token": "<OOV>"},
    "char_level": {"char_level": True, "lower": False},
    "no_filters": {"filters": "", "split": " "},
}


def main():
    out = {"texts": TEXTS, "new": NEW, "cases": {}}
    for name, kwargs in CASES.items():
        tok = tf1.keras.preprocessing.text.Tokenizer(**kwargs)
        tok.fit_on_texts(TEXTS)
        seqs = tok.texts_to_sequences(NEW)
        out["cases"][name] = {
            "kwargs": kwargs, "word_index": tok.word_index, "document_count": tok.document_count,
            "sequences": seqs, "texts_back": tok.sequences_to_texts(seqs),
            "matrices": {mode: tok.texts_to_matrix(NEW, mode=mode).tolist() for mode in
                         ("binary", "count", "freq", "tfidf")},
        }
    out["word_sequence"] = tf1.keras.preprocessing.text.text_to_word_sequence(TEXTS[2])
    path = ROOT / "tests" / "fixtures" / "keras" / "tokenizer.json"
    path.write_text(json.dumps(out, indent=1) + "\n")
    print("wrote", path)


if __name__ == "__main__":
    main()
