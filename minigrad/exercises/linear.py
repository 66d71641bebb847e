"""Chapter 07's classic mistakes (matrix products and the Linear layer), out of the
notebook so that its test cells do not show the answers; ``check_linear_function``, the
check of ``y = x @ weight.T + bias`` as a Function (its forward's mistakes named, and the
bias's gradient required with the bias's shape); and ``check_linear_init``, the check of a
Linear module's parameters and PyTorch's initialisation (``check_module`` copies the
reference's weights into the student's layer, so it cannot see them).

The mistakes are ``{sentence naming the mistake: fn(*arrays, grad_output) -> wrong
gradients}``, as ``check_function(..., mistakes=...)`` takes them. A wrong gradient whose
shapes do not fit (the mistake raises on these shapes) is all-nan: it matches nothing."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ..state import enable_grad, get_rng_state, manual_seed, no_grad, set_rng_state
from ..tensor import Tensor
from ..function import Function
from .checks import MATMUL_MISTAKES, _cases, _signature, check_function, checker
from .compare import CheckFailed, Variant, as_array, close, compare
from .prerequisites import reference_for


def _or_nan(make: Callable[[], np.ndarray], shape: tuple) -> np.ndarray:
    """``make()``, or an all-nan array of ``shape`` where its shapes do not fit."""
    try:
        value = make()
    except ValueError:
        return np.full(shape, np.nan)
    return value


# z = a @ b with a (m, n), b (n, k), grad_output g (m, k): grad_a = g @ b.T, grad_b = a.T @ g
MATMUL_NOT_SQUARE_MISTAKES = {
    "b is not transposed in grad_a: grad_output @ b only runs when b is square, and gives "
    "the wrong numbers. grad_a must have a's shape (m, n): (m, k) @ (k, n), so "
    "grad_a = grad_output @ b.T.":
        lambda a, b, g: (_or_nan(lambda: g @ b, a.shape), a.T @ g),
    "a is not transposed in grad_b: a @ grad_output only runs when a is square, and gives "
    "the wrong numbers. grad_b must have b's shape (n, k): (n, m) @ (m, k), so "
    "grad_b = a.T @ grad_output.":
        lambda a, b, g: (g @ b.T, _or_nan(lambda: a @ g, b.shape)),
    "the two gradients are returned in the wrong order: backward returns one gradient per "
    "input of forward, in forward's order, so a's first: return grad_output @ b.T, "
    "a.T @ grad_output.":
        lambda a, b, g: (a.T @ g, g @ b.T),
    **MATMUL_MISTAKES,
}

# y = x @ weight.T + bias with x (N, in), weight (out, in), bias (out,), g (N, out)
LINEAR_MISTAKES = {
    "the weight's gradient is transposed: x.T @ grad_output has shape (in, out), the "
    "layout of y = x @ W. PyTorch's weight is (out_features, in_features): its gradient "
    "is grad_output.T @ x, (out, N) @ (N, in).":
        lambda x, w, b, g: (g @ w, x.T @ g, g.sum(axis=0)),
    "the input's gradient uses weight.T: with y = x @ weight.T, the gradient for x is "
    "grad_output @ weight, (N, out) @ (out, in).":
        lambda x, w, b, g: (_or_nan(lambda: g @ w.T, x.shape), g.T @ x, g.sum(axis=0)),
    "the weight's gradient was averaged over the batch (divided by N): each of the N rows "
    "adds its own contribution, and grad_output.T @ x already adds them up. Do not divide "
    "by N.":
        lambda x, w, b, g: (g @ w, g.T @ x / x.shape[0], g.sum(axis=0)),
    "the bias's gradient is grad_output itself, of shape (N, out), not summed over the "
    "batch: the bias is added to every one of the N rows, so its gradient is the sum of "
    "the N rows of grad_output, grad_output.sum(axis=0), of the bias's shape (out,). "
    "(minigrad's engine, like PyTorch's, would sum it for you; the sum is still the "
    "gradient, and backward must return it.)":
        lambda x, w, b, g: (g @ w, g.T @ x, g),
    "the bias's gradient kept the summed dimension (keepdims=True gives shape (1, out)): "
    "the bias has shape (out,), so return grad_output.sum(axis=0).":
        lambda x, w, b, g: (g @ w, g.T @ x, g.sum(axis=0, keepdims=True)),
    "the bias's gradient was averaged over the batch (a mean): the bias is added to every "
    "one of the N rows, so its gradient is the SUM of their gradients, "
    "grad_output.sum(axis=0).":
        lambda x, w, b, g: (g @ w, g.T @ x, g.mean(axis=0)),
    "the bias's gradient was summed over the wrong axis (axis=1, the features): sum over "
    "the batch, axis=0, so that it has the bias's shape (out,).":
        lambda x, w, b, g: (g @ w, g.T @ x, g.sum(axis=1)),
    "the bias's gradient was summed over everything (one number): sum over the batch "
    "only, grad_output.sum(axis=0), one number per output feature.":
        lambda x, w, b, g: (g @ w, g.T @ x, np.full(b.shape, g.sum())),
    "the bias's gradient is the first row of grad_output only (grad_output[0]): the bias "
    "is added to all N rows, so add up all N rows, grad_output.sum(axis=0).":
        lambda x, w, b, g: (g @ w, g.T @ x, g[0]),
    "the bias's gradient ignores grad_output (all ones): the local derivative of y = ... "
    "+ bias is 1, and the chain rule multiplies it by grad_output, then sums over the N "
    "rows: grad_output.sum(axis=0).":
        lambda x, w, b, g: (g @ w, g.T @ x, np.ones(b.shape)),
}

# the forward's own mistakes, named before the gradients are looked at
LINEAR_FORWARD_MISTAKES = {
    "the forward uses weight without its transpose: x @ weight is the layout of y = x @ W "
    "with W (in, out), and only runs because this weight is square. PyTorch's weight is "
    "(out_features, in_features), one row per output: y = x @ weight.T + bias.":
        lambda x, w, b: x @ w + b,
    "the bias is not added: every row of the output is off by the same vector, the bias. "
    "y = x @ weight.T + bias.":
        lambda x, w, b: x @ w.T,
    "the bias is subtracted: y = x @ weight.T + bias.":
        lambda x, w, b: x @ w.T - b,
}


def _forward_mistake(function: Any, arrays: list) -> None:
    """Run the student's forward alone; name a classic mistake in its output. Anything
    else (an error, a wrong output no mistake explains) is left to ``check_function``."""
    run = function.apply if hasattr(function, "apply") else function
    try:
        with no_grad():
            out = as_array(run(*[Tensor(a.copy()) for a in arrays]))
    except Exception:  # noqa: BLE001 - check_function reports the student's error
        return
    x, w, b = arrays
    expected = x @ w.T + b
    if out is None or close(out, expected, 1e-6, 1e-4):
        return
    variants = []
    for sentence, make in LINEAR_FORWARD_MISTAKES.items():
        try:
            variants.append(Variant(sentence, make(x, w, b)))
        except ValueError:  # its shapes do not fit here
            continue
    if any(close(out, v.value, 1e-6, 1e-4) for v in variants):
        compare(out, expected, f"{_signature(getattr(function, '__name__', 'linear'), arrays)}"
                ": the output", variants=variants)


@checker
def check_linear_function(function: Any, inputs: Any, *, seed: int = 0) -> None:
    """``check_function`` for ``y = x @ weight.T + bias`` against ``F.linear``, with the
    chapter's mistakes: the forward alone first (``check_function`` names wrong gradients,
    not wrong outputs: a weight used without ``.T`` or a forgotten bias is named here),
    then outputs and gradients, where backward must return the bias's gradient with the
    bias's own shape (``exact_shapes``: the engine would sum a gradient of shape (N, out)
    down to (out,) and hide the missing sum)."""
    from ..nn import functional as F

    rng = np.random.default_rng(seed)
    for case in _cases(inputs):
        _forward_mistake(function, [rng.uniform(-2.0, 2.0, size=shape) for shape in case])
    check_function.__wrapped__(function, inputs,
                               reference=lambda x, weight, bias: F.linear(x, weight, bias),
                               mistakes=LINEAR_MISTAKES, exact_shapes=True, seed=seed)

# --- check_linear_init -------------------------------------------------------------------

IN_FEATURES, OUT_FEATURES = 400, 300  # many numbers: the spread is measured, not guessed
BOUNDS = {  # a bound someone might use instead of 1/sqrt(in_features): what it is called
    "1/in_features (instead of 1/sqrt(in_features))": 1 / IN_FEATURES,
    "1/sqrt(out_features) (the fan-out instead of in_features)": 1 / math.sqrt(OUT_FEATURES),
    "sqrt(6/in_features), Kaiming's bound for ReLU (kaiming_uniform_ without a=sqrt(5))":
        math.sqrt(6 / IN_FEATURES),
    "sqrt(6/(in_features + out_features)), Xavier's bound (xavier_uniform_)":
        math.sqrt(6 / (IN_FEATURES + OUT_FEATURES)),
    "1 (the default range of uniform_)": 1.0,
}


def _registered(layer: Any) -> set[str]:
    return {name for name, _ in layer.named_parameters()} \
        if hasattr(layer, "named_parameters") else set()


def _not_registered(layer: Any, name: str, built: str, reference: str = "nn.Linear") -> str:
    """Why ``name`` is not among ``layer``'s parameters, in a sentence."""
    value = vars(layer).get(name, getattr(layer, name, None)) if hasattr(layer, "__dict__") \
        else None
    if isinstance(value, Tensor):
        return (f"{built}: self.{name} is a Tensor, not an nn.Parameter: a Module registers "
                "only Parameters (and sub-modules), so parameters(), state_dict() and the "
                f"optimizer never see it. Wrap it: self.{name} = nn.Parameter(...).")
    if isinstance(value, np.ndarray):
        return (f"{built}: self.{name} is a NumPy array: make it an nn.Parameter "
                f"(self.{name} = nn.Parameter(mg.tensor(...))) so that it is trained.")
    kept = [key for key, v in vars(layer).items()  # (not the Module's own registries)
            if not key.startswith("_") and isinstance(v, (list, tuple, dict))
            and any(isinstance(p, Tensor) for p in (v.values() if isinstance(v, dict) else v))]
    if kept:
        return (f"{built}: there is no parameter named {name!r}; the tensors kept in "
                f"self.{kept[0]} (a plain Python {type(vars(layer)[kept[0]]).__name__}) are "
                "not registered. Assign each one as an attribute, named as in PyTorch: "
                "self.weight = nn.Parameter(...), self.bias = nn.Parameter(...).")
    return (f"{built}: there is no parameter named {name!r}; its parameters are "
            f"{sorted(_registered(layer))}. Assign it in __init__, named as in PyTorch: "
            f"self.{name} = nn.Parameter(...)" + (
                f" (the bias was forgotten: {reference} has one, unless bias=False)."
                if name == "bias" else "."))


