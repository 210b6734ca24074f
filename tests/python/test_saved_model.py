"""tf.saved_model: export with SavedModelBuilder / simple_save, load back, and load TensorFlow's SavedModels.

The TensorFlow-written models under tests/fixtures/saved_model/ were made by
tools/make_saved_model_fixtures.py (TensorFlow 2.21, tf.compat.v1 builders);
expected.npz holds TF's outputs for each signature.
"""

import os
import shutil

import numpy as np
import pytest

import ferroflow as tf
from ferroflow.core.protobuf import saved_model_pb2

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "fixtures", "saved_model")
EXPECTED = np.load(os.path.join(FIXTURES, "expected.npz"), allow_pickle=False)


def _expected(model, signature):
    prefix = f"{model}/{signature}/"
    inputs, outputs = {}, {}
    for key in EXPECTED.files:
        if key.startswith(prefix):
            kind, name = key[len(prefix):].split("/")
            (inputs if kind == "inputs" else outputs)[name] = EXPECTED[key]
    return inputs, outputs


def _run_signature(sess, meta_graph_def, key, inputs, import_scope=None):
    sig = meta_graph_def.signature_def[key]
    get = tf.saved_model.utils.get_tensor_from_tensor_info
    feed = {get(sig.inputs[k], sess.graph, import_scope): v for k, v in inputs.items()}
    keys = sorted(sig.outputs)
    values = sess.run([get(sig.outputs[k], sess.graph, import_scope) for k in keys], feed)
    return dict(zip(keys, values))


@pytest.mark.parametrize("model,tags,signature", [
    ("tf_mlp", ["serve"], "serving_default"),
    ("tf_mlp", ["serve"], "classes"),
    ("tf_conv", ["serve"], "serving_default"),
    ("tf_conv", ["train"], "loss"),
    ("tf_simple_save", ["serve"], "serving_default"),
    ("tf_asset", ["serve"], "serving_default"),
    ("tf_lookup", ["serve"], "serving_default"),
])
def test_loads_tensorflow_saved_models(model, tags, signature, tmp_path):
    # A copy, so nothing can depend on the fixture's location (the asset path baked in is gone anyway).
    export_dir = str(tmp_path / model)
    shutil.copytree(os.path.join(FIXTURES, model), export_dir)
    expected_key = model if tags == ["serve"] else f"{model}:{tags[0]}"
    inputs, outputs = _expected(expected_key, signature)
    with tf.Session(graph=tf.Graph()) as sess:
        meta = tf.saved_model.loader.load(sess, tags, export_dir)
        got = _run_signature(sess, meta, signature, inputs)
    assert sorted(got) == sorted(outputs)
    for key, want in outputs.items():
        if want.dtype.kind == "S":
            assert got[key] == want.item()
        else:
            np.testing.assert_allclose(got[key], want, rtol=1e-5, atol=1e-6, err_msg=key)


def _mlp(sess, seed=3):
    x = tf.placeholder(tf.float32, [None, 4], name="x")
    with tf.variable_scope("dense"):
        w = tf.get_variable("kernel", [4, 3], initializer=tf.random_normal_initializer(seed=seed))
        b = tf.get_variable("bias", [3], initializer=tf.constant_initializer(0.5))
    logits = tf.add(tf.matmul(x, w), b, name="logits")
    probs = tf.nn.softmax(logits, name="probs")
    sess.run(tf.global_variables_initializer())
    return x, logits, probs


X = np.array([[1.0, 2.0, 3.0, 4.0], [-1.0, 0.5, 0.0, 2.0]], np.float32)


def test_simple_save_round_trip(tmp_path):
    export_dir = str(tmp_path / "model")
    with tf.Session(graph=tf.Graph()) as sess:
        x, logits, probs = _mlp(sess)
        want = sess.run(probs, {x: X})
        tf.saved_model.simple_save(sess, export_dir, inputs={"x": x}, outputs={"probs": probs, "logits": logits})
    assert sorted(os.listdir(export_dir)) == ["saved_model.pb", "variables"]
    assert sorted(os.listdir(os.path.join(export_dir, "variables"))) == [
        "variables.data-00000-of-00001", "variables.index"]
    assert tf.saved_model.loader.maybe_saved_model_directory(export_dir)
    assert tf.saved_model.contains_saved_model(export_dir)
    with tf.Session(graph=tf.Graph()) as sess:
        meta = tf.saved_model.loader.load(sess, [tf.saved_model.tag_constants.SERVING], export_dir)
        assert list(meta.meta_info_def.tags) == ["serve"]
        sig = meta.signature_def[tf.saved_model.signature_constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY]
        assert sig.method_name == "tensorflow/serving/predict"
        assert sig.inputs["x"].name == "x:0" and sig.inputs["x"].dtype == tf.float32.as_datatype_enum
        assert [d.size for d in sig.inputs["x"].tensor_shape.dim] == [-1, 4]
        got = _run_signature(sess, meta, "serving_default", {"x": X})
    np.testing.assert_array_equal(got["probs"], want)
    # simple_save clears devices and uses a sharded V2 saver, as TensorFlow's does.
    assert meta.saver_def.sharded and meta.saver_def.version == 2
    assert all(not n.device for n in meta.graph_def.node)


