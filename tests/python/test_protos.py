"""TensorFlow's protocol buffer messages (ferroflow.core / ferroflow.protos).

The oracle is what real TensorFlow wrote: Example/SequenceExample bytes, event
files, checkpoint state files, .meta MetaGraphDefs and checkpoint .index tables
(fixtures under tests/fixtures/records and tests/fixtures/protos). Every
parameter comes from the fixture manifests, never from constants here.
"""

import hashlib
import importlib
import json
import math
import pathlib
import pkgutil
import struct

import pytest
from google.protobuf import descriptor, json_format, text_format

import ferroflow as tf
import ferroflow.compat.v1 as tf_v1
from ferroflow import protos

FIXTURES = pathlib.Path(__file__).resolve().parent.parent / "fixtures"
RECORDS = FIXTURES / "records"
CHECKPOINTS = FIXTURES / "protos" / "checkpoints"
API = FIXTURES / "api" / "tf_compat_v1_api.json"

CASES = sorted(p.name for p in CHECKPOINTS.iterdir() if p.is_dir())
META_FILES = sorted(str(p.relative_to(CHECKPOINTS)) for p in CHECKPOINTS.glob("*/ckpt/*.meta"))
INDEX_FILES = sorted(str(p.relative_to(CHECKPOINTS)) for p in CHECKPOINTS.glob("*/ckpt/*.index"))
STATE_FILES = sorted(str(p.relative_to(CHECKPOINTS)) for p in CHECKPOINTS.glob("*/ckpt/checkpoint"))
EVENT_CASES = sorted(p.name for p in (RECORDS / "events").iterdir() if (p / "events.json").exists())


def _json(path):
    return json.loads(pathlib.Path(path).read_text(encoding="utf-8"))


def _float(v):
    return float(v)  # also turns the JSON strings "NaN", "Infinity", "-Infinity" into floats


# ---------------------------------------------------------------------------
# The schema: every message, field and enum value we declare is TensorFlow's


def _our_types():
    found = {}

    def walk(m):
        found[m.full_name] = m
        for n in m.nested_types:
            walk(n)
        for e in m.enum_types:
            found[e.full_name] = e

    for sub in ("framework", "protobuf", "util", "example"):
        pkg = importlib.import_module(f"ferroflow.core.{sub}")
        for info in pkgutil.iter_modules(pkg.__path__):
            if info.name.endswith("_pb2"):
                fd = importlib.import_module(f"{pkg.__name__}.{info.name}").DESCRIPTOR
                for m in fd.message_types_by_name.values():
                    walk(m)
                for e in fd.enum_types_by_name.values():
                    found[e.full_name] = e
    return found


_TYPE_NAMES = {v: k for k, v in vars(descriptor.FieldDescriptor).items() if k.startswith("TYPE_")}


