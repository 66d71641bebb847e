"""What a user installs: the built wheel holds the engine and the Jupyter layer, and
``import minigrad.widgets`` works from it as it does from the editable install."""

from __future__ import annotations

import pathlib
import shutil
import subprocess
import sys
import zipfile

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> pathlib.Path:
    # built from a copy without build/: setuptools packs what an earlier build left in
    # build/lib too, which hid a package missing from pyproject.toml's list
    source = tmp_path_factory.mktemp("source") / "minigrad"
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(
        ".git", ".venv", "build", "*.egg-info", "__pycache__", "node_modules"))
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                    "--quiet", "-w", str(out), str(source)], check=True, capture_output=True)
    (path,) = out.glob("minigrad_edu-*.whl")
    return path


def test_wheel_holds_the_widgets_as_minigrad_widgets(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    for module in ("graph_view", "stepper", "inspector", "gradient_flow", "monitor", "drawing"):
        assert f"minigrad/widgets/{module}.py" in names
    assert "minigrad/data/digits.csv.gz" in names
    assert "minigrad/exercises/checks.py" in names and "minigrad/course/cli.py" in names
    assert any(name.endswith("entry_points.txt") for name in names)
    assert not any(name.startswith(("widgets/", "tests/", "bench/")) for name in names)


def test_import_minigrad_widgets_from_the_installed_wheel(wheel, tmp_path):
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--quiet",
                    "--target", str(target), str(wheel)], check=True, capture_output=True)
    code = ("import minigrad.widgets as w, minigrad as mg; "
            "print(w.__file__); x = mg.tensor([1.0, 2.0], requires_grad=True); "
            "print(w.GraphView((x * x).sum()).summary())")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            cwd=tmp_path, env={"PYTHONPATH": str(target), "PATH": ""},
                            check=True)
    where, summary = result.stdout.strip().splitlines()
    assert where.startswith(str(target / "minigrad" / "widgets"))
    assert summary == "GraphView(graph of 2 ops and 1 leaf)"


def test_editable_install_imports_minigrad_widgets_from_the_widgets_folder():
    import minigrad.widgets

    assert pathlib.Path(minigrad.widgets.__file__).parent == ROOT / "widgets"


def test_every_package_of_minigrad_is_in_the_wheel(wheel):
    # a new subpackage missing from pyproject.toml's list installs without its files
    # (the editable install hides that: it reads the source folder)
    names = zipfile.ZipFile(wheel).namelist()
    for init in sorted((ROOT / "minigrad").rglob("__init__.py")):
        package = init.parent.relative_to(ROOT).as_posix()
        if "__pycache__" not in package:
            assert f"{package}/__init__.py" in names, f"{package} is not in the wheel"