def test_builder_meta_graphs_signatures_and_main_op(tmp_path):
    export_dir = str(tmp_path / "model")
    sdu = tf.saved_model.signature_def_utils
    with tf.Session(graph=tf.Graph()) as sess:
        x, logits, probs = _mlp(sess)
        examples = tf.placeholder(tf.string, [None], name="examples")
        classes = tf.gather(tf.constant(["cat", "dog", "emu"]), tf.argmax(probs, 1), name="classes")
        scores = tf.reduce_max(probs, 1, name="scores")
        counter = tf.get_local_variable("counter", [], tf.int64, initializer=tf.zeros_initializer())
        set_counter = tf.assign(counter, 41)
        with tf.control_dependencies([set_counter]):
            main_op = tf.group(tf.local_variables_initializer(), name="my_main_op")
        want = sess.run(probs, {x: X})
        builder = tf.saved_model.builder.SavedModelBuilder(export_dir)
        builder.add_meta_graph_and_variables(
            sess, ["serve"],
            signature_def_map={
                "predict": sdu.predict_signature_def({"x": x}, {"probs": probs}),
                "classify": sdu.classification_signature_def(examples, classes, scores),
                "regress": sdu.regression_signature_def(examples, scores),
            },
            main_op=main_op)
        builder.add_meta_graph(["train", "gpu"], signature_def_map={
            "logits": sdu.build_signature_def({"x": tf.saved_model.utils.build_tensor_info(x)},
                                              {"logits": tf.saved_model.utils.build_tensor_info(logits)},
                                              "custom/method")})
        assert not os.path.exists(export_dir)  # nothing at export_dir until save()
        path = builder.save()
    assert path == os.path.join(export_dir, "saved_model.pb").encode()
    saved = saved_model_pb2.SavedModel.FromString(open(path, "rb").read())
    assert saved.saved_model_schema_version == 1
    assert [list(m.meta_info_def.tags) for m in saved.meta_graphs] == [["serve"], ["train", "gpu"]]
    serve = saved.meta_graphs[0]
    assert sorted(serve.signature_def) == ["classify", "predict", "regress"]
    assert all(sdu.is_valid_signature(s) for s in serve.signature_def.values())
    assert list(serve.collection_def["saved_model_main_op"].node_list.value) == ["my_main_op"]
    with tf.Session(graph=tf.Graph()) as sess:
        meta = tf.saved_model.loader.load(sess, ["serve"], export_dir)
        np.testing.assert_array_equal(_run_signature(sess, meta, "predict", {"x": X})["probs"], want)
        assert sess.run("counter:0") == 41  # the main op ran after the restore
    with tf.Session(graph=tf.Graph()) as sess:
        meta = tf.saved_model.loader.load(sess, ["gpu", "train"], export_dir)  # a tag set, in any order
        assert meta.signature_def["logits"].method_name == "custom/method"
        assert _run_signature(sess, meta, "logits", {"x": X})["logits"].shape == (2, 3)


