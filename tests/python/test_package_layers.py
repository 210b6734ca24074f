"""The Python package's layers, checked on the source (no import needed).

Each module belongs to one layer; it may import modules of its own layer and the layers below, at the top of
the file or inside a function alike. Bottom to top:

- core: the native module, the generated protocol buffers (``core``) and their face ``protos``;
- base: ``framework`` (graphs, tensors, dtypes, errors, meta graphs) and ``platform`` (files, TFRecords,
  flags, logging), which use each other but nothing above;
- ops: the op wrappers (``ops``);
- library: what is built from ops, such as sessions (``client``), training, summaries, input pipelines,
  layers, feature columns, SavedModel, tf.lite, distribution;
- faces: the public namespaces (the package root and its modules such as ``nn``, ``train``, ``compat``),
  which only re-export;
- programs: what runs on top of the public API (the ``ferroflow`` command, its demo and tools).

Nothing below the faces imports a face: internal modules import the module that defines a name.
"""

from __future__ import annotations

import ast
import pathlib

import pytest

PACKAGE = pathlib.Path(__file__).resolve().parents[2] / "python" / "ferroflow"

CORE, BASE, OPS, LIBRARY, FACES, PROGRAMS = range(6)
LAYER_NAMES = ("core", "base", "ops", "library", "faces", "programs")

# The longest matching prefix decides a module's layer; anything unlisted is a face.
LAYER_OF_PREFIX = {
    "ferroflow._native": CORE,
    "ferroflow.core": CORE,
    "ferroflow.protos": CORE,
    "ferroflow.framework": BASE,
    # TestCase runs sessions: TF keeps it in framework/test_util.py, but here it is a library module.
    "ferroflow.framework.test_util": LIBRARY,
    "ferroflow.platform": BASE,
    "ferroflow.ops": OPS,
    "ferroflow.client": LIBRARY,
    "ferroflow.eager": LIBRARY,
    "ferroflow.module": LIBRARY,
    "ferroflow.training": LIBRARY,
    "ferroflow.summary.summary_ops": LIBRARY,
    "ferroflow.summary.writer": LIBRARY,
    "ferroflow.data.dataset_ops": LIBRARY,
    "ferroflow.data.iterator_ops": LIBRARY,
    "ferroflow.data.readers": LIBRARY,
    "ferroflow.data._structure": LIBRARY,
    "ferroflow.data.experimental": LIBRARY,
    "ferroflow.data._windowing": LIBRARY,
    "ferroflow.layers": LIBRARY,
    "ferroflow.feature_column": LIBRARY,
    "ferroflow.saved_model": LIBRARY,
    "ferroflow.lite": LIBRARY,
    "ferroflow.distribute": LIBRARY,
    "ferroflow.estimator": LIBRARY,
    "ferroflow.keras": LIBRARY,
    "ferroflow.test_util": LIBRARY,
    "ferroflow.signal": LIBRARY,
    "ferroflow.cli": PROGRAMS,
    "ferroflow.__main__": PROGRAMS,
    "ferroflow.demo": PROGRAMS,
    "ferroflow.datasets": PROGRAMS,
    "ferroflow.tools": PROGRAMS,
}

# Faces that are packages of their own: their __init__ re-exports the library modules beside it.
FACE_PACKAGES = ("ferroflow.layers", "ferroflow.feature_column", "ferroflow.saved_model", "ferroflow.lite",
                 "ferroflow.distribute", "ferroflow.signal", "ferroflow.estimator", "ferroflow.keras")


def _module_name(path):
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    is_package = parts[-1] == "__init__"
    if is_package:
        parts = parts[:-1]
    return ".".join(parts), is_package


def layer_of(module):
    if module in FACE_PACKAGES:
        return FACES
    best, layer = "", FACES
    for prefix, candidate in LAYER_OF_PREFIX.items():
        if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > len(best):
            best, layer = prefix, candidate
    return layer