def test_schema_matches_tensorflow():
    schema = _json(FIXTURES / "protos" / "tf_proto_schema.json")["types"]
    ours = _our_types()
    assert len(ours) > 100
    problems = []
    for name, d in sorted(ours.items()):
        tf_type = schema.get(name)
        if tf_type is None:
            problems.append(f"{name}: not a TensorFlow type")
            continue
        if isinstance(d, descriptor.EnumDescriptor):
            for v in d.values:
                if tf_type["enum"].get(v.name) != v.number:
                    problems.append(f"{name}.{v.name} = {v.number}, TensorFlow: {tf_type['enum'].get(v.name)}")
            continue
        assert d.GetOptions().map_entry == tf_type["map_entry"], name
        for f in d.fields:
            want = tf_type["fields"].get(f.name)
            ref = f.message_type or f.enum_type
            got = {
                "number": f.number,
                "type": _TYPE_NAMES[f.type],
                "repeated": f.is_repeated,
                "type_name": ref.full_name if ref else None,
                "oneof": f.containing_oneof.name if f.containing_oneof else None,
                "packed": f.is_packed,
                "presence": f.has_presence,
            }
            if got != want:
                problems.append(f"{name}.{f.name}: ours {got}, TensorFlow {want}")
    assert not problems, "\n".join(problems)
    # The messages the task asks for are all declared.
    for name in (
        "TensorShapeProto DataType TensorProto ResourceHandleProto AttrValue NameAttrList NodeDef OpDef GraphDef "
        "VersionDef FunctionDefLibrary VariableDef SaveSliceInfoDef TensorSliceProto SummaryMetadata Summary "
        "HistogramProto Event SessionLog LogMessage TaggedRunMetadata RunMetadata SaverDef MetaGraphDef "
        "CollectionDef SignatureDef TensorInfo AssetFileDef CheckpointState TrackableObjectGraph BundleHeaderProto "
        "BundleEntryProto ConfigProto GPUOptions GraphOptions OptimizerOptions RewriterConfig RunOptions ClusterDef "
        "JobDef Example Features Feature BytesList FloatList Int64List SequenceExample FeatureList FeatureLists"
    ).split():
        assert "tensorflow." + name in ours, name


# ---------------------------------------------------------------------------
# Example / SequenceExample: byte identity with TensorFlow's deterministic form


def _feature(spec):
    f = tf.train.Feature()
    kind, values = spec.get("kind"), spec.get("value", [])
    if kind == "bytes_list":
        f.bytes_list.SetInParent()
        f.bytes_list.value.extend(bytes.fromhex(v["hex"]) for v in values)
    elif kind == "float_list":
        f.float_list.SetInParent()
        f.float_list.value.extend(_float(v) for v in values)
    elif kind == "int64_list":
        f.int64_list.SetInParent()
        f.int64_list.value.extend(int(v) for v in values)
    else:
        assert kind in (None, "none", ""), f"unknown feature kind {kind!r}"
    return f


def _features(msg, specs):
    msg.SetInParent()
    for name, spec in specs.items():
        msg.feature[name].CopyFrom(_feature(spec))


def _example(record):
    ex = tf.train.Example()
    if record.get("has_features_field", True) and record.get("features") is not None:
        _features(ex.features, record["features"])
    return ex


def _sequence_example(record):
    se = tf.train.SequenceExample()
    if record.get("context") is not None:
        _features(se.context, record["context"])
    if record.get("feature_lists") is not None:
        se.feature_lists.SetInParent()
        for name, steps in record["feature_lists"].items():
            fl = se.feature_lists.feature_list[name]
            fl.SetInParent()
            for spec in steps:
                fl.feature.add().CopyFrom(_feature(spec))
    return se


def _tfrecords(path):
    """Payloads of a TFRecord file (u64 length, u32 crc, data, u32 crc)."""
    data = pathlib.Path(path).read_bytes()
    i, out = 0, []
    while i < len(data):
        (n,) = struct.unpack_from("<Q", data, i)
        out.append(data[i + 12 : i + 12 + n])
        i += 12 + n + 4
    assert i == len(data), f"{path}: trailing bytes"
    return out


@pytest.mark.parametrize(
    "manifest,build,cls",
    [("examples.json", _example, "Example"), ("sequence_examples.json", _sequence_example, "SequenceExample")],
)
def test_examples_serialize_like_tensorflow(manifest, build, cls):
    man = _json(RECORDS / "tfrecord" / manifest)
    assert man["records"] and len(man["records"]) == man["num_records"]
    for rec in man["records"]:
        want = bytes.fromhex(rec["serialized_hex"])
        ex = build(rec)
        assert ex.SerializeToString(deterministic=True) == want, f"{manifest} record {rec['index']}"
        parsed = getattr(tf.train, cls).FromString(want)
        assert parsed == ex
        assert parsed.SerializeToString(deterministic=True) == want


