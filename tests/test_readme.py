"""The README's code runs as written (a newcomer copies it first)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)


def test_the_readme_has_python_examples():
    assert len(BLOCKS) >= 2


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_a_readme_example_runs(index, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # examples may save files
    exec(compile(BLOCKS[index], f"README.md example {index + 1}", "exec"), {})


def test_the_design_notes_table_names_every_core_file_with_about_its_length():
    """The table a student follows lists files that exist, with line counts that still
    hold (within a fifth: the files keep changing a little)."""
    rows = re.findall(r"^  \| `([\w/]+\.py)` \| .* \| (\d+) \|$", README.read_text(), flags=re.M)
    engine = README.parent / "minigrad"
    assert {"function.py", "autograd.py", "tensor_class.py"} <= {name for name, _ in rows}
    for name, lines in rows:
        actual = len((engine / name).read_text().splitlines())
        assert abs(actual - int(lines)) <= actual / 5, (name, lines, actual)
