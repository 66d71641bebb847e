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
