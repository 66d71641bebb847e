"""The elementwise functions of tensor_math.py, functions_math.py and ``mg.special`` beyond
what the op table checks (tests/op_cases_math.py): accuracy of the special functions over
wide ranges, values at poles and infinities, dtypes, the in-place and ``out=`` forms, and
the errors, each compared with PyTorch where PyTorch has the behaviour."""

from __future__ import annotations

import math

import numpy as np
import pytest

import minigrad as mg

WIDE = np.concatenate([np.linspace(-30.3, 40.0, 4001), np.logspace(-8, 4, 200)])


def ours(values, dtype=np.float64, requires_grad=False):
    return mg.tensor(np.asarray(values, dtype=dtype), requires_grad=requires_grad)


def theirs_of(torch, values, dtype="float64"):
    """The same values as a torch tensor (float64 unless said: torch.tensor of a list of
    Python floats would be float32)."""
    return torch.tensor(np.asarray(values, dtype=dtype))


def assert_same(mine, theirs, rtol=1e-12, atol=0.0):
    """Equal values, and the same NaNs and infinities, and the same dtype."""
    theirs = theirs.detach().numpy()
    mine = mine.detach().numpy()
    assert str(mine.dtype) == str(theirs.dtype)
    np.testing.assert_allclose(mine, theirs, rtol=rtol, atol=atol, equal_nan=True)


# --- accuracy of the special functions, in float64 ---------------------------------------------


@pytest.mark.parametrize("name, values, rtol", [
    ("erfinv", np.concatenate([np.linspace(-1, 1, 20001), 1 - np.logspace(-16, -1, 200),
                               -1 + np.logspace(-16, -1, 200)]), 1e-14),
    ("erfc", np.linspace(-6, 27, 5001), 1e-13),
    ("lgamma", WIDE, 1e-12),
    ("digamma", WIDE, 1e-11),
    ("i0", np.linspace(-700, 700, 2001), 1e-13),
])
def test_special_functions_match_pytorch_over_a_wide_range_in_float64(name, values, rtol,
                                                                      torch):
    mine = getattr(ours(values), name)()
    theirs = getattr(torch, name)(torch.tensor(values))
    assert_same(mine, theirs, rtol=rtol, atol=1e-300)


@pytest.mark.parametrize("n", [1, 2, 3, 5])
def test_polygamma_matches_pytorch_over_a_wide_range_in_float64(n, torch):
    # (PyTorch's trigamma keeps about 9 digits: its asymptotic series stops early)
    values = WIDE[np.abs(WIDE - np.round(WIDE)) > 1e-3]  # away from the poles
    assert_same(mg.polygamma(n, ours(values)), torch.polygamma(n, torch.tensor(values)),
                rtol=1e-8 if n == 1 else 1e-11)


def test_polygamma_is_exact_where_its_value_is_known():
    # psi'(1) = pi^2 / 6, psi''(1) = -2 zeta(3), psi(1) = -Euler's gamma
    x = ours([1.0])
    assert abs(x.polygamma(1).item() - math.pi ** 2 / 6) < 1e-15
    assert abs(x.polygamma(2).item() + 2 * 1.2020569031595942) < 1e-14
    assert abs(x.polygamma(0).item() + 0.5772156649015329) < 1e-15


def test_special_i1_and_log_ndtr_match_pytorch_far_in_their_tails(torch):
    values = np.linspace(-700, 700, 2001)
    assert_same(mg.special.i1(ours(values)), torch.special.i1(torch.tensor(values)),
                rtol=1e-13, atol=1e-300)
    tails = np.concatenate([np.linspace(-60, 38, 9801), [-1e3, -1e5]])
    assert_same(mg.special.log_ndtr(ours(tails)), torch.special.log_ndtr(torch.tensor(tails)),
                rtol=1e-12, atol=1e-300)


# --- values at poles, infinities and the edges of the domain ------------------------------------


