"""A Sphinx extension of the course website (loaded by scripts/build_site.py):

- under a notebook page's title, a line with its two ways to run it (launch on Binder,
  download the notebook), so a reader need not find them among the header's icons; the
  Binder addresses come from course.toml, through ``minigrad_binder_urls``;
- exercise cells (nbgrader metadata) are marked: the cell the student writes (its
  solution folded, to try first), and the cell that checks it (with its points).
"""

from __future__ import annotations

from html import escape

from docutils import nodes


def add_run_line(app, doctree):
    docname = app.env.docname
    binder = app.config.minigrad_binder_urls.get(docname)
    section = next(iter(doctree.findall(nodes.section)), None)
    if binder is None or section is None or not section.children:
        return
    html = (f'<p class="mg-run">Run this notebook: '
            f'<a class="mg-binder" href="{escape(binder)}">launch it on Binder</a> '
            f'(JupyterLab in your browser, nothing to install), or '
            f'<a class="mg-download" href="_sources/{escape(docname)}.ipynb" '
            f'download="{escape(docname)}.ipynb">download it</a>.</p>')
    section.insert(1, nodes.raw("", html, format="html"))  # right after the title


def mark_exercise_cells(app, doctree):
    """An exercise cell (nbgrader's "solution") gets a label and its code folded, so a
    reader can try it first; the cell that checks it gets a label with its points."""
    cells = [cell for cell in doctree.findall(nodes.container)
             if cell.get("nb_element") == "cell_code"
             and (cell.get("cell_metadata") or {}).get("nbgrader")]
    for cell in cells:
        grading = cell["cell_metadata"]["nbgrader"]
        if grading.get("solution"):
            kind = "mg-solution"
            label = "Exercise: try it yourself first; the cell, solved, is folded here"
            cell["hide_mode"] = "input"  # myst-nb folds it behind these two prompts
            cell["prompt_show"], cell["prompt_hide"] = "Show the solution", "Hide the solution"
        elif grading.get("grade"):
            points = grading.get("points")
            kind = "mg-check"
            label = "Checks your code" + (
                f" ({points} point{'' if float(points) == 1 else 's'})" if points else "")
        else:
            continue
        box = nodes.container(classes=["mg-exercise", kind])
        cell.replace_self(box)
        box += nodes.raw("", f'<p class="mg-cell-label">{escape(label)}</p>', format="html")
        box += cell


def setup(app):
    app.add_config_value("minigrad_binder_urls", {}, "env")
    app.connect("doctree-read", add_run_line)
    app.connect("doctree-read", mark_exercise_cells)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
