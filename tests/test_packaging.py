"""What a user installs: the built wheel holds the engine and the Jupyter layer, and
``import minigrad.widgets`` works from it as it does from the editable install."""

from __future__ import annotations

import pathlib
import subprocess
import sys
import zipfile

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> pathlib.Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                    "--quiet", "-w", str(out), str(ROOT)], check=True, capture_output=True)
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
