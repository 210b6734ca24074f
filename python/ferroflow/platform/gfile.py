"""File access for TF1 code: ``tf.gfile`` (``Exists``, ``GFile``, ...) and ``tf.io.gfile`` (``exists``, ...).

Local filesystem only; paths may carry a ``file://`` prefix, which results keep (``glob``, ``walk``).
Behaviour follows TensorFlow's ``file_io`` module, quirks included, because TF1 programs rely on them:

* failures raise ``tf.errors`` classes chosen from the OS error number the way TF maps them
  (``ENOENT`` -> ``NotFoundError``, ``EISDIR``/``ENOTDIR`` -> ``FailedPreconditionError``,
  ``EACCES`` -> ``PermissionDeniedError``, ...; ``framework.errors.error_from_os_error``), with a
  message naming the path;
* ``GFile`` opens lazily: a file opened for writing is created (or truncated) by the first ``write``
  (or ``tell``), and a missing file opened for reading fails at the first read; ``read(n)`` counts
  bytes even in text mode, ``readline`` drops ``\\r``, and ``close`` does not stop a later call from
  reopening the file (from the start);
* ``mkdir`` of an existing path succeeds, ``listdir``/``walk`` list names sorted (TF leaves the order
  unspecified), ``glob``'s ``*`` also matches names starting with a dot and never crosses a ``/``.

``rename``/``copy`` with ``overwrite=True`` replace the destination atomically (``os.replace``); ``copy``
writes the new content to a temporary file next to the destination, fsyncs it, then renames it.
"""

from __future__ import annotations

import errno as _errno
import os
import posixpath
import re
import shutil
import stat as _stat
import uuid

from ferroflow.framework import errors

__all__ = [
    # tf.gfile (TF1 names)
    "Copy",
    "DeleteRecursively",
    "Exists",
    "FastGFile",
    "GFile",
    "Glob",
    "IsDirectory",
    "ListDirectory",
    "MakeDirs",
    "MkDir",
    "Open",
    "Remove",
    "Rename",
    "Stat",
    "Walk",
    # tf.io.gfile (snake_case names)
    "copy",
    "exists",
    "get_registered_schemes",
    "glob",
    "isdir",
    "join",
    "listdir",
    "makedirs",
    "mkdir",
    "remove",
    "rename",
    "rmtree",
    "stat",
    "walk",
]

_FILE_SCHEME = "file://"
_COPY_CHUNK = 1 << 20

# --------------------------------------------------------------------------------------------------
# Paths and errors
# --------------------------------------------------------------------------------------------------


def _to_str(path):
    """A path (str, bytes or os.PathLike) as str."""
    path = os.fspath(path)
    if isinstance(path, bytes):
        return os.fsdecode(path)
    if not isinstance(path, str):
        raise TypeError(f"Expected a path (str, bytes or os.PathLike), got {path!r}")
    return path


def _local(path):
    """The local filesystem path for ``path`` (``file://`` stripped)."""
    path = _to_str(path)
    if path.startswith(_FILE_SCHEME):
        return path[len(_FILE_SCHEME) :]
    return path


def _not_found(message):
    return errors.NotFoundError(None, None, message)


# --------------------------------------------------------------------------------------------------
# GFile
# --------------------------------------------------------------------------------------------------

_MODES = ("r", "w", "a", "r+", "w+", "a+")


