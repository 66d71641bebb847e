"""An exercise whose code uses an earlier exercise's is judged on its own
(minigrad/exercises/prerequisites.py): with ``uses=``, a check that fails only because of
the earlier exercise passes with a note naming it, and this exercise's own mistake is
still named. The student's code runs as a notebook's does: its functions read the names
of the earlier exercises from one global namespace."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

import minigrad as mg
from minigrad.exercises import check_array_function, check_function
from minigrad.exercises.broadcasting import builtin_unbroadcast
from minigrad.exercises.prerequisites import globals_of, resolve, swap_globals

UNBROADCAST = "minigrad.exercises.broadcasting:builtin_unbroadcast"

RIGHT_UNBROADCAST = """
def unbroadcast(grad, shape):
    while grad.ndim > len(shape):
        grad = grad.sum(axis=0)
    for axis, size in enumerate(shape):
        if size == 1 and grad.shape[axis] != 1:
            grad = grad.sum(axis=axis, keepdims=True)
    return grad
"""
ONE_LEADING_DIMENSION = RIGHT_UNBROADCAST.replace("while", "if")
MYMUL = """
class MyMul(mg.Function):
    @staticmethod
    def forward(ctx, x, y):
        ctx.save_for_backward(x, y)
        return x * y

    @staticmethod
    def backward(ctx, grad_output):
        x, y = ctx.saved_tensors
        return {body}