@pytest.mark.parametrize("name, values", [
    ("lgamma", [0.0, -1.0, -2.0, math.inf, -math.inf, math.nan, 1.0, 2.0]),
    ("digamma", [0.0, -1.0, -2.0, math.inf, math.nan, 1.0]),
    ("erfinv", [1.0, -1.0, 1.5, -2.0, 0.0, math.nan]),
    ("erfc", [math.inf, -math.inf, 30.0, math.nan]),
    ("tan", [0.0, math.nan]),
    ("acosh", [1.0, 0.5, math.inf]),
    ("atanh", [1.0, -1.0, 2.0]),
    ("sinc", [0.0, 1.0, -2.0, math.inf]),
    ("exp2", [-math.inf, math.inf, 1024.0]),
])
def test_values_at_poles_and_infinities_are_pytorchs(name, values, torch):
    assert_same(getattr(ours(values), name)(), getattr(torch, name)(theirs_of(torch, values)),
                rtol=1e-15)


def test_logaddexp_of_infinities_is_pytorchs(torch):
    a, b = [-math.inf, math.inf, -math.inf, 1000.0], [-math.inf, math.inf, 3.0, 1000.0]
    ta, tb = theirs_of(torch, a), theirs_of(torch, b)
    assert_same(mg.logaddexp(ours(a), ours(b)), torch.logaddexp(ta, tb))
    assert_same(mg.logaddexp2(ours(a), ours(b)), torch.logaddexp2(ta, tb))


def test_xlogy_is_zero_where_x_is_zero_even_at_log_zero_and_nan_stays_nan(torch):
    x, y = [0.0, 0.0, 0.0, 2.0, 1.0], [0.0, math.inf, math.nan, 0.0, math.nan]
    tx, ty = theirs_of(torch, x), theirs_of(torch, y)
    assert_same(mg.xlogy(ours(x), ours(y)), torch.xlogy(tx, ty))
    assert_same(mg.special.xlog1py(ours(x), ours(y)), torch.special.xlog1py(tx, ty))


def test_xlogy_gradients_at_zero_are_pytorchs(torch):
    # PyTorch: d/dx = xlogy(x != 0, y) (0 at x = 0, even where y = 0), d/dy = x / y
    x, y = [0.0, 0.0, 2.0, 0.5], [0.0, 3.0, 0.5, 2.0]
    a, b = ours(x, requires_grad=True), ours(y, requires_grad=True)
    ta, tb = (torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in (x, y))
    mg.xlogy(a, b).sum().backward()
    torch.xlogy(ta, tb).sum().backward()
    assert_same(a.grad, ta.grad)
    assert_same(b.grad, tb.grad)


def test_sinc_has_slope_zero_at_zero_and_no_nan_in_its_gradients(torch):
    a = ours([0.0, 0.5, 1e-5], requires_grad=True)
    (grad,) = mg.autograd.grad(a.sinc().sum(), [a], create_graph=True)
    (second,) = mg.autograd.grad(grad.sum(), [a])
    ta = theirs_of(torch, [0.0, 0.5, 1e-5]).requires_grad_()
    (tgrad,) = torch.autograd.grad(ta.sinc().sum(), [ta], create_graph=True)
    (tsecond,) = torch.autograd.grad(tgrad.sum(), [ta])
    assert_same(grad[:2], tgrad[:2])
    # near 0, from the Taylor series -pi^2 x / 3 (PyTorch's, from sin(pi x) / (pi x), keeps 7
    # digits at 1e-5); the second derivative at 0 is -pi^2/3 (PyTorch's is NaN there)
    assert abs(grad[2].item() - (-math.pi ** 2 / 3 * 1e-5 + math.pi ** 4 / 30 * 1e-15)) < 1e-19
    assert abs(tgrad[2].item() + math.pi ** 2 / 3 * 1e-5) < 1e-11
    assert abs(second[0].item() + math.pi ** 2 / 3) < 1e-12
    assert np.isnan(tsecond[0].item())
    assert abs(second[2].item() - (-math.pi ** 2 / 3 + math.pi ** 4 / 10 * 1e-10)) < 1e-14
    assert_same(second[1], tsecond[1], rtol=1e-12)


def test_copysign_keeps_signed_zeros_and_gives_zero_gradient_to_other(torch):
    x, y = [1.0, -2.0, 0.0, 3.0], [-0.0, 1.0, -1.0, math.nan]
    a, b = ours(x, requires_grad=True), ours(y, requires_grad=True)
    ta, tb = (torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in (x, y))
    result, expected = mg.copysign(a, b), torch.copysign(ta, tb)
    assert_same(result, expected)
    assert np.array_equal(np.signbit(result.detach().numpy()), expected.detach().signbit())
    result.sum().backward()
    expected.sum().backward()
    assert_same(a.grad, ta.grad)
    assert_same(b.grad, tb.grad)


