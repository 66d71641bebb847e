"""A Sphinx extension of the course website: under a notebook page's title, a line with
its two ways to run it (launch on Binder, download the notebook), so a reader need not
find them among the header's icons. The Binder addresses come from scripts/build_site.py
(``minigrad_binder_urls``, made from course.toml)."""

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


def setup(app):
    app.add_config_value("minigrad_binder_urls", {}, "env")
    app.connect("doctree-read", add_run_line)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