"""
RIGHT_BODY = "unbroadcast(grad_output * y, x.shape), unbroadcast(grad_output * x, y.shape)"
SWAPPED_BODY = "unbroadcast(grad_output * x, x.shape), unbroadcast(grad_output * y, y.shape)"
INPUTS = [[(3, 4), (4,)], [(2, 3, 4), (4,)], [(3, 4), ()]]


def notebook(*cells: str) -> dict:
    """The global namespace of a notebook that ran ``cells``."""
    namespace = {"__name__": "__main__", "mg": mg, "np": np}
    for cell in cells:
        exec(textwrap.dedent(cell), namespace)  # noqa: S102 - the test's own code
    return namespace


def check_mul(namespace: dict, **options) -> None:
    check_function(namespace["MyMul"], inputs=INPUTS, reference=lambda x, y: x * y,
                   exact_shapes=True, **options)


def test_a_reference_is_found_by_its_import_path():
    assert resolve(UNBROADCAST) is builtin_unbroadcast
    assert builtin_unbroadcast.__exercise__ == (2, "unbroadcast")
    with pytest.raises(ValueError, match="module:qualname"):
        resolve("minigrad.exercises.broadcasting")


def test_swap_globals_rebinds_the_names_a_class_reads_and_restores_them():
    namespace = notebook(RIGHT_UNBROADCAST, MYMUL.format(body=RIGHT_BODY))
    mine = namespace["unbroadcast"]
    assert globals_of(namespace["MyMul"]) == [namespace]
    with swap_globals(namespace["MyMul"], {"unbroadcast": UNBROADCAST, "absent": len}):
        assert namespace["unbroadcast"] is builtin_unbroadcast
        assert namespace["absent"] is len
    assert namespace["unbroadcast"] is mine and "absent" not in namespace


def test_swap_globals_reaches_a_function_s_and_a_lambda_s_globals():
    namespace = notebook("def twice(x):\n    return helper(x) * 2\n",
                         "call = lambda x: twice(x)\n")
    with swap_globals(namespace["call"], {"helper": abs}):
        assert namespace["call"](-3) == 6
    assert "helper" not in namespace


def test_a_right_mymul_on_a_wrong_unbroadcast_passes_with_a_note(capsys):
    namespace = notebook(ONE_LEADING_DIMENSION, MYMUL.format(body=RIGHT_BODY))
    with pytest.raises(AssertionError, match="not summed over the broadcast dimensions"):
        check_mul(namespace)  # without uses=, the earlier mistake is blamed on MyMul
    capsys.readouterr()
    check_mul(namespace, uses={"unbroadcast": UNBROADCAST})
    out = capsys.readouterr().out
    assert "MyMul: forward and backward are right" in out
    assert ("your MyMul is right with the reference unbroadcast; fix exercise 2 "
            "(`unbroadcast`) first: its own check says what is wrong") in " ".join(out.split())
    assert namespace["unbroadcast"] is not builtin_unbroadcast  # the student's is back


def test_a_wrong_mymul_on_a_wrong_unbroadcast_is_told_its_own_mistake():
    namespace = notebook(ONE_LEADING_DIMENSION, MYMUL.format(body=SWAPPED_BODY))
    with pytest.raises(AssertionError) as failure:
        check_mul(namespace, uses={"unbroadcast": UNBROADCAST},
                  mistakes={"x and y are swapped": lambda x, y, g: (
                      builtin_unbroadcast(g * x, np.shape(x)),
                      builtin_unbroadcast(g * y, np.shape(y)))})
    assert "x and y are swapped" in str(failure.value)


def test_a_right_mymul_on_a_right_unbroadcast_passes_without_a_note(capsys):
    check_mul(notebook(RIGHT_UNBROADCAST, MYMUL.format(body=RIGHT_BODY)),
              uses={"unbroadcast": UNBROADCAST})
    assert "Note" not in capsys.readouterr().out


def test_an_unwritten_earlier_exercise_is_named_too(capsys):
    namespace = notebook("def unbroadcast(grad, shape):\n    raise NotImplementedError()\n",
                         MYMUL.format(body=RIGHT_BODY))
    check_mul(namespace, uses={"unbroadcast": UNBROADCAST})
    assert "fix exercise 2 (`unbroadcast`) first" in " ".join(capsys.readouterr().out.split())


def test_of_two_earlier_exercises_the_wrong_one_is_named(capsys):
    namespace = notebook("def double(x):\n    return 2 * x\n",
                         "def halve(x):\n    return x / 3\n",  # wrong
                         "def same(x):\n    return halve(double(x))\n")
    uses = {"double": "tests_prerequisites_references:double",
            "halve": "tests_prerequisites_references:halve"}
    check_array_function(namespace["same"], [(np.arange(3.0),)], reference=lambda x: x,
                         uses=uses)
    out = " ".join(capsys.readouterr().out.split())
    assert "with the reference halve; fix exercise 2 (`halve`) first" in out


@pytest.fixture(autouse=True)
def references(monkeypatch):
    """A module of references, importable by path as a chapter's are."""
    import sys
    import types

    from minigrad.exercises.prerequisites import reference_for

    module = types.ModuleType("tests_prerequisites_references")
    module.double = reference_for(1, "double")(lambda x: 2 * x)
    module.halve = reference_for(2, "halve")(lambda x: x / 2)
    monkeypatch.setitem(sys.modules, module.__name__, module)


def test_a_proxy_of_code_in_another_process_makes_the_swap_there(capsys):
    # a grader's proxy: the student's code runs elsewhere, and the swap is asked of it
    # by import path (here "elsewhere" is a namespace the proxy calls into)
    import contextlib

    from minigrad.exercises.prerequisites import path_of

    elsewhere = notebook(ONE_LEADING_DIMENSION, MYMUL.format(body=RIGHT_BODY))
    asked = []

    class Proxy(elsewhere["MyMul"]):
        @classmethod
        @contextlib.contextmanager
        def __swap_globals__(cls, paths):
            asked.append(paths)
            with swap_globals(elsewhere["MyMul"], paths):
                yield

    check_mul({"MyMul": Proxy}, uses={"unbroadcast": builtin_unbroadcast})
    assert asked == [{"unbroadcast": UNBROADCAST}]
    assert path_of(builtin_unbroadcast) == UNBROADCAST
    assert "fix exercise 2 (`unbroadcast`) first" in " ".join(capsys.readouterr().out.split())