@pytest.mark.parametrize("manifest,cls", [("examples.json", "Example"), ("sequence_examples.json", "SequenceExample")])
def test_tfrecord_payloads_parse(manifest, cls):
    man = _json(RECORDS / "tfrecord" / manifest)
    files = man.get("files") or {man["file"]: "NONE"}
    plain = [name for name, comp in files.items() if comp == "NONE"]
    assert plain
    payloads = _tfrecords(RECORDS / "tfrecord" / plain[0])
    assert [p.hex() for p in payloads] == [r["serialized_hex"] for r in man["records"]]
    for p in payloads:
        msg = getattr(tf.train, cls)()
        msg.ParseFromString(p)
        assert msg.SerializeToString(deterministic=True) == p


def test_feature_kinds_and_packed_encoding():
    f = tf.train.Feature(int64_list=tf.train.Int64List(value=[1, -1, 2**63 - 1]))
    assert f.WhichOneof("kind") == "int64_list"
    # field 3, length-delimited Int64List whose field 1 is packed (tag 0x0a, not 0x08 per value)
    assert f.SerializeToString() == bytes.fromhex("1a") + bytes([len(f.int64_list.SerializeToString())]) + (
        f.int64_list.SerializeToString()
    )
    assert f.int64_list.SerializeToString()[:1] == b"\x0a"
    g = tf.train.Feature(float_list=tf.train.FloatList(value=[1.5]))
    assert g.SerializeToString() == bytes.fromhex("1206") + bytes.fromhex("0a04") + struct.pack("<f", 1.5)
    assert tf.train.Feature().WhichOneof("kind") is None


# ---------------------------------------------------------------------------
# Event files


def _match(exp, got, path="event"):
    """Assert exp == got, doubles to 1e-14 relative; then copy got's floats into exp.

    The JSON dumps print doubles with 15-16 significant digits, so after this
    exp can be compared with the record's bytes exactly.
    """
    names = sorted(f.name for f, _ in exp.ListFields())
    assert names == sorted(f.name for f, _ in got.ListFields()), path
    for fd, value in exp.ListFields():
        other = getattr(got, fd.name)
        where = f"{path}.{fd.name}"
        is_float = fd.type in (descriptor.FieldDescriptor.TYPE_DOUBLE, descriptor.FieldDescriptor.TYPE_FLOAT)
        is_msg = fd.type == descriptor.FieldDescriptor.TYPE_MESSAGE
        if is_msg and fd.message_type.GetOptions().map_entry:
            assert sorted(value) == sorted(other), where
            for k in value:
                if fd.message_type.fields_by_name["value"].message_type is not None:
                    _match(value[k], other[k], f"{where}[{k!r}]")
                else:
                    assert value[k] == other[k], where
        elif fd.is_repeated:
            assert len(value) == len(other), where
            for i in range(len(value)):
                if is_msg:
                    _match(value[i], other[i], f"{where}[{i}]")
                elif is_float:
                    assert math.isclose(value[i], other[i], rel_tol=1e-14) or value[i] == other[i], where
                    value[i] = other[i]
                else:
                    assert value[i] == other[i], where
        elif is_msg:
            _match(value, other, where)
        elif is_float:
            assert math.isclose(value, other, rel_tol=1e-14), f"{where}: {value} vs {other}"
            setattr(exp, fd.name, other)
        else:
            assert value == other, where


_PLACEHOLDER_KINDS = ("graph_def", "meta_graph_def")
_VALUE_EXTRAS = ("value_kind", "decoded_tensor", "plugin_content_hex")