class GFile:
    """A file with TF's ``GFile`` semantics (``tf.io.gfile.GFile``, ``tf.gfile.GFile``/``Open``).

    ``mode`` is one of ``r w a r+ w+ a+``, with ``b`` for bytes: reads return ``bytes`` in binary
    mode and ``str`` (UTF-8) otherwise; ``write`` accepts ``str`` or ``bytes`` in every mode.
    Reading and writing use separate streams opened on first use; the write stream appends for
    ``a``/``a+`` and truncates for ``w``/``w+``/``r+`` (as TF's does, so ``r+`` is not an in-place
    update). ``read(n)``, ``seek`` and ``tell`` count bytes.
    """

    def __init__(self, name, mode="r"):
        self._name = name
        self._mode = mode
        self._path = _local(name)
        self._binary = "b" in mode
        plain = mode.replace("b", "")
        if plain not in _MODES:
            raise errors.InvalidArgumentError(
                None, None, "mode is not 'r' or 'w' or 'a' or 'r+' or 'w+' or 'a+'"
            )
        self._readable = plain in ("r", "r+", "a+", "w+")
        self._writable = plain in ("a", "w", "r+", "a+", "w+")
        self._append = "a" in plain
        self._reader = None
        self._writer = None

    @property
    def name(self):
        """The file name as given."""
        return self._name

    @property
    def mode(self):
        """The mode as given."""
        return self._mode

    # streams ---------------------------------------------------------------------------------------

    def _read_stream(self):
        if self._reader is None:
            if not self._readable:
                raise errors.PermissionDeniedError(None, None, f"File isn't open for reading: {self._name}")
            try:
                self._reader = open(self._path, "rb")
            except OSError as e:
                raise errors.error_from_os_error(self._path, e) from None
        return self._reader

    def _write_stream(self):
        if self._writer is None:
            if not self._writable:
                raise errors.PermissionDeniedError(None, None, f"File isn't open for writing: {self._name}")
            try:
                self._writer = open(self._path, "ab" if self._append else "wb")
            except OSError as e:
                raise errors.error_from_os_error(self._path, e) from None
        return self._writer

    def _prepare(self, data):
        return data if self._binary else data.decode("utf-8")

    # reading ---------------------------------------------------------------------------------------

    def size(self):
        """The size of the file in bytes (``NotFoundError`` if it does not exist)."""
        return stat(self._path).length

    def read(self, n=-1):
        """Reads ``n`` bytes (all the rest when ``n`` is -1) from the current position."""
        stream = self._read_stream()
        if n is None or n == -1:
            data = stream.read()
        elif n < 0:
            raise errors.InvalidArgumentError(None, None, f"Can't read a negative number of bytes: {n}")
        else:
            data = stream.read(n)
        return self._prepare(data)

    def readline(self):
        """The next line including its ``\\n`` (``\\r`` characters dropped, as TF does); empty at EOF."""
        line = self._read_stream().readline()
        if b"\r" in line:
            line = line.replace(b"\r", b"")
        return self._prepare(line)

    def readlines(self):
        """All remaining lines."""
        lines = []
        while True:
            line = self.readline()
            if not line:
                return lines
            lines.append(line)

    def __iter__(self):
        return self

    def __next__(self):
        line = self.readline()
        if not line:
            raise StopIteration()
        return line

    def next(self):
        return self.__next__()

    def seek(self, offset=None, whence=0, position=None):
        """Moves the read position: ``whence`` 0 from the start, 1 from here, 2 from the end.

        Seeking past the end leaves the position at the end and raises ``OutOfRangeError``.
        ``position`` is TF's deprecated spelling of ``offset``.
        """
        stream = self._read_stream()
        if offset is None and position is None:
            raise TypeError("seek(): offset argument required")
        if offset is not None and position is not None:
            raise TypeError("seek(): offset and position may not be set simultaneously.")
        if position is not None:
            offset = position
        size = os.fstat(stream.fileno()).st_size
        if whence == 0:
            pass
        elif whence == 1:
            offset += stream.tell()
        elif whence == 2:
            offset += size
        else:
            raise errors.InvalidArgumentError(
                None, None, f"Invalid whence argument: {whence}. Valid values are 0, 1, or 2."
            )
        if offset < 0:
            raise errors.InvalidArgumentError(None, None, f"Seeking to a negative position: {offset}")
        if offset > size:
            stream.seek(size)
            raise errors.OutOfRangeError(
                None, None, f"reached end of file {self._name} (size {size}) seeking to {offset}"
            )
        stream.seek(offset)

    def tell(self):
        """The read position (the write position for write-only modes)."""
        if self._readable:
            return self._read_stream().tell()
        return self._write_stream().tell()

    def seekable(self):
        return True

    # writing ---------------------------------------------------------------------------------------

    def write(self, file_content):
        """Appends ``file_content`` (``str`` is written as UTF-8, ``bytes``/``bytearray`` as is)."""
        if isinstance(file_content, str):
            data = file_content.encode("utf-8")
        elif isinstance(file_content, (bytes, bytearray)):
            data = bytes(file_content)
        else:
            raise TypeError(f"Expected binary or unicode string, got {file_content!r}")
        self._write_stream().write(data)

    def flush(self):
        """Hands written data to the operating system (it survives a crash of this process)."""
        if self._writer is not None:
            self._writer.flush()

    def close(self):
        """Flushes and closes both streams. A later read or write opens the file again."""
        reader, self._reader = self._reader, None
        writer, self._writer = self._writer, None
        if reader is not None:
            reader.close()
        if writer is not None:
            try:
                writer.close()
            except OSError as e:
                raise errors.error_from_os_error(self._path, e) from None

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        self.close()

    def __repr__(self):
        return f"<GFile name={self._name!r} mode={self._mode!r}>"


