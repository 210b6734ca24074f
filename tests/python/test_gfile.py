"""tf.gfile / tf.io.gfile against TensorFlow's behaviour (checked with TF 2.21's file_io; see each test)."""

import errno
import inspect
import os

import pytest

import ferroflow as tf
from ferroflow.framework.errors import error_from_os_error
from ferroflow.platform import gfile

g = tf.io.gfile
E = tf.errors


def _write(path, data):
    with open(path, "wb") as f:
        f.write(data)


def _read(path):
    with open(path, "rb") as f:
        return f.read()


# --------------------------------------------------------------------------------------------------
# GFile
# --------------------------------------------------------------------------------------------------


def test_text_and_binary_round_trip(tmp_path):
    p = str(tmp_path / "a.txt")
    with g.GFile(p, "w") as f:
        f.write("héllo\n")
        f.write(b"bytes\n")  # TF accepts bytes in text mode too
    assert _read(p) == "héllo\nbytes\n".encode()
    with g.GFile(p) as f:
        text = f.read()
    assert text == "héllo\nbytes\n" and isinstance(text, str)
    with g.GFile(p, "rb") as f:
        data = f.read()
    assert data == "héllo\nbytes\n".encode() and isinstance(data, bytes)

    with g.GFile(p, "wb") as f:
        f.write("é")  # and str in binary mode, as UTF-8
        f.write(bytearray(b"!"))
    assert _read(p) == "é!".encode()


def test_write_rejects_non_strings(tmp_path):
    with g.GFile(str(tmp_path / "x"), "w") as f, pytest.raises(TypeError, match="Expected binary or unicode"):
        f.write(5)


def test_append_and_plus_modes(tmp_path):
    p = str(tmp_path / "a")
    with g.GFile(p, "w") as f:
        f.write("abc")
    with g.GFile(p, "a") as f:
        f.write("def")
    assert _read(p) == b"abcdef"
    with g.GFile(p, "a+") as f:
        f.write("g")
        f.flush()
        assert f.read() == "abcdefg"  # reading starts at the beginning
    with g.GFile(p, "w+") as f:
        f.write("xy")
        f.flush()
        assert f.read() == "xy"
    # TF's write stream truncates for every mode without "a", r+ included.
    with g.GFile(p, "r+") as f:
        assert f.read(1) == "x"
        f.write("Z")
    assert _read(p) == b"Z"


def test_write_mode_creates_the_file_on_first_write(tmp_path):
    p = tmp_path / "lazy"
    with g.GFile(str(p), "w"):
        pass
    assert not p.exists()  # as TF: nothing is opened until something is written
    f = g.GFile(str(p), "w")
    assert f.tell() == 0  # tell() on a write-only file opens it
    assert p.exists()
    f.write("abc")
    assert f.tell() == 3
    f.close()


def test_flush_and_close_publish_writes(tmp_path):
    p = str(tmp_path / "f")
    f = g.GFile(p, "w")
    f.write("abc")
    f.flush()
    assert _read(p) == b"abc"
    f.write("d")
    f.close()
    assert _read(p) == b"abcd"


def test_readline_readlines_and_iteration(tmp_path):
    p = str(tmp_path / "lines")
    _write(p, b"one\r\ntwo\nth\rree\nlast")
    with g.GFile(p) as f:
        assert f.readline() == "one\n"  # TF's readline drops every \r
        assert f.tell() == 5
        assert f.readlines() == ["two\n", "three\n", "last"]
        assert f.readline() == ""
    assert list(g.GFile(p, "rb")) == [b"one\n", b"two\n", b"three\n", b"last"]
    f = g.GFile(p)
    assert iter(f) is f and f.next() == "one\n" and next(f) == "two\n"
    assert g.GFile(p).read() == "one\r\ntwo\nth\rree\nlast"  # read() keeps \r


def test_read_counts_bytes_even_in_text_mode(tmp_path):
    p = str(tmp_path / "u")
    _write(p, "héllo".encode())
    f = g.GFile(p)
    assert f.read(3) == "hé"  # three bytes
    assert f.tell() == 3
    assert f.read(0) == ""
    assert f.read(100) == "llo"
    assert f.read(5) == ""
    with pytest.raises(UnicodeDecodeError):
        g.GFile(p).read(2)  # splits "é", as in TF


