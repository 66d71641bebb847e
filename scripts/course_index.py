"""The course: where it lives and its notebooks in course order.

Everything that links to the course (the website's Binder buttons, the README's course
table) is made from here, so a new chapter joins by being a file in notebooks/ and a fork
changes one line of ``course.toml``:

- ``course.toml`` holds the repository's public address and branch (and, optionally, the
  website's address; by default the repository's GitHub Pages address);
- the chapters are ``notebooks/NN_name.ipynb``, in the order of NN; the other notebooks
  (the tour of the widgets) follow them, by name. A notebook's title is its first
  ``# `` heading.

    .venv/bin/python scripts/course_index.py                  # the course, as read here
    .venv/bin/python scripts/course_index.py --readme-table   # the README's course table
    .venv/bin/python scripts/course_index.py --write-readme   # ... written into README.md
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
CHAPTER = re.compile(r"(\d+)_\w+")
README_TABLE_START = ("<!-- course table: made by "
                      "`python scripts/course_index.py --write-readme` -->")
README_TABLE_END = "<!-- end of course table -->"
WORKSPACE = "my-course"  # the student's workspace, made by binder/postBuild on Binder


@dataclass(frozen=True)
class Notebook:
    path: Path  # notebooks/NN_name.ipynb
    number: int | None  # NN for a chapter, None for the other notebooks
    title: str  # its first "# " heading

    @property
    def stem(self) -> str:
        return self.path.stem

    @property
    def is_chapter(self) -> bool:
        return self.number is not None


@dataclass(frozen=True)
class Course:
    repository: str  # https://github.com/ORG/REPO
    branch: str
    site: str  # the website's address, ending in "/"
    root: Path

    def file_url(self, relative_path: str) -> str:
        """A file (or folder) of the repository, as shown by its host."""
        return f"{self.repository}/blob/{self.branch}/{relative_path}"

    def binder_url(self, notebook: Notebook) -> str:
        """Binder opening this notebook in JupyterLab (the same link as the website's):
        the student's copy in the workspace that binder/postBuild makes, without the
        answers."""
        owner_and_name = self.repository.removeprefix("https://github.com/")
        return (f"https://mybinder.org/v2/gh/{owner_and_name}/{self.branch}"
                f"?urlpath=lab/tree/{WORKSPACE}/{notebook.path.name}")

    def page_url(self, notebook: Notebook) -> str:
        """The notebook's page on the website."""
        return f"{self.site}{notebook.stem}.html"

    def notebooks(self) -> list[Notebook]:
        """Every notebook of notebooks/, in course order: the chapters by number, then the
        others by name."""
        found = []
        for path in sorted((self.root / "notebooks").glob("*.ipynb")):
            match = CHAPTER.fullmatch(path.stem)
            found.append(Notebook(path, int(match.group(1)) if match else None,
                                  notebook_title(path)))
        return sorted(found, key=lambda nb: (not nb.is_chapter, nb.number or 0, nb.stem))


def load(root: Path = ROOT) -> Course:
    with open(root / "course.toml", "rb") as file:
        settings = tomllib.load(file)["course"]
    repository = settings["repository"].rstrip("/")
    match = re.fullmatch(r"https://github\.com/([\w.-]+)/([\w.-]+)", repository)
    if match is None:
        raise ValueError(f"course.toml: repository must be https://github.com/ORG/REPO, "
                         f"not {repository!r}")
    site = settings.get("site") or f"https://{match.group(1).lower()}.github.io/{match.group(2)}/"
    return Course(repository, settings.get("branch", "main"), site.rstrip("/") + "/", root)


def notebook_title(path: Path) -> str:
    """The first level-1 heading of a notebook's markdown cells (its file name otherwise)."""
    for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
        if cell["cell_type"] == "markdown":
            for line in "".join(cell["source"]).splitlines():
                if line.startswith("# "):
                    return line[2:].strip()
    return path.stem


# The views of minigrad.widgets, as a chapter's code calls them (``show(``, not ``plt.show(``).
WIDGETS = {name: re.compile(rf"(?<![.\w]){name}\(") for name in (
    "GraphView", "BackwardStepper", "ContextInspector", "TensorView", "GradientFlow",
    "TrainingMonitor", "show")}


@dataclass(frozen=True)
class Exercises:
    written: list[str]  # what the student writes: each solution cell's first class or def
    points: float
    widgets: list[str]  # the views of minigrad.widgets the notebook uses
    questions: int = 0  # questions answered in words, graded by the teacher
    question_points: float = 0.0


def exercises(path: Path) -> Exercises:
    """What a notebook has the student write, its points and its widgets, read from its
    cells (nbgrader's metadata: solution cells and graded test cells)."""
    written, points, widgets = [], 0.0, []
    questions, question_points = 0, 0.0
    for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
        source = "".join(cell["source"])
        meta = cell["metadata"].get("nbgrader", {})
        if meta.get("solution") and cell["cell_type"] == "markdown":  # a written answer
            questions += 1
            question_points += meta.get("points", 0)
            continue
        if meta.get("solution"):
            names = (re.findall(r"^(?:class|def) (\w+)", source, re.M)
                     or re.findall(r"^(\w+) =", source, re.M) or [meta["grade_id"]])
            written.append(names[0])
        if meta.get("grade"):
            points += meta.get("points", 0)
        if cell["cell_type"] == "code":
            widgets += [name for name, call in WIDGETS.items()
                        if name not in widgets and call.search(source)]
    return Exercises(written, points, widgets, questions, question_points)


def readme_table(course: Course) -> str:
    """The README's course table: each notebook's title linked to its page on the website,
    what its exercises have the student write (and their points), the widgets it uses, then
    links to Binder and to its file."""
    rows = ["| chapter (its page on the website) | you write (points) | widgets | run it "
            "| notebook |", "| --- | --- | --- | --- | --- |"]
    for notebook in course.notebooks():
        relative = notebook.path.relative_to(course.root).as_posix()
        found = exercises(notebook.path)
        written = (", ".join(f"`{name}`" for name in found.written)
                   + f" ({found.points:g})" if found.written else "-")
        if found.questions:
            written += (f"; {found.questions} written question"
                        f"{'s' if found.questions > 1 else ''} ({found.question_points:g})")
        rows.append(f"| [{notebook.title}]({course.page_url(notebook)}) | {written} "
                    f"| {', '.join(found.widgets) or '-'} "
                    f"| [on Binder]({course.binder_url(notebook)}) "
                    f"| [`{notebook.path.name}`]({relative}) |")
    return "\n".join(rows)


def readme_with_table(readme: str, course: Course) -> str:
    """README text with the course table between its two markers replaced."""
    start, end = readme.index(README_TABLE_START), readme.index(README_TABLE_END)
    return (readme[:start + len(README_TABLE_START)] + "\n\n" + readme_table(course)
            + "\n\n" + readme[end:])


def main(arguments: list[str]) -> None:
    course = load()
    if arguments == ["--readme-table"]:
        print(readme_table(course))
    elif arguments == ["--write-readme"]:
        readme = course.root / "README.md"
        readme.write_text(readme_with_table(readme.read_text(encoding="utf-8"), course),
                          encoding="utf-8")
    elif not arguments:
        print(f"repository: {course.repository} (branch {course.branch})")
        print(f"website:    {course.site}")
        for notebook in course.notebooks():
            print(f"  {notebook.path.name}: {notebook.title}")
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