def _spread(name: str, values: np.ndarray, built: str, bound: float, rule: str,
            bounds: dict[str, float]) -> None:
    """``values`` must look like U(-bound, bound) (``rule``: how the bound is written, e.g.
    "1/sqrt(in_features)"): else name the distribution, or the bound among ``bounds``. The
    largest of n uniform values falls short of the bound by about bound/n: a few hundred
    values reach it within 1%, 20 within 10%."""
    what = (f"{built}: {name} ranges from {values.min():.4g} to {values.max():.4g} "
            f"(mean {values.mean():.3g}, std {values.std():.3g}); PyTorch's is uniform in "
            f"(-{rule}, {rule}) = (-{bound:.4g}, {bound:.4g}).")
    biggest = float(np.abs(values).max())
    if biggest == 0:
        raise CheckFailed(f"{what}\n  It looks like {name} was left at zero"
                          + (": PyTorch's bias is uniform in the same range as the weight."
                             if name == "bias" else
                             ": every output unit would then learn the same thing."))
    if values.min() >= 0:
        raise CheckFailed(f"{what}\n  It looks like the values are all positive (a uniform "
                          "in [0, bound) or rand()): take them in (-bound, bound), "
                          "uniform_(-bound, bound).")
    std = float(values.std())
    if values.size >= 100 and abs(std - biggest / math.sqrt(3)) > 0.15 * biggest / math.sqrt(3):
        raise CheckFailed(f"{what}\n  It looks like they are not uniform (randn or normal_ "
                          "give a bell curve: a few large values, most near 0): use "
                          "uniform_(-bound, bound).")
    slack = 0.05 if values.size >= 100 else 0.25

    def near(limit: float) -> bool:
        return limit * (1 - slack) <= biggest <= limit * 1.001

    if near(bound):
        return
    for words, other in bounds.items():
        if near(other):
            raise CheckFailed(f"{what}\n  It looks like the bound is {words}: PyTorch "
                              f"uses {rule} for the weight and the bias.")
    raise CheckFailed(f"{what}\n  The bound is {biggest:.4g}, not {rule}.")