@pytest.mark.parametrize("case", EVENT_CASES)
def test_event_file_records_match_proto_json(case):
    man = _json(RECORDS / "events" / case / "events.json")
    payloads = _tfrecords(RECORDS / "events" / case / "logdir" / man["event_file"])
    assert len(payloads) == man["num_events"] == len(man["events"])
    kinds = set()
    for i, (payload, ev) in enumerate(zip(payloads, man["events"])):
        got = tf.Event.FromString(payload)
        assert got.WhichOneof("what") == ev["kind"], i
        assert got.step == ev["step"]
        kinds.add(ev["kind"])
        pj = dict(ev["proto_json"])
        if ev["kind"] == "summary":
            pj["summary"] = {
                "value": [{k: v for k, v in sv.items() if k not in _VALUE_EXTRAS} for sv in ev["summary_values"]]
            }
        elif ev["kind"] in _PLACEHOLDER_KINDS:
            del pj[ev["kind"]]
        exp = json_format.Parse(json.dumps(pj), tf.Event())
        if ev["kind"] in _PLACEHOLDER_KINDS:
            raw = getattr(got, ev["kind"])
            assert len(raw) == ev[f"{ev['kind']}_len"]
            assert hashlib.sha256(raw).hexdigest() == ev[f"{ev['kind']}_sha256"]
            setattr(exp, ev["kind"], raw)
        _match(exp, got, f"{case} event {i}")
        assert exp.SerializeToString() == payload, f"{case} event {i} ({ev['kind']})"
        assert got.SerializeToString() == payload
        if ev["kind"] == "graph_def":
            g = tf.GraphDef.FromString(got.graph_def)
            assert [n.name for n in g.node] == ev["graph_node_names"]
            assert [n.op for n in g.node] == ev["graph_node_ops"]
        if ev["kind"] == "meta_graph_def":
            m = tf.MetaGraphDef.FromString(got.meta_graph_def)
            assert m.graph_def.node and {o.name for o in m.meta_info_def.stripped_op_list.op} >= {
                n.op for n in m.graph_def.node
            }
    assert "file_version" in kinds and "summary" in kinds


def test_event_json_names_match_tensorflow():
    ev = tf.Event(wall_time=1.5, step=3, session_log=tf.SessionLog(status=tf.SessionLog.START))
    assert json.loads(json_format.MessageToJson(ev)) == {
        "wallTime": 1.5,
        "step": "3",
        "sessionLog": {"status": "START"},
    }
    s = tf.Summary(value=[tf.Summary.Value(tag="loss", simple_value=0.5)])
    assert text_format.MessageToString(s) == 'value {\n  tag: "loss"\n  simple_value: 0.5\n}\n'
    assert tf.LogMessage.WARN == 30 and tf.SessionLog.CHECKPOINT == 3


# ---------------------------------------------------------------------------
# Checkpoint state files, .meta files and .index tables


@pytest.mark.parametrize("rel", STATE_FILES)
def test_checkpoint_state_text_format_round_trip(rel):
    text = (CHECKPOINTS / rel).read_text()
    state = text_format.Parse(text, tf.train.CheckpointState())
    assert text_format.MessageToString(state) == text
    man = _json(CHECKPOINTS / pathlib.Path(rel).parts[0] / "list_variables.json")
    if "checkpoint_state_file_text" in man:
        assert man["checkpoint_state_file_text"] == text
    if "kept_checkpoints" in man:
        assert list(state.all_model_checkpoint_paths) == man["kept_checkpoints"]
        assert state.model_checkpoint_path == man["latest_checkpoint_basename"]
    if "checkpoint_prefix" in man:
        assert state.model_checkpoint_path == pathlib.PurePosixPath(man["checkpoint_prefix"]).name
    assert state.all_model_checkpoint_paths[-1] == state.model_checkpoint_path


def _listed(man, prefix):
    """[name, shape] of every tensor the manifest lists for checkpoint `prefix`, or None."""
    for prefix_key, list_key in (
        ("checkpoint_prefix", "list_variables"),
        ("written_prefix", "written_list_variables"),
        ("latest_checkpoint_basename", "list_variables_latest"),
    ):
        if prefix_key in man and list_key in man and prefix == pathlib.PurePosixPath(man[prefix_key]).name:
            return man[list_key]
    return None