def test_assets_are_copied_and_fed_on_load(tmp_path):
    src = tmp_path / "src"
    (src / "a").mkdir(parents=True)
    (src / "b").mkdir()
    (src / "a" / "vocab.txt").write_bytes(b"one\ntwo\n")
    (src / "b" / "vocab.txt").write_bytes(b"three\n")  # same base name, other contents
    export_dir = str(tmp_path / "model")
    with tf.Session(graph=tf.Graph()) as sess:
        paths = [tf.constant(str(src / d / "vocab.txt"), name=f"asset_{d}") for d in "ab"]
        for p in paths:
            tf.add_to_collection(tf.GraphKeys.ASSET_FILEPATHS, p)
        contents = [tf.get_local_variable(f"contents_{d}", dtype=tf.string, initializer=tf.constant(b""))
                    for d in "ab"]
        with tf.control_dependencies([tf.assign(c, tf.io.read_file(p)) for c, p in zip(contents, paths)]):
            init = tf.no_op(name="read_assets")
        tf.saved_model.simple_save(sess, export_dir, {"p": paths[0]}, {"a": contents[0].value(),
                                                                       "b": contents[1].value()},
                                   legacy_init_op=init)
    assert sorted(os.listdir(os.path.join(export_dir, "assets"))) == ["vocab.txt", "vocab.txt_1"]
    shutil.rmtree(src)  # the paths baked into the graph are gone: loading must feed the copies
    with tf.Session(graph=tf.Graph()) as sess:
        meta = tf.saved_model.loader.load(sess, ["serve"], export_dir)
        assert sess.run(["contents_a:0", "contents_b:0"]) == [b"one\ntwo\n", b"three\n"]
    assets = tf.saved_model.loader.asset_file_defs(meta)
    assert sorted(a.filename for a in assets) == ["vocab.txt", "vocab.txt_1"]
    assert meta.collection_def["saved_model_assets"].any_list.value[0].type_url == \
        "type.googleapis.com/tensorflow.AssetFileDef"


def test_load_with_import_scope_and_as_text(tmp_path):
    export_dir = str(tmp_path / "model")
    with tf.Session(graph=tf.Graph()) as sess:
        x, _, probs = _mlp(sess)
        want = sess.run(probs, {x: X})
        builder = tf.saved_model.Builder(export_dir)
        builder.add_meta_graph_and_variables(sess, ["serve"], {"p": tf.saved_model.predict_signature_def(
            {"x": x}, {"probs": probs})})
        builder.save(as_text=True)
    assert os.path.exists(os.path.join(export_dir, "saved_model.pbtxt"))
    with tf.Session(graph=tf.Graph()) as sess:
        meta = tf.saved_model.load(sess, ["serve"], export_dir, import_scope="imported")
        assert sess.graph.get_tensor_by_name("imported/x:0") is not None
        got = _run_signature(sess, meta, "p", {"x": X}, import_scope="imported")
    np.testing.assert_array_equal(got["probs"], want)


def test_sparse_tensor_info():
    with tf.Graph().as_default() as g:
        sp = tf.sparse_placeholder(tf.float32, [3, 4], name="sp")
        info = tf.saved_model.utils.build_tensor_info(sp)
        assert info.WhichOneof("encoding") == "coo_sparse"
        assert info.coo_sparse.values_tensor_name == sp.values.name
        back = tf.saved_model.utils.get_tensor_from_tensor_info(info, g)
        assert isinstance(back, tf.SparseTensor) and back.indices.name == sp.indices.name
        with pytest.raises(TypeError, match="Tensor or SparseTensor"):
            tf.saved_model.utils.build_tensor_info([1, 2])


def test_signature_def_utils_errors_and_validity():
    sdu = tf.saved_model.signature_def_utils
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None], name="x")
        s = tf.placeholder(tf.string, [None], name="s")
        with pytest.raises(ValueError, match="inputs` cannot be None or empty"):
            sdu.predict_signature_def({}, {"y": x})
        with pytest.raises(ValueError, match="outputs` cannot be None or empty"):
            sdu.predict_signature_def({"x": x}, None)
        with pytest.raises(ValueError, match="must be of type string"):
            sdu.regression_signature_def(x, x)
        with pytest.raises(ValueError, match="must be of type float"):
            sdu.regression_signature_def(s, s)
        with pytest.raises(ValueError, match="cannot both be None"):
            sdu.classification_signature_def(s, None, None)
        with pytest.raises(ValueError, match="classes tensors must be of type string"):
            sdu.classification_signature_def(s, x, None)
        assert sdu.is_valid_signature(sdu.classification_signature_def(s, None, x))
        assert sdu.is_valid_signature(sdu.regression_signature_def(s, x))
        assert sdu.is_valid_signature(sdu.predict_signature_def({"a": s}, {"b": x}))
        bad = sdu.regression_signature_def(s, x)
        bad.outputs["extra"].CopyFrom(tf.saved_model.utils.build_tensor_info(x))
        assert not sdu.is_valid_signature(bad)
        assert not sdu.is_valid_signature(sdu.build_signature_def({}, {}, "tensorflow/serving/predict"))
        assert not sdu.is_valid_signature(None)
        sig = sdu.build_signature_def({"x": tf.saved_model.build_tensor_info(x)}, {}, "m", defaults={"x": [1.5]})
        np.testing.assert_array_equal(tf.make_ndarray(sig.defaults["x"]), np.array([1.5], np.float32))


