"""use_reference loads the reference answers an exercise's code depends on (issue 31,
section 3): the reference of a later exercise runs on references, never on an earlier
exercise's wrong answer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import minigrad.course as course
from minigrad.course.authoring import apply_exercise_tags
from minigrad.course.notebook import dependencies, reference_sources

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"


def chapter(stem: str) -> dict:
    notebook = json.loads((NOTEBOOKS / f"{stem}.ipynb").read_text(encoding="utf-8"))
    apply_exercise_tags(notebook)
    return notebook


@pytest.mark.parametrize("stem, exercise, expected", [
    ("02_tensors_and_broadcasting", "mymul-broadcast", ["unbroadcast"]),
    ("02_tensors_and_broadcasting", "unbroadcast", []),
    ("05_reductions", "myvar", ["variance"]),
    ("09_optimizers_and_training", "my_adamw", ["my_adam"]),
    # the block uses the multi-head attention, which uses the attention and the mask
    ("13_attention_and_transformer", "my_transformer_block",
     ["my_attention", "causal_mask", "my_multihead_attention"]),
    ("10_convolution_and_pooling", "my_conv2d_layer",
     ["conv_output_size", "my_im2col", "my_conv2d"]),
])
def test_an_exercise_depends_on_the_exercises_its_checks_use_in_chapter_order(
        stem, exercise, expected):
    assert dependencies(chapter(stem), exercise) == expected


def test_reference_sources_run_the_dependencies_first():
    stem, loads = reference_sources("mymul-broadcast", "02_tensors_and_broadcasting")
    assert stem == "02_tensors_and_broadcasting"
    assert [exercise for exercise, _ in loads] == ["unbroadcast", "mymul-broadcast"]
    assert all("BEGIN SOLUTION" not in code for _, code in loads)


def test_use_reference_replaces_a_wrong_earlier_answer_the_reference_calls(capsys):
    # chapter 2's reference MyMul calls the notebook's unbroadcast: with the student's
    # wrong one (it sums only one added leading dimension) the reference would fail
    namespace = {"__name__": "notebook"}
    exec("import numpy as np\nimport minigrad as mg\n"
         "def unbroadcast(grad, shape):\n"
         "    return grad.sum(axis=0) if grad.ndim > len(shape) else grad\n"
         "from minigrad.course import use_reference\n"
         "use_reference('mymul-broadcast')\n", namespace)
    out = capsys.readouterr().out
    assert "reference answer to exercise mymul-broadcast" in out
    assert "unbroadcast (unbroadcast)" in out and "in place of yours" in out
    import numpy as np

    grad = namespace["unbroadcast"](np.ones((2, 3, 4)), (4,))
    assert grad.shape == (4,) and np.all(grad == 6)  # the reference's
    from minigrad.exercises import check_function

    check_function(namespace["MyMul"], inputs=[[(2, 3, 4), (4,)], [(3, 4), ()]],
                   reference=lambda x, y: x * y, exact_shapes=True)
    assert "fix exercise" not in capsys.readouterr().out


def test_use_reference_of_an_exercise_without_dependencies_loads_only_its_own(capsys):
    namespace = {"__name__": "notebook"}
    exec("import numpy as np\nimport minigrad as mg\nfrom minigrad.course import "
         "use_reference\nuse_reference('unbroadcast', chapter=2)\n", namespace)
    out = capsys.readouterr().out
    assert "in place of yours" not in out and callable(namespace["unbroadcast"])
    with pytest.raises(LookupError, match="no exercise"):
        course.use_reference("no-such-exercise")
