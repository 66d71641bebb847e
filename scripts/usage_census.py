"""A census of the PyTorch names that public teaching code uses, and which minigrad has.

    .venv/bin/python scripts/usage_census.py --scan      # read the programs (needs the
                                                         # mirrors below and PyTorch)
    .venv/bin/python scripts/usage_census.py --write     # re-resolve every name against
                                                         # minigrad; rewrite the files
    .venv/bin/python scripts/usage_census.py             # say whether the files are stale

A *program* is one file of teaching code that imports torch: a script, a notebook (its code
cells) or a d2l chapter (its PyTorch code blocks). Each program is parsed with ``ast`` and
every name it uses is written down once per program:

- ``torch.nn.Linear``: a name reached from ``torch`` (through any ``import ... as``);
- ``import torch.nn.parallel``: a module path that an import statement needs;
- ``torch.nn.Linear(bias=)``: a keyword argument in a call to such a name;
- ``torch.nn.Linear(5 positional)``: a call with that many positional arguments;
- ``Tensor.view`` / ``Tensor.sum(keepdim=)``: a method or attribute of a tensor (any
  ``x.name`` whose name is one of ``torch.Tensor``'s and not a ``str``/``list``/``dict``
  method, so the count is an upper bound), ``Module.parameters`` likewise for modules;
- a few call forms that only a call shows (``torch.Tensor(2, 3)`` as a shape, the
  deprecated ``add_(alpha, other)``, ``.type(torch.FloatTensor)``, ``~`` on a comparison).

Only the counts are kept (``docs/census/pytorch_usage.json``: the programs with their
repository and commit, and for each name the programs that use it), never their code. The
support of each name is decided here, without network, by resolving it on minigrad (and,
for a call form, by calling it), so ``tests/test_usage_census.py`` re-checks the table.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import io
import json
import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "docs" / "census" / "pytorch_usage.json"
TABLE = ROOT / "docs" / "census" / "README.md"
COVERAGE = ROOT / "docs" / "pytorch_coverage.md"
README = ROOT / "README.md"
BEGIN, END = "<!-- census: begin -->", "<!-- census: end -->"
MIRRORS = Path("/work/.mirror")

# (repository, files to read, what it is); a file is a program if it imports torch
SOURCES = [
    ("d2l-ai/d2l-en", r"^chapter_.*\.md$|^d2l/torch\.py$", "Dive into Deep Learning, PyTorch code"),
    ("pytorch/examples", r"\.py$", "PyTorch's examples"),
    ("karpathy/nanoGPT", r"\.py$|\.ipynb$", "nanoGPT"),
    ("karpathy/minGPT", r"\.py$|\.ipynb$", "minGPT"),
    ("karpathy/makemore", r"\.py$", "makemore"),
    ("karpathy/nn-zero-to-hero", r"\.ipynb$", "Neural Networks: Zero to Hero notebooks"),
    ("phlippe/uvadlc_notebooks", r"\.py$|\.ipynb$", "UvA deep learning course notebooks"),
    ("fastai/course22p2", r"\.py$|\.ipynb$", "fast.ai course part 2 (from the foundations)"),
    ("rasbt/LLMs-from-scratch", r"\.py$|\.ipynb$", "Build a Large Language Model (From Scratch)"),
    ("eriklindernoren/PyTorch-GAN", r"\.py$", "GANs"),
    ("benmoseley/harmonic-oscillator-pinn", r"\.ipynb$", "a physics-informed network"),
    ("yunjey/pytorch-tutorial", r"\.py$", "PyTorch tutorial for deep learning researchers"),
    ("mrdbourke/pytorch-deep-learning", r"\.py$|\.ipynb$", "Zero to Mastery PyTorch course"),
    ("bentrevett/pytorch-seq2seq", r"\.ipynb$", "sequence-to-sequence tutorials"),
    ("pytorch/tutorials", r"^(beginner|intermediate)_source/.*\.py$",
     "PyTorch's beginner and intermediate tutorials"),
    ("AnirudhM1/CS231n-2022-Solutions", r"^assignment2/PyTorch\.ipynb$",
     "CS231n assignment 2's PyTorch notebook (a student's completed copy, 2022)"),
]
# a repository whose own snapshot cannot be fetched (pytorch/tutorials': 5.3 GB) is read
# from a fork's snapshot at a commit of the repository's own history (here PR #3271, the
# fork's last commit from upstream), so the programs and the commit are the repository's
SNAPSHOTS = {"pytorch/tutorials": ("jianran/pytorch_tutorials",
                                   "13d365c8268e41f6f4dc12d9f416d5c571c410ee")}
# tensor attributes whose names other objects use far more (a file's or argument's
# ``.name``, an image's ``.resize``/``.mode``): not counted as tensor uses
GENERIC = {"name", "names", "resize", "mode"}
# the same census resolved on minigrad as it was before issue 29's round (main at cfbc680)
BASELINE = {"commit": "cfbc680", "share_uses": "90.8%", "share_programs": "41.5%",
            "missing_5plus": 79}
SKIP = re.compile(r"(^|/)(tests?|setup\.py|conftest\.py|test_[^/]*\.py)")


# --- reading programs ----------------------------------------------------------------------


def git(repo: str, *args: str) -> str:
    git_dir = MIRRORS / repo.replace("/", "+") / "repo"
    return subprocess.run(["git", f"--git-dir={git_dir}", *args], check=True,
                          capture_output=True, text=True, errors="replace").stdout


def code_of(path: str, text: str) -> list[str]:
    """The Python pieces of a file: itself, a notebook's code cells, or a d2l chapter's
    code blocks that run under PyTorch (tab ``pytorch`` or ``all``, or untabbed)."""
    if path.endswith(".py"):
        return [text]
    if path.endswith(".ipynb"):
        try:
            cells = json.loads(text).get("cells", [])
        except ValueError:
            return []
        return ["".join(c["source"]) if isinstance(c["source"], list) else c["source"]
                for c in cells if c.get("cell_type") == "code"]
    pieces = []
    for block in re.findall(r"```\{\.python \.input[^}]*\}\n(.*?)```", text, re.S):
        tab = re.match(r"\s*(?:%%tab|#@tab)\s+(.*)", block)
        if tab is None or re.search(r"\b(pytorch|all)\b", tab.group(1)):
            pieces.append(block)
    return pieces


def without_magics(source: str) -> str:
    """IPython's ``%magic``/``!shell`` lines as ``pass``, so the cell parses as Python."""
    lines = []
    for line in source.splitlines():
        stripped = line.lstrip()
        if stripped.startswith(("%", "!")) or stripped.endswith("?"):
            line = line[:len(line) - len(stripped)] + "pass"
        lines.append(line)
    return "\n".join(lines)


