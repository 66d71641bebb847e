"""Chapter 07 (matrix products and the Linear layer): the chapter's reference answers
against PyTorch, PyTorch's initialisation as the chapter states it, and the checks of its
exercises, each of which must name its classic mistakes (minigrad/exercises/linear.py)."""

from __future__ import annotations

import json
import math
import pathlib

import numpy as np
import pytest
from conftest import fails

import minigrad as mg
import minigrad.nn.functional as F
from minigrad import nn
from minigrad.exercises import check_function
from minigrad.exercises.linear import (BOUNDS, IN_FEATURES, LINEAR_FORWARD_MISTAKES,
                                       LINEAR_MISTAKES, MATMUL_NOT_SQUARE_MISTAKES,
                                       OUT_FEATURES, check_linear_function, check_linear_init)

CHAPTER = pathlib.Path(__file__).resolve().parents[1] / "notebooks" / "07_matmul_and_linear.ipynb"


def _answers() -> dict:
    """The chapter's solution cells, run: MyMatMul, MyLinearFunction, MyLinear."""
    namespace = {"mg": mg, "np": np, "nn": nn, "math": math}
    for cell in json.loads(CHAPTER.read_text(encoding="utf-8"))["cells"]:
        if cell["metadata"].get("nbgrader", {}).get("solution") and cell["cell_type"] == "code":
            exec("".join(cell["source"]), namespace)
    return namespace


ANSWERS = _answers()


# --- the reference answers, against PyTorch ------------------------------------------------


def test_the_matmul_answer_has_pytorch_s_gradients_on_non_square_shapes():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    a, b, g = rng.standard_normal((2, 3)), rng.standard_normal((3, 4)), rng.standard_normal((2, 4))
    ta, tb = (torch.tensor(v, requires_grad=True) for v in (a, b))
    (ta @ tb).backward(torch.tensor(g))
    ma, mb = mg.tensor(a, requires_grad=True), mg.tensor(b, requires_grad=True)
    out = ANSWERS["MyMatMul"].apply(ma, mb)
    (out * mg.tensor(g)).sum().backward()
    np.testing.assert_allclose(out.detach().numpy(), (ta @ tb).detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(ma.grad.numpy(), ta.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(mb.grad.numpy(), tb.grad.numpy(), rtol=1e-12)


def test_the_linear_function_answer_has_pytorch_s_gradients():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    x, w, b = rng.standard_normal((5, 4)), rng.standard_normal((3, 4)), rng.standard_normal(3)
    g = rng.standard_normal((5, 3))
    tx, tw, tb = (torch.tensor(v, requires_grad=True) for v in (x, w, b))
    expected = torch.nn.functional.linear(tx, tw, tb)
    expected.backward(torch.tensor(g))
    mx, mw, mb = (mg.tensor(v, requires_grad=True) for v in (x, w, b))
    out = ANSWERS["MyLinearFunction"].apply(mx, mw, mb)
    (out * mg.tensor(g)).sum().backward()
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), rtol=1e-12)
    for mine, theirs in ((mx, tx), (mw, tw), (mb, tb)):
        np.testing.assert_allclose(mine.grad.numpy(), theirs.grad.numpy(), rtol=1e-12)


def test_the_linear_module_answer_matches_torch_s_with_the_same_weights():
    torch = pytest.importorskip("torch")
    mine = ANSWERS["MyLinear"](4, 3)
    theirs = torch.nn.Linear(4, 3).double()
    with torch.no_grad():
        theirs.weight.copy_(torch.tensor(mine.weight.detach().numpy()))
        theirs.bias.copy_(torch.tensor(mine.bias.detach().numpy()))
    x = np.random.default_rng(2).standard_normal((6, 4)).astype(np.float32)
    np.testing.assert_allclose(mine(mg.tensor(x)).detach().numpy(),
                               theirs(torch.tensor(x, dtype=torch.float64)).detach().numpy(),
                               rtol=1e-5, atol=1e-6)


def test_pytorch_s_linear_starts_uniform_in_one_over_sqrt_in_as_the_chapter_says():
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    layer = torch.nn.Linear(IN_FEATURES, OUT_FEATURES)
    bound = 1 / math.sqrt(IN_FEATURES)
    for values in (layer.weight.detach().numpy(), layer.bias.detach().numpy()):
        assert np.abs(values).max() <= bound
        assert np.abs(values).max() > 0.95 * bound
        assert values.std() == pytest.approx(bound / math.sqrt(3), rel=0.1)