def check_init(module: Callable, args: tuple, shapes: dict[str, tuple], bound: float,
               rule: str, bounds: dict[str, float], *, reference: str,
               layout: Callable[[str, tuple], str], seed: int = 0) -> tuple[Any, dict, str]:
    """What ``check_module`` cannot check (it copies the reference's weights into the
    student's layer): ``module(*args)`` has exactly the parameters ``shapes`` (name ->
    shape), registered nn.Parameters, each uniform in +-``bound`` (``rule``: how the
    bound is written; ``bounds``: other bounds, by name, that a student might use).
    ``layout(key, shape)``: a sentence for a parameter of the wrong shape. Shared by the
    ``nn.Linear`` and ``nn.Conv2d`` exercises; returns (the layer, its parameters, the call)."""
    from ..nn import Parameter

    name = getattr(module, "__name__", type(module).__name__)
    built = f"{name}({', '.join(repr(a) for a in args)})"
    state = get_rng_state()
    manual_seed(seed)
    try:
        try:
            layer = module(*args)
        except Exception as error:  # noqa: BLE001 - the student's code: report it
            from .checks import _student_error
            raise _student_error(error, built) from None
    finally:
        set_rng_state(state)
    registered = dict(layer.named_parameters()) if hasattr(layer, "named_parameters") else {}
    for key, shape in shapes.items():
        if key not in registered:
            raise CheckFailed(_not_registered(layer, key, built, reference))
        parameter = registered[key]
        if not isinstance(parameter, Parameter) or not parameter.requires_grad:
            raise CheckFailed(f"{built}: {key} does not require a gradient: make it "
                              f"nn.Parameter(...), which does.")
        if tuple(parameter.shape) != shape:
            raise CheckFailed(f"{built}: {key} has shape {tuple(parameter.shape)}, expected "
                              f"{shape}.{layout(key, tuple(parameter.shape))}")
    extra = sorted(set(registered) - set(shapes))
    if extra:
        raise CheckFailed(f"{built}: it has parameters {sorted(registered)}; {reference} has "
                          f"only {' and '.join(repr(k) for k in shapes)}.")
    for key in shapes:
        _spread(key, registered[key].detach().numpy().astype(np.float64), built, bound, rule,
                bounds)
    return layer, registered, built