def test_signbit_sees_negative_zero(torch):
    values = [-0.0, 0.0, -1.0, 2.0, -math.inf, math.nan]
    assert mg.signbit(ours(values)).tolist() == torch.signbit(theirs_of(torch, values)).tolist()
    assert mg.signbit(mg.tensor([1, -1])).tolist() == [False, True]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_nan_to_num_defaults_are_the_dtypes_largest_finite_values(dtype, torch):
    values = [math.nan, math.inf, -math.inf, 1.5]
    assert_same(ours(values, dtype).nan_to_num(), theirs_of(torch, values, dtype).nan_to_num(),
                rtol=0)
    assert_same(mg.nan_to_num(ours(values, dtype), nan=2.0, posinf=1.0),
                torch.nan_to_num(theirs_of(torch, values, dtype), nan=2.0, posinf=1.0), rtol=0)


def test_nan_to_num_gradient_passes_only_where_the_value_was_finite(torch):
    values = [math.nan, math.inf, -math.inf, 1.5]
    a = ours(values, requires_grad=True)
    ta = torch.tensor(values, dtype=torch.float64, requires_grad=True)
    (a.nan_to_num() * 0.25).sum().backward()  # (the sum stays finite)
    (ta.nan_to_num() * 0.25).sum().backward()
    assert_same(a.grad, ta.grad)


# --- dtypes --------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["tan", "asinh", "exp2", "sinc", "deg2rad", "rad2deg",
                                  "erfc", "erfinv", "lgamma", "digamma", "i0", "trunc",
                                  "nan_to_num", "signbit"])
def test_integer_inputs_give_pytorchs_dtype_and_values(name, torch):
    values = [0, 1, 3, -2] if name not in ("lgamma", "digamma") else [1, 2, 3, 5]
    values = [0, 1, 0, -1] if name == "erfinv" else values
    assert_same(getattr(mg.tensor(values), name)(), getattr(torch.tensor(values), name)(),
                rtol=1e-6)


def test_exp2_is_exact_at_integers():
    assert mg.exp2(mg.tensor([0, 3, 10, -2])).tolist() == [1.0, 8.0, 1024.0, 0.25]


def test_float_power_computes_in_float64_as_pytorch(torch):
    assert_same(mg.float_power(mg.tensor([2, 3]), 0.5),
                torch.float_power(torch.tensor([2, 3]), 0.5))
    assert_same(mg.float_power(2, mg.tensor([1.0, 0.5])),
                torch.float_power(2, torch.tensor([1.0, 0.5])))


def test_float32_with_a_number_stays_float32():
    x = mg.tensor([0.5, 2.0])
    for result in (x.xlogy(3.0), mg.xlogy(2, x), x.copysign(-1.0), mg.special.xlog1py(x, 2.0)):
        assert result.dtype == np.float32


# --- in-place forms and out= -------------------------------------------------------------------

IN_PLACE = ["sin_", "cos_", "tan_", "sinh_", "cosh_", "asinh_", "atanh_", "exp_", "exp2_",
            "sqrt_", "tanh_", "sigmoid_", "relu_", "abs_", "neg_", "negative_", "trunc_",
            "fix_", "frac_", "sinc_", "deg2rad_", "rad2deg_", "erf_", "erfc_", "i0_",
            "nan_to_num_", "logit_", "log_"]


@pytest.mark.parametrize("name", IN_PLACE)
def test_torch_in_place_functions_change_their_input_as_pytorch(name, torch):
    values = np.array([0.3, 0.7, 0.05, 0.9])  # inside every domain (log, logit, atanh)
    x, tx = ours(values), torch.tensor(values)
    result = getattr(mg, name)(x)
    getattr(torch, name)(tx)
    assert result is x
    assert_same(x, tx)


