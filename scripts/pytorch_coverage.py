"""Which of PyTorch's names minigrad has, namespace by namespace.

    .venv/bin/python scripts/pytorch_coverage.py           # print what changed
    .venv/bin/python scripts/pytorch_coverage.py --write   # rewrite the two files below

`docs/pytorch_coverage.md` lists every name (supported, minigrad's own extras, and those
left out on purpose with the reason); the README's "PyTorch coverage" table is its
summary. Both are generated from the code (and, for "supported", from PyTorch itself when
it is installed); tests/test_pytorch_coverage.py checks they are up to date.
"""

from __future__ import annotations

import importlib
import sys
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LIST = ROOT / "docs" / "pytorch_coverage.md"
README = ROOT / "README.md"
BEGIN, END = "<!-- coverage table: begin -->", "<!-- coverage table: end -->"
CENSUS_BEGIN, CENSUS_END = "<!-- census: begin -->", "<!-- census: end -->"

# namespace (PyTorch's spelling) -> (minigrad object path, torch object path)
NAMESPACES = {
    "torch": ("minigrad", "torch"),
    "torch.Tensor": ("minigrad:Tensor", "torch:Tensor"),
    "torch.nn": ("minigrad.nn", "torch.nn"),
    "torch.nn.functional": ("minigrad.nn.functional", "torch.nn.functional"),
    "torch.nn.init": ("minigrad.nn.init", "torch.nn.init"),
    "torch.nn.utils": ("minigrad.nn.utils", "torch.nn.utils"),
    "torch.optim": ("minigrad.optim", "torch.optim"),
    "torch.optim.lr_scheduler": ("minigrad.optim.lr_scheduler", "torch.optim.lr_scheduler"),
    "torch.autograd": ("minigrad.autograd", "torch.autograd"),
    "torch.utils.data": ("minigrad.utils.data", "torch.utils.data"),
}


# names that PyTorch has for something else: listed as minigrad's own, not as supported
DIFFERENT = {"torch": {"Node"}}  # torch.Node is TorchScript's; minigrad's is a graph node


def resolve(path: str):
    module, _, attribute = path.partition(":")
    obj = importlib.import_module(module)
    return getattr(obj, attribute) if attribute else obj


def public_names(obj, exported: bool = False) -> set[str]:
    """Every name without a leading underscore; with ``exported``, a module's ``__all__``
    when it has one (what minigrad means to export, without the names it imports)."""
    names = getattr(obj, "__all__", None) if exported else None
    return set(names if names is not None else (n for n in dir(obj) if not n.startswith("_")))


def minigrad_names(namespace: str) -> set[str]:
    """Public names, less the engine's own modules (``mg.ops``, ``mg.state``, ...) that
    happen to be attributes; minigrad's extra packages that users import are kept."""
    obj = resolve(NAMESPACES[namespace][0])
    theirs = torch_names(namespace) or set()
    return {n for n in public_names(obj, exported=True)
            if hasattr(obj, n)  # (not a name it refuses: reading one says why)
            and (not isinstance(getattr(obj, n), types.ModuleType)
                 or n in theirs or n in ("data", "exercises", "widgets"))}


def torch_names(namespace: str) -> set[str] | None:
    try:
        return public_names(resolve(NAMESPACES[namespace][1]))
    except ImportError:
        return None


def read_list() -> dict[str, dict[str, list[str]]]:
    """The checked-in lists: {namespace: {"supported": [...], "extras": [...]}}."""
    result: dict[str, dict[str, list[str]]] = {}
    namespace = kind = None
    for line in LIST.read_text().splitlines():
        if line.startswith("## `"):
            namespace = line[4:line.index("`", 4)]
            result[namespace] = {"supported": [], "extras": []}
        elif line.startswith("Supported"):
            kind = "supported"
        elif line.startswith("minigrad's own"):
            kind = "extras"
        elif line.startswith("Left out") or not line.strip():
            kind = None if line.startswith("Left out") else kind
        elif namespace and kind and line.startswith("`"):
            result[namespace][kind] += [n.strip("` ") for n in line.split(",") if n.strip()]
    return result