def test_export_refuses_non_empty_dir_and_bad_signatures(tmp_path):
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "f").write_text("x")
    with pytest.raises(AssertionError, match="already exists, and isn't empty"):
        tf.saved_model.builder.SavedModelBuilder(str(tmp_path / "full"))
    (tmp_path / "empty").mkdir()
    export_dir = str(tmp_path / "empty")
    with tf.Session(graph=tf.Graph()) as sess:
        x, _, probs = _mlp(sess)
        builder = tf.saved_model.builder.SavedModelBuilder(export_dir)  # an empty directory is fine
        foreign = tf.saved_model.utils.build_tensor_info(x)
        foreign.name = "nowhere:0"
        with pytest.raises(ValueError, match="names tensor 'nowhere:0'"):
            builder.add_meta_graph_and_variables(sess, ["serve"], {"s": tf.saved_model.build_signature_def(
                {"x": foreign}, {}, "m")})
        with pytest.raises(KeyError, match="reserved"):
            builder.add_meta_graph_and_variables(sess, ["serve"], {"__saved_model_init_op": tf.saved_model.
                                                                   predict_signature_def({"x": x}, {"p": probs})})
        with pytest.raises(AssertionError, match="has not been saved yet"):
            builder.add_meta_graph(["train"])
        with pytest.raises(TypeError, match="to be an Operation"):
            builder.add_meta_graph_and_variables(sess, ["serve"], main_op=probs)
        builder.add_meta_graph_and_variables(sess, ["serve"])
        with pytest.raises(AssertionError, match="already been saved"):
            builder.add_meta_graph_and_variables(sess, ["serve"])
        builder.save()
    assert tf.saved_model.loader.maybe_saved_model_directory(export_dir)
    # Nothing is left next to the export but the export itself (the staging directory was renamed).
    assert sorted(os.listdir(tmp_path)) == ["empty", "full"]


def test_abandoned_export_leaves_nothing(tmp_path):
    export_dir = str(tmp_path / "model")
    with tf.Session(graph=tf.Graph()) as sess:
        _mlp(sess)
        builder = tf.saved_model.builder.SavedModelBuilder(export_dir)
        builder.add_meta_graph_and_variables(sess, ["serve"])
        del builder  # never saved, as when the exporting process fails half way
    assert os.listdir(tmp_path) == []


@pytest.fixture()
def exported(tmp_path):
    export_dir = str(tmp_path / "model")
    with tf.Session(graph=tf.Graph()) as sess:
        x, _, probs = _mlp(sess)
        tf.saved_model.simple_save(sess, export_dir, {"x": x}, {"probs": probs})
    return export_dir