def _node(tensor_name):
    return tensor_name.split(":")[0].lstrip("^")


@pytest.mark.parametrize("rel", META_FILES)
def test_meta_graph_files_parse(rel):
    data = (CHECKPOINTS / rel).read_bytes()
    meta = tf.MetaGraphDef.FromString(data)
    # Our schema declares everything TensorFlow wrote, and writes it back byte for byte.
    assert meta.SerializeToString(deterministic=True) == data
    bare = tf.MetaGraphDef()
    bare.CopyFrom(meta)
    bare.DiscardUnknownFields()
    assert bare.SerializeToString(deterministic=True) == data
    assert text_format.Parse(text_format.MessageToString(meta), tf.MetaGraphDef()) == meta

    nodes = {n.name: n for n in meta.graph_def.node}
    assert len(nodes) == len(meta.graph_def.node)
    assert {o.name for o in meta.meta_info_def.stripped_op_list.op} >= {n.op for n in nodes.values()}
    assert meta.meta_info_def.tensorflow_version[:1].isdigit()

    saver = meta.saver_def
    assert saver.version == tf.train.SaverDef.V2
    for name in (saver.filename_tensor_name, saver.save_tensor_name, saver.restore_op_name):
        assert _node(name) in nodes, name

    case = pathlib.Path(rel).parts[0]
    man = _json(CHECKPOINTS / case / "list_variables.json")
    if "kept_checkpoints" in man and len(man["kept_checkpoints"]) < len(man["save_returned_basenames"]):
        assert saver.max_to_keep == len(man["kept_checkpoints"])

    # Variables: the VariableDefs of the "variables" collection name every saved key.
    assert meta.collection_def["variables"].WhichOneof("kind") == "bytes_list"
    var_defs = [protos.VariableDef.FromString(b) for b in meta.collection_def["variables"].bytes_list.value]
    by_op = {_node(v.variable_name): v for v in var_defs}
    for v in var_defs:
        assert _node(v.variable_name) in nodes and _node(v.initializer_name) in nodes
        assert _node(v.snapshot_name) in nodes
    full_names = {v.save_slice_info_def.full_name for v in var_defs if v.HasField("save_slice_info_def")}
    dict_keys = {d["checkpoint_key"]: d["variable"] for d in man.get("dict_keys_not_op_names", [])}
    listed = _listed(man, pathlib.Path(rel).name[: -len(".meta")])
    if listed is None:
        listed = [[name, None] for name in man["values_in_kept_checkpoints"][pathlib.Path(rel).name[: -len(".meta")]]]
    assert listed
    for key, _shape in listed:
        assert key in by_op or key in full_names or dict_keys.get(key) in by_op, key
    for part in man.get("partitions", []):
        info = by_op[part["variable"]].save_slice_info_def
        assert info.full_name == part["full_name"]
        assert list(info.var_offset) == part["var_offset"]
        assert list(info.var_shape) == part["var_shape"]
        assert list(info.full_shape) == [int(x) for x in part["save_slice_info_spec"].split()[:-1]]
    trainable = meta.collection_def["trainable_variables"].bytes_list.value
    assert {_node(protos.VariableDef.FromString(b).variable_name) for b in trainable} <= set(by_op)


# A minimal reader of the LevelDB-style table of a checkpoint's .index file.


def _varint(buf, i):
    shift = result = 0
    while True:
        c = buf[i]
        i += 1
        result |= (c & 0x7F) << shift
        shift += 7
        if not c & 0x80:
            return result, i


def _block(data, offset, size):
    raw = data[offset : offset + size]
    assert data[offset + size] == 0, "compressed block"
    (restarts,) = struct.unpack_from("<I", raw, size - 4)
    end, i, key = size - 4 * (restarts + 1), 0, b""
    while i < end:
        shared, i = _varint(raw, i)
        unshared, i = _varint(raw, i)
        vlen, i = _varint(raw, i)
        key = key[:shared] + raw[i : i + unshared]
        i += unshared
        yield key, raw[i : i + vlen]
        i += vlen