def test_seek_and_tell(tmp_path):
    p = str(tmp_path / "digits")
    _write(p, b"0123456789")
    f = g.GFile(p, "rb")
    assert f.read(3) == b"012" and f.tell() == 3
    assert f.seek(1) is None and f.read(1) == b"1"
    f.seek(2, 1)
    assert f.tell() == 4 and f.read(1) == b"4"
    f.seek(-2, 2)
    assert f.read() == b"89" and f.tell() == 10
    f.seek(position=5)  # TF's deprecated keyword
    assert f.read(1) == b"5"
    f.seek(10)
    assert f.read() == b""
    with pytest.raises(E.OutOfRangeError):
        f.seek(11)
    assert f.tell() == 10  # left at the end
    with pytest.raises(E.InvalidArgumentError, match="negative"):
        f.seek(-1)
    with pytest.raises(E.InvalidArgumentError, match="whence"):
        f.seek(0, 3)
    with pytest.raises(TypeError):
        f.seek()
    with pytest.raises(TypeError):
        f.seek(1, position=2)
    with pytest.raises(E.InvalidArgumentError, match="negative number of bytes"):
        f.read(-2)
    assert f.seekable()


def test_size_name_mode(tmp_path):
    p = tmp_path / "s"
    _write(p, b"12345")
    f = g.GFile(p, "rb")
    assert f.size() == 5
    assert f.name == p and f.mode == "rb"  # as given
    assert f.read() == b"12345"
    with pytest.raises(E.NotFoundError):
        g.GFile(str(tmp_path / "missing"), "w").size()


def test_close_then_read_reopens_from_the_start(tmp_path):
    p = str(tmp_path / "r")
    _write(p, b"abc")
    f = g.GFile(p)
    assert f.read(2) == "ab"
    f.close()
    f.close()  # twice is fine
    assert f.read() == "abc"


def test_file_uri_and_pathlike_names(tmp_path):
    p = tmp_path / "u.txt"
    with g.GFile("file://" + str(p), "w") as f:
        f.write("uri")
    assert g.GFile(p).read() == "uri"
    assert g.GFile(os.fsencode(str(p)), "rb").read() == b"uri"


@pytest.mark.parametrize(
    "setup, action, error, in_message",
    [
        (None, lambda p: g.GFile(p).read(), E.NotFoundError, "missing"),
        (None, lambda p: g.GFile(p, "rb").readline(), E.NotFoundError, "missing"),
        (None, lambda p: g.GFile(p).seek(0), E.NotFoundError, "missing"),
        (None, lambda p: g.GFile(p).size(), E.NotFoundError, "missing"),
        (None, lambda p: g.GFile(os.path.join(p, "x"), "w").write("a"), E.NotFoundError, "missing"),
        ("dir", lambda p: g.GFile(p).read(), E.FailedPreconditionError, "Is a directory"),
        ("dir", lambda p: g.GFile(p, "w").write("a"), E.FailedPreconditionError, "Is a directory"),
        ("file", lambda p: g.GFile(p).write("a"), E.PermissionDeniedError, "open for writing"),
        ("file", lambda p: g.GFile(p, "w").read(), E.PermissionDeniedError, "open for reading"),
        ("file", lambda p: g.GFile(p, "a").seek(0), E.PermissionDeniedError, "open for reading"),
        ("file", lambda p: g.GFile(p, "x"), E.InvalidArgumentError, "mode"),
        ("file", lambda p: g.GFile(p, "rt"), E.InvalidArgumentError, "mode"),
    ],
)
def test_gfile_errors(tmp_path, setup, action, error, in_message):
    p = str(tmp_path / "missing")
    if setup == "dir":
        os.mkdir(p)
    elif setup == "file":
        _write(p, b"data")
    with pytest.raises(error, match=in_message) as info:
        action(p)
    assert isinstance(info.value, E.OpError)


