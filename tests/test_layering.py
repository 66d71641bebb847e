"""The engine needs only NumPy; the Jupyter layer depends on it, never the reverse."""

from __future__ import annotations

import ast
import pathlib
import subprocess
import sys

ENGINE = pathlib.Path(__file__).resolve().parents[1] / "minigrad"
JUPYTER_ONLY = {"ipywidgets", "matplotlib", "graphviz", "grandalf", "IPython", "widgets",
                "tqdm", "torch", "anywidget", "traitlets"}


def imported_modules(path: pathlib.Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def test_no_engine_module_imports_the_jupyter_layer():
    offenders = {
        str(path.relative_to(ENGINE)): sorted(imported_modules(path) & JUPYTER_ONLY)
        for path in ENGINE.rglob("*.py")
    }
    assert {k: v for k, v in offenders.items() if v} == {}


def test_engine_imports_only_numpy_and_the_standard_library():
    third_party = set()
    for path in ENGINE.rglob("*.py"):
        for name in imported_modules(path):
            if name not in sys.stdlib_module_names and name not in {"numpy", "minigrad"}:
                third_party.add(name)
    assert third_party == set()


def test_importing_minigrad_loads_no_jupyter_module():
    code = ("import sys, minigrad; "
            f"print(sorted(m for m in sys.modules if m.split('.')[0] in {JUPYTER_ONLY!r}))")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True).stdout.strip()
    assert loaded == "[]"


def test_widgets_package_is_importable_as_minigrad_widgets():
    import minigrad.widgets

    assert pathlib.Path(minigrad.widgets.__file__).parent.name == "widgets"


# --- arrows one way -----------------------------------------------------------------------

ROOT = ENGINE.parent
WIDGETS = ROOT / "widgets"


def module_name(path: pathlib.Path) -> str:
    """``minigrad.ops.reduce`` for minigrad/ops/reduce.py; widgets/ is ``minigrad.widgets``."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[0] == "widgets":
        parts = ["minigrad"] + parts
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def source_files() -> dict[str, pathlib.Path]:
    paths = list(ENGINE.rglob("*.py")) + list(WIDGETS.glob("*.py"))
    return {module_name(path): path for path in paths}


def imports_of(name: str, path: pathlib.Path, modules: set[str]) -> set[str]:
    """The minigrad modules ``name`` imports, anywhere in it (also inside functions)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([node.module] if node.module else []))
            # "from . import autograd" imports the module minigrad.autograd
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base
                       for alias in node.names]
        else:
            continue
        found |= {t for t in targets if t in modules and t != name}
    return found


def import_graph() -> dict[str, set[str]]:
    files = source_files()
    return {name: imports_of(name, path, set(files)) for name, path in files.items()}


def test_no_two_modules_import_each_other():
    graph = import_graph()
    pairs = sorted({tuple(sorted((a, b))) for a, targets in graph.items() for b in targets
                    if a in graph.get(b, ())})
    assert pairs == []


CORE = ["function", "forward", "autograd", "gradients", "hooks", "reuse", "graph",
        "lazy_mode", "versions", "messages", "state", "errors", "tensor_class"]


def test_the_engine_core_imports_tensor_nowhere():
    """tensor.py imports the engine; the engine reaches Tensor one way (tensor_class)."""
    graph = import_graph()
    assert {m for m in CORE if "minigrad.tensor" in graph[f"minigrad.{m}"]} == set()


def test_the_engine_core_imports_at_the_top_of_its_modules_only():
    """No import inside a function or under ``if TYPE_CHECKING:``: a module's imports are
    the arrows the other tests check, all of them in one place."""
    late = []
    for name in CORE:
        tree = ast.parse((ENGINE / f"{name}.py").read_text())
        top = {id(node) for node in tree.body}
        late += [f"{name}.py:{node.lineno}" for node in ast.walk(tree)
                 if isinstance(node, (ast.Import, ast.ImportFrom)) and id(node) not in top]
    assert late == []


def test_tensor_class_is_handed_over_once_by_tensor_py_and_imports_nothing():
    registrations = []
    for path in ENGINE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and node.func.attr == "register" and isinstance(node.func.value, ast.Name) \
                    and node.func.value.id == "tensor_class":
                registrations.append(str(path.relative_to(ENGINE)))
    assert registrations == ["tensor.py"]
    tree = ast.parse((ENGINE / "tensor_class.py").read_text())
    assert not [n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))]


def test_the_engine_core_reads_the_tensor_class_only_as_tensor_class_tensor():
    """``from .tensor_class import Tensor`` would keep the placeholder; a bare ``Tensor``
    is allowed only in a function that binds it ``Tensor = tensor_class.Tensor`` (apply
    does, to look the class up once per op)."""
    offenders = []
    for name in [m for m in CORE if m != "tensor_class"]:  # (which defines the name)
        tree = ast.parse((ENGINE / f"{name}.py").read_text())
        offenders += [f"{name}.py:{n.lineno}: from tensor_class import" for n in ast.walk(tree)
                      if isinstance(n, ast.ImportFrom) and (n.module or "") == "tensor_class"]
        bare = {n for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id == "Tensor"}
        for function in ast.walk(tree):
            if isinstance(function, ast.FunctionDef) and any(
                    isinstance(n, ast.Assign) and ast.unparse(n) == "Tensor = tensor_class.Tensor"
                    for n in function.body):
                bare -= set(ast.walk(function))
        offenders += [f"{name}.py:{n.lineno}: Tensor" for n in bare]
    assert offenders == []


def test_the_tensor_class_the_engine_reads_is_minigrads_tensor():
    import minigrad
    from minigrad import tensor_class

    assert tensor_class.Tensor is minigrad.Tensor
    assert type(minigrad.tensor([1.0]).exp()) is minigrad.Tensor


# --- the widgets use the engine's public surface only ------------------------------------------


def engine_private_names() -> set[str]:
    """Every ``_name`` the engine defines: functions, classes, attributes, slots."""
    names = set()
    for path in ENGINE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, ast.Attribute):
                names.add(node.attr)
            elif isinstance(node, ast.Name):
                names.add(node.id)
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                names.add(node.value)  # __slots__ entries
    return {n for n in names if n.startswith("_") and not n.endswith("_")}


def test_widgets_use_no_private_engine_name():
    private = engine_private_names()
    uses = []
    for path in WIDGETS.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("minigrad"):
                uses += [f"{path.name}: import {a.name}" for a in node.names
                         if a.name.startswith("_")]
            elif isinstance(node, ast.Attribute) and node.attr in private and not (
                    isinstance(node.value, ast.Name) and node.value.id in {"self", "cls"}):
                uses.append(f"{path.name}:{node.lineno}: .{node.attr}")
    assert uses == []