def programs():
    """Yield (repository, commit, path, [Python source pieces]) for every program."""
    for repo, pattern, _ in SOURCES:
        snapshot, revision = SNAPSHOTS.get(repo, (repo, "HEAD"))
        commit = git(snapshot, "rev-parse", revision).strip()
        for path in git(snapshot, "ls-tree", "-r", "--name-only", commit).splitlines():
            if not re.search(pattern, path) or SKIP.search(path):
                continue
            try:
                text = git(snapshot, "show", f"{commit}:{path}")
            except subprocess.CalledProcessError:  # a large file the snapshot lacks
                continue
            pieces = code_of(path, text)
            if any(re.search(r"^\s*(import torch|from torch)", p, re.M) for p in pieces):
                yield repo, commit, path, pieces


# --- what one program uses -----------------------------------------------------------------


class Uses(ast.NodeVisitor):
    """Collect the PyTorch names one program uses (see the module docstring)."""

    def __init__(self, torch_module, names: set[str]):
        self.torch = torch_module
        self.aliases: dict[str, str] = {}  # local name -> dotted torch path
        self.others: set[str] = set()  # local names of other modules (np, plt, os, ...)
        self.names = names
        tensor = set(dir(torch_module.Tensor))
        plain = set(dir(str)) | set(dir(list)) | set(dir(dict)) | set(dir(set))
        self.tensor_names = {n for n in tensor - plain - GENERIC if not n.startswith("_")}
        self.module_names = {n for n in dir(torch_module.nn.Module)
                             if not n.startswith("_")} - tensor

    # imports
    def visit_Import(self, node):
        for alias in node.names:
            if alias.name == "torch" or alias.name.startswith("torch."):
                self.names.add(f"import {alias.name}")
                if alias.asname:
                    self.aliases[alias.asname] = alias.name
                else:
                    self.aliases["torch"] = "torch"
            else:
                self.others.add(alias.asname or alias.name.split(".")[0])

    def visit_ImportFrom(self, node):
        module = node.module or ""
        if node.level or not (module == "torch" or module.startswith("torch.")):
            self.others.update(a.asname or a.name for a in node.names)
            return
        self.names.add(f"import {module}")
        for alias in node.names:
            if alias.name == "*":
                continue
            full = f"{module}.{alias.name}"
            self.aliases[alias.asname or alias.name] = full
            self.names.add(full)

    # names
    def dotted(self, node) -> str | None:
        """``nn.functional.relu`` -> ``torch.nn.functional.relu`` when it starts at an alias."""
        parts = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if isinstance(node, ast.Name) and node.id in self.aliases:
            return ".".join([self.aliases[node.id], *reversed(parts)])
        return None

    def real(self, dotted: str) -> bool:
        """Is this a name PyTorch has (so a misspelled or local name is not counted)?"""
        obj = self.torch
        for part in dotted.split(".")[1:]:
            try:
                obj = getattr(obj, part)
            except Exception:
                try:
                    obj = importlib.import_module(f"{obj.__name__}.{part}")
                except Exception:
                    return False
        return True

    def visit_Attribute(self, node):
        dotted = self.dotted(node)
        if dotted is not None:
            if self.real(dotted):
                self.names.add(dotted)
            return  # the inner attributes are prefixes of this one
        if self.not_a_tensor(node.value):
            pass
        elif node.attr in self.tensor_names:
            self.names.add(f"Tensor.{node.attr}")
        elif node.attr in self.module_names:
            self.names.add(f"Module.{node.attr}")
        self.generic_visit(node)

    def not_a_tensor(self, receiver) -> bool:
        """``"a b".split()``, ``np.trace(a)``, ``plt.scatter(...)``, ``path.name``: a method
        of a literal or of another library's module is not a tensor's."""
        return isinstance(receiver, (ast.Constant, ast.JoinedStr, ast.List, ast.Dict)) or (
            isinstance(receiver, ast.Name) and receiver.id in self.others)

    def tensor_keyword(self, method: str, keyword: str) -> bool:
        """Is ``keyword`` one of the tensor method's (per PyTorch's docstrings)? Filters
        out ``ax.scatter(c=...)``, Lightning's ``self.log(on_step=...)`` and the like."""
        docs = (getattr(getattr(self.torch.Tensor, method, None), "__doc__", None) or "") + (
            getattr(getattr(self.torch, method, None), "__doc__", None) or "")
        return re.search(rf"\b{re.escape(keyword)}\b", docs) is not None

    def visit_Name(self, node):
        if node.id in self.aliases and self.real(self.aliases[node.id]):
            self.names.add(self.aliases[node.id])

    def visit_UnaryOp(self, node):
        if isinstance(node.op, ast.Invert) and isinstance(node.operand, ast.Compare):
            self.names.add("Tensor.__invert__ (~ on a bool tensor)")
        self.generic_visit(node)

    def visit_Call(self, node):
        func = node.func
        callee = self.dotted(func) if isinstance(func, (ast.Attribute, ast.Name)) else None
        if isinstance(func, ast.Name) and func.id in self.aliases:
            callee = self.aliases[func.id]
        starred = any(isinstance(a, ast.Starred) for a in node.args) or any(
            k.arg is None for k in node.keywords)
        if callee is not None and self.real(callee):
            for keyword in node.keywords:
                if keyword.arg:
                    self.names.add(f"{callee}({keyword.arg}=)")
            if not starred and node.args:
                self.names.add(f"{callee}({len(node.args)} positional)")
            if callee == "torch.Tensor" and node.args and all(
                    isinstance(a, ast.Constant) and type(a.value) is int for a in node.args):
                self.names.add("torch.Tensor(*sizes)")
        elif isinstance(func, ast.Attribute) and func.attr in self.tensor_names \
                and not self.not_a_tensor(func.value):
            method = f"Tensor.{func.attr}"
            if func.attr == "split" and len(node.args) < 2 and not node.keywords:
                method = None  # most likely str.split
            if method and any(k.arg and not self.tensor_keyword(func.attr, k.arg)
                              for k in node.keywords):
                method = None  # another library's method of that name
            if method is None:  # not a tensor's method: count only what it is called with
                for child in [func.value, *node.args, *(k.value for k in node.keywords)]:
                    self.visit(child)
                return
            if method:
                for keyword in node.keywords:
                    if keyword.arg:
                        self.names.add(f"{method}({keyword.arg}=)")
                if func.attr in ("add_", "sub_") and len(node.args) == 2 and not starred:
                    self.names.add(f"{method}(alpha, other) (deprecated overload)")
                if func.attr == "type" and node.args and self.dotted(node.args[0]):
                    self.names.add("Tensor.type(torch.<T>Tensor)")
        self.generic_visit(node)