@pytest.mark.parametrize(
    "code, error",
    [
        (errno.ENOENT, E.NotFoundError),
        (errno.EISDIR, E.FailedPreconditionError),
        (errno.EACCES, E.PermissionDeniedError),
        (errno.EEXIST, E.AlreadyExistsError),
        (errno.ENOSPC, E.ResourceExhaustedError),
        (errno.EXDEV, E.UnimplementedError),
        (None, E.UnknownError),
    ],
)
def test_os_errors_map_in_one_place(tmp_path, code, error):
    # gfile raises through framework.errors.error_from_os_error; the classes are TF's errno mapping.
    err = OSError(code, os.strerror(code)) if code else OSError("no number")
    e = error_from_os_error(tmp_path, err)
    assert type(e) is error
    assert e.message == f"{tmp_path}; {os.strerror(code) if code else 'no number'}"
    missing = str(tmp_path / "missing")
    with pytest.raises(E.NotFoundError) as info:
        g.GFile(missing).read()
    assert info.value.message == f"{missing}; {os.strerror(errno.ENOENT)}"


def test_fastgfile_and_open(tmp_path):
    p = str(tmp_path / "f")
    _write(p, b"fast")
    assert tf.gfile.FastGFile(p, "rb").read() == b"fast"
    assert issubclass(tf.gfile.FastGFile, tf.gfile.GFile)
    assert tf.gfile.Open is tf.gfile.GFile is tf.io.gfile.GFile


# --------------------------------------------------------------------------------------------------
# Filesystem functions
# --------------------------------------------------------------------------------------------------


def test_exists_and_isdir(tmp_path):
    f = tmp_path / "f"
    _write(f, b"")
    assert g.exists(str(f)) and g.exists(tmp_path) and g.exists("file://" + str(f))
    assert not g.exists(str(tmp_path / "nope"))
    assert not g.exists(str(f / "under_a_file"))
    assert not g.exists("")
    assert g.isdir(str(tmp_path)) and g.isdir("file://" + str(tmp_path))
    assert not g.isdir(str(f)) and not g.isdir(str(tmp_path / "nope"))


def test_remove(tmp_path):
    f = tmp_path / "f"
    _write(f, b"x")
    g.remove(str(f))
    assert not f.exists()
    with pytest.raises(E.NotFoundError, match="f"):
        g.remove(str(f))
    with pytest.raises(E.FailedPreconditionError, match="Is a directory"):
        g.remove(str(tmp_path))


def test_mkdir(tmp_path):
    d = tmp_path / "d"
    g.mkdir(str(d))
    assert d.is_dir()
    g.mkdir(str(d))  # existing: no error, as TF
    with pytest.raises(E.NotFoundError, match="x"):
        g.mkdir(str(tmp_path / "x" / "y"))
    _write(tmp_path / "f", b"")
    with pytest.raises(E.FailedPreconditionError, match="Not a directory"):
        g.mkdir(str(tmp_path / "f" / "y"))


def test_makedirs(tmp_path):
    deep = tmp_path / "a" / "b" / "c"
    g.makedirs(str(deep))
    assert deep.is_dir()
    g.makedirs(str(deep))
    g.makedirs(str(tmp_path / "q" / "r") + "/")
    assert (tmp_path / "q" / "r").is_dir()
    _write(tmp_path / "f", b"")
    with pytest.raises(E.FailedPreconditionError, match="not a directory|Not a directory"):
        g.makedirs(str(tmp_path / "f"))
    with pytest.raises(E.FailedPreconditionError):
        g.makedirs(str(tmp_path / "f" / "a" / "b"))


def test_rmtree(tmp_path):
    d = tmp_path / "d"
    (d / "sub").mkdir(parents=True)
    _write(d / "sub" / "x", b"1")
    _write(d / "y", b"2")
    g.rmtree(str(d))
    assert not d.exists()
    f = tmp_path / "f"
    _write(f, b"")
    g.rmtree(str(f))  # a file is simply deleted
    assert not f.exists()
    with pytest.raises(E.NotFoundError, match="nope"):
        g.rmtree(str(tmp_path / "nope"))


def test_listdir(tmp_path):
    for name in ["b", "a", ".hidden", "c"]:
        _write(tmp_path / name, b"")
    (tmp_path / "sub").mkdir()
    assert g.listdir(str(tmp_path)) == [".hidden", "a", "b", "c", "sub"]
    assert g.listdir(str(tmp_path) + "/") == g.listdir("file://" + str(tmp_path))
    with pytest.raises(E.NotFoundError, match="Could not find directory"):
        g.listdir(str(tmp_path / "nope"))
    with pytest.raises(E.NotFoundError):
        g.listdir(str(tmp_path / "a"))


