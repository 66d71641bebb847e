"""The instructor guide (docs/teaching.md) says what the notebooks hold.

Its chapter table and per-chapter blocks are made by ``scripts/teaching_guide.py
--write``; these tests check them against the notebooks read here on their own (nbgrader's
metadata, the markdown cells' words), re-execute the chapter with the shortest recorded
run time to check that its CPU time still holds (within a factor of 3: another machine or
another load moves it by less, while the time on the clock moved by up to 4 under load),
and check the hand-written parts every chapter needs (objectives, a discussion question),
the README's link and the website's page.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import build_site  # noqa: E402
import course_index  # noqa: E402
import teaching_guide  # noqa: E402

GUIDE = (ROOT / "docs" / "teaching.md").read_text(encoding="utf-8")
COURSE = course_index.load()
CHAPTERS = [nb for nb in COURSE.notebooks() if nb.is_chapter]
RUN_TIME_FACTOR = 3


def table_rows() -> dict[int, list[str]]:
    """The guide's chapter table: {chapter number: its cells}."""
    table = GUIDE[GUIDE.index(teaching_guide.TABLE_START):GUIDE.index(teaching_guide.TABLE_END)]
    rows = {}
    for line in table.splitlines():
        if match := re.match(r"\| \[(\d+): ", line):
            rows[int(match.group(1))] = [cell.strip() for cell in line.strip("|").split(" | ")]
    return rows


def chapter_section(number: int) -> str:
    """The text of the guide's section for a chapter (up to the next heading)."""
    match = re.search(rf"^### Chapter {number}: .*?(?=^##|\Z)", GUIDE, flags=re.M | re.S)
    assert match, f"docs/teaching.md has no section '### Chapter {number}: ...'"
    return match.group(0)


def test_the_generated_parts_are_up_to_date():
    made = teaching_guide.guide_with_tables(GUIDE, teaching_guide.chapters(),
                                            teaching_guide.recorded_times())
    assert made == GUIDE, ("docs/teaching.md's tables differ from the notebooks: run "
                           "python scripts/teaching_guide.py --write")


@pytest.mark.parametrize("notebook", CHAPTERS, ids=lambda nb: nb.stem)
def test_the_table_has_the_chapters_exercises_points_and_words(notebook):
    cells = json.loads(notebook.path.read_text(encoding="utf-8"))["cells"]
    solutions = [c["metadata"]["nbgrader"]["grade_id"] for c in cells
                 if c["metadata"].get("nbgrader", {}).get("solution")
                 and not c["metadata"]["nbgrader"].get("grade")]  # a written answer is both
    points = sum(c["metadata"]["nbgrader"].get("points", 0) for c in cells
                 if c["metadata"].get("nbgrader", {}).get("grade")
                 and c["cell_type"] == "code")
    words = sum(len("".join(c["source"]).split()) for c in cells
                if c["cell_type"] == "markdown")
    row = table_rows()[notebook.number]
    exercises, _written, guide_words, code_cells, run, _work = row[1:]
    assert re.findall(r"`([^`]+)`", exercises) == solutions
    assert exercises.endswith(f"({points:g})")
    assert int(guide_words) == words
    assert int(code_cells) == sum(c["cell_type"] == "code" for c in cells)
    assert re.fullmatch(r"\d+(\.\d+)? s", run), f"chapter {notebook.number}: {run}"


def test_written_questions_are_read_from_their_tags_and_are_not_code_exercises(tmp_path):
    """A chapter with a written question (cells tagged question:ID and answer:ID:POINTS,
    the answer carrying nbgrader's metadata for a manually graded cell) lists it with its
    points, apart from the code exercises."""
    chapter_1 = json.loads(CHAPTERS[1].path.read_text(encoding="utf-8"))
    # (without the written questions chapter 1 has: the one added below is the only one)
    notebook = dict(chapter_1, cells=[c for c in chapter_1["cells"] if not any(
        t.startswith(("question:", "answer:")) for t in c["metadata"].get("tags", []))])
    plain = tmp_path / "plain" / CHAPTERS[1].path.name
    plain.parent.mkdir()
    plain.write_text(json.dumps(notebook), encoding="utf-8")
    answer_meta = {"grade": True, "solution": True, "locked": False, "points": 2,
                   "grade_id": "why-sum", "schema_version": 3, "task": False}
    notebook["cells"][3:3] = [
        {"cell_type": "markdown", "metadata": {"tags": ["question:why-sum"]},
         "source": "Why does the gradient of a broadcast input need a sum?"},
        {"cell_type": "markdown", "metadata": {"tags": ["answer:why-sum:2"],
                                               "nbgrader": answer_meta},
         "source": "YOUR ANSWER HERE"}]
    path = tmp_path / CHAPTERS[1].path.name
    path.write_text(json.dumps(notebook), encoding="utf-8")
    chapter = teaching_guide.read_chapter(course_index.Notebook(path, 1, CHAPTERS[1].title))
    before = teaching_guide.read_chapter(course_index.Notebook(plain, 1, CHAPTERS[1].title))
    assert chapter.written == {"why-sum": 2}
    assert chapter.exercises == before.exercises  # the answer is not a code exercise
    row = teaching_guide.chapter_table([chapter], {"chapters": {}}).splitlines()[2]
    assert "| `why-sum` 2 (2) |" in row
    assert "`why-sum` (2)" in teaching_guide.chapter_block(chapter, {"chapters": {}})
    added_words = 11 + 3  # the question's words and the answer cell's
    assert chapter.words == before.words + added_words
    assert chapter.working_minutes() == pytest.approx(
        before.working_minutes() + added_words / teaching_guide.READING_WORDS_PER_MINUTE
        + 2 * teaching_guide.MINUTES_PER_WRITTEN_POINT)