def uses_of(pieces: list[str], torch_module) -> set[str]:
    names: set[str] = set()
    visitor = Uses(torch_module, names)
    for piece in pieces:
        try:
            tree = ast.parse(without_magics(piece))
        except SyntaxError:
            continue
        visitor.visit(tree)
    return names


# --- does minigrad have it? ----------------------------------------------------------------

def _forms():
    """Call forms checked by calling them (each returns True when minigrad does it)."""
    import minigrad as mg

    def tensor_sizes():
        return tuple(mg.Tensor(2, 3).shape) == (2, 3)

    def deprecated_add():
        p = mg.zeros(3)
        p.add_(-0.5, mg.ones(3))
        return p.tolist() == [-0.5] * 3

    def type_class():
        return mg.zeros(2, dtype=mg.int64).type(mg.FloatTensor).dtype == mg.float32

    def invert():
        return (~(mg.arange(3) > 0)).tolist() == [True, False, False]

    return {"torch.Tensor(*sizes)": tensor_sizes,
            "Tensor.add_(alpha, other) (deprecated overload)": deprecated_add,
            "Tensor.sub_(alpha, other) (deprecated overload)": deprecated_add,
            "Tensor.type(torch.<T>Tensor)": type_class,
            "Tensor.__invert__ (~ on a bool tensor)": invert}