def _table(path):
    data = pathlib.Path(path).read_bytes()
    footer = data[-48:]
    assert footer[-8:] == struct.pack("<Q", 0xDB4775248B80FB57)
    _, i = _varint(footer, 0)
    _, i = _varint(footer, i)
    offset, i = _varint(footer, i)
    size, _ = _varint(footer, i)
    out = []
    for _, handle in _block(data, offset, size):
        off, j = _varint(handle, 0)
        n, _ = _varint(handle, j)
        out.extend(_block(data, off, n))
    return out


def _crc32c(data):
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 & -(crc & 1))
    return crc ^ 0xFFFFFFFF


def _masked(crc):
    return ((((crc >> 15) | (crc << 17)) & 0xFFFFFFFF) + 0xA282EAD8) & 0xFFFFFFFF


_DT = {"float16": "DT_HALF", "float32": "DT_FLOAT", "float64": "DT_DOUBLE"}


@pytest.mark.parametrize("rel", INDEX_FILES)
def test_checkpoint_index_entries(rel):
    path = CHECKPOINTS / rel
    case = pathlib.Path(rel).parts[0]
    man = _json(CHECKPOINTS / case / "list_variables.json")
    prefix = path.name[: -len(".index")]
    listed = _listed(man, prefix)

    entries = _table(path)
    keys = [k for k, _ in entries]
    assert keys == sorted(keys) and keys[0] == b""
    header = protos.BundleHeaderProto.FromString(entries[0][1])
    assert header.num_shards >= 1 and header.endianness == protos.BundleHeaderProto.LITTLE
    assert header.version.producer >= 1
    shards = [
        path.with_name(f"{prefix}.data-{i:05d}-of-{header.num_shards:05d}").read_bytes()
        for i in range(header.num_shards)
    ]
    parsed = {}
    for key, value in entries[1:]:
        entry = protos.BundleEntryProto.FromString(value)
        assert entry.SerializeToString() == value
        parsed[key] = entry
        if entry.slices:
            continue
        blob = shards[entry.shard_id][entry.offset : entry.offset + entry.size]
        assert len(blob) == entry.size
        if entry.dtype != protos.DataType.Value("DT_STRING"):
            assert entry.crc32c == _masked(_crc32c(blob)), key
    plain = {k.decode("utf-8"): e for k, e in parsed.items() if not k.startswith(b"\x00")}
    if prefix in man.get("values_in_kept_checkpoints", {}):
        assert sorted(plain) == sorted(man["values_in_kept_checkpoints"][prefix])
    if listed is not None:
        assert sorted(plain) == [name for name, _ in listed]
        for name, shape in listed:
            assert [d.size for d in plain[name].shape.dim] == shape, name
    dtypes = {v["name"]: v["dtype"] for v in man.get("variables", [])}
    for name, dt in dtypes.items():
        entry = parsed.get(name.encode("utf-8"))
        if entry is not None and listed is not None:
            assert protos.DataType.Name(entry.dtype) == _DT.get(dt, "DT_" + dt.upper()), name
    if man.get("partitions") and listed is not None:
        for full in {p["full_name"] for p in man["partitions"]}:
            entry = parsed[full.encode("utf-8")]
            full_dims = [d.size for d in entry.shape.dim]
            got = []
            for sl in entry.slices:
                # An extent without a length runs to the end of its dimension.
                got.append(
                    [
                        (e.start, e.length if e.HasField("length") else full_dims[d] - e.start)
                        for d, e in enumerate(sl.extent)
                    ]
                )
            want = [list(zip(p["var_offset"], p["var_shape"])) for p in man["partitions"]]
            assert sorted(got) == sorted(want)
    if header.num_shards > 1:
        meta = path.with_name(prefix + ".meta")
        if meta.exists():
            assert tf.MetaGraphDef.FromString(meta.read_bytes()).saver_def.sharded


