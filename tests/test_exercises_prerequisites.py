"""Each exercise judged on its own (minigrad/exercises/prerequisites.py), as chapters
08-15 use it: a check of code built on an earlier answer reruns on that answer's
reference when it fails; passing so, it passes with a note that names the earlier
exercise to fix."""

from __future__ import annotations

import pytest
from conftest import fails

from minigrad.exercises import prerequisites
from minigrad.exercises.checks import check_array_function, checker
from minigrad.exercises.compare import CheckFailed

REFERENCE = "minigrad.exercises.attention:causal_mask_reference"


def make_student(source: str) -> dict:
    """A notebook's namespace with the student's ``source`` run in it."""
    namespace = {"__name__": "__main__"}
    exec(source, namespace)
    return namespace


def test_swap_globals_rebinds_a_name_inside_and_restores_it_after():
    student = make_student("def earlier(n):\n    return 'mine'\n\n"
                           "def later(n):\n    return earlier(n)\n")
    with prerequisites.swap_globals(student["later"], {"earlier": REFERENCE}) as later:
        assert later is student["later"]
        assert later(2).tolist() == [[True, False], [True, True]]
    assert student["later"](2) == "mine"


def test_swap_globals_removes_a_name_that_was_not_defined_and_restores_on_error():
    student = make_student("def later(n):\n    return earlier(n)\n")  # earlier never run
    with pytest.raises(RuntimeError), \
            prerequisites.swap_globals(student["later"], {"earlier": REFERENCE}):
        assert student["later"](1).tolist() == [[True]]
        raise RuntimeError("the check raised")
    assert "earlier" not in student


class Base:
    def __init__(self, scale):
        self.scale = scale

    def value(self):
        return 1


class Reference(Base):
    def value(self):
        return 10


def test_a_class_built_on_the_earlier_class_is_rebuilt_on_the_reference():
    student = make_student(
        "class Earlier:\n    def __init__(self, scale):\n        self.scale = scale\n"
        "    def value(self):\n        return -1\n\n"
        "class Later(Earlier):\n    def __init__(self, scale=2):\n"
        "        super().__init__(scale)\n"
        "    def value(self):\n        return super().value() * self.scale\n"
        "    @staticmethod\n    def name():\n        return 'later'\n")
    later = student["Later"]
    with prerequisites.swap_globals(later, {"Earlier": Reference}) as rebuilt:
        assert rebuilt is not later and rebuilt.__name__ == "Later"
        assert rebuilt().value() == 20 and rebuilt.name() == "later"
        assert student["Earlier"] is Reference
    assert later().value() == -2 and later.__mro__[1] is student["Earlier"]


@checker
def check_later(function, size=3):
    check_array_function.__wrapped__(function, [(size,)], lambda n: n * n)


def test_a_check_that_passes_with_the_reference_names_the_earlier_exercise(capsys):
    student = make_student("import numpy as np\n\ndef causal_mask(n):\n"
                           "    return np.zeros((n, n), dtype=bool)\n\n"
                           "def later(n):\n    return int(causal_mask(n).sum()) * 2 - n\n")
    assert "wrong values" in fails(check_later, student["later"])
    prerequisites.check_on_its_own(check_later, student["later"], 3,
                                   uses={"causal_mask": REFERENCE})
    note = capsys.readouterr().out
    assert "your later is right with the reference causal_mask" in note
    assert "fix exercise 2 (`causal_mask`) first" in note
    assert not student["causal_mask"](3).any()  # the student's own is back


def test_this_exercise_s_own_mistake_is_reported_with_the_reference_in_place():
    student = make_student("import numpy as np\n\ndef causal_mask(n):\n"
                           "    return np.zeros((n, n), dtype=bool)\n\n"
                           "def later(n):\n    return int(causal_mask(n).sum()) * 3\n")
    message = fails(check_later, student["later"], uses={"causal_mask": REFERENCE})
    assert "wrong values" in message
    assert "the mistake is in later itself" in message


def test_without_uses_or_when_it_passes_the_check_is_the_checker_itself(capsys):
    prerequisites.check_on_its_own(check_later, lambda n: n * n, uses={"x": REFERENCE})
    assert "right" in capsys.readouterr().out
    with pytest.raises(AssertionError):
        prerequisites.check_on_its_own(check_later, lambda n: n)


def test_references_are_importable_answers_of_an_exercise():
    for path, answer in [
            ("minigrad.exercises.losses:reference_smoothed_targets", (3, "smoothedtargets")),
            ("minigrad.exercises.optimizers:ReferenceAdam", (2, "my_adam")),
            ("minigrad.exercises.convolution:output_size", (1, "conv_output_size")),
            ("minigrad.exercises.convolution:im2col", (2, "my_im2col")),
            ("minigrad.exercises.convolution:ReferenceConv2dFunction", (3, "my_conv2d")),
            ("minigrad.exercises.normalization:ReferenceBatchNormFunction",
             (1, "my_batchnorm_backward")),
            ("minigrad.exercises.attention:ReferenceAttentionFunction", (1, "my_attention")),
            ("minigrad.exercises.attention:causal_mask_reference", (2, "causal_mask")),
            ("minigrad.exercises.attention:ReferenceMultiheadAttention",
             (3, "my_multihead_attention"))]:
        assert prerequisites.load(path).__exercise__ == answer
    with pytest.raises(ValueError):
        prerequisites.load("os:system")


def test_the_check_s_arguments_are_fresh_for_each_run():
    calls = []

    @checker
    def check_counting(function, mistakes):
        mistakes.append(1)
        calls.append(len(mistakes))
        if function() != 1:
            raise CheckFailed("wrong")

    student = make_student("def earlier(n):\n    return [[False]]\n\ndef later():\n"
                           "    return int(earlier(1)[0][0])\n")
    prerequisites.check_on_its_own(check_counting, student["later"], [],
                                   uses={"earlier": REFERENCE})
    assert calls == [1, 1]  # the rerun got the list as it was before the first run