REFUSED = "is not supported by minigrad"


def _lookup(dotted: str):
    """minigrad's object for a ``torch.``-dotted name; raises AttributeError/ImportError."""
    import minigrad

    obj, path = minigrad, "minigrad"
    for part in dotted.split(".")[1:]:
        path = f"{path}.{part}"
        try:
            obj = getattr(obj, part)
        except AttributeError as error:
            if REFUSED in str(error):
                raise
            try:
                obj = importlib.import_module(path)
            except ImportError as import_error:
                raise (import_error if REFUSED in str(import_error) else error) from None
    return obj


def _accepts(fn, keyword: str | None = None, positional: int | None = None) -> bool:
    target = fn.__init__ if inspect.isclass(fn) else fn
    try:
        signature = inspect.signature(target)
    except (TypeError, ValueError):
        return True  # a builtin without a signature: nothing to check cheaply
    params = list(signature.parameters.values())
    if inspect.isclass(fn) and params and params[0].name == "self":
        params = params[1:]
    if keyword is not None:
        return any(p.kind is p.VAR_KEYWORD or (p.name == keyword and p.kind in
                   (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)) for p in params)
    if any(p.kind is p.VAR_POSITIONAL for p in params):
        return True
    return positional <= sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
                             for p in params)


def status(name: str) -> str:
    """``supported``, ``refused`` (a deliberate error that says why) or ``missing``."""
    import minigrad as mg

    forms = _forms()
    try:
        if name in forms:
            return "supported" if forms[name]() else "missing"
        if name.startswith("import "):
            importlib.import_module("minigrad" + name[len("import torch"):])
            return "supported"
        call = re.match(r"(.+)\((?:(\w+)=|(\d+) positional)\)$", name)
        base = call.group(1) if call else name
        if base.startswith("Tensor."):
            obj = getattr(mg.ones(2, 2), base[len("Tensor."):])
        elif base.startswith("Module."):
            obj = getattr(mg.nn.Module(), base[len("Module."):])
        else:
            obj = _lookup(base)
        if call and callable(obj):
            keyword, positional = call.group(2), call.group(3)
            ok = _accepts(obj, keyword, int(positional) if positional else None)
            return "supported" if ok else "missing"
        return "supported"
    except AttributeError as error:
        return "refused" if REFUSED in str(error) else "missing"
    except Exception as error:  # noqa: BLE001 - a call form that fails is not supported
        return "refused" if REFUSED in str(error) else "missing"


