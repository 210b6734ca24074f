"""make_csv_dataset/Counter calls shared by tools/make_csv_dataset_fixtures.py (TF 2.21) and test_data_csv.py."""

import collections

import numpy as np

FILES = {
    "a.csv": 'name,age,score,label\nann,31,2.5,1\nbob,40,,0\n"c,d",7,1e40,1\n',
    "b.csv": "name,age,score,label\nzed,3000000000,4.25,0\n",
}


def write_files(directory):
    for name, text in FILES.items():
        (directory / name).write_text(text)


def _plain(x):
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in x.items()}
    if isinstance(x, (tuple, list)):
        return [_plain(v) for v in x]
    if isinstance(x, np.ndarray):
        return [v.decode() if isinstance(v, bytes) else v.item() for v in x.ravel()]
    return x.item() if hasattr(x, "item") else x


def _describe(tf, ds, n):
    types = tf.data.get_output_types(ds)
    shapes = tf.data.get_output_shapes(ds)
    nxt = ds.make_one_shot_iterator().get_next()
    out = []
    with tf.Session() as sess:
        for _ in range(n):
            try:
                out.append(_plain(sess.run(nxt)))
            except tf.errors.OutOfRangeError:
                break

    def names(x):
        if isinstance(x, collections.abc.Mapping):
            return {k: names(v) for k, v in x.items()}
        if isinstance(x, tuple):
            return [names(v) for v in x]
        return x.name if hasattr(x, "name") else str(x)

    return {
        "types": names(types),
        "key_order": list(types[0] if isinstance(types, tuple) else types)
        if not hasattr(types, "name")
        else [],
        "shapes": names(tf.nest.map_structure(lambda s: str(s.as_list()), shapes)),
        "values": out,
    }


def cases(tf, directory):
    d = str(directory)
    mk = tf.data.experimental.make_csv_dataset
    return {
        "label_two_files": _describe(
            tf, mk(d + "/*.csv", 2, label_name="label", shuffle=False, num_epochs=1), 3
        ),
        "select_with_defaults": _describe(
            tf,
            mk([d + "/a.csv"], 2, shuffle=False, select_columns=["age", "label"], column_defaults=[0, 0]),
            3,
        ),
        "names_given_two_epochs": _describe(
            tf, mk([d + "/a.csv"], 2, shuffle=False, column_names=["n", "a", "s", "l"], num_epochs=2), 5
        ),
        "select_by_index": _describe(
            tf, mk([d + "/b.csv"], 1, shuffle=False, select_columns=[2, 0], num_epochs=1), 2
        ),
        "counter": _describe(tf, tf.data.experimental.Counter(5, -2).take(3), 4),
        "counter_int32": _describe(tf, tf.data.experimental.Counter(dtype=tf.int32).take(2), 3),
    }