def _is_module(name):
    path = PACKAGE.parent / name.replace(".", "/")
    # ``.pyi``: the native extension module has only its stub in the source tree.
    return any(path.with_suffix(ext).exists() for ext in (".py", ".pyi")) or (path / "__init__.py").exists()


def _imported_modules(tree, module, is_package):
    """(line, imported module) for every import of a ferroflow module, wherever it appears in the file.

    ``from package import submodule`` counts as importing the submodule (the package's ``__init__`` runs
    too, but a face package's ``__init__`` importing its own library modules is no cycle); ``from module
    import name`` as importing the module that holds the name.
    """
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".")
                if not is_package:
                    base = base[:-1]
                base = base[: len(base) - (node.level - 1)]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            for alias in node.names:
                candidate = f"{source}.{alias.name}"
                yield node.lineno, candidate if _is_module(candidate) else source


def _all_modules():
    for path in sorted(PACKAGE.rglob("*.py")):
        if "_pb2" in path.name:
            continue
        yield path


def upward_imports():
    found = []
    for path in _all_modules():
        module, is_package = _module_name(path)
        own = layer_of(module)
        tree = ast.parse(path.read_text(), str(path))
        for line, target in _imported_modules(tree, module, is_package):
            if not (target == "ferroflow" or target.startswith("ferroflow.")):
                continue
            if layer_of(target) > own:
                rel = path.relative_to(PACKAGE.parent)
                found.append(f"{rel}:{line}: {module} ({LAYER_NAMES[own]}) imports {target} "
                             f"({LAYER_NAMES[layer_of(target)]})")
    return found


def test_no_module_imports_a_layer_above_its_own():
    assert upward_imports() == []


@pytest.mark.parametrize("module, layer", [
    ("ferroflow.framework.ops", BASE), ("ferroflow.platform.gfile", BASE), ("ferroflow.ops.math_ops", OPS),
    ("ferroflow.training.saver", LIBRARY), ("ferroflow.summary", FACES), ("ferroflow.train", FACES),
    ("ferroflow.layers", FACES), ("ferroflow.layers.core", LIBRARY), ("ferroflow", FACES),
])
def test_layer_table(module, layer):
    assert layer_of(module) == layer


def test_the_check_sees_an_upward_import(tmp_path):
    tree = ast.parse("def f():\n    from ferroflow.training import saver\n")
    targets = [t for _, t in _imported_modules(tree, "ferroflow.ops.variables", False)]
    assert "ferroflow.training.saver" in targets
    assert max(layer_of(t) for t in targets) > layer_of("ferroflow.ops.variables")


def definitions_in_faces():
    """Functions and classes defined at the top of a face module (a module ``__getattr__`` excepted)."""
    found = []
    for path in _all_modules():
        module, _ = _module_name(path)
        if layer_of(module) != FACES:
            continue
        for node in ast.parse(path.read_text(), str(path)).body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name != "__getattr__":
                found.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno}: {module} defines {node.name}")
    return found


def test_faces_only_re_export():
    assert definitions_in_faces() == []


def test_top_level_imports_form_no_cycle():
    """Module-level imports alone never loop, so the package loads in one order whatever is imported first."""
    graph = {}
    for path in _all_modules():
        module, is_package = _module_name(path)
        tree = ast.parse(path.read_text(), str(path))
        top = ast.Module(body=[n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))], type_ignores=[])
        graph[module] = {t for _, t in _imported_modules(top, module, is_package)
                         if t.startswith("ferroflow") and t != module}
    done, active, cycles = set(), [], []

    def visit(module):
        if module in done or module in active:
            if module in active:
                cycles.append(active[active.index(module):] + [module])
            return
        active.append(module)
        for target in sorted(graph.get(module, ())):
            visit(target)
        active.pop()
        done.add(module)

    for module in sorted(graph):
        visit(module)
    assert cycles == []