# --- the data and the table ----------------------------------------------------------------


def scan() -> dict:
    import torch

    sources, listed = [], []
    uses: dict[str, list[int]] = defaultdict(list)
    for repo, commit, path, pieces in programs():
        if not any(s["repository"] == repo for s in sources):
            sources.append({"repository": repo, "commit": commit,
                            "what": next(w for r, _, w in SOURCES if r == repo)})
            if repo in SNAPSHOTS:
                sources[-1]["read from"] = SNAPSHOTS[repo][0]
        index = len(listed)
        listed.append(f"{repo}:{path}")
        for name in uses_of(pieces, torch):
            uses[name].append(index)
    return {"sources": sources, "programs": listed,
            "uses": {name: uses[name] for name in sorted(uses)}}


def with_status(data: dict) -> dict:
    data = dict(data)
    data["status"] = {name: status(name) for name in data["uses"]}
    return data


def figures(data: dict) -> dict:
    status_of, uses = data["status"], data["uses"]
    total = sum(len(p) for p in uses.values())
    good = sum(len(p) for n, p in uses.items() if status_of[n] == "supported")
    refused = sum(len(p) for n, p in uses.items() if status_of[n] == "refused")
    lacking = defaultdict(set)
    for name, progs in uses.items():
        if status_of[name] != "supported":
            for p in progs:
                lacking[p].add(name)
    count = len(data["programs"])
    return {"programs": count, "names": len(uses), "uses": total,
            "supported_uses": good, "refused_uses": refused,
            "complete_programs": count - len(lacking),
            "share_uses": good / total, "share_programs": (count - len(lacking)) / count,
            "share_answered": (good + refused) / total,
            "missing_5plus": sorted(n for n, p in uses.items()
                                    if status_of[n] == "missing" and len(p) >= 5),
            "refused_5plus": sorted(n for n, p in uses.items()
                                    if status_of[n] == "refused" and len(p) >= 5)}


def summary(data: dict) -> str:
    f = figures(data)
    return (f"Of {f['uses']:,} (program, name) uses in {f['programs']} teaching programs, "
            f"minigrad supports {f['supported_uses']:,} ({100 * f['share_uses']:.1f}%); "
            f"{f['refused_uses']:,} more are deliberate refusals that say why at once, so "
            f"{100 * f['share_answered']:.1f}% of uses are answered. "
            f"{f['complete_programs']} of {f['programs']} programs "
            f"({100 * f['share_programs']:.1f}%) use only supported names. Of the names "
            f"used by 5 or more programs, {len(f['missing_5plus'])} are missing and "
            f"{len(f['refused_5plus'])} refused. (Before issue 29's round, at commit "
            f"{BASELINE['commit']}: {BASELINE['share_uses']} of uses supported, "
            f"{BASELINE['share_programs']} of programs complete, "
            f"{BASELINE['missing_5plus']} names used by 5 or more programs missing.)")


def top_missing(data: dict, limit: int) -> list[tuple[str, int, str]]:
    rows = [(n, len(p), data["status"][n]) for n, p in data["uses"].items()
            if data["status"][n] != "supported"]
    return sorted(rows, key=lambda r: (-r[1], r[0]))[:limit]


