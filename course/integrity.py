"""What an answer *is*: the student's own work, the reference, minigrad's own code, or an
attempt on the grading itself. Read from the answer cells' code, before anything runs.

The judge (``judge.py``) makes the checks safe from what answer cells *do*; this module
flags what they *are*. Each flag is ``{"exercise", "flag", "note", "zero"}``:

- ``reference-used`` (zero): the cell calls ``use_reference``: the check would test the
  reference answer, not the student's.
- ``delegated`` (zero): the answer hands the exercise's work to minigrad (or PyTorch): a
  class built on one of minigrad's own operations or layers instead of the base class
  the exercise names (``class MyMul(Mul)``), a Function whose forward or backward calls
  the engine (``mg.autograd.grad``, ``.backward()``, ``gradcheck``), one of minigrad's
  functions that is the exercise's answer (``mg.autograd.functional.hvp``), or PyTorch.
- ``tampering`` (a note for the teacher; the checks are unaffected): code aimed at the
  grading rather than the exercise: rebinding a name the chapter's own cells define
  (a checker, ``mg``), reaching into ``sys.modules``, builtins, other modules' globals or
  the interpreter, reading or writing the course's files.

An exercise scores 0 only for the first two; the third changes no score (the judge
ignores what it tries) but the teacher should know.
"""

from __future__ import annotations

import ast

from .authoring import exercise_role

# the base classes exercises build on (their last name, so mg.Function, Function,
# mg.autograd.Function and nn.Module all count)
BASES = {"Function", "Module", "Optimizer", "Dataset", "IterableDataset", "object",
         "Exception", "ValueError", "TypeError", "RuntimeError", "NamedTuple"}
ENGINE = {"autograd", "backward", "gradcheck", "gradgradcheck", "grad_fn"}
# minigrad's functions that are an exercise's whole answer (chapter 16's hvp): called as
# ``mg.autograd.functional.hvp(...)`` or imported by name, they do the work (the check
# cannot see the call: it happens in the student's process)
ANSWERS = {"hvp", "vhp"}
INTROSPECTION = {"__subclasses__", "__globals__", "__builtins__", "__code__", "__dict__",
                 "__class__", "__bases__", "__mro__",
                 "__import__", "__closure__", "f_globals", "f_back", "f_locals",
                 "set_custom_exc", "_exit", "modules", "getrefcount", "get_objects",
                 "settrace", "setprofile", "addaudithook", "excepthook"}
MODULES = {"sys", "builtins", "ctypes", "gc", "importlib", "inspect", "os", "subprocess",
           "shutil", "pathlib", "socket", "sqlite3", "signal"}
COURSE_FILES = ("gradebook", "source/", "nbgrader", "autograded", "submitted", "release/")


def _text(cell: dict) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else source


def python_code(source: str) -> str:
    """A cell's code without IPython's magics and shell lines (read and run as Python)."""
    return "\n".join("pass" if line.lstrip().startswith(("%", "!")) else line
                     for line in source.splitlines())


def _parse(source: str):
    try:
        return ast.parse(python_code(source))
    except SyntaxError:
        return None


def _last_name(node: ast.AST) -> str:
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Subscript):
        return _last_name(node.value)
    return ""


def _chain(node: ast.AST) -> str:
    try:
        return ast.unparse(node)
    except Exception:  # noqa: BLE001
        return "?"


def top_level(tree: ast.AST) -> dict[str, str]:
    """``{name: how}`` for the names a cell binds outside functions: ``import``,
    ``def``/``class`` or ``assign``."""
    bound: dict[str, str] = {}
    for node in tree.body if isinstance(tree, ast.Module) else []:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound[node.name] = "def"
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                bound[(alias.asname or alias.name).split(".")[0]] = "import"
        else:
            for sub in ast.walk(node):
                if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
                    bound.setdefault(sub.id, "assign")
    return bound


def inspect(cells: list[dict], exercise_of: dict[str, str],
            teachers: list[dict]) -> list[dict]:
    """The flags of one notebook's answer cells and of the cells the student added or
    changed (any cell that is not, word for word, one of the teacher's ``teachers``)."""
    theirs = {_text(c) for c in teachers if c.get("cell_type") == "code"
              and not (exercise_role(c) or {}).get("solution")}
    protected = set()  # what the chapter's own cells import or define: checkers, mg, ...
    for cell in teachers:
        if cell.get("cell_type") == "code" and _text(cell) in theirs:
            tree = _parse(_text(cell))
            if tree is not None:
                protected |= {n for n, how in top_level(tree).items()
                              if how != "assign" and not n.startswith("_")}
    own_classes: set[str] = set()
    references = _names_of_use_reference(cells)
    flags: list[dict] = []
    current = None
    for cell in cells:
        if cell.get("cell_type") != "code":
            continue
        role = exercise_role(cell)
        if role and role.get("solution"):
            current = role["grade_id"]
        elif role or _text(cell) in theirs:
            continue  # the teacher's cells
        tree = _parse(_text(cell))
        if tree is None:
            continue
        exercise = current if role else None
        own_classes |= {n.name for n in ast.walk(tree) if isinstance(n, ast.ClassDef)}
        rebound = {n for n in top_level(tree) if n in protected}
        flags += _flags(tree, exercise, rebound, own_classes, exercise_of, references)
    unique, seen = [], set()
    for flag in flags:
        key = (flag["exercise"], flag["flag"], flag["note"])
        if key not in seen:
            seen.add(key)
            unique.append(flag)
    return unique


def _flag(exercise, kind: str, note: str) -> dict:
    return {"exercise": exercise, "flag": kind, "note": note,
            "zero": kind in ("reference-used", "delegated")}