@pytest.mark.parametrize("call, torch_call", [
    (lambda m, x: m.clamp_(x, 0.2, 0.6), None), (lambda m, x: m.clamp_min_(x, 0.5), None),
    (lambda m, x: m.clamp_max_(x, 0.5), None), (lambda m, x: m.xlogy_(x, 2.0), None),
    (lambda m, x: x.copysign_(-1.0), None),
    (lambda m, x: x.lgamma_(), None), (lambda m, x: x.digamma_(), None),
    (lambda m, x: x.polygamma_(1), None), (lambda m, x: x.erfinv_(), None),
    (lambda m, x: x.multiply_(3), None), (lambda m, x: x.subtract_(2, alpha=3), None),
    (lambda m, x: x.true_divide_(4), None), (lambda m, x: x.absolute_(), None),
    (lambda m, x: x.divide_(0.2, rounding_mode="floor"), None),
])
def test_in_place_methods_change_the_tensor_as_pytorch(call, torch_call, torch):
    values = np.array([0.3, -0.7, 0.05, 0.9])
    x, tx = ours(values), torch.tensor(values)
    assert call(mg, x) is x
    call(torch, tx)
    assert_same(x, tx, rtol=1e-8)  # (PyTorch's trigamma, polygamma_(1), keeps 9 digits)


def test_in_place_on_an_integer_tensor_refuses_a_float_result_as_pytorch(torch):
    with pytest.raises(RuntimeError, match=r"tan_ in-place(.|\n)*float32(.|\n)*int64"):
        mg.tensor([1, 2]).tan_()
    with pytest.raises(RuntimeError, match="can't be cast"):
        torch.tensor([1, 2]).tan_()


def test_in_place_on_a_leaf_that_requires_grad_is_refused():
    with pytest.raises(RuntimeError, match="leaf"):
        mg.sin_(mg.tensor([1.0], requires_grad=True))


def test_in_place_on_a_non_leaf_records_the_gradient(torch):
    a = ours([0.3, 0.6], requires_grad=True)
    ta = torch.tensor([0.3, 0.6], dtype=torch.float64, requires_grad=True)
    y, ty = a * 2, ta * 2
    mg.tan_(y).sum().backward()
    torch.tan_(ty).sum().backward()
    assert_same(a.grad, ta.grad)


@pytest.mark.parametrize("name", ["tan", "exp2", "sinc", "erfc", "erfinv", "lgamma", "digamma",
                                  "i0", "trunc", "frac", "deg2rad", "signbit"])
def test_out_writes_the_result_into_the_given_tensor(name, torch):
    values = [0.25, -0.5]
    out = mg.empty(2, dtype=mg.bool if name == "signbit" else mg.float64)
    assert getattr(mg, name)(ours(values), out=out) is out
    assert_same(out, getattr(torch, name)(theirs_of(torch, values)))


def test_out_with_gradients_is_refused_naming_the_op():
    with pytest.raises(RuntimeError, match=r"logaddexp\(\): functions with out="):
        mg.logaddexp(ours([1.0], requires_grad=True), ours([2.0]), out=mg.empty(1))


# --- arguments and errors -------------------------------------------------------------------------


@pytest.mark.parametrize("call", [lambda x: mg.logaddexp(x, 1.0),
                                  lambda x: mg.logaddexp2(x, 1.0),
                                  lambda x: mg.heaviside(x, 0.5)])
def test_numbers_are_refused_where_pytorch_wants_a_tensor(call, torch):
    with pytest.raises(TypeError, match=r"(logaddexp2?|heaviside)\(\): argument "
                                        r"'(other|values)' must be Tensor, not float"):
        call(mg.tensor([1.0]))
    with pytest.raises(TypeError, match="must be Tensor, not float"):
        call(torch.tensor([1.0]))


def test_heaviside_of_different_dtypes_is_refused_naming_both(torch):
    with pytest.raises(RuntimeError, match=r"heaviside(.|\n)*float32(.|\n)*\(3,\)(.|\n)*"
                                           r"int64(.|\n)*\(1,\)"):
        mg.heaviside(mg.tensor([1.0, 0.0, -1.0]), mg.tensor([5]))
    with pytest.raises(RuntimeError, match="different dtypes"):
        torch.heaviside(torch.tensor([1.0, 0.0, -1.0]), torch.tensor([5]))