def test_object_graph_in_tf2_checkpoint():
    found = 0
    for case in CASES:
        man = _json(CHECKPOINTS / case / "list_variables.json")
        for var in man.get("variables", []):
            if "parsed_object_graph" not in var:
                continue
            index = CHECKPOINTS / case / (man["checkpoint_prefix"] + ".index")
            entries = dict(_table(index))
            header = protos.BundleHeaderProto.FromString(entries[b""])
            entry = protos.BundleEntryProto.FromString(entries[var["name"].encode("utf-8")])
            shard = index.with_name(
                f"{index.name[: -len('.index')]}.data-{entry.shard_id:05d}-of-{header.num_shards:05d}"
            ).read_bytes()
            blob = shard[entry.offset : entry.offset + entry.size]
            # A scalar string tensor: varint length, 4-byte checksum of the lengths, the bytes.
            n, i = _varint(blob, 0)
            graph = protos.TrackableObjectGraph.FromString(blob[i + 4 : i + 4 + n])
            assert graph == json_format.ParseDict(var["parsed_object_graph"], protos.TrackableObjectGraph())
            keys = {a.checkpoint_key for node in graph.nodes for a in node.attributes}
            assert keys <= {name for name, _ in man["list_variables"]}
            assert graph.nodes[0].has_checkpoint_values.value
            found += 1
    assert found, "no object-based checkpoint among the fixtures"


# ---------------------------------------------------------------------------
# The tf.* and tf.train.* exports


TOP_LEVEL = """AttrValue ConfigProto Event GPUOptions GraphDef GraphOptions HistogramProto LogMessage MetaGraphDef
NameAttrList NodeDef OptimizerOptions RunMetadata RunOptions SessionLog Summary SummaryMetadata TensorInfo""".split()
TRAIN = """BytesList CheckpointState ClusterDef Example Feature FeatureList FeatureLists Features FloatList
Int64List JobDef SaverDef SequenceExample ServerDef""".split()


@pytest.mark.parametrize("name", TOP_LEVEL)
def test_top_level_exports(name):
    cls = getattr(tf, name)
    assert cls is getattr(protos, name) is getattr(tf_v1, name)
    assert cls.__module__.startswith("ferroflow.core.")
    assert cls.DESCRIPTOR.full_name == "tensorflow." + name


@pytest.mark.parametrize("name", TRAIN)
def test_train_exports(name):
    cls = getattr(tf.train, name)
    assert cls is getattr(protos, name) is getattr(tf_v1.train, name)
    assert cls.DESCRIPTOR.full_name == "tensorflow." + name


def test_messages_match_tensorflow_api_listing():
    modules = _json(API)["modules"]
    checked = 0
    for module, ns in (("", tf), ("train", tf.train)):
        for name, entry in modules[module].items():
            if entry.get("kind") != "class" or "SerializeToString" not in entry.get("members", []):
                continue
            cls = getattr(ns, name, None)
            assert cls is not None, f"tf.{module + '.' if module else ''}{name} is missing"
            missing = [m for m in entry["members"] if not hasattr(cls, m)]
            assert not missing, f"{name}: {missing}"
            checked += 1
    assert checked >= len(TOP_LEVEL)