def _forgotten_bias(layer: Any, registered: dict, built: str) -> None:
    """A forward that leaves the bias out gives x @ weight.T: name it (``check_module``
    would only say the output is wrong). Anything else is left to ``check_module``."""
    x = np.random.default_rng(0).uniform(-1.0, 1.0, size=(2, IN_FEATURES)).astype(np.float32)
    try:
        with no_grad():
            out = as_array(layer(Tensor(x)))
    except Exception:  # noqa: BLE001 - check_module reports the student's error
        return
    weight, bias = (registered[k].detach().numpy() for k in ("weight", "bias"))
    if out is not None and close(out, x @ weight.T, 1e-5, 1e-4) \
            and not close(out, x @ weight.T + bias, 1e-5, 1e-4):
        raise CheckFailed(f"{built}: forward returns x @ weight.T without the bias: "
                          "self.bias is made but not used. y = x @ weight.T + bias: pass "
                          "self.bias to your MyLinearFunction too.")


@reference_for(2, "mylinearfunction")
class ReferenceLinearFunction(Function):
    """The reference answer of exercise 2: y = x @ weight.T + bias, what ``MyLinear``'s
    checks swap in for the student's (``uses={"MyLinearFunction": ...}``)."""

    @staticmethod
    def forward(ctx, x, weight, bias):
        ctx.save_for_backward(x, weight)
        return x @ weight.T + bias

    @staticmethod
    def backward(ctx, grad_output):
        x, weight = ctx.saved_tensors
        return grad_output @ weight, grad_output.T @ x, grad_output.sum(axis=0)


