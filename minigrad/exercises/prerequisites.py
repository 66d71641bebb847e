"""Each exercise judged on its own, when its code uses an earlier exercise's.

Chapter 2's ``MyMul`` calls the student's ``unbroadcast`` (exercise 2); chapter 5's
``MyVar`` returns their ``variance(...)``. A mistake in the earlier exercise would make the
later check fail and blame correct code. A test cell therefore names what the object under
test borrows, with ``uses=``, which every checker takes::

    check_function(MyMul, inputs=[...], reference=lambda x, y: x * y,
                   uses={"unbroadcast": "minigrad.exercises.broadcasting:builtin_unbroadcast"})

``uses`` maps a global name that the student's code reads (``unbroadcast``) to the
reference answer of the exercise that defines it, as an import path
``"module:qualname"`` (importable from ``minigrad.exercises``, so that a grader running the
student's code in another process can make the same swap there, by path). Then
(``judged_on_its_own``):

1. the check runs on the student's object as it is; if it passes, that is all;
2. if it fails, the same check runs again with those names rebound to the references in
   the globals the student's object reads (``swap_globals``). If it passes now, the check
   PASSES, with a printed note: "your MyMul is right with the reference unbroadcast; fix
   exercise 2 (`unbroadcast`) first: its own check says what is wrong" (this exercise
   keeps its points when graded; the earlier one's own check is what fails);
3. if it still fails, the failure of that second run is reported: it is this exercise's
   own mistake, whatever the earlier exercise does.

A reference says which exercise it answers with ``@reference_for(number, "id")`` (the
exercise's number in its chapter and its id), which the note names.

**Across a process boundary.** Where the object under test stands for code that runs in
another process (a grader's proxy of the student's class or function), rebinding names
here would change nothing there. Such a proxy's class defines
``__swap_globals__(paths: dict[str, str])``, a context manager that makes the same swap
where the code runs (there: ``swap_globals(the real object, paths)``, which imports each
reference by its path); ``swap_globals`` hands it ``{name: "module:qualname"}``.
"""

from __future__ import annotations

import contextlib
import importlib
import types
from collections.abc import Callable, Iterator
from typing import Any

from .compare import CheckFailed

_MISSING = object()
LIBRARIES = ("minigrad", "abc", "typing", "numpy", "torch")  # base classes not the student's


def reference_for(number: int, exercise: str) -> Callable:
    """Mark a module-level function or class as the reference answer of exercise
    ``number`` (id ``exercise``) of its chapter, for ``uses=``."""
    def mark(thing: Any) -> Any:
        thing.__exercise__ = (number, exercise)
        return thing

    return mark


def resolve(path: str) -> Any:
    """The object at ``"module:qualname"`` (e.g.
    ``"minigrad.exercises.broadcasting:builtin_unbroadcast"``)."""
    module_name, _, qualname = path.partition(":")
    if not qualname:
        raise ValueError(f"{path!r}: a reference is named 'module:qualname'")
    found: Any = importlib.import_module(module_name)
    for part in qualname.split("."):
        found = getattr(found, part)
    return found


def _functions(obj: Any) -> Iterator[types.FunctionType]:
    """The plain functions whose globals ``obj`` runs with: a function itself (through
    wrappers, bound methods, partials), or every method a class (or an instance's class)
    defines, in it and its bases outside minigrad."""
    seen: set[int] = set()
    pending = [obj]
    while pending:
        thing = pending.pop()
        if id(thing) in seen or thing is None:
            continue
        seen.add(id(thing))
        if isinstance(thing, types.FunctionType):
            yield thing
            pending.append(getattr(thing, "__wrapped__", None))
        elif isinstance(thing, (staticmethod, classmethod, types.MethodType)):
            pending.append(thing.__func__)
        elif isinstance(thing, property):
            pending += [thing.fget, thing.fset, thing.fdel]
        elif hasattr(thing, "func") and callable(thing):  # functools.partial
            pending.append(thing.func)
        elif isinstance(thing, type):
            for cls in thing.__mro__:
                if cls is not object and cls.__module__.split(".")[0] not in LIBRARIES:
                    pending += list(vars(cls).values())
        elif not isinstance(thing, (int, float, str, bytes, tuple, list, dict, set)):
            pending.append(type(thing))  # an instance: its class's methods