def test_stat(tmp_path):
    f = tmp_path / "f"
    _write(f, b"12345")
    st = g.stat(str(f))
    assert st.length == 5 and st.is_directory is False
    assert st.mtime_nsec == os.stat(f).st_mtime_ns
    assert g.stat(str(tmp_path)).is_directory is True
    with pytest.raises(E.NotFoundError, match="nope"):
        g.stat(str(tmp_path / "nope"))


@pytest.mark.parametrize("op", [g.rename, g.copy])
def test_rename_and_copy_respect_overwrite(tmp_path, op):
    src, dst = tmp_path / "src", tmp_path / "dst"
    _write(src, b"new")
    _write(dst, b"old")
    with pytest.raises(E.AlreadyExistsError, match="dst"):
        op(str(src), str(dst))
    assert _read(dst) == b"old"
    op(str(src), str(dst), overwrite=True)
    assert _read(dst) == b"new"
    assert src.exists() == (op is g.copy)
    assert sorted(os.listdir(tmp_path)) == sorted(
        ["dst"] + (["src"] if op is g.copy else [])
    )  # no temp files


@pytest.mark.parametrize("op", [g.rename, g.copy])
def test_overwrite_replaces_atomically(tmp_path, op):
    # os.replace swaps in a new file: a reader of the old one keeps the old bytes. An in-place
    # truncate-and-write would show the reader the new (or partial) content.
    src, dst = tmp_path / "src", tmp_path / "dst"
    _write(src, b"NEW CONTENT")
    _write(dst, b"old content")
    with open(dst, "rb") as reader:
        old_inode = os.fstat(reader.fileno()).st_ino
        op(str(src), str(dst), overwrite=True)
        assert reader.read() == b"old content"
    assert _read(dst) == b"NEW CONTENT"
    assert os.stat(dst).st_ino != old_inode


@pytest.mark.parametrize("op", [g.rename, g.copy])
def test_rename_and_copy_errors(tmp_path, op):
    src = tmp_path / "src"
    _write(src, b"x")
    (tmp_path / "dir").mkdir()
    _write(tmp_path / "dir" / "inside", b"")
    with pytest.raises(E.NotFoundError, match="nope"):
        op(str(tmp_path / "nope"), str(tmp_path / "out"))
    with pytest.raises(E.NotFoundError):
        op(str(src), str(tmp_path / "no_parent" / "out"))
    with pytest.raises(E.AlreadyExistsError):
        op(str(src), str(tmp_path / "dir"))
    with pytest.raises(E.FailedPreconditionError, match="Is a directory"):
        op(str(src), str(tmp_path / "dir"), overwrite=True)
    assert _read(src) == b"x"
    assert sorted(os.listdir(tmp_path)) == ["dir", "src"]
    assert os.listdir(tmp_path / "dir") == ["inside"]


def test_copy_of_a_directory_fails(tmp_path):
    (tmp_path / "d").mkdir()
    with pytest.raises(E.FailedPreconditionError, match="Is a directory"):
        g.copy(str(tmp_path / "d"), str(tmp_path / "e"))
    assert os.listdir(tmp_path) == ["d"]


def test_rename_directories(tmp_path):
    (tmp_path / "a").mkdir()
    _write(tmp_path / "a" / "x", b"1")
    g.rename(str(tmp_path / "a"), str(tmp_path / "b"))
    assert _read(tmp_path / "b" / "x") == b"1" and not (tmp_path / "a").exists()
    (tmp_path / "empty").mkdir()
    with pytest.raises(E.AlreadyExistsError):
        g.rename(str(tmp_path / "b"), str(tmp_path / "empty"))
    g.rename(str(tmp_path / "b"), str(tmp_path / "empty"), overwrite=True)  # onto an empty directory
    assert os.listdir(tmp_path / "empty") == ["x"]


def test_copy_uses_file_uris(tmp_path):
    _write(tmp_path / "a", b"abc")
    g.copy("file://" + str(tmp_path / "a"), "file://" + str(tmp_path / "b"))
    assert _read(tmp_path / "b") == b"abc"


