"""Each exercise judged on its own, when its code uses an earlier exercise's.

Chapter 2's ``MyMul`` calls the student's ``unbroadcast`` (exercise 2); chapter 9's
``class MyAdamW(MyAdam)`` is built on their ``MyAdam``. A mistake in the earlier exercise
would make the later check fail and blame correct code. A test cell therefore names what
the object under test borrows, with ``uses=``, which every checker takes::

    check_function(MyMul, inputs=[...], reference=lambda x, y: x * y,
                   uses={"unbroadcast": "minigrad.exercises.broadcasting:builtin_unbroadcast"})

``uses`` maps a global name that the student's code reads (``unbroadcast``) to the
reference answer of the exercise that defines it, as an import path ``"module:qualname"``
(so that a grader running the student's code in another process can make the same swap
there, by path). Then (``check_on_its_own``, which every checker calls):

1. the check runs on the student's object as it is; if it passes, that is all;
2. if it fails, the same check runs again (on fresh copies of its arguments) with those
   names rebound to the references in the globals the student's code reads
   (``swap_globals``; a class built on an earlier class, ``class MyAdamW(MyAdam)``, is
   rebuilt on the reference for the run). If it passes now, the check PASSES, with a
   printed note: "your MyMul is right with the reference unbroadcast; fix exercise 2
   (`unbroadcast`) first: its own check says what is wrong" (this exercise keeps its points
   when graded; the earlier one's own check is what fails). With several names, the note
   names those whose reference was needed;
3. if it still fails, the failure of that second run is reported: it is this exercise's
   own mistake, whatever the earlier exercise does.

The student's namespace is restored either way. A reference says which exercise it
answers with ``@reference_for(number, "id")`` (the exercise's number in its chapter and
its id), which the note names.

**Across a process boundary.** Where the object under test stands for code that runs in
another process (a grader's proxy of the student's class or function), rebinding names
here would change nothing there. Such a proxy's class defines
``__swap_globals__(paths: dict[str, str])``, a context manager that makes the same swap
where the code runs (there: ``swap_globals(the real object, paths)``, which imports each
reference by its path); ``swap_globals`` hands it ``{name: "module:qualname"}``.
"""

from __future__ import annotations

import contextlib
import copy
import importlib
import io
import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

_MISSING = object()
LIBRARIES = ("minigrad", "abc", "typing", "numpy", "torch")  # base classes not the student's
ENGINE = Path(__file__).resolve().parents[1]  # minigrad's own files


# --- references ----------------------------------------------------------------------------


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


def load(path: str) -> Any:
    """``resolve``, for the course's own references only (``minigrad.exercises...``)."""
    if not path.startswith("minigrad.exercises"):
        raise ValueError(f"a reference is 'minigrad.exercises.<module>:<name>', got {path!r}")
    return resolve(path)


def path_of(reference: Any) -> str:
    """``"module:qualname"`` of a module-level function or class (``resolve``'s inverse)."""
    path = f"{reference.__module__}:{reference.__qualname__}"
    if resolve(path) is not reference:
        raise ValueError(f"{reference!r} cannot be imported by its name {path!r}: a "
                         "reference must be a module-level function or class")
    return path


# --- the globals the student's code reads ----------------------------------------------------


def _own(function: types.FunctionType) -> bool:
    """Written by the student, not one of minigrad's own functions (those live in files
    under minigrad/; a notebook's or a grading process's code does not)."""
    where = function.__globals__.get("__file__")
    return not (where and Path(where).resolve().is_relative_to(ENGINE))


def _functions(obj: Any) -> Iterator[types.FunctionType]:
    """The student's plain functions whose globals ``obj`` runs with: a function itself
    (through wrappers, bound methods, partials), or every method a class (or an
    instance's class) defines, in it and its bases outside minigrad and the libraries."""
    seen: set[int] = set()
    pending = [obj]
    while pending:
        thing = pending.pop()
        if id(thing) in seen or thing is None:
            continue
        seen.add(id(thing))
        if isinstance(thing, types.FunctionType):
            if _own(thing):
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
    """The global namespaces (each once) that the student's code in ``obj`` reads names
    from: a function's ``__globals__``, those of a class's methods (and its bases')."""
    found: dict[int, dict] = {}
    for function in _functions(obj):
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


# --- the swap ------------------------------------------------------------------------------