class FastGFile(GFile):
    """``tf.gfile.FastGFile``: the same as ``GFile`` (deprecated in TF in favour of it)."""

    def __init__(self, name, mode="r"):
        super().__init__(name, mode)


Open = GFile


# --------------------------------------------------------------------------------------------------
# Filesystem functions (tf.io.gfile names)
# --------------------------------------------------------------------------------------------------


class FileStatistics:
    """What ``stat`` returns: ``length`` in bytes, ``mtime_nsec``, ``is_directory``."""

    __slots__ = ("length", "mtime_nsec", "is_directory")

    def __init__(self, length=0, mtime_nsec=0, is_directory=False):
        self.length = length
        self.mtime_nsec = mtime_nsec
        self.is_directory = is_directory

    def __repr__(self):
        return (
            f"FileStatistics(length={self.length}, mtime_nsec={self.mtime_nsec}, "
            f"is_directory={self.is_directory})"
        )


def exists(path):
    """Whether ``path`` exists (a file or a directory)."""
    try:
        return os.path.exists(_local(path))
    except ValueError:  # e.g. an embedded NUL
        return False


def isdir(path):
    """Whether ``path`` is a directory."""
    try:
        return os.path.isdir(_local(path))
    except ValueError:
        return False


def remove(path):
    """Deletes the file ``path`` (``NotFoundError`` if missing, ``FailedPreconditionError`` for a directory)."""
    local = _local(path)
    try:
        os.remove(local)
    except OSError as e:
        raise errors.error_from_os_error(local, e) from None


def mkdir(path):
    """Creates the directory ``path``; its parent must exist. An existing ``path`` is not an error (as in TF)."""
    local = _local(path)
    try:
        os.mkdir(local)
    except FileExistsError:
        return
    except OSError as e:
        raise errors.error_from_os_error(local, e) from None


def makedirs(path):
    """Creates ``path`` and any missing parents; succeeds if it already is a directory."""
    local = _local(path)
    if os.path.isdir(local):
        return
    try:
        os.makedirs(local, exist_ok=True)
    except FileExistsError:
        raise errors.FailedPreconditionError(None, None, f"{local} is not a directory") from None
    except OSError as e:
        raise errors.error_from_os_error(local, e) from None


def rmtree(path):
    """Deletes ``path`` and everything under it (a file is simply deleted)."""
    local = _local(path)
    if not os.path.lexists(local):
        raise _not_found(f"{local} not found")
    try:
        if os.path.isdir(local) and not os.path.islink(local):
            shutil.rmtree(local)
        else:
            os.remove(local)
    except OSError as e:
        raise errors.error_from_os_error(e.filename or local, e) from None