def _names_of_use_reference(cells: list[dict]) -> set[str]:
    """``use_reference`` and the other names the notebook gives it (``import ... as
    load``, ``load = use_reference``, an alias of an alias): a call of any loads the
    reference."""
    named: list[tuple[str, str]] = []  # (new name, the name it is given)
    for cell in cells:
        tree = _parse(_text(cell)) if cell.get("cell_type") == "code" else None
        for node in ast.walk(tree) if tree is not None else ():
            if isinstance(node, ast.ImportFrom):
                named += [(a.asname, a.name) for a in node.names if a.asname]
            elif isinstance(node, ast.Assign) and _last_name(node.value):
                named += [(t.id, _last_name(node.value)) for t in node.targets
                          if isinstance(t, ast.Name)]
    aliases = {"use_reference"}
    while True:
        more = {new for new, old in named if old in aliases} - aliases
        if not more:
            return aliases
        aliases |= more


def _flags(tree, exercise, rebound, own_classes, exercise_of, references) -> list[dict]:
    flags = []
    where = f"exercise {exercise}" if exercise else "a cell you added"
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _last_name(node.func) in references:
            named = node.args[0].value if node.args and isinstance(node.args[0], ast.Constant) \
                and isinstance(node.args[0].value, str) else None
            target = named if named in exercise_of else exercise
            flags.append(_flag(target, "reference-used",
                               f"use_reference({named or '...'}) loads the reference answer "
                               f"to {target or 'an exercise'}: that is not your work, so it "
                               "scores 0 (write your own answer in its cell and remove the "
                               "call)."))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr in ANSWERS:
            flags.append(_flag(exercise, "delegated",
                               f"{where} calls minigrad's own {_chain(node.func)}: the "
                               "exercise is to write it yourself, so it scores 0."))
        elif isinstance(node, ast.ClassDef):
            for base in node.bases:
                name = _last_name(base)
                if name in BASES or name in own_classes:
                    continue
                flags.append(_flag(exercise, "delegated",
                                   f"class {node.name}({_chain(base)}): {where} builds on "
                                   f"{_chain(base)} instead of writing it on "
                                   "mg.Function / nn.Module: the work is done by that class, "
                                   "so it scores 0."))
            if any(_last_name(b) == "Function" and "autograd" not in _chain(b)
                   for b in node.bases):  # the array contract (mg.Function)
                flags += _engine_inside(node, exercise, where)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            modules = [a.name for a in node.names] if isinstance(node, ast.Import) \
                else [node.module or ""]
            answers = [a.name for a in node.names if a.name in ANSWERS] \
                if isinstance(node, ast.ImportFrom) else []
            if answers:
                flags.append(_flag(exercise, "delegated",
                                   f"{where} imports minigrad's own {answers[0]} (from "
                                   f"{node.module}): the exercise is to write it yourself, "
                                   "so it scores 0."))
            for module in modules:
                root = module.split(".")[0]
                if root == "torch":
                    flags.append(_flag(exercise, "delegated",
                                       f"{where} imports PyTorch ({module}): the exercise is "
                                       "to write it with NumPy and minigrad, so it scores 0."))
                elif root in MODULES or module.startswith(("minigrad.exercises",
                                                           "minigrad.course")):
                    flags.append(_flag(exercise, "tampering",
                                       f"{where} imports {module}, which an answer does not "
                                       "need (the grading ignores what it does)."))
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) \
                and isinstance(node.value, ast.Call) and _last_name(node.value.func) == "type":
            flags.append(_flag(exercise, "tampering",
                               f"{where} changes a class through type(...) "
                               f"(type(...).{node.attr} = ...), which an answer does not "
                               "need: the objects a check hands over are the check's."))
        elif isinstance(node, ast.Attribute) and node.attr in INTROSPECTION:
            flags.append(_flag(exercise, "tampering",
                               f"{where} reaches into Python's internals ({_chain(node)}); "
                               "the grading ignores what it does."))
        elif isinstance(node, ast.Name) and node.id in INTROSPECTION | {"exec", "eval",
                                                                        "compile",
                                                                        "globals", "vars",
                                                                        "setattr", "open",
                                                                        "exit", "quit"}:
            if node.id == "open" or node.id == "setattr" or node.id in INTROSPECTION \
                    or node.id in ("exec", "eval", "compile", "globals", "exit", "quit"):
                flags.append(_flag(exercise, "tampering",
                                   f"{where} calls {node.id}(), which an answer does not "
                                   "need (the grading ignores what it does)."))
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) \
                and node.id in rebound:
            flags.append(_flag(exercise, "tampering",
                               f"{where} rebinds {node.id}, which the chapter's own cells "
                               "define (the checks use the chapter's, not yours)."))
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name in rebound:
            flags.append(_flag(exercise, "tampering",
                               f"{where} redefines {node.name}, which the chapter's own "
                               "cells define (the checks use the chapter's, not yours)."))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) \
                and any(part in node.value for part in COURSE_FILES):
            flags.append(_flag(exercise, "tampering",
                               f"{where} names the course's files ({node.value[:40]!r}); "
                               "they are not in the sandbox the notebook runs in."))
    return flags


def _engine_inside(cls: ast.ClassDef, exercise, where) -> list[dict]:
    """A Function's forward and backward compute with arrays: calling the engine there
    (``autograd.grad``, ``.backward()``, ``gradcheck``) hands it the work."""
    flags = []
    for node in ast.walk(cls):
        if isinstance(node, ast.Attribute) and node.attr in ENGINE \
                or isinstance(node, ast.Name) and node.id in ENGINE:
            flags.append(_flag(exercise, "delegated",
                               f"{cls.name} ({where}) calls minigrad's engine "
                               f"({_chain(node)}) inside the Function: the gradient is then "
                               "minigrad's, not yours, so it scores 0."))
            break
    return flags