def test_join_and_schemes():
    assert g.join("a", "b", "c") == os.path.join("a", "b", "c")
    assert g.join("/a/", "/b") == "/b"
    assert g.join("a") == "a"
    assert g.join("gs://bucket", "x", "y") == "gs://bucket/x/y"
    assert g.join("file:///tmp", "x") == "file:///tmp/x"
    assert set(g.get_registered_schemes()) == {"", "file"}


# --------------------------------------------------------------------------------------------------
# glob
# --------------------------------------------------------------------------------------------------

_TREE = ["a.txt", "b.txt", "c.log", ".hidden.txt", "a[1].txt", "e*.txt", "q?.txt", "sub/x.txt", "sub/y.log"]
_TREE += ["sub/deep/z.txt", "s2/x.txt"]


@pytest.fixture
def tree(tmp_path):
    for name in _TREE:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        _write(path, b"")
    return tmp_path


@pytest.mark.parametrize(
    "pattern, expected",
    [
        ("*.txt", [".hidden.txt", "a.txt", "a[1].txt", "b.txt", "e*.txt", "q?.txt"]),
        ("*", [".hidden.txt", "a.txt", "a[1].txt", "b.txt", "c.log", "e*.txt", "q?.txt", "s2", "sub"]),
        ("?.txt", ["a.txt", "b.txt"]),
        ("[ab].txt", ["a.txt", "b.txt"]),
        ("[a-b].txt", ["a.txt", "b.txt"]),
        ("[!a].txt", ["b.txt"]),
        ("[^a].txt", ["b.txt"]),
        ("[z-a].txt", []),
        ("*/*.txt", ["s2/x.txt", "sub/x.txt"]),
        ("s*/x.txt", ["s2/x.txt", "sub/x.txt"]),
        ("sub/*", ["sub/deep", "sub/x.txt", "sub/y.log"]),
        ("sub/**", ["sub/deep", "sub/x.txt", "sub/y.log"]),  # ** is *: no recursion
        ("**/*.txt", ["s2/x.txt", "sub/x.txt"]),
        ("*/deep/*", ["sub/deep/z.txt"]),
        ("sub/*/z.txt", ["sub/deep/z.txt"]),
        ("a.txt", ["a.txt"]),
        ("sub", ["sub"]),
        ("nope.txt", []),
        ("nope/*", []),
        ("a.txt/*", []),
        ("a\\[1\\].txt", ["a[1].txt"]),
        ("a[[]1].txt", ["a[1].txt"]),
        ("e\\*.txt", ["e*.txt"]),
        ("q\\?.txt", ["q?.txt"]),
        ("sub/../*.log", ["sub/../c.log"]),
    ],
)
def test_glob_patterns(tree, pattern, expected):
    root = str(tree)
    assert g.glob(f"{root}/{pattern}") == [f"{root}/{e}" for e in expected]
    assert tf.gfile.Glob(f"{root}/{pattern}") == [f"{root}/{e}" for e in expected]


def test_glob_several_patterns_and_file_uri(tree):
    root = str(tree)
    assert g.glob([f"{root}/*.log", f"{root}/a.txt", f"{root}/a.txt"]) == [
        f"{root}/c.log",
        f"{root}/a.txt",
        f"{root}/a.txt",
    ]
    assert g.glob(iter([f"{root}/sub/*.log"])) == [f"{root}/sub/y.log"]
    assert g.glob(f"file://{root}/*.log") == [f"file://{root}/c.log"]
    assert g.glob(tree / "*.log") == [f"{root}/c.log"]


def test_glob_relative_patterns(tree, monkeypatch):
    monkeypatch.chdir(tree)
    # As TF: a wildcard in the first component lists "." and so yields "./name".
    assert g.glob("*.log") == ["./c.log"]
    assert g.glob("./*.log") == ["./c.log"]
    assert g.glob("sub/*.log") == ["sub/y.log"]
    assert g.glob("a.txt") == ["a.txt"]
    assert g.glob("") == []


# --------------------------------------------------------------------------------------------------
# walk
# --------------------------------------------------------------------------------------------------


def _rel(root, listing):
    return [(os.path.relpath(d, root), subdirs, files) for d, subdirs, files in listing]