def test_config_proto_as_tf1_programs_use_it():
    config = tf.ConfigProto(
        intra_op_parallelism_threads=2,
        inter_op_parallelism_threads=1,
        allow_soft_placement=True,
        log_device_placement=False,
        device_count={"CPU": 2, "GPU": 0},
        operation_timeout_in_ms=5000,
        gpu_options=tf.GPUOptions(allow_growth=True, per_process_gpu_memory_fraction=0.5),
        graph_options=tf.GraphOptions(optimizer_options=tf.OptimizerOptions(opt_level=tf.OptimizerOptions.L0)),
    )
    config.graph_options.rewrite_options.constant_folding = protos.RewriterConfig.OFF
    config.experimental.disable_thread_spinning = True
    assert config.intra_op_parallelism_threads == 2
    assert dict(config.device_count) == {"CPU": 2, "GPU": 0}
    again = tf.ConfigProto.FromString(config.SerializeToString())
    assert again == config
    assert text_format.Parse(text_format.MessageToString(config), tf.ConfigProto()) == config
    # TensorFlow's field numbers: intra_op 2 (tag 0x10), inter_op 5 (0x28), allow_soft_placement 7 (0x38).
    assert tf.ConfigProto(intra_op_parallelism_threads=2).SerializeToString() == b"\x10\x02"
    assert tf.ConfigProto(inter_op_parallelism_threads=3).SerializeToString() == b"\x28\x03"
    assert tf.ConfigProto(allow_soft_placement=True).SerializeToString() == b"\x38\x01"
    assert tf.GPUOptions(allow_growth=True).SerializeToString() == b"\x20\x01"

    opts = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE, timeout_in_ms=100)
    assert opts.SerializeToString() == b"\x08\x03\x10\x64"
    md = tf.RunMetadata()
    md.step_stats.dev_stats.add(device="/job:localhost/replica:0/task:0/device:CPU:0").node_stats.add(
        node_name="MatMul", all_start_micros=5
    )
    md.partition_graphs.add().node.add(name="a", op="Const")
    assert tf.RunMetadata.FromString(md.SerializeToString()) == md


def test_unknown_fields_survive():
    # A field we do not declare (ConfigProto.rpc_options = 13) is kept through a round trip.
    raw = b"\x10\x02" + b"\x6a\x02\x08\x01"
    config = tf.ConfigProto.FromString(raw)
    assert config.intra_op_parallelism_threads == 2
    assert config.SerializeToString() == raw


def test_cluster_def_and_server_def():
    cluster = tf.train.ClusterDef()
    for name, tasks in (("chief", ["c0:2222"]), ("worker", ["w0:2222", "w1:2222"])):
        job = cluster.job.add(name=name)
        for i, addr in enumerate(tasks):
            job.tasks[i] = addr
    # Field numbers from the distributed spec: ClusterDef{1: job}, JobDef{1: name, 2: map<int32,string> tasks}.
    chief = cluster.job[0].SerializeToString(deterministic=True)
    assert chief == b"\x0a\x05chief\x12\x0b\x08\x00\x12\x07c0:2222"
    assert cluster.SerializeToString(deterministic=True).startswith(b"\x0a" + bytes([len(chief)]) + chief)
    server = tf.train.ServerDef(cluster=cluster, job_name="worker", task_index=1, protocol="grpc")
    assert tf.train.ServerDef.FromString(server.SerializeToString()) == server


def test_graph_def_and_attr_values():
    g = tf.GraphDef()
    node = g.node.add(name="c", op="Const", device="/device:CPU:0")
    node.attr["dtype"].type = protos.DataType.Value("DT_FLOAT")
    value = node.attr["value"].tensor
    value.dtype = protos.DataType.Value("DT_FLOAT")
    value.tensor_shape.dim.add(size=2)
    value.float_val.extend([1.0, 2.0])
    node.attr["shape"].list.i.extend([1, 2])
    g.versions.producer = 1994
    again = tf.GraphDef.FromString(g.SerializeToString(deterministic=True))
    assert again == g
    assert again.node[0].attr["value"].WhichOneof("value") == "tensor"
    assert protos.TensorProto.FromString(value.SerializeToString()).float_val == [1.0, 2.0]
    assert tf.NodeDef.FromString(node.SerializeToString()) == node
    assert tf.AttrValue(func=tf.NameAttrList(name="f")).WhichOneof("value") == "func"