def test_heaviside_values_and_its_missing_derivative_are_pytorchs(torch):
    x, values = [-1.5, 0.0, 2.0, 0.0], [0.25]
    assert_same(mg.heaviside(ours(x), ours(values)),
                torch.heaviside(theirs_of(torch, x), theirs_of(torch, values)))
    a = ours(x, requires_grad=True)
    with pytest.raises(RuntimeError, match="derivative for heaviside is not implemented"):
        a.heaviside(ours(values)).sum().backward()
    ta = torch.tensor(x, requires_grad=True)
    with pytest.raises(RuntimeError, match="derivative for aten::heaviside is not implemented"):
        ta.heaviside(torch.tensor(values)).sum().backward()


def test_frac_of_integers_is_refused_naming_the_dtype_and_shape(torch):
    with pytest.raises(RuntimeError, match=r"frac(.|\n)*int64(.|\n)*\(2,\)"):
        mg.tensor([1, 2]).frac()
    with pytest.raises(RuntimeError, match="not implemented for 'Long'"):
        torch.tensor([1, 2]).frac()


def test_float_power_in_place_needs_a_float64_tensor(torch):
    with pytest.raises(RuntimeError, match=r"float_power_(.|\n)*float32(.|\n)*float64"):
        mg.tensor([2.0]).float_power_(2)
    with pytest.raises(RuntimeError, match="float_power_"):
        torch.tensor([2.0]).float_power_(2)
    x = ours([2.0, 3.0])
    assert x.float_power_(2) is x and x.tolist() == [4.0, 9.0]


@pytest.mark.parametrize("n", [-1, 1.5, True])
def test_polygamma_needs_a_non_negative_integer_order(n):
    with pytest.raises(ValueError, match=f"polygamma: n must be a non-negative int(.|\n)*"
                                         f"{n!r}"):
        mg.polygamma(n, mg.tensor([1.0]))


def test_positive_is_the_tensor_itself_and_refuses_bool(torch):
    x = mg.tensor([1.0, -2.0])
    assert mg.positive(x) is x and x.positive() is x
    with pytest.raises(RuntimeError, match=r"positive(.|\n)*bool(.|\n)*\(1,\)"):
        mg.positive(mg.tensor([True]))
    with pytest.raises(RuntimeError, match="bool"):
        torch.positive(torch.tensor([True]))


def test_divide_in_place_refuses_an_unknown_rounding_mode():
    with pytest.raises(ValueError, match="divide_ expected rounding_mode.*'round'"):
        mg.tensor([1.0]).divide_(2.0, rounding_mode="round")


def test_equal_is_a_tensor_method_as_in_pytorch(torch):
    a = mg.tensor([1.0, 2.0])
    assert a.equal(mg.tensor([1.0, 2.0])) is True
    assert a.equal(mg.tensor([1.0, 3.0])) is False
    assert a.equal(mg.tensor([[1.0, 2.0]])) is False  # another shape
    with pytest.raises(TypeError, match=r"equal\(\): argument 'other' must be Tensor"):
        a.equal([1.0, 2.0])
    assert torch.tensor([1.0, 2.0]).equal(torch.tensor([1.0, 2.0])) is True


def test_alias_spellings_give_the_same_values_as_pytorch(torch):
    values, other = [1.5, -2.0, 0.25], [2.0, 4.0, -0.5]
    x, y, tx, ty = ours(values), ours(other), theirs_of(torch, values), theirs_of(torch, other)
    for name in ("multiply", "subtract", "true_divide", "divide"):
        assert_same(getattr(x, name)(y), getattr(tx, name)(ty))
    for name in ("negative", "absolute", "fix", "arcsinh", "arctanh"):
        assert_same(getattr(x * 0.3, name)(), getattr(tx * 0.3, name)(), rtol=1e-15)
    assert_same(mg.arccosh(x.abs() + 1), torch.arccosh(tx.abs() + 1), rtol=1e-15)


# --- the names exist where PyTorch has them ----------------------------------------------------