def globals_of(obj: Any) -> list[dict]:
    """The global namespaces (each once) that the code of ``obj`` reads names from."""
    found: dict[int, dict] = {}
    for function in _functions(obj):
        found.setdefault(id(function.__globals__), function.__globals__)
    return list(found.values())


def path_of(reference: Any) -> str:
    """``"module:qualname"`` of a module-level function or class (``resolve``'s inverse)."""
    path = f"{reference.__module__}:{reference.__qualname__}"
    if resolve(path) is not reference:
        raise ValueError(f"{reference!r} cannot be imported by its name {path!r}: a "
                         "reference must be a module-level function or class")
    return path


@contextlib.contextmanager
def swap_globals(obj: Any, names: dict[str, Any]) -> Iterator[None]:
    """Meanwhile, the names in ``names`` (``{name: reference or "module:qualname"}``) are
    bound to the references in every global namespace ``obj``'s code reads (a function's
    ``__globals__``, a class's methods' ``__globals__``); restored (or removed, where they
    were not there) on exit. A proxy of code in another process makes the swap there
    (its class's ``__swap_globals__``, see the module's docstring)."""
    owner = obj if isinstance(obj, type) else type(obj)
    remote = getattr(owner, "__swap_globals__", None)
    if remote is not None:
        paths = {name: ref if isinstance(ref, str) else path_of(ref)
                 for name, ref in names.items()}
        with (remote(paths) if isinstance(obj, type) else remote.__get__(obj)(paths)):
            yield
        return
    values = {name: resolve(ref) if isinstance(ref, str) else ref
              for name, ref in names.items()}
    saved = []
    for namespace in globals_of(obj):
        for name, value in values.items():
            saved.append((namespace, name, namespace.get(name, _MISSING)))
            namespace[name] = value
    try:
        yield
    finally:
        for namespace, name, old in reversed(saved):
            if old is _MISSING:
                namespace.pop(name, None)
            else:
                namespace[name] = old


def _exercise(name: str, ref: Any) -> str:
    reference = resolve(ref) if isinstance(ref, str) else ref
    number, exercise = getattr(reference, "__exercise__", (None, name))
    return f"exercise {number} (`{exercise}`)" if number is not None else f"`{exercise}`"


def _passes(run: Callable[[], None]) -> bool:
    try:
        run()
    except CheckFailed:
        return False
    return True


def _quietly(run: Callable[[], None]) -> Callable[[], None]:
    def quiet() -> None:
        with contextlib.redirect_stdout(None):
            run()
    return quiet


def judged_on_its_own(run: Callable[[], None], obj: Any, uses: dict[str, Any],
                      subject: str | None = None) -> None:
    """Run the check ``run`` (which raises ``CheckFailed`` on a failure) on ``obj``; where
    it fails, again with the names of ``uses`` swapped for their references: a pass then
    is a pass, with a note naming the earlier exercise to fix (see the module's
    docstring); a failure is this exercise's own, and raised."""
    if not uses:
        run()
        return
    try:
        run()
        return
    except CheckFailed:
        pass
    with swap_globals(obj, uses):
        run()  # this exercise's own mistake raises here
    culprits = [name for name in uses if len(uses) == 1 or not _passes(_quietly(
        lambda name=name: _swapped_except(run, obj, uses, name)))] or list(uses)
    subject = subject or getattr(obj, "__name__", None) or type(obj).__name__
    refs = " and ".join(culprits)
    exercises = " and ".join(_exercise(name, uses[name]) for name in culprits)
    plural = len(culprits) > 1
    print(f"Note: your {subject} is right with the reference{'s' if plural else ''} {refs}; "
          f"fix {'exercises' if plural else 'exercise'} "
          f"{exercises.replace('exercise ', '')} first: "
          f"{'their' if plural else 'its'} own check{'s say' if plural else ' says'} what is "
          "wrong.")


def _swapped_except(run: Callable[[], None], obj: Any, uses: dict[str, Any],
                    kept: str) -> None:
    """``run`` with every reference of ``uses`` swapped in but ``kept`` (the student's)."""
    with swap_globals(obj, {name: ref for name, ref in uses.items() if name != kept}):
        run()


__all__ = ["globals_of", "judged_on_its_own", "path_of", "reference_for", "resolve",
           "swap_globals"]
