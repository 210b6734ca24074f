"""tf.profiler.profile's parameter and float-operation counts against TensorFlow 2.21's (fixture from
tools/make_profiler_fixtures.py over the graph in _profiler_cases.py: convolutions, pooling, matmuls, reductions,
elementwise ops, a trainable and a non-trainable variable, an op with an unknown batch size)."""

import json

import pytest

import ferroflow as tf
from _profiler_cases import cases


def test_counts_as_tensorflow(fixtures, capsys):
    expected = json.loads((fixtures / "profiler.json").read_text())
    got = json.loads(json.dumps(cases(tf), default=int))
    assert got == expected
    captured = capsys.readouterr()
    assert "1 ops no flops stats due to incomplete shapes." in captured.err
    assert "_TFProfRoot (--/" in captured.out and "conv/kernel (3x3x3x4, 108/108 params)" in captured.out


def test_options_and_views(tmp_path, capsys):
    x = tf.placeholder(tf.float32, [4, 6])
    with tf.variable_scope("a"):
        w = tf.get_variable("w", [6, 3], initializer=tf.zeros_initializer())
    tf.matmul(x, w, name="mm")
    opts = tf.profiler.ProfileOptionBuilder(tf.profiler.ProfileOptionBuilder.float_operation())
    out_file = tmp_path / "report.txt"
    res = tf.profiler.profile(options=opts.with_file_output(str(out_file)).build())
    assert res.total_float_ops == 2 * 6 * 4 * 3
    assert "mm (144/144 flops)" in out_file.read_text()
    quiet = tf.profiler.ProfileOptionBuilder(tf.profiler.ProfileOptionBuilder.trainable_variables_parameter())
    res = tf.profiler.profile(options=quiet.with_empty_output().build())
    assert capsys.readouterr().out == ""
    assert res.total_parameters == 18 and [c.name for c in res.children] == ["a"]
    assert res.children[0].children[0].shapes == [[6, 3]]
    with pytest.raises(NotImplementedError, match="'code' view"):
        tf.profiler.profile(cmd="code", options=quiet.build())