TENSOR_METHODS = ["tan", "tan_", "asinh", "acosh", "atanh", "arcsinh", "arccosh", "arctanh",
                  "asinh_", "acosh_", "atanh_", "arcsinh_", "arccosh_", "arctanh_", "sin_",
                  "cos_", "sinh_", "cosh_", "exp2", "exp2_", "sinc", "sinc_", "deg2rad",
                  "deg2rad_", "rad2deg", "rad2deg_", "trunc", "trunc_", "fix", "fix_", "frac",
                  "frac_", "signbit", "copysign", "copysign_", "heaviside", "heaviside_",
                  "nan_to_num", "nan_to_num_", "logaddexp", "logaddexp2",
                  "xlogy", "xlogy_", "logit_", "float_power", "float_power_", "multiply",
                  "multiply_", "subtract", "subtract_", "true_divide", "true_divide_",
                  "negative", "negative_", "absolute", "absolute_", "divide_", "positive",
                  "equal", "erf_", "erfc", "erfc_", "erfinv", "erfinv_", "lgamma", "lgamma_",
                  "digamma", "digamma_", "polygamma", "polygamma_", "i0", "i0_"]


def test_every_new_tensor_method_is_one_pytorch_has(torch):
    assert [name for name in TENSOR_METHODS if not hasattr(torch.Tensor, name)] == []
    assert [name for name in TENSOR_METHODS if not hasattr(mg.Tensor, name)] == []


def test_every_new_function_is_one_pytorch_has(torch):
    from minigrad import functions_math, special

    assert [name for name in functions_math.__all__ if not hasattr(torch, name)] == []
    assert [name for name in special.__all__ if not hasattr(torch.special, name)] == []
    assert [name for name in functions_math.__all__ if getattr(mg, name) is not getattr(
        functions_math, name)] == []


@pytest.mark.parametrize("name", ["expit", "logit", "erf", "erfc", "erfinv", "gammaln",
                                  "digamma", "psi", "i0", "i1", "sinc", "entr", "ndtr",
                                  "log_ndtr", "round", "exp2", "expm1", "log1p"])
def test_special_namespace_matches_pytorch(name, torch):
    values = [0.25, 0.5, 0.875]
    assert_same(getattr(mg.special, name)(ours(values)),
                getattr(torch.special, name)(theirs_of(torch, values)), rtol=1e-13)


def test_special_reductions_and_two_argument_functions_match_pytorch(torch):
    values = np.array([[0.25, -1.5, 2.0], [0.5, 0.0, -0.125]])
    x, tx = ours(values), torch.tensor(values)
    assert_same(mg.special.softmax(x, 1), torch.special.softmax(tx, 1))
    assert_same(mg.special.log_softmax(x, 0), torch.special.log_softmax(tx, 0))
    assert_same(mg.special.logsumexp(x, 1, keepdim=True),
                torch.special.logsumexp(tx, 1, keepdim=True))
    assert_same(mg.special.xlogy(x, x.abs()), torch.special.xlogy(tx, tx.abs()))
    assert_same(mg.special.polygamma(2, x.abs() + 1), torch.special.polygamma(2, tx.abs() + 1),
                rtol=1e-11)
    assert_same(mg.special.logit(x.abs() / 3, eps=0.1),
                torch.special.logit(tx.abs() / 3, eps=0.1))


def test_lgamma_third_derivative_is_polygamma_2(torch):
    # lgamma' = digamma, digamma' = polygamma(1), polygamma(1)' = polygamma(2): three
    # Functions, each recording the next one's backward
    a = ours([0.7, 2.5], requires_grad=True)
    (first,) = mg.autograd.grad(a.lgamma().sum(), [a], create_graph=True)
    (second,) = mg.autograd.grad(first.sum(), [a], create_graph=True)
    (third,) = mg.autograd.grad(second.sum(), [a])
    assert_same(first, torch.digamma(theirs_of(torch, [0.7, 2.5])), rtol=1e-13)
    assert_same(third, torch.polygamma(2, theirs_of(torch, [0.7, 2.5])), rtol=1e-12)


def test_a_torch_special_name_minigrad_lacks_is_named_in_the_error():
    with pytest.raises(AttributeError, match=r"torch.special\) has no attribute 'ndtri'"):
        mg.special.ndtri  # noqa: B018


def test_hypot_is_left_to_chapter_15_and_says_so():
    # chapter 15 has the student write hypot as a Function: minigrad does not give it away
    assert not hasattr(mg, "hypot") and not hasattr(mg.Tensor, "hypot")
    with pytest.raises(AttributeError, match="chapter 15 has you write it"):
        mg.hypot
    with pytest.raises(AttributeError, match="chapter 15 has you write it"):
        mg.tensor([3.0]).hypot_(mg.tensor([4.0]))