def compute() -> dict[str, dict[str, list[str]]]:
    """The lists as the code has them now (needs PyTorch for "supported")."""
    from minigrad.unsupported import ABSENT

    result = {}
    for namespace in NAMESPACES:
        ours, theirs = minigrad_names(namespace), torch_names(namespace)
        if theirs is None:
            raise SystemExit("PyTorch is needed to compute the lists: "
                             "pip install torch==2.13.0")
        absent = set(ABSENT.get(namespace, {}))
        different = DIFFERENT.get(namespace, set())
        result[namespace] = {"supported": sorted((ours & theirs) - different),
                             "extras": sorted((ours - theirs - absent) | (ours & different))}
    return result


def wrap(names: list[str], width: int = 92) -> list[str]:
    lines, line = [], ""
    for name in names:
        item = f"`{name}`"
        if line and len(line) + len(item) + 2 > width:
            lines.append(line + ",")
            line = ""
        line = f"{line}, {item}" if line else item
    return lines + [line] if line else lines


def census_block() -> list[str]:
    """The usage census's figure, kept as scripts/usage_census.py last wrote it."""
    text = LIST.read_text() if LIST.exists() else ""
    start, end = text.find(CENSUS_BEGIN), text.find(CENSUS_END)
    if start < 0 or end < 0:
        return []
    return ["## What teaching code uses", "", text[start:end + len(CENSUS_END)], ""]


def render_list(lists: dict) -> str:
    from minigrad.unsupported import ABSENT

    out = ["# PyTorch coverage", "",
           "Generated by `scripts/pytorch_coverage.py --write`; checked by "
           "`tests/test_pytorch_coverage.py`. For each namespace: the PyTorch names "
           "minigrad has (same name, same meaning), minigrad's own extras, and what it "
           "leaves out on purpose (asking for those raises an error that says why).", ""]
    out += census_block()
    for namespace, kinds in lists.items():
        out += [f"## `{namespace}`", "", f"Supported ({len(kinds['supported'])}):", ""]
        out += wrap(kinds["supported"]) + [""]
        if kinds["extras"]:
            out += [f"minigrad's own ({len(kinds['extras'])}):", ""]
            out += wrap(kinds["extras"]) + [""]
        if ABSENT.get(namespace):
            out += ["Left out on purpose:", ""]
            out += [f"- `{name}`: {reason}" for name, reason in ABSENT[namespace].items()]
            out += [""]
    return "\n".join(out)


def render_table(lists: dict) -> str:
    from minigrad.unsupported import ABSENT

    rows = ["| namespace | PyTorch names supported | left out on purpose |",
            "| --- | --- | --- |"]
    for namespace, kinds in lists.items():
        absent = ", ".join(f"`{n}`" for n in ABSENT.get(namespace, {})) or "-"
        rows.append(f"| `{namespace}` | {len(kinds['supported'])} | {absent} |")
    return "\n".join([BEGIN, *rows, END])


def readme_with(table: str) -> str:
    text = README.read_text()
    start, end = text.index(BEGIN), text.index(END) + len(END)
    return text[:start] + table + text[end:]


def main(argv: list[str]) -> int:
    lists = compute()
    new_list, new_readme = render_list(lists) + "\n", readme_with(render_table(lists))
    stale = [p for p, new in ((LIST, new_list), (README, new_readme))
             if not p.exists() or p.read_text() != new]
    if "--write" in argv:
        LIST.write_text(new_list)
        README.write_text(new_readme)
        print("wrote", ", ".join(str(p.relative_to(ROOT)) for p in stale) or "nothing new")
        return 0
    for p in stale:
        print(f"{p.relative_to(ROOT)} is out of date: run scripts/pytorch_coverage.py --write")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