def render_block(data: dict, link: str, limit: int = 25) -> str:
    """The figure and the top missing names: for the README and pytorch_coverage.md."""
    out = [BEGIN, summary(data), "",
           f"Most used names minigrad lacks (of {len(data['programs'])} programs; the full "
           f"table is [docs/census/README.md]({link})):", "",
           "| name | programs | status |", "| --- | --- | --- |"]
    out += [f"| `{n}` | {c} | {s} |" for n, c, s in top_missing(data, limit)]
    return "\n".join(out + [END])


def render_table(data: dict) -> str:
    f = figures(data)
    out = ["# Census: the PyTorch names teaching code uses", "",
           "Generated by `scripts/usage_census.py --write` from "
           "`docs/census/pytorch_usage.json`; kept true by `tests/test_usage_census.py`. "
           "A use is one program using one name (see the script's docstring for what counts "
           "as a name); *supported* means the name resolves on minigrad (a call form: is "
           "accepted or gives PyTorch's result), *refused* that minigrad raises an error "
           "saying why.", "", summary(data), "",
           "Missing names used by 5 or more programs: "
           + (", ".join(f"`{n}`" for n in f["missing_5plus"]) or "none") + ".",
           "", "## Sources", "", "| repository | commit | what | programs |",
           "| --- | --- | --- | --- |"]
    for source in data["sources"]:
        n = sum(p.startswith(source["repository"] + ":") for p in data["programs"])
        fork = f" (read from the fork {source['read from']})" if "read from" in source else ""
        out.append(f"| {source['repository']} | `{source['commit'][:12]}` | "
                   f"{source['what']}{fork} | {n} |")
    out += ["", "## Every name not supported, by number of programs", "",
            "| name | programs | status |", "| --- | --- | --- |"]
    out += [f"| `{n}` | {c} | {s} |" for n, c, s in top_missing(data, 10 ** 9)]
    out += ["", "## The 150 most used names", "", "| name | programs | status |",
            "| --- | --- | --- |"]
    ranked = sorted(data["uses"].items(), key=lambda kv: (-len(kv[1]), kv[0]))[:150]
    out += [f"| `{n}` | {len(p)} | {data['status'][n]} |" for n, p in ranked]
    return "\n".join(out) + "\n"


def replace_block(text: str, block: str) -> str:
    if BEGIN not in text:
        return text
    start, end = text.index(BEGIN), text.index(END) + len(END)
    return text[:start] + block + text[end:]


def load() -> dict:
    return json.loads(DATA.read_text())


def dump(data: dict) -> str:
    buffer = io.StringIO()
    buffer.write("{\n")
    keys = list(data)
    for i, key in enumerate(keys):
        comma = "," if i < len(keys) - 1 else ""
        if key in ("uses", "status"):
            items = list(data[key].items())
            buffer.write(f'"{key}": {{\n')
            for j, (name, value) in enumerate(items):
                end = "," if j < len(items) - 1 else ""
                buffer.write(f"  {json.dumps(name)}: {json.dumps(value)}{end}\n")
            buffer.write(f"}}{comma}\n")
        else:
            buffer.write(f'"{key}": {json.dumps(data[key], indent=1)}{comma}\n')
    buffer.write("}\n")
    return buffer.getvalue()


def outputs(data: dict) -> dict[Path, str]:
    return {DATA: dump(data), TABLE: render_table(data),
            README: replace_block(README.read_text(),
                                  render_block(data, "docs/census/README.md")),
            COVERAGE: replace_block(COVERAGE.read_text(),
                                    render_block(data, "census/README.md"))}


def main(argv: list[str]) -> int:
    if "--scan" in argv:
        DATA.parent.mkdir(parents=True, exist_ok=True)
        data = scan()
    else:
        data = load()
    data = with_status({k: v for k, v in data.items() if k != "status"})
    files = outputs(data)
    stale = [p for p, text in files.items() if not p.exists() or p.read_text() != text]
    if "--write" in argv or "--scan" in argv:
        for path in stale:
            path.write_text(files[path])
        print(summary(data))
        print("wrote", ", ".join(str(p.relative_to(ROOT)) for p in stale) or "nothing new")
        return 0
    for path in stale:
        print(f"{path.relative_to(ROOT)} is out of date: run scripts/usage_census.py --write")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