def test_the_shortest_chapter_still_runs_in_its_recorded_time():
    """Re-execute the chapter with the shortest recorded run time (a few seconds) as
    --measure did; its CPU time may differ from the record (another machine, another
    load), but not by a factor of more than 3."""
    times = teaching_guide.recorded_times()["chapters"]
    stem = min(times, key=lambda s: times[s]["cpu_seconds"])
    recorded = times[stem]["cpu_seconds"]
    measured = teaching_guide.run_time(ROOT / "notebooks" / f"{stem}.ipynb").cpu_seconds
    assert recorded / RUN_TIME_FACTOR <= measured <= recorded * RUN_TIME_FACTOR, (
        f"{stem} ran in {measured:.1f} s of CPU, recorded {recorded} s: measure again with "
        "python scripts/teaching_guide.py --measure, then --write")


def test_every_chapter_has_a_run_time_recorded():
    times = teaching_guide.recorded_times()["chapters"]
    assert sorted(times) == sorted(nb.stem for nb in CHAPTERS)


@pytest.mark.parametrize("notebook", CHAPTERS, ids=lambda nb: nb.stem)
def test_every_chapter_has_objectives_and_discussion_questions(notebook):
    section = chapter_section(notebook.number)
    objectives = re.search(r"\*\*Learning objectives\.\*\*.*?\n\n((?:- .*\n(?:  .*\n)*)+)",
                           section)
    assert objectives, f"chapter {notebook.number}: no list of learning objectives"
    assert 3 <= objectives.group(1).count("\n- ") + 1 <= 5
    discussion = re.search(r"\*\*Discussion questions\.\*\*\n\n((?:- .*\n(?:  .*\n)*)+)",
                           section + "\n")
    assert discussion and "?" in discussion.group(1), (
        f"chapter {notebook.number}: no discussion question")
    assert f"<!-- chapter {notebook.number:02d}: made by" in section


def test_every_command_the_guide_names_is_one_the_course_command_takes():
    """Each `minigrad-course ...` in the guide parses with the command's own parser (a
    renamed option or command fails here, not in a teacher's term)."""
    import shlex

    from minigrad.course import cli

    commands = re.findall(r"`minigrad-course ([^`]+)`", GUIDE)
    assert {"init", "release", "collect", "grade", "feedback", "solutions", "report",
            "export"} <= {command.split()[0] for command in commands}
    for command in commands:
        try:
            cli.parser().parse_args(shlex.split(command))
        except SystemExit:
            pytest.fail(f"the guide's `minigrad-course {command}` does not parse")


def test_the_readme_links_the_guide_from_for_teachers():
    _opening, sections = build_site.split_sections((ROOT / "README.md").read_text())
    teachers = next(text for title, text in sections.items()
                    if title.startswith("For teachers"))
    assert "](docs/teaching.md)" in teachers


def test_the_guide_is_a_page_of_the_website_after_for_teachers(tmp_path):
    """The website's book (assembled, not built: tests/test_site.py builds it) has the
    guide as a page after "For teachers", and the README's link leads to it."""
    book = build_site.Book(COURSE, tmp_path)
    book.add_readme_pages()
    names = [name for name, _, _ in book.pages]
    assert names.index("teaching") == names.index("for-teachers") + 1
    page = (tmp_path / "teaching.md").read_text(encoding="utf-8")
    assert page.startswith("# Teaching with minigrad")
    assert "](for-teachers.md)" in page  # the guide's links into the README, to its pages
    assert "](teaching.md)" in (tmp_path / "for-teachers.md").read_text(encoding="utf-8")