def listdir(path):
    """The names in directory ``path``, sorted, without ``.`` and ``..``."""
    local = _local(path)
    if not isdir(local):
        raise _not_found(f"Could not find directory {_to_str(path)}")
    try:
        return sorted(os.listdir(local))
    except OSError as e:
        raise errors.error_from_os_error(local, e) from None


def stat(path):
    """``FileStatistics`` for ``path`` (``NotFoundError`` if it does not exist)."""
    local = _local(path)
    try:
        st = os.stat(local)
    except OSError as e:
        raise errors.error_from_os_error(local, e) from None
    return FileStatistics(
        length=st.st_size, mtime_nsec=st.st_mtime_ns, is_directory=_stat.S_ISDIR(st.st_mode)
    )


def _fail_if_exists(dst, src, verb):
    if exists(dst):
        raise errors.AlreadyExistsError(
            None, None, f"Cannot {verb} {_to_str(src)} to {_to_str(dst)}: the destination already exists"
        )


def rename(src, dst, overwrite=False):
    """Renames (moves) file or directory ``src`` to ``dst``.

    Without ``overwrite`` an existing ``dst`` is ``AlreadyExistsError``; with it, ``dst`` is replaced
    atomically (a directory only by a directory, and only when empty). Between filesystems a file is
    copied next to ``dst``, renamed over it, then ``src`` is deleted.
    """
    if not overwrite:
        _fail_if_exists(dst, src, "rename")
    lsrc, ldst = _local(src), _local(dst)
    try:
        os.replace(lsrc, ldst)
        return
    except OSError as e:
        if e.errno != _errno.EXDEV or not os.path.isfile(lsrc):
            raise errors.error_from_os_error(f"Cannot rename {lsrc} to {ldst}", e) from None
    _copy_file(lsrc, ldst)
    remove(lsrc)


def copy(src, dst, overwrite=False):
    """Copies file ``src`` to ``dst``; with ``overwrite`` an existing ``dst`` is replaced atomically."""
    if not overwrite:
        _fail_if_exists(dst, src, "copy")
    _copy_file(_local(src), _local(dst))


def _copy_file(src, dst):
    """Copies ``src`` to a temporary file beside ``dst``, fsyncs it, then renames it over ``dst``."""
    try:
        source = open(src, "rb")
    except OSError as e:
        raise errors.error_from_os_error(src, e) from None
    head, tail = os.path.split(dst)
    tmp = os.path.join(head, f".{tail}.tmp{uuid.uuid4().hex}")
    try:
        with source:
            try:
                fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
            except OSError as e:
                raise errors.error_from_os_error(dst, e) from None
            try:
                with os.fdopen(fd, "wb") as out:
                    shutil.copyfileobj(source, out, _COPY_CHUNK)
                    out.flush()
                    os.fsync(out.fileno())
                os.replace(tmp, dst)
            except OSError as e:
                raise errors.error_from_os_error(dst, e) from None
    finally:
        if os.path.lexists(tmp):
            os.remove(tmp)


def atomic_write_string_to_file(filename, contents, overwrite=True):
    """Writes ``contents`` (str or bytes) to ``filename`` so readers see the old file or the new one, never part.

    The data goes to a temporary file beside ``filename``, is fsync'ed, then renamed over it; the
    directory is fsync'ed too so the rename survives a crash (where the file system allows it).
    With ``overwrite=False`` an existing ``filename`` raises AlreadyExistsError.
    """
    path = _local(filename)
    if not overwrite and os.path.lexists(path):
        raise errors.AlreadyExistsError(None, None, f"file already exists: {path}")
    data = contents.encode("utf-8") if isinstance(contents, str) else bytes(contents)
    head, tail = os.path.split(path)
    tmp = os.path.join(head, f".{tail}.tmp{uuid.uuid4().hex}")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except OSError as e:
        raise errors.error_from_os_error(path, e) from None
    finally:
        if os.path.lexists(tmp):
            os.remove(tmp)
    _sync_dir(head or ".")


