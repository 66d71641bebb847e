"""The feedback page a student gets (nbgrader's ``generate_feedback``), made fit to hand out.

nbgrader renders the autograded notebook as it ran, so by itself its page shows the
source of hidden tests (nbgrader issue #917), the teacher's file paths in tracebacks,
"Test cell" for every check, and loads MathJax from a CDN. Two steps fix that (and a
third makes the pages faster):

- ``StudentFeedback``, an nbconvert preprocessor that ``init`` adds to the course's
  ``GenerateFeedback.preprocessors``: in the notebook before it is rendered, the code
  between ``### BEGIN HIDDEN TESTS`` and ``### END HIDDEN TESTS`` is replaced by one
  comment line, a traceback's frames that would quote it are left out, the rubric of a
  question graded by hand (its mark scheme, which nbgrader put back into the question for
  the grader) is cut out again, and the course folder's path (and this Python's) in
  outputs is replaced by a short name.
- ``FeedbackHTML``, the exporter ``grade`` has nbgrader render the pages with: nbconvert's,
  without a second parse of the whole page.
- ``tidy(page, exercise_of)``, on the HTML nbgrader wrote (``grade`` calls it through
  ``teacher._write_notes``): each check is named after its exercise, and the MathJax
  script from the CDN is removed, so the page works offline and its TeX stays readable
  as written (``$x^2$``).
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

from nbconvert.exporters import HTMLExporter
from nbconvert.preprocessors import Preprocessor
from traitlets import Bool, List, Unicode

from .authoring import HIDDEN_MARKERS, MARK_SCHEME_MARKERS, without_mark_scheme

HIDDEN_NOTE = "# (more checks here, hidden: they run when your work is graded)"
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def without_hidden_tests(source: str) -> str:
    """``source`` with each hidden-test region replaced by ``HIDDEN_NOTE``."""
    kept, hidden = [], False
    for line in source.split("\n"):
        if HIDDEN_MARKERS[0] in line:
            hidden = True
            kept.append(line[:len(line) - len(line.lstrip())] + HIDDEN_NOTE)
        elif HIDDEN_MARKERS[1] in line:
            hidden = False
        elif not hidden:
            kept.append(line)
    return "\n".join(kept)


class StudentFeedback(Preprocessor):
    """Hide hidden tests, rubrics and the teacher's paths in the notebook a feedback page
    shows."""

    enabled = Bool(True).tag(config=True)  # nbconvert's preprocessors are off by default
    course_root = Unicode("", help="the course folder, shown to students as 'course'"
                          ).tag(config=True)
    private_paths = List(Unicode(), help="more folders whose paths are not shown").tag(
        config=True)

    def _replacements(self) -> list[tuple[str, str]]:
        import minigrad

        root = self.course_root or os.getcwd()
        # minigrad's own files keep their names from the package on (minigrad/...)
        pairs = [(root, "course"), (str(Path(minigrad.__file__).resolve().parents[1]) + os.sep,
                                    ""), (sys.prefix, "python"), (str(Path.home()), "~")]
        pairs += [(path, "...") for path in self.private_paths]
        return sorted(((path, name) for path, name in pairs if len(path) > 1),
                      key=lambda pair: -len(pair[0]))

    def _hide_paths(self, text: str) -> str:
        for path, name in self._replacements():
            text = text.replace(path, name)
        return text

    def preprocess_cell(self, cell, resources, index):
        if MARK_SCHEME_MARKERS[0] in cell.source:
            cell.source = without_mark_scheme(cell.source)
        hidden = cell.cell_type == "code" and HIDDEN_MARKERS[0] in cell.source
        if hidden:
            cell.source = without_hidden_tests(cell.source)
        for output in cell.get("outputs", []):
            if output.output_type == "stream":
                output.text = self._hide_paths(output.text)
            elif output.output_type == "error":
                frames = output.traceback
                if hidden:  # a frame in the cell itself quotes the hidden lines
                    frames = [f if not ANSI.sub("", f).lstrip().startswith(("Cell In",
                                                                            "Input In"))
                              else "(in the hidden checks)" for f in frames]
                output.traceback = [self._hide_paths(f) for f in frames]
                output.evalue = self._hide_paths(output.evalue)
        return cell, resources


MATHJAX = re.compile(r"<!-- Load mathjax -->.*?<!-- End of mathjax configuration -->\s*",
                     re.S)
TOC_ENTRY = re.compile(r'<a href="#(?P<cell>[^"]+)">Test cell</a>')
HEADING = re.compile(r'Grade cell: <code>(?P<cell>[^<]+)</code>')


def tidy(page: str, exercise_of: dict[str, str]) -> str:
    """The HTML page with each test cell named after its exercise (``exercise_of``:
    ``{test cell: exercise}``) and without MathJax from the CDN."""
    def name(cell: str) -> str:
        return exercise_of.get(cell, cell)

    page = MATHJAX.sub("", page)
    page = TOC_ENTRY.sub(lambda m: f'<a href="#{m["cell"]}">Exercise <code>{name(m["cell"])}'
                         '</code>: checks</a>', page)
    return HEADING.sub(lambda m: f'Checks of exercise <code>{name(m["cell"])}</code>', page)


IMAGE_WITHOUT_ALT = re.compile(r"<img(?![^>]*\salt=)", re.I)


class FeedbackHTML(HTMLExporter):
    """nbconvert's HTML exporter without its last step, which parses the whole page again
    with BeautifulSoup (half the time of a feedback page) to give images a missing alt
    text and JupyterLab's cells a tab stop; nbgrader's feedback template has no
    JupyterLab cells, and the alt text is added here by a pattern. ``scoring.py`` makes
    it the exporter of ``generate_feedback``."""

    def from_notebook_node(self, nb, resources=None, **kw):
        from nbconvert.exporters.templateexporter import TemplateExporter
        from nbconvert.filters.highlight import Highlight2HTML
        from nbconvert.filters.widgetsdatatypefilter import WidgetsDataTypeFilter

        # as HTMLExporter.from_notebook_node (nbconvert 7), up to the BeautifulSoup step
        langinfo = nb.metadata.get("language_info", {})
        lexer = langinfo.get("pygments_lexer", langinfo.get("name", None))
        self.register_filter("highlight_code", self.filters.get(
            "highlight_code", Highlight2HTML(pygments_lexer=lexer, parent=self)))
        resources = self._init_resources(resources)
        self.register_filter("filter_data_type", WidgetsDataTypeFilter(
            notebook_metadata=self._nb_metadata, parent=self, resources=resources))
        page, resources = TemplateExporter.from_notebook_node(self, nb, resources, **kw)
        return IMAGE_WITHOUT_ALT.sub(
            '<img alt="No description has been provided for this image"', page), resources