def test_lgamma_of_a_zero_dim_tensor():
    torch = pytest.importorskip("torch")
    for dtype in ("float32", "float64"):
        ours = mg.tensor(2.5, dtype=getattr(mg, dtype)).lgamma()
        theirs = torch.tensor(2.5, dtype=getattr(torch, dtype)).lgamma()
        assert ours.shape == () and ours.dtype == getattr(mg, dtype)
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)


def test_edges_a_differential_review_found_match_pytorch():
    torch = pytest.importorskip("torch")
    # logaddexp's gradient where x = y is large (x - f rounds to 0) and at inf
    for name in ("logaddexp", "logaddexp2"):
        for xs, ys in (([1e8, np.inf, 3.0], [1e8, 0.0, 50.0]),):
            x, y = mg.tensor(xs, requires_grad=True), mg.tensor(ys, requires_grad=True)
            getattr(mg, name)(x, y).sum().backward()
            tx = torch.tensor(xs, requires_grad=True)
            ty = torch.tensor(ys, requires_grad=True)
            getattr(torch, name)(tx, ty).sum().backward()
            np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-5)
            np.testing.assert_allclose(y.grad.numpy(), ty.grad.numpy(), rtol=1e-5)
    # polygamma far below 0 (the recurrence alone never ended below -2^53), and at poles
    values = np.array([-1e30, -1e6 + 0.3, -7.3, -2.5, -0.7, 0.2, 1.3, -3.0, 0.0])
    for n in (2, 3, 4):
        np.testing.assert_allclose(mg.polygamma(n, mg.tensor(values)).numpy(),
                                   torch.polygamma(n, torch.tensor(values)).numpy(),
                                   rtol=1e-9)
    # digamma at -0.0; logit's gradient outside [0, 1]
    np.testing.assert_array_equal(mg.digamma(mg.tensor([-0.0, 0.0])).numpy(), [np.inf, -np.inf])
    x = mg.tensor([1.5, -0.5, 0.3], requires_grad=True)
    x.logit().sum().backward()
    tx = torch.tensor([1.5, -0.5, 0.3], requires_grad=True)
    tx.logit().sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-6)


def test_more_edges_a_differential_review_found_match_pytorch():
    torch = pytest.importorskip("torch")
    values = [float("nan"), 0.0, -1.0, 2.0]
    np.testing.assert_array_equal(  # NaN: 0, as PyTorch's heaviside
        mg.heaviside(mg.tensor(values), mg.tensor([0.5])).numpy(),
        torch.heaviside(torch.tensor(values), torch.tensor([0.5])).numpy())
    for data in ([0, 1], [True, False]):  # integers and bools: float32
        for eps in (None, 1e-6):
            ours, theirs = mg.logit(mg.tensor(data), eps), torch.logit(torch.tensor(data), eps)
            assert str(ours.dtype) == str(theirs.dtype).replace("torch.", "")
            np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)
    # results that are constants in value are still in the graph, with gradient 0
    a = mg.tensor(np.eye(2) * 2, requires_grad=True)
    mg.linalg.matrix_power(a, 0).sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), np.zeros((2, 2)))
    x = mg.tensor([1.0, 0.0, np.inf], requires_grad=True)
    norm = mg.linalg.vector_norm(x, 0)
    norm.backward()
    assert float(norm.numpy()) == 2.0 and not x.grad.numpy().any()


def test_sinh_cosh_logit_take_bools_and_out_as_pytorch():
    torch = pytest.importorskip("torch")
    for name in ("sinh", "cosh"):
        ours = getattr(mg, name)(mg.tensor([True, False]))
        theirs = getattr(torch, name)(torch.tensor([True, False]))
        assert str(ours.dtype) == "float32"
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)
    for name in ("sinh", "cosh", "logit"):
        out = mg.empty(2)
        assert getattr(mg, name)(mg.tensor([0.2, 0.5]), out=out) is out
        np.testing.assert_allclose(out.numpy(),
                                   getattr(torch, name)(torch.tensor([0.2, 0.5])).numpy(),
                                   rtol=1e-6)
