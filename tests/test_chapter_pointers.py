"""Every file and every name that a chapter's "Where this lives in minigrad" section
points at exists: the file in the repository, the name defined in one of the files its
table row (or list item) names.

A section runs from its heading to the end of its markdown cell. In a table, only the
columns about minigrad are read (headed "minigrad", "where", "file", ...; not "yours",
"PyTorch", "what" or "tensor method"), plus a file named in a column's header. A name is a
backticked identifier (``Sum``, ``Tensor.std``, ``F.relu``; NumPy's and PyTorch's are
not read); it is defined in a file when the file assigns it (an attribute too), takes it
as a parameter or defines it as a function, a class or a method, at any depth. A
file name without a folder (``rmsprop.py``) is in the folder of the file before it.
"""

from __future__ import annotations

import ast
import functools
import json
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
CHAPTERS = sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))
HEADING = re.compile(r"^#+ Where this lives", re.MULTILINE)
TICKED = re.compile(r"`([^`]+)`")
NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")
ALIASES = {"F", "nn", "mg", "optim", "init"}  # minigrad's module aliases, not names
OTHERS = ("np.", "torch.", "minigrad.")  # NumPy's and PyTorch's names, module names
NOT_MINIGRAD = ("yours", "pytorch", "what", "tensor method", "operation", "in this chapter")


def _is_file(token: str) -> bool:
    return token.endswith((".py", "/")) and " " not in token


def _section(notebook: pathlib.Path) -> str:
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    for cell in cells:
        text = "".join(cell["source"])
        if cell["cell_type"] == "markdown" and (found := HEADING.search(text)):
            return text[found.start():].split("\nNext:")[0]
    return ""


def _minigrad_columns(header: list[str]) -> list[int]:
    return [i for i, title in enumerate(header)
            if not any(title.lower().strip().startswith(word) for word in NOT_MINIGRAD)]


def _units(section: str) -> list[tuple[str, list[str]]]:
    """``(where, text)`` of each table row (its minigrad columns, plus files named in
    their headers) and each list item."""
    units, header, files_in_header, columns = [], None, [], []
    for line in section.splitlines():
        if line.startswith("|"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if header is None:
                header = cells
                columns = _minigrad_columns(cells)
                files_in_header = [t for i in columns for t in TICKED.findall(cells[i])
                                   if _is_file(t)]
            elif not set("".join(cells)) <= set("-: "):
                text = " ".join(cells[i] for i in columns if i < len(cells))
                units.append((line, text, files_in_header))
        else:
            header = None
            if line.lstrip().startswith("- "):
                units.append((line, line, []))
            elif units and line.startswith("  ") and not units[-1][0].startswith("|"):
                where, text, extra = units[-1]  # a list item's continuation line
                units[-1] = (where, text + " " + line, extra)
    return [(where, [*files, *TICKED.findall(text)]) for where, text, files in units]


def pointers() -> list[tuple[str, str, list[str], list[str]]]:
    """``(chapter, where, files, names)`` for every row and item that names a file."""
    found = []
    for notebook in CHAPTERS:
        for where, tokens in _units(_section(notebook)):
            files, names, folder = [], [], None
            for token in tokens:
                if _is_file(token):
                    path = token if "/" in token else f"{folder}/{token}" if folder else token
                    folder = path.rstrip("/").rsplit("/", 1)[0] if "/" in path else folder
                    if path.endswith("/"):
                        folder = path.rstrip("/")
                    files.append(path)
                elif NAME.match(token) and not token.startswith(OTHERS):
                    names.append(token)
            if files:
                found.append((notebook.stem, where.strip(), files, names))
    return found


@functools.cache
def _defined(path: pathlib.Path) -> frozenset[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.arg):  # an option, such as Adam's amsgrad
            names.add(node.arg)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
            names |= {n.attr for t in targets for n in ast.walk(t)
                      if isinstance(n, ast.Attribute)}
    return frozenset(names)


def _parts(name: str) -> list[str]:
    parts = name.split(".")
    return parts[1:] if parts[0] in ALIASES else parts


CASES = pointers()


def test_every_chapter_with_a_where_section_is_read():
    read = {chapter for chapter, *_ in CASES}
    with_section = {p.stem for p in CHAPTERS if _section(p)}
    assert with_section == read
    assert len(with_section) >= 14


@pytest.mark.parametrize("chapter, where, files, names", CASES,
                         ids=[f"{c}:{i}" for i, (c, *_) in enumerate(CASES)])
def test_the_files_and_names_a_chapter_points_at_exist(chapter, where, files, names):
    missing = [f for f in files if not (ROOT / f).exists()]
    assert not missing, f"{chapter}: {where!r} names files that do not exist: {missing}"
    sources = [p for f in files for p in ([ROOT / f] if f.endswith(".py")
                                          else sorted((ROOT / f).rglob("*.py")))]
    defined = frozenset().union(*(_defined(p) for p in sources))
    unknown = [n for n in names if not all(part in defined for part in _parts(n))]
    assert not unknown, (f"{chapter}: {where!r} names {unknown}, defined in none of "
                         f"{files}")