def test_walk_top_down_and_bottom_up(tree):
    root = str(tree)
    top_down = [
        (".", ["s2", "sub"], [".hidden.txt", "a.txt", "a[1].txt", "b.txt", "c.log", "e*.txt", "q?.txt"]),
        ("s2", [], ["x.txt"]),
        ("sub", ["deep"], ["x.txt", "y.log"]),
        ("sub/deep", [], ["z.txt"]),
    ]
    assert _rel(root, g.walk(root)) == top_down
    assert [d for d, _, _ in _rel(root, g.walk(root, topdown=False))] == ["s2", "sub/deep", "sub", "."]
    assert [d for d, _, _ in _rel(root, tf.gfile.Walk(root, in_order=False))] == [
        "s2",
        "sub/deep",
        "sub",
        ".",
    ]
    assert [d for d, _, _ in _rel(root, tf.gfile.Walk(root))] == [".", "s2", "sub", "sub/deep"]


def test_walk_prunes_and_keeps_top_as_given(tree):
    seen = []
    for d, subdirs, _ in g.walk(str(tree)):
        seen.append(os.path.relpath(d, tree))
        if "sub" in subdirs:
            subdirs.remove("sub")
    assert seen == [".", "s2"]
    assert [d for d, _, _ in g.walk(str(tree / "sub") + "/")] == [
        str(tree / "sub") + "/",
        str(tree / "sub" / "deep"),
    ]
    assert [d for d, _, _ in g.walk("file://" + str(tree / "sub"))] == [
        "file://" + str(tree / "sub"),
        "file://" + str(tree / "sub" / "deep"),
    ]


def test_walk_of_missing_or_file_yields_nothing(tree):
    assert list(g.walk(str(tree / "nope"))) == []
    assert list(g.walk(str(tree / "a.txt"))) == []
    seen = []
    assert list(g.walk(str(tree / "nope"), onerror=seen.append)) == []
    assert len(seen) == 1 and isinstance(seen[0], E.NotFoundError)


# --------------------------------------------------------------------------------------------------
# The TF1 names
# --------------------------------------------------------------------------------------------------

_TF1_SIGNATURES = {
    "Copy": ["oldpath", "newpath", "overwrite"],
    "DeleteRecursively": ["dirname"],
    "Exists": ["filename"],
    "FastGFile": ["name", "mode"],
    "GFile": ["name", "mode"],
    "Glob": ["filename"],
    "IsDirectory": ["dirname"],
    "ListDirectory": ["dirname"],
    "MakeDirs": ["dirname"],
    "MkDir": ["dirname"],
    "Open": ["name", "mode"],
    "Remove": ["filename"],
    "Rename": ["oldname", "newname", "overwrite"],
    "Stat": ["filename"],
    "Walk": ["top", "in_order"],
}


@pytest.mark.parametrize("name, args", sorted(_TF1_SIGNATURES.items()))
def test_tf1_names_and_arguments(name, args):
    obj = getattr(tf.gfile, name)
    target = obj.__init__ if inspect.isclass(obj) else obj
    assert [p for p in inspect.signature(target).parameters if p != "self"] == args
    assert getattr(tf.compat.v1.gfile, name) is obj


def test_both_modules_export_everything():
    for name in gfile.__all__:
        assert getattr(tf.gfile, name) is getattr(gfile, name)
        assert getattr(tf.io.gfile, name) is getattr(gfile, name)
    assert set(_TF1_SIGNATURES) <= set(gfile.__all__)


def test_tf1_functions_behave_like_the_v2_ones(tmp_path):
    d = str(tmp_path / "a" / "b")
    tf.gfile.MakeDirs(d)
    assert tf.gfile.IsDirectory(d) and tf.gfile.Exists(d)
    tf.gfile.MkDir(d + "/c")
    with tf.gfile.GFile(d + "/f", "w") as f:
        f.write("x")
    assert tf.gfile.ListDirectory(d) == ["c", "f"]
    assert tf.gfile.Stat(d + "/f").length == 1
    tf.gfile.Copy(d + "/f", d + "/g")
    tf.gfile.Rename(d + "/g", d + "/h")
    with pytest.raises(E.AlreadyExistsError):
        tf.gfile.Rename(d + "/h", d + "/f")
    tf.gfile.Rename(d + "/h", d + "/f", True)
    tf.gfile.Remove(d + "/f")
    assert tf.gfile.ListDirectory(d) == ["c"]
    tf.gfile.DeleteRecursively(str(tmp_path / "a"))
    assert not tf.gfile.Exists(str(tmp_path / "a"))