def test_load_errors(exported, tmp_path):
    missing = str(tmp_path / "nothing")
    with pytest.raises(OSError, match="SavedModel file does not exist at: .*nothing"):
        tf.saved_model.loader.load(tf.Session(graph=tf.Graph()), ["serve"], missing)
    assert not tf.saved_model.loader.maybe_saved_model_directory(missing)
    with pytest.raises(RuntimeError, match=r"'train' could not be found in SavedModel .*available tags '\[\['serve'\]\]'"):
        tf.saved_model.loader.load(tf.Session(graph=tf.Graph()), ["train"], exported)

    corrupt = str(tmp_path / "corrupt")
    shutil.copytree(exported, corrupt)
    pb = os.path.join(corrupt, "saved_model.pb")
    data = open(pb, "rb").read()
    open(pb, "wb").write(data[: len(data) // 2] + b"\xff\xff\xff")
    for cls in (tf.errors.DataLossError, OSError):
        with pytest.raises(cls, match="Cannot parse file .*corrupt.*saved_model.pb"):
            tf.saved_model.loader.load(tf.Session(graph=tf.Graph()), ["serve"], corrupt)

    no_shard = str(tmp_path / "no_shard")
    shutil.copytree(exported, no_shard)
    os.remove(os.path.join(no_shard, "variables", "variables.data-00000-of-00001"))
    with pytest.raises((tf.errors.NotFoundError, tf.errors.DataLossError), match="no_shard"):
        tf.saved_model.loader.load(tf.Session(graph=tf.Graph()), ["serve"], no_shard)

    no_index = str(tmp_path / "no_index")
    shutil.copytree(exported, no_index)
    os.remove(os.path.join(no_index, "variables", "variables.index"))
    with pytest.raises(tf.errors.NotFoundError, match="no_index.*variables.index does not exist"):
        tf.saved_model.loader.load(tf.Session(graph=tf.Graph()), ["serve"], no_index)

    bad_sig = str(tmp_path / "bad_sig")
    shutil.copytree(exported, bad_sig)
    saved = tf.saved_model.loader.parse_saved_model(bad_sig)
    saved.meta_graphs[0].signature_def["serving_default"].outputs["probs"].name = "missing_op:0"
    open(os.path.join(bad_sig, "saved_model.pb"), "wb").write(saved.SerializeToString())
    with pytest.raises(ValueError, match="bad_sig: signature 'serving_default' output 'probs' names 'missing_op:0'"):
        tf.saved_model.loader.load(tf.Session(graph=tf.Graph()), ["serve"], bad_sig)


def test_method_name_updater(exported, tmp_path):
    updater = tf.saved_model.signature_def_utils.MethodNameUpdater(exported)
    updater.replace_method_name("serving_default", "tensorflow/serving/regress", tags="serve")
    with pytest.raises(ValueError, match="does not have a signature_def with key: 'nope'"):
        updater.replace_method_name("nope", "m")
    copy = str(tmp_path / "copy")
    updater.save(copy)
    saved = tf.saved_model.loader.parse_saved_model(copy)
    assert saved.meta_graphs[0].signature_def["serving_default"].method_name == "tensorflow/serving/regress"
    assert tf.saved_model.loader.parse_saved_model(exported).meta_graphs[0].signature_def[
        "serving_default"].method_name == "tensorflow/serving/predict"


def test_main_op_helpers():
    with tf.Graph().as_default(), tf.Session() as sess:
        v = tf.get_local_variable("v", [], tf.float32, initializer=tf.constant_initializer(7.0))
        op = tf.saved_model.main_op.main_op()
        sess.run(op)
        assert sess.run(v) == 7.0
        g = tf.get_variable("g", [], initializer=tf.constant_initializer(2.0))
        init_g = tf.variables_initializer([g])
        sess.run(tf.saved_model.main_op_with_restore(init_g.name))
        assert sess.run(g) == 2.0


def _wire_fields(data):
    """(field number, wire type, payload) of each top-level field of a protobuf message, decoded by hand."""
    fields, i = [], 0

    def varint():
        nonlocal i
        shift = value = 0
        while True:
            byte = data[i]
            i += 1
            value |= (byte & 0x7F) << shift
            shift += 7
            if not byte & 0x80:
                return value

    while i < len(data):
        key = varint()
        number, wire = key >> 3, key & 7
        if wire == 0:
            fields.append((number, wire, varint()))
        elif wire in (1, 5):  # fixed64 / fixed32 (doubles and floats)
            n = 8 if wire == 1 else 4
            fields.append((number, wire, data[i:i + n]))
            i += n
        elif wire == 2:
            n = varint()
            fields.append((number, wire, data[i:i + n]))
            i += n
        else:
            raise AssertionError(f"unexpected wire type {wire}")
    return fields


def test_saved_model_pb_wire_format(exported):
    """The bytes TensorFlow expects, checked without our proto classes: field 1 the schema version (varint 1),
    field 2 one MetaGraphDef whose field 1 (MetaInfoDef) carries tag 'serve' in its field 4, whose field 3
    (SaverDef) names the restore op, and whose field 5 holds the signature map."""
    data = open(os.path.join(exported, "saved_model.pb"), "rb").read()
    top = _wire_fields(data)
    assert top[0] == (1, 0, 1)
    assert [(n, w) for n, w, _ in top[1:]] == [(2, 2)]
    meta = _wire_fields(top[1][2])
    numbers = [n for n, _, _ in meta]
    assert numbers[:3] == [1, 2, 3] and 4 in numbers and 5 in numbers
    info = _wire_fields(dict((n, p) for n, _, p in meta)[1])
    assert (4, 2, b"serve") in info
    saver = dict((n, p) for n, _, p in _wire_fields(dict((n, p) for n, _, p in meta)[3]))
    assert saver[1] == b"save/Const:0" and saver[3] == b"save/restore_all" and saver[5] == 1  # sharded
    signature = _wire_fields([p for n, _, p in meta if n == 5][0])
    assert signature[0][2] == b"serving_default"