# --- check_linear_init ---------------------------------------------------------------------


def test_minigrad_s_own_linear_passes_the_init_check(capsys):
    check_linear_init(nn.Linear)
    assert "uniform in +-1/sqrt(in_features)" in capsys.readouterr().out


def test_the_module_answer_passes_the_init_check():
    check_linear_init(ANSWERS["MyLinear"])


def _layer(weight, bias=None, **extra):
    """A Linear-like module class whose __init__ sets what ``weight``/``bias`` make."""

    class Layer(nn.Module):
        def __init__(self, in_features, out_features):
            super().__init__()
            made_weight = weight(in_features, out_features)
            if made_weight is not None:
                self.weight = made_weight
            if bias is not None:
                self.bias = bias(in_features, out_features)
            for name, make in extra.items():
                setattr(self, name, make(in_features, out_features))

    return Layer


def _uniform(*shape, bound):
    return mg.empty(*shape).uniform_(-bound, bound)


def _right_weight(i, o):
    return nn.Parameter(_uniform(o, i, bound=1 / math.sqrt(i)))


def _right_bias(i, o):
    return nn.Parameter(_uniform(o, bound=1 / math.sqrt(i)))


INIT_MISTAKES = {
    "bound 1/in": (_layer(lambda i, o: nn.Parameter(_uniform(o, i, bound=1 / i)), _right_bias),
                   "the bound is 1/in_features"),
    "kaiming for relu": (_layer(lambda i, o: nn.Parameter(_uniform(o, i, bound=math.sqrt(6 / i))),
                                _right_bias), "Kaiming's bound for ReLU"),
    "xavier": (_layer(lambda i, o: nn.Parameter(_uniform(o, i, bound=math.sqrt(6 / (i + o)))),
                      _right_bias), "Xavier's bound"),
    "fan out": (_layer(lambda i, o: nn.Parameter(_uniform(o, i, bound=1 / math.sqrt(o))),
                       _right_bias), "the fan-out"),
    "normal": (_layer(lambda i, o: nn.Parameter(mg.randn(o, i) / math.sqrt(i)), _right_bias),
               "they are not uniform"),
    "all positive": (_layer(lambda i, o: nn.Parameter(mg.rand(o, i) / math.sqrt(i)), _right_bias),
                     "the values are all positive"),
    "zero bias": (_layer(_right_weight, lambda i, o: nn.Parameter(mg.zeros(o))),
                  "bias was left at zero"),
    "weight (in, out)": (_layer(lambda i, o: nn.Parameter(_uniform(i, o, bound=1 / math.sqrt(i))),
                                _right_bias), "the layout of y = x @ W"),
    "bias a plain tensor": (_layer(_right_weight, lambda i, o: _right_bias(i, o).detach()
                                   .requires_grad_()),
                            "self.bias is a Tensor, not an nn.Parameter"),
    "bias a numpy array": (_layer(_right_weight, lambda i, o: np.zeros(o)),
                           "self.bias is a NumPy array"),
    "bias forgotten": (_layer(_right_weight), "the bias was forgotten"),
    "parameters in a list": (_layer(lambda i, o: None, params=lambda i, o: [_right_weight(i, o),
                                                                             _right_bias(i, o)]),
                             "self.params (a plain Python list) are not registered"),
    "an extra parameter": (_layer(_right_weight, _right_bias,
                                  scale=lambda i, o: nn.Parameter(mg.ones(o))),
                           "nn.Linear has only 'weight' and 'bias'"),
}


@pytest.mark.parametrize("mistake", list(INIT_MISTAKES))
def test_each_init_mistake_is_named(mistake):
    layer, words = INIT_MISTAKES[mistake]
    assert words in fails(check_linear_init, layer)


