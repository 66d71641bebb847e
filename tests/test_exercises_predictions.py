"""A "predict, then run" exercise is checked in full by its visible check (what grading
checks), and a wrong prediction is told what is wrong, never the answer
(``check_value(..., reveal=False)``): chapter 05's prediction of a tie's gradient."""

from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest
from conftest import fails

from minigrad.exercises import check_value
from minigrad.exercises.reductions import check_tie_prediction

CHAPTER = pathlib.Path(__file__).resolve().parents[1] / "notebooks" / "05_reductions.ipynb"


def _test_cell(grade_id: str) -> str:
    for cell in json.loads(CHAPTER.read_text(encoding="utf-8"))["cells"]:
        if cell["metadata"].get("nbgrader", {}).get("grade_id") == grade_id:
            return "".join(cell["source"])
    raise AssertionError(f"no cell {grade_id}")


def run_prediction_check(prediction) -> None:
    exec(_test_cell("max-prediction-tests"),  # noqa: S102 - the chapter's own cell
         {"check_tie_prediction": check_tie_prediction, "np": np,
          "max_grad_prediction": prediction})


def test_the_visible_check_has_no_hidden_part_and_does_not_show_the_answer():
    cell = _test_cell("max-prediction-tests")
    assert "HIDDEN" not in cell and "1.0" not in cell


def test_the_right_prediction_passes(capsys):
    run_prediction_check([0.0, 1.0, 1.0, 0.0])
    assert "right" in capsys.readouterr().out


@pytest.mark.parametrize("prediction, words", [
    ([0.0, 2.0, 0.0, 0.0], "that is what torch.max(x, dim) does"),
    ([0.0, 2.0, 2.0, 0.0], "each tied element got the whole upstream gradient"),
    ([0.0, 0.5, 0.5, 0.0], "the shares add up to 1"),
    ([0.0, 0.8, 1.2, 0.0], "2 of 4 value(s) are not right")])
def test_a_wrong_prediction_is_told_what_is_wrong_not_the_answer(prediction, words):
    told = fails(run_prediction_check, prediction)
    assert words in told
    assert "expected" not in told and "yours" not in told


def test_a_prediction_of_the_wrong_length_is_refused_without_the_answer():
    told = fails(run_prediction_check, [0.0, 2.0, 0.0])
    assert "wrong shape" in told and "expected shape (4,)" in told
    assert "1.0" not in told


def test_reveal_false_keeps_a_number_s_value_out_of_the_message():
    told = fails(check_value, 1, 9, "your answer", reveal=False)
    assert "9" not in told and "not right" in told
    assert "expected 9" in fails(check_value, 1, 9, "your answer")