def _sync_dir(directory):
    """Makes renames in ``directory`` durable (best effort: not every file system can fsync a directory)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


# glob --------------------------------------------------------------------------------------------

_GLOB_CHARS = "*?[\\"


def _read_char(pat, i):
    """The (possibly backslash-escaped) character at ``pat[i]`` and the index after it."""
    if pat[i] == "\\" and i + 1 < len(pat):
        return pat[i + 1], i + 2
    return pat[i], i + 1


def _bracket(pat, i):
    """Regex for the bracket expression whose ``[`` is just before ``pat[i]``, and the index after
    its ``]``; None when it is not closed (then ``[`` is an ordinary character)."""
    n = len(pat)
    negate = i < n and pat[i] in "!^"
    if negate:
        i += 1
    ranges = []
    first = True
    while True:
        if i >= n:
            return None
        if pat[i] == "]" and not first:
            i += 1
            break
        first = False
        lo, i = _read_char(pat, i)
        hi = lo
        if i + 1 < n and pat[i] == "-" and pat[i + 1] != "]":
            hi, i = _read_char(pat, i + 1)
        ranges.append((lo, hi))
    body = "".join(
        re.escape(lo) if lo == hi else f"{re.escape(lo)}-{re.escape(hi)}" for lo, hi in ranges if lo <= hi
    )
    if not body:
        return ("." if negate else "(?!)"), i
    return f"[{'^' if negate else ''}{body}]", i


def _component_regex(pat):
    """Compiles one path component of a glob pattern (fnmatch syntax with backslash escapes)."""
    out = []
    i, n = 0, len(pat)
    while i < n:
        c = pat[i]
        if c == "*":
            if not out or out[-1] != ".*":
                out.append(".*")
            i += 1
        elif c == "?":
            out.append(".")
            i += 1
        elif c == "[":
            parsed = _bracket(pat, i + 1)
            if parsed is None:
                out.append(re.escape("["))
                i += 1
            else:
                expr, i = parsed
                out.append(expr)
        else:
            ch, i = _read_char(pat, i)
            out.append(re.escape(ch))
    return re.compile("".join(out), re.DOTALL)


def _child(parent, name):
    return parent + name if parent.endswith("/") else f"{parent}/{name}"


def _glob_one(pattern):
    scheme = ""
    if pattern.startswith(_FILE_SCHEME):
        scheme, pattern = _FILE_SCHEME, pattern[len(_FILE_SCHEME) :]
    first = min((pattern.find(c) for c in _GLOB_CHARS if c in pattern), default=-1)
    if first < 0:
        return [scheme + pattern] if pattern and os.path.exists(pattern) else []
    slash = pattern.rfind("/", 0, first)
    # Like TF, the fixed directory before the first wildcard is "." for a bare relative pattern.
    base = "." if slash < 0 else (pattern[:slash] or "/")
    components = [c for c in pattern[slash + 1 :].split("/") if c]
    matches = [base]
    for depth, comp in enumerate(components):
        last = depth == len(components) - 1
        found = []
        if not any(c in comp for c in _GLOB_CHARS):
            for parent in matches:
                full = _child(parent, comp)
                if os.path.exists(full) if last else os.path.isdir(full):
                    found.append(full)
        else:
            regex = _component_regex(comp)
            for parent in matches:
                try:
                    names = sorted(os.listdir(parent))
                except OSError:
                    continue
                for name in names:
                    if regex.fullmatch(name):
                        full = _child(parent, name)
                        if last or os.path.isdir(full):
                            found.append(full)
        matches = found
        if not matches:
            break
    return [scheme + m for m in matches]


def glob(pattern):
    """Paths matching ``pattern`` (a string or an iterable of them), sorted per pattern.

    ``*`` matches any run of characters other than ``/`` (names starting with ``.`` included), ``?``
    one character, ``[abc]``/``[a-z]``/``[!a]``/``[^a]`` a set, and ``\\c`` the character ``c``.
    A pattern without wildcards yields itself if it exists. No match is an empty list.
    """
    if isinstance(pattern, (str, bytes, os.PathLike)):
        patterns = [pattern]
    else:
        patterns = list(pattern)
    result = []
    for p in patterns:
        result.extend(_glob_one(_to_str(p)))
    return result


# walk / join ------------------------------------------------------------------------------------


def join(path, *paths):
    """Joins path components: with ``/`` for URL-like paths (``scheme://...``), else ``os.path.join``."""
    if "://" in _to_str(path)[1:]:
        return posixpath.join(path, *paths)
    return os.path.join(path, *paths)


def walk(top, topdown=True, onerror=None):
    """Yields ``(dirname, subdirnames, filenames)`` for ``top`` and every directory below it.

    ``topdown`` yields a directory before its subdirectories (which may then be pruned by editing
    ``subdirnames`` in place), otherwise after them. Names are sorted. A directory that cannot be
    listed is skipped after ``onerror(error)`` is called, if given.
    """
    top = _to_str(top)
    try:
        listing = listdir(top)
    except errors.OpError as err:
        if onerror is not None:
            onerror(err)
        return
    subdirs, files = [], []
    for name in listing:
        (subdirs if isdir(join(top, name)) else files).append(name)
    here = (top, subdirs, files)
    if topdown:
        yield here
    for name in subdirs:
        yield from walk(join(top, name), topdown, onerror)
    if not topdown:
        yield here


def get_registered_schemes():
    """The path schemes understood here: ``""`` (plain local paths) and ``"file"``."""
    return ["", "file"]


# --------------------------------------------------------------------------------------------------
# tf.gfile: TF1's CamelCase names (argument names as TF1's)
# --------------------------------------------------------------------------------------------------


def Exists(filename):  # noqa: N802 - TensorFlow's name
    """Whether ``filename`` exists (a file or a directory)."""
    return exists(filename)


def IsDirectory(dirname):  # noqa: N802
    """Whether ``dirname`` is a directory."""
    return isdir(dirname)


def Remove(filename):  # noqa: N802
    """Deletes the file ``filename``."""
    remove(filename)


def MkDir(dirname):  # noqa: N802
    """Creates directory ``dirname`` (its parent must exist)."""
    mkdir(dirname)


def MakeDirs(dirname):  # noqa: N802
    """Creates ``dirname`` and any missing parents."""
    makedirs(dirname)


def DeleteRecursively(dirname):  # noqa: N802
    """Deletes ``dirname`` and everything under it."""
    rmtree(dirname)


def ListDirectory(dirname):  # noqa: N802
    """The names in directory ``dirname``."""
    return listdir(dirname)


def Glob(filename):  # noqa: N802
    """Paths matching the pattern(s) ``filename``; see ``glob``."""
    return glob(filename)


def Stat(filename):  # noqa: N802
    """``FileStatistics`` for ``filename``."""
    return stat(filename)


def Rename(oldname, newname, overwrite=False):  # noqa: N802
    """Renames ``oldname`` to ``newname``; see ``rename``."""
    rename(oldname, newname, overwrite)


def Copy(oldpath, newpath, overwrite=False):  # noqa: N802
    """Copies file ``oldpath`` to ``newpath``; see ``copy``."""
    copy(oldpath, newpath, overwrite)


def Walk(top, in_order=True):  # noqa: N802
    """Directory tree generator; ``in_order=False`` yields bottom-up. See ``walk``."""
    return walk(top, in_order)