class _NoBiasInForward(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.weight = _right_weight(in_features, out_features)
        self.bias = _right_bias(in_features, out_features)

    def forward(self, x):
        return x @ self.weight.T


def test_a_forward_that_leaves_the_bias_out_is_named():
    with pytest.raises(AssertionError) as failure:
        check_linear_init(_NoBiasInForward)
    assert "forward returns x @ weight.T without the bias" in " ".join(
        str(failure.value).split())


class _OwnOps(_NoBiasInForward):
    def forward(self, x):  # the right numbers, without MyLinearFunction
        return x @ self.weight.T + self.bias


def test_a_forward_that_does_not_use_the_student_s_function_is_named(capsys):
    function = ANSWERS["MyLinearFunction"]
    message = fails(check_linear_init, _OwnOps, function=function)
    assert "forward does not use your MyLinearFunction" in message
    assert "Return MyLinearFunction.apply(x, self.weight, self.bias)" in message
    check_linear_init(_OwnOps)  # without function=, the numbers are all it sees
    check_linear_init(ANSWERS["MyLinear"], function=function)
    assert "forward uses MyLinearFunction" in capsys.readouterr().out


def test_a_forward_not_written_yet_is_left_to_check_module(capsys):
    class NoForward(_NoBiasInForward):
        def forward(self, x):
            raise NotImplementedError("exercise mylinear: write your code here")

    check_linear_init(NoForward)
    assert "weight and bias are Parameters" in capsys.readouterr().out


def test_every_named_bound_differs_from_the_right_one_by_more_than_the_tolerance():
    right = 1 / math.sqrt(IN_FEATURES)
    assert all(abs(bound - right) > 0.1 * right for bound in BOUNDS.values())


def test_the_init_check_leaves_the_random_generator_as_it_was():
    mg.manual_seed(3)
    expected = mg.rand(4).numpy()
    mg.manual_seed(3)
    check_linear_init(nn.Linear)
    np.testing.assert_array_equal(mg.rand(4).numpy(), expected)


# --- the exercises' checks name their mistakes ---------------------------------------------


def _function_with_backward(arity: int, backward):
    """A Function with a right forward (a @ b or x @ W.T + b) and the given backward."""

    class Answer(mg.Function):
        @staticmethod
        def forward(ctx, *arrays):
            ctx.save_for_backward(*arrays)
            a, b = arrays[:2]
            return a @ b if arity == 2 else a @ b.T + arrays[2]

        @staticmethod
        def backward(ctx, grad_output):
            return backward(*ctx.saved_tensors, grad_output)

    return Answer


MATMUL_CASES = [[(3, 3), (3, 3)], [(2, 3), (3, 4)], [(4, 2), (2, 5)]]  # as in the chapter
LINEAR_CASES = [[(5, 4), (4, 4), (4,)], [(5, 4), (3, 4), (3,)], [(6, 2), (7, 2), (7,)]]


@pytest.mark.parametrize("sentence", list(MATMUL_NOT_SQUARE_MISTAKES))
def test_each_matmul_mistake_is_named_by_the_chapter_s_check(sentence):
    wrong = _function_with_backward(2, MATMUL_NOT_SQUARE_MISTAKES[sentence])
    message = fails(check_function, wrong, inputs=MATMUL_CASES,
                    reference=lambda a, b: a @ b, mistakes=MATMUL_NOT_SQUARE_MISTAKES)
    assert " ".join(sentence.split()) in message


@pytest.mark.parametrize("sentence", list(LINEAR_MISTAKES))
def test_each_linear_mistake_is_named_by_the_chapter_s_check(sentence):
    wrong = _function_with_backward(3, LINEAR_MISTAKES[sentence])
    message = fails(check_linear_function, wrong, inputs=LINEAR_CASES)
    assert " ".join(sentence.split()) in message


def test_the_linear_check_passes_the_chapter_s_answer_and_a_layer_built_from_ops(capsys):
    check_linear_function(ANSWERS["MyLinearFunction"], inputs=LINEAR_CASES)
    check_linear_function(lambda x, weight, bias: x @ weight.T + bias, inputs=LINEAR_CASES)
    assert capsys.readouterr().out.count("forward and backward are right") == 2


def test_a_bias_gradient_not_summed_passes_without_exact_shapes_and_fails_with_them():
    """Why check_linear_function asks for exact shapes: the engine sums a (N, out) gradient
    down to the bias's (out,), so check_function alone would pass the missing sum."""
    unsummed = _function_with_backward(3, lambda x, w, b, g: (g @ w, g.T @ x, g))
    check_function(unsummed, inputs=LINEAR_CASES,
                   reference=lambda x, weight, bias: F.linear(x, weight, bias))
    with pytest.raises(AssertionError, match="not summed over the batch"):
        check_linear_function(unsummed, inputs=LINEAR_CASES)


def _function_with_forward(forward):
    """A Function whose forward is ``forward(x, weight, bias)`` and whose backward is
    right for y = x @ weight.T + bias."""

    class Answer(mg.Function):
        @staticmethod
        def forward(ctx, x, weight, bias):
            ctx.save_for_backward(x, weight)
            return forward(x, weight, bias)

        @staticmethod
        def backward(ctx, grad_output):
            x, weight = ctx.saved_tensors
            return grad_output @ weight, grad_output.T @ x, grad_output.sum(axis=0)

    return Answer


@pytest.mark.parametrize("sentence", list(LINEAR_FORWARD_MISTAKES))
def test_each_linear_forward_mistake_is_named_by_the_chapter_s_check(sentence):
    wrong = _function_with_forward(LINEAR_FORWARD_MISTAKES[sentence])
    message = fails(check_linear_function, wrong, inputs=LINEAR_CASES)
    assert " ".join(sentence.split()) in message
    assert "the output: wrong values" in message


def test_a_forward_error_is_reported_by_the_full_check_not_hidden_by_the_first_pass():
    def forward(x, weight, bias):
        raise NotImplementedError("exercise mylinearfunction: write your code here")

    message = fails(check_linear_function, _function_with_forward(forward),
                    inputs=LINEAR_CASES)
    assert "forward raised NotImplementedError" in message
    assert "Write your solution where the exercise says so" in message


def test_a_missing_transpose_passes_shapes_but_not_values_on_square_matrices_only():
    forgot = _function_with_backward(2, lambda a, b, g: (g @ b, a @ g))
    square = [mg.randn(3, 3, dtype=mg.float64, requires_grad=True) for _ in range(2)]
    forgot.apply(*square).sum().backward()
    assert [t.grad.shape for t in square] == [(3, 3), (3, 3)]
    assert not mg.gradcheck(forgot.apply, square, raise_exception=False)
    wide = [mg.randn(2, 3, requires_grad=True), mg.randn(3, 4, requires_grad=True)]
    with pytest.raises(ValueError):
        forgot.apply(*wide).sum().backward()


# --- MyLinear judged on its own ----------------------------------------------------------

USES = {"MyLinearFunction": "minigrad.exercises.linear:ReferenceLinearFunction"}


def _with_wrong_function() -> dict:
    """The chapter's answers as a notebook holds them, with a MyLinearFunction whose
    weight gradient is transposed (exercise 2 wrong, exercise 3 right)."""
    namespace = dict(_answers(), __name__="__main__")
    right = namespace["MyLinearFunction"]

    class MyLinearFunction(right):
        @staticmethod
        def backward(ctx, grad_output):
            grad_x, grad_w, grad_b = right.backward(ctx, grad_output)
            return grad_x, 2 * grad_w, grad_b

    namespace["MyLinearFunction"] = MyLinearFunction
    exec("".join(cell for cell in _mylinear_source()), namespace)  # MyLinear reads it
    return namespace


def _mylinear_source() -> list[str]:
    for cell in json.loads(CHAPTER.read_text(encoding="utf-8"))["cells"]:
        if cell["metadata"].get("nbgrader", {}).get("grade_id") == "mylinear":
            return cell["source"]
    raise AssertionError("no solution cell 'mylinear'")


def test_a_right_mylinear_on_a_wrong_linear_function_passes_with_a_note(capsys):
    namespace = _with_wrong_function()
    assert "wrong values" in fails(check_module_of, namespace, {})
    capsys.readouterr()
    check_linear_init(namespace["MyLinear"], function=namespace["MyLinearFunction"],
                      uses=USES)
    check_module_of(namespace, USES)
    out = " ".join(capsys.readouterr().out.split())
    assert ("your MyLinear is right with the reference MyLinearFunction; fix exercise 2 "
            "(`mylinearfunction`) first") in out
    assert namespace["MyLinearFunction"].__name__ == "MyLinearFunction"


def check_module_of(namespace: dict, uses: dict) -> None:
    from minigrad.exercises import check_module

    check_module(namespace["MyLinear"], nn.Linear, args=(4, 3), inputs=[[(5, 4)], [(1, 4)]],
                 uses=uses)


def test_the_reference_linear_function_passes_its_check():
    from minigrad.exercises.linear import ReferenceLinearFunction

    check_linear_function(ReferenceLinearFunction, inputs=[[(5, 4), (3, 4), (3,)]])