@contextlib.contextmanager
def swap_globals(obj: Any, names: dict[str, Any]) -> Iterator[Any]:
    """Meanwhile, the names in ``names`` (``{name: reference or "module:qualname"}``) are
    bound to the references in every global namespace the student's code in ``obj``
    reads; restored (or removed, where they were not there) on exit. Yields the object to
    check: ``obj``, or, when ``obj`` is a class built on one of the names' classes
    (``class MyAdamW(MyAdam)``), a copy of it built on the reference. A proxy of code in
    another process makes the swap there (its class's ``__swap_globals__``, see the
    module's docstring)."""
    owner = obj if isinstance(obj, type) else type(obj)
    remote = getattr(owner, "__swap_globals__", None)
    if remote is not None:
        paths = {name: ref if isinstance(ref, str) else path_of(ref)
                 for name, ref in names.items()}
        with (remote(paths) if isinstance(obj, type) else remote.__get__(obj)(paths)) \
                as made:  # (the rebuilt class there, when there is one)
            yield obj if made is None else made
        return
    values = {name: resolve(ref) if isinstance(ref, str) else ref
              for name, ref in names.items()}
    spaces = globals_of(obj)
    swapped = obj
    if isinstance(obj, type):
        for name, reference in values.items():
            for space in spaces:
                old = space.get(name)
                if isinstance(old, type) and isinstance(reference, type) and \
                        old in swapped.__mro__[1:]:
                    swapped = rebased(swapped, old, reference)
    saved = [(space, name, space.get(name, _MISSING)) for space in spaces for name in values]
    try:
        for space, name, _ in saved:
            space[name] = values[name]
        yield swapped
    finally:
        for space, name, old in reversed(saved):
            if old is _MISSING:
                space.pop(name, None)
            else:
                space[name] = old


# --- the check -----------------------------------------------------------------------------


def _exercise(name: str, ref: Any) -> str:
    reference = resolve(ref) if isinstance(ref, str) else ref
    number, exercise = getattr(reference, "__exercise__", (None, name))
    return f"{number} (`{exercise}`)" if number is not None else f"`{exercise}`"


def _fresh(values: Any) -> Any:
    """A deep copy of a check's arguments: ``mistakes`` may keep state between calls (the
    wrong optimizers of chapter 09 do), and each run must start as the first did."""
    try:
        return copy.deepcopy(values)
    except Exception:  # noqa: BLE001 - what cannot be copied is used as it is
        return values


def _name(thing: Any) -> str:
    return getattr(thing, "__name__", None) or type(thing).__name__


def check_on_its_own(check: Callable, obj: Any, *args: Any,
                     uses: dict[str, Any] | None = None, **kwargs: Any) -> None:
    """``check(obj, *args, **kwargs)`` (it raises an ``AssertionError`` on a failure);
    where it fails and ``obj`` uses earlier exercises' code (``uses``: ``{name in the
    student's namespace: reference or "module:qualname"}``), again with those names
    swapped for their references: a pass then is a pass, with a note naming the earlier
    exercise to fix (see the module's docstring); a failure is this exercise's own, and
    raised."""
    if not uses:
        check(obj, *args, **kwargs)
        return
    pristine = _fresh((args, kwargs))
    try:
        check(obj, *args, **kwargs)
        return
    except AssertionError as failure:
        own = failure

    def run(names: dict[str, Any]) -> None:
        fresh_args, fresh_kwargs = _fresh(pristine)
        with swap_globals(obj, names) as swapped:
            check(swapped, *fresh_args, **fresh_kwargs)

    try:
        run(uses)
    except AssertionError as failure:  # this exercise's own mistake
        if str(failure) != str(own):
            failure = type(failure)(
                f"{failure}\n(This ran with the reference{'s' * (len(uses) > 1)} "
                f"{' and '.join(uses)} in place of yours: the mistake is in {_name(obj)} "
                "itself.)")
        raise failure.with_traceback(None) from None
    except Exception:  # noqa: BLE001 - the references do not fit: the first failure stands
        raise own.with_traceback(None) from None
    culprits = [name for name in uses if len(uses) == 1 or not _passes_quietly(
        run, {other: ref for other, ref in uses.items() if other != name})] or list(uses)
    plural = len(culprits) > 1
    exercises = " and ".join(_exercise(name, uses[name]) for name in culprits)
    print(f"Note: your {_name(obj)} is right with the reference{'s' * plural} "
          f"{' and '.join(culprits)}; fix exercise{'s' * plural} {exercises} first: "
          f"{'their' if plural else 'its'} own check{'s say' if plural else ' says'} what "
          "is wrong.")


def _passes_quietly(run: Callable[[dict], None], names: dict[str, Any]) -> bool:
    """Does the check pass with only ``names`` swapped (its printed lines unseen)?"""
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            run(names)
    except Exception:  # noqa: BLE001 - an AssertionError, or code that does not fit
        return False
    return True


__all__ = ["check_on_its_own", "globals_of", "load", "path_of", "rebased", "reference_for",
           "resolve", "swap_globals"]
