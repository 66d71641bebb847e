"""Chapter 11 (normalisation): the checks of its exercises name the mistakes added after
its walk-through: running statistics updated with the graph on, and eps missing or
outside the square root (seen on a batch of small variance)
(minigrad/exercises/normalization.py)."""

from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest
from conftest import fails

import minigrad as mg
import minigrad.nn.functional as F
from minigrad import nn
from minigrad.exercises import check_function, check_module
from minigrad.exercises.normalization import (BATCHNORM1D_MISTAKES, BATCHNORM_MISTAKES,
                                              EPS_MISSING, EPS_OUTSIDE, LAYERNORM_MISTAKES,
                                              small_variance, with_random_affine)

CHAPTER = (pathlib.Path(__file__).resolve().parents[1] / "notebooks"
           / "11_normalization_and_residuals.ipynb")


def _solutions() -> dict[str, str]:
    return {cell["metadata"]["nbgrader"]["grade_id"]: "".join(cell["source"])
            for cell in json.loads(CHAPTER.read_text(encoding="utf-8"))["cells"]
            if cell["metadata"].get("nbgrader", {}).get("solution") and cell["cell_type"] == "code"}


SOLUTIONS = _solutions()


def _answers(**changes: tuple[str, str]) -> dict:
    """The chapter's solution cells run, with ``{grade_id: (old, new)}`` text replaced."""
    namespace = {"mg": mg, "np": np, "nn": nn, "EPS": 1e-5}
    for grade_id, source in SOLUTIONS.items():
        if grade_id in changes:
            old, new = changes[grade_id]
            assert old in source, old
            source = source.replace(old, new)
        exec(source, namespace)
    return namespace


def _check_function(answers: dict) -> None:
    check_function(answers["MyBatchNormFunction"],
                   inputs=[[small_variance((6, 3)), (3,), (3,)], [(8, 3), (3,), (3,)],
                           [(5, 4), (4,), (4,)]],
                   reference=lambda x, weight, bias: F.batch_norm(
                       x, None, None, weight, bias, training=True, eps=1e-5),
                   mistakes=BATCHNORM_MISTAKES, exact_shapes=True)


def _check_batchnorm1d(answers: dict) -> None:
    check_module(answers["MyBatchNorm1d"], with_random_affine(nn.BatchNorm1d), args=(4,),
                 inputs=[[small_variance((6, 4))], [(8, 4)], [(5, 4)]],
                 mistakes=BATCHNORM1D_MISTAKES)


def _check_layernorm(answers: dict) -> None:
    check_module(answers["MyLayerNorm"], with_random_affine(nn.LayerNorm), args=(4,),
                 inputs=[[small_variance((3, 4))], [(5, 4)], [(2, 3, 4)]],
                 mistakes=LAYERNORM_MISTAKES)


def test_the_chapter_s_answers_pass_with_a_batch_of_small_variance():
    answers = _answers()
    _check_function(answers)
    _check_batchnorm1d(answers)
    _check_layernorm(answers)


@pytest.mark.parametrize("new, named", [("(np.sqrt(var) + EPS)", EPS_OUTSIDE),
                                        ("np.sqrt(var)", EPS_MISSING)])
def test_batch_norm_s_eps_missing_or_outside_the_sqrt_is_named(new, named):
    answers = _answers(my_batchnorm_backward=("np.sqrt(var + EPS)", new))
    assert named.split(":")[0].split(",")[0] in fails(_check_function, answers)


@pytest.mark.parametrize("new, named", [
    ("(self.running_var.sqrt() + self.eps)", EPS_OUTSIDE),
    ("self.running_var.sqrt()", EPS_MISSING)])
def test_batch_norm_1d_s_eval_eps_missing_or_outside_the_sqrt_is_named(new, named):
    answers = _answers(my_batchnorm1d=("(self.running_var + self.eps).sqrt()", new))
    message = fails(_check_batchnorm1d, answers)
    assert "in eval mode" in message and named in message


@pytest.mark.parametrize("new, named", [("(var.sqrt() + self.eps)", EPS_OUTSIDE),
                                        ("var.sqrt()", EPS_MISSING)])
def test_layer_norm_s_eps_missing_or_outside_the_sqrt_is_named(new, named):
    answers = _answers(my_layernorm=("(var + self.eps).sqrt()", new))
    assert named in fails(_check_layernorm, answers)


def test_running_statistics_updated_with_the_graph_on_are_named_not_retain_graph():
    source = SOLUTIONS["my_batchnorm1d"]
    start = source.index("            with mg.no_grad():")
    assert "with mg.no_grad():" in source[start:start + 40]
    answers = _answers(my_batchnorm1d=("with mg.no_grad():", "if True:"))
    message = fails(_check_batchnorm1d, answers)
    assert "part of the autograd graph" in message and "mg.no_grad()" in message
    assert "retain_graph" not in message
