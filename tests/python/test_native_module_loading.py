"""The native module must load after any other library, in any order: it may not need glibc's
static TLS block. A module flagged DF_STATIC_TLS gets its thread-locals from the few hundred bytes
glibc keeps for dlopen'd libraries, shared with everything loaded before it (numpy's OpenBLAS,
torch, ...), and fails to import with "cannot allocate memory in static TLS block" once they run
out. mimalloc's `local_dynamic_tls` feature (Cargo.toml) keeps the flag off."""

import struct
import sys

import pytest

from ferroflow import _native

DT_NULL, DT_FLAGS = 0, 30
DF_STATIC_TLS = 0x10
PT_DYNAMIC = 2


def dynamic_flags(path):
    """DT_FLAGS of a 64-bit little-endian ELF shared object (0 when absent)."""
    with open(path, "rb") as f:
        data = f.read()
    assert data[:4] == b"\x7fELF" and data[4] == 2 and data[5] == 1, "expected ELF64 LSB"
    phoff, = struct.unpack_from("<Q", data, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
    for i in range(phnum):
        p_type, _, p_offset, _, _, p_filesz = struct.unpack_from("<IIQQQQ", data, phoff + i * phentsize)
        if p_type != PT_DYNAMIC:
            continue
        for off in range(p_offset, p_offset + p_filesz, 16):
            tag, value = struct.unpack_from("<qQ", data, off)
            if tag == DT_NULL:
                break
            if tag == DT_FLAGS:
                return value
        return 0
    raise AssertionError("no PT_DYNAMIC segment")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="ELF and glibc's static TLS are Linux's")
def test_native_module_does_not_need_static_tls():
    flags = dynamic_flags(_native.__file__)
    assert not flags & DF_STATIC_TLS, (
        f"{_native.__file__} is flagged DF_STATIC_TLS: some code uses the initial-exec TLS model, "
        "so importing ferroflow after other libraries can fail"
    )