def uses_function(layer: Any, function: type, x: np.ndarray, built: str) -> None:
    """The output of ``layer(x)`` must come from ``function`` (its ``grad_fn``): a forward
    that computes the right numbers with minigrad's own ops passes every value check, but
    the backward that runs is not the student's."""
    wanted = getattr(function, "__name__", repr(function))
    try:
        with enable_grad():
            out = layer(Tensor(x))
    except Exception:  # noqa: BLE001 - check_module reports the student's error
        return
    node = getattr(out, "grad_fn", None)
    # (graded, the layer runs in the student's process and ``made_by`` names the
    # Function that made its output there: course/judge.py)
    used = getattr(node, "made_by", None) or getattr(node, "function", None)
    if node is not None and (used is function or hasattr(used, "__exercise__")):
        return  # the student's Function, or the reference their forward was given
    what = ("has no grad_fn (it was built outside the graph, e.g. with NumPy)"
            if node is None else f"comes from {node.name}, not from {wanted}")
    raise CheckFailed(f"{built}: forward does not use your {wanted}: the output {what}. "
                      f"The values may be right, but then backward runs minigrad's own "
                      f"ops, not yours. Return {wanted}.apply(x, self.weight, self.bias) "
                      "(the last operation of forward).")


@checker
def check_linear_init(module: Callable, *, function: type | None = None,
                      seed: int = 0) -> None:
    """Build ``module(400, 300)`` as ``nn.Linear(400, 300)`` would be built and check what
    ``check_module`` cannot (it copies the reference's weights into the student's layer):
    ``weight`` (300, 400) and ``bias`` (300,) are registered nn.Parameters, and each is
    uniform in (-1/sqrt(400), 1/sqrt(400)), as PyTorch initialises them. A forward that
    leaves the bias out is named too (``check_module`` would only see wrong outputs).
    ``function``: the Function class forward must use (the output's ``grad_fn``)."""
    shapes = {"weight": (OUT_FEATURES, IN_FEATURES), "bias": (OUT_FEATURES,)}

    def layout(key: str, shape: tuple) -> str:
        return (" It looks like the layout of y = x @ W: PyTorch's weight is "
                "(out_features, in_features), and y = x @ weight.T + bias."
                if shape == shapes[key][::-1] else "")

    name = getattr(module, "__name__", type(module).__name__)
    layer, registered, built = check_init(
        module, (IN_FEATURES, OUT_FEATURES), shapes, 1 / math.sqrt(IN_FEATURES),
        "1/sqrt(in_features)", BOUNDS, reference="nn.Linear", layout=layout, seed=seed)
    _forgotten_bias(layer, registered, built)
    if function is not None:
        uses_function(layer, function, np.random.default_rng(1).uniform(
            -1.0, 1.0, size=(2, IN_FEATURES)).astype(np.float32), built)
    print(f"{name}: weight and bias are Parameters of PyTorch's shapes, uniform in "
          "+-1/sqrt(in_features)" + (f", and forward uses {function.__name__}."
                                     if function is not None else "."))


__all__ = ["LINEAR_FORWARD_MISTAKES", "LINEAR_MISTAKES", "MATMUL_NOT_SQUARE_MISTAKES",
           "ReferenceLinearFunction", "check_linear_function", "check_linear_init"]
