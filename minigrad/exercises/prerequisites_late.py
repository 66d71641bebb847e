"""Each exercise judged on its own (chapters 08-15): a check of code that uses an earlier
exercise's answer does not blame this exercise for the earlier one's mistake.

A test cell names what its object uses, as an import path to a reference answer::

    check_module(MyTransformerBlock, PreNormBlock, args=(8, 2, 16), inputs=[(2, 5, 8)],
                 uses={"MyMultiheadAttention":
                       "minigrad.exercises.attention:ReferenceMultiheadAttention"})

The check runs on the student's object as it is. If that fails, it runs again with each
name of ``uses`` rebound, in the globals the object reads, to the reference (a class
built on the earlier class, ``class MyAdamW(MyAdam)``, is rebuilt on the reference for
the run). If it then passes, the check passes with a note: "your X is right with the
reference Y; fix exercise N (`id`) first"; if it still fails, the first failure (this
exercise's own mistake) is reported. The student's namespace is restored either way.

- ``swap_globals(obj, {name: reference})``: the context manager that rebinds (yields the
  object to check: ``obj``, or a class rebuilt on the references).
- ``check_on_its_own(check, obj, *args, uses=..., **kwargs)``: the helper a checker calls.
- ``with_uses(checker)``: a checker that takes ``uses=`` (``check_module``,
  ``check_function``, ... below are the generic checkers so wrapped).
- ``answers(number, exercise_id)``: marks a reference as the answer to exercise N.

References are module-level functions or classes, named by ``"module:qualname"`` under
``minigrad.exercises``, so that a grading process that runs the student's code elsewhere
can make the same swap by import path.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import importlib
import io
import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from . import checks

MISSING = object()


def answers(number: int, exercise_id: str) -> Callable:
    """Mark a reference as the answer to exercise ``number`` (``exercise_id``, its grade
    id) of its chapter: the note of ``check_on_its_own`` names it."""

    def mark(reference: Any) -> Any:
        reference.answers_exercise = (number, exercise_id)
        return reference

    return mark


def load(path: str) -> Any:
    """The object at ``"module:qualname"`` (e.g.
    ``"minigrad.exercises.optimizers:ReferenceAdam"``)."""
    module_name, _, qualname = path.partition(":")
    if not qualname or not module_name.startswith("minigrad.exercises"):
        raise ValueError(f"a reference is 'minigrad.exercises.<module>:<name>', got {path!r}")
    found: Any = importlib.import_module(module_name)
    for part in qualname.split("."):
        found = getattr(found, part)
    return found


# --- the globals an object reads --------------------------------------------------------


def _functions(value: Any) -> list[types.FunctionType]:
    """The plain functions inside a class attribute (methods, static and class methods,
    a property's accessors)."""
    if isinstance(value, (staticmethod, classmethod)):
        value = value.__func__
    if isinstance(value, property):
        return [f for f in (value.fget, value.fset, value.fdel)
                if isinstance(f, types.FunctionType)]
    return [value] if isinstance(value, types.FunctionType) else []


ENGINE = Path(__file__).resolve().parents[1]  # minigrad's own files


def _own(function: types.FunctionType) -> bool:
    """A function written by the student, not one of minigrad's own (those live in files
    under minigrad/; a notebook's or a grading process's code does not)."""
    where = function.__globals__.get("__file__")
    return not (where and Path(where).resolve().is_relative_to(ENGINE))


def _student_functions(obj: Any) -> list[types.FunctionType]:
    if isinstance(obj, types.MethodType):
        obj = obj.__func__
    if isinstance(obj, types.FunctionType):
        return [obj] if _own(obj) else []
    klass = obj if isinstance(obj, type) else type(obj)
    return [f for c in klass.__mro__ for value in vars(c).values() for f in _functions(value)
            if _own(f)]


def globals_of(obj: Any) -> list[dict]:
    """The global namespaces (each once) that ``obj``'s own code reads: a function's
    ``__globals__``, those of a class's methods (and of its bases' written by the
    student)."""
    found: dict[int, dict] = {}
    for function in _student_functions(obj):
        found.setdefault(id(function.__globals__), function.__globals__)
    return list(found.values())


# --- a class rebuilt on another base -----------------------------------------------------


def _with_class_cell(value: Any, new: type) -> Any:
    """``value`` (a class attribute) with the ``__class__`` cell of its functions (what
    ``super()`` reads) pointing at ``new``."""
    if isinstance(value, staticmethod):
        return staticmethod(_with_class_cell(value.__func__, new))
    if isinstance(value, classmethod):
        return classmethod(_with_class_cell(value.__func__, new))
    if isinstance(value, property):
        return property(*(_with_class_cell(f, new) if f is not None else None
                          for f in (value.fget, value.fset, value.fdel)), value.__doc__)
    if not isinstance(value, types.FunctionType) or \
            "__class__" not in value.__code__.co_freevars:
        return value
    cells = list(value.__closure__)
    cells[value.__code__.co_freevars.index("__class__")] = types.CellType(new)
    made = types.FunctionType(value.__code__, value.__globals__, value.__name__,
                              value.__defaults__, tuple(cells))
    made.__kwdefaults__, made.__qualname__ = value.__kwdefaults__, value.__qualname__
    made.__dict__.update(value.__dict__)
    return made


def rebased(klass: type, old: type, new: type) -> type:
    """A copy of ``klass`` whose base ``old`` (anywhere above it) is ``new`` instead; the
    student's class itself is not changed."""
    if klass is old:
        return new
    if not issubclass(klass, old):
        return klass
    bases = tuple(rebased(base, old, new) for base in klass.__bases__)
    namespace = {k: v for k, v in vars(klass).items() if k not in ("__dict__", "__weakref__")}
    made = type(klass)(klass.__name__, bases, namespace)
    made.__qualname__, made.__module__ = klass.__qualname__, klass.__module__
    for key, value in namespace.items():
        fixed = _with_class_cell(value, made)
        if fixed is not value:
            setattr(made, key, fixed)
    return made


@contextlib.contextmanager
def swap_globals(obj: Any, references: dict[str, Any]) -> Iterator[Any]:
    """Inside the block, each ``name`` of ``references`` is bound to its reference (an
    object, or ``"module:qualname"``) in every global namespace ``obj``'s own code reads;
    on exit the names are bound as before (or removed if they were not there). Yields the
    object to check: ``obj``, or, when ``obj`` is a class built on one of the names' classes
    (``class MyAdamW(MyAdam)``), a copy of it built on the reference."""
    owner = obj if isinstance(obj, type) else type(obj)
    remote = getattr(owner, "__swap_globals__", None)
    if remote is not None:  # code that runs in another process: the swap is made there
        from .prerequisites import path_of

        paths = {name: ref if isinstance(ref, str) else path_of(ref)
                 for name, ref in references.items()}
        with (remote(paths) if isinstance(obj, type) else remote.__get__(obj)(paths)):
            yield obj
        return
    references = {name: load(ref) if isinstance(ref, str) else ref
                  for name, ref in references.items()}
    spaces = globals_of(obj)
    saved = [(space, name, space.get(name, MISSING)) for space in spaces
             for name in references]
    swapped = obj
    if isinstance(obj, type):
        for name, reference in references.items():
            for space in spaces:
                old = space.get(name)
                if isinstance(old, type) and isinstance(reference, type) and \
                        old in swapped.__mro__[1:]:
                    swapped = rebased(swapped, old, reference)
    try:
        for space, name, _ in saved:
            space[name] = references[name]
        yield swapped
    finally:
        for space, name, value in reversed(saved):
            if value is MISSING:
                space.pop(name, None)
            else:
                space[name] = value


# --- the check -----------------------------------------------------------------------------


def _name(thing: Any) -> str:
    return getattr(thing, "__name__", None) or type(thing).__name__


def _note(obj: Any, swapped: dict[str, str]) -> str:
    parts, fixes = [], []
    for name, path in swapped.items():
        reference = load(path)
        parts.append(f"the reference {name} ({path.split(':')[-1]})")
        number, exercise_id = getattr(reference, "answers_exercise", (None, None))
        fixes.append(f"exercise {number} (`{exercise_id}`)" if number is not None
                     else f"the exercise of {name}")
    return (f"{_name(obj)}: your {_name(obj)} is right with {' and '.join(parts)} in place "
            f"of yours; fix {' and '.join(fixes)} first: its own check says what is wrong.")


def _fresh(values: Any) -> Any:
    """A deep copy of a check's arguments: ``mistakes`` may keep state between calls (the
    wrong optimizers of chapter 09 do), and each run must start as the first did."""
    try:
        return copy.deepcopy(values)
    except Exception:  # noqa: BLE001 - what cannot be copied is used as it is
        return values


def check_on_its_own(check: Callable, obj: Any, *args: Any,
                     uses: dict[str, str] | None = None, **kwargs: Any) -> None:
    """``check(obj, *args, **kwargs)``; if it fails and ``obj`` uses earlier exercises'
    code (``uses``: ``{name in the student's namespace: "module:qualname" of its
    reference}``), the same check with those names swapped for their references (each
    alone, then all together). Passing so, it passes with a note naming the earlier
    exercise to fix. Failing so too, the mistake is this exercise's own: the failure with
    all the references in place is raised (it names that mistake without the earlier
    ones' in the way)."""
    if not uses:
        check(obj, *args, **kwargs)
        return
    pristine = _fresh((args, kwargs))
    try:
        check(obj, *args, **kwargs)
        return
    except AssertionError as failure:
        own = failure
    trials = [{name: path} for name, path in uses.items()]
    if len(uses) > 1:
        trials.append(dict(uses))
    for trial in trials:
        trial_args, trial_kwargs = _fresh(pristine)
        try:
            with swap_globals(obj, trial) as swapped, \
                    contextlib.redirect_stdout(io.StringIO()):
                check(swapped, *trial_args, **trial_kwargs)
        except AssertionError as failure:
            if trial is trials[-1] and str(failure) != str(own):
                own = AssertionError(
                    f"{failure}\n(This ran with the reference "
                    f"{' and '.join(trial)} in place of yours: the mistake is in "
                    f"{_name(obj)} itself.)")
            continue
        except Exception:  # noqa: BLE001, S112 - the reference does not fit: its own
            continue
        print(_note(obj, trial))
        return
    raise own.with_traceback(None) from None


def with_uses(check: Callable) -> Callable:
    """``check`` with a ``uses=`` keyword (see ``check_on_its_own``)."""

    @functools.wraps(check)
    def run(obj: Any, *args: Any, uses: dict[str, str] | None = None, **kwargs: Any) -> None:
        check_on_its_own(check, obj, *args, uses=uses, **kwargs)

    return run


check_function = with_uses(checks.check_function)
check_loss = with_uses(checks.check_loss)
check_module = with_uses(checks.check_module)
check_optimizer_step = with_uses(checks.check_optimizer_step)

__all__ = ["answers", "check_function", "check_loss", "check_module", "check_on_its_own",
           "check_optimizer_step", "globals_of", "load", "rebased", "swap_globals",
           "with_uses"]
