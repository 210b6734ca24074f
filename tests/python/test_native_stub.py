"""The type stub ``_native.pyi`` names exactly what the native module has (a stubtest of our own)."""

import ast
import inspect
import pathlib

from ferroflow import _native

STUB = pathlib.Path(_native.__file__).with_name("_native.pyi")


def _stub_names():
    tree = ast.parse(STUB.read_text())
    top, members = set(), {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            top.add(node.name)
        if isinstance(node, ast.ClassDef):
            members[node.name] = {
                n.name for n in node.body if isinstance(n, ast.FunctionDef) and not n.name.startswith("__")
            }
    return top, members


def _public(names):
    return {n for n in names if not n.startswith("__")}


def test_stub_lists_every_native_function_and_class():
    top, _ = _stub_names()
    native = {n for n in _public(dir(_native)) if callable(getattr(_native, n))}
    assert sorted(native - top) == [], "in the module but not in _native.pyi"
    assert sorted(top - native) == [], "in _native.pyi but not in the module"


def test_stub_lists_every_method_of_each_class():
    _, members = _stub_names()
    for name, stubbed in members.items():
        cls = getattr(_native, name)
        assert inspect.isclass(cls), name
        native = _public(n for n in dir(cls) if n in vars(cls))
        assert sorted(native - stubbed) == [], f"{name}: in the module but not in _native.pyi"
        assert sorted(stubbed - native) == [], f"{name}: in _native.pyi but not in the module"
