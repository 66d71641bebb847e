"""Optimizer: what every optimizer shares (parameter groups, state, saving and loading).

    optimizer = mg.optim.SGD(model.parameters(), lr=0.1)
    for x, y in data:
        optimizer.zero_grad()           # grads from the last step must not add up
        loss_fn(model(x), y).backward()
        optimizer.step()                # p <- p - lr * p.grad, for every parameter

An optimizer keeps its parameters in *param groups*: dicts holding a ``"params"`` list and
the options (``lr``, ``momentum``...) for those parameters. Passing a list of tensors makes
one group; passing a list of dicts gives each group its own options, the missing ones
taken from the optimizer's defaults:

    mg.optim.SGD([{"params": model.body.parameters()},
                  {"params": model.head.parameters(), "lr": 1e-3}], lr=0.1)

What an optimizer remembers between steps (Adam's running averages, SGD's momentum) is in
``optimizer.state[param]``, a dict per parameter. ``step()`` skips parameters whose
``grad`` is None, and changes parameters in place, outside the graph (their version
counter moves on, as in PyTorch).

A subclass (SGD, Adam) only says how one parameter moves: ``update_param(param, grad,
state, group)`` gets NumPy arrays and updates ``param``, the parameter's own array, in
place (``param -= lr * grad``: no new array per step). A subclass may also check its
options in ``check_options(group)``; it runs for the defaults and for every group.
"""

from __future__ import annotations

import functools
import warnings
from collections import defaultdict
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from ..function import record_write
from ..lazy_mode import realize_readers
from ..reuse import zero_grads
from ..state import enable_grad
from ..tensor import Tensor


# the options that are numbers (betas: a pair of them), in every optimizer that has them
NUMERIC_OPTIONS = {"lr", "momentum", "dampening", "weight_decay", "eps", "alpha", "betas",
                   "rho", "lr_decay", "initial_accumulator_value", "momentum_decay",
                   "max_iter", "max_eval", "tolerance_grad", "tolerance_change",
                   "history_size", "etas", "step_sizes", "lambd", "t0"}


def _check_numbers(name: str, options: dict[str, Any]) -> None:
    """``lr="0.1"`` (a string, say from a config file) is a TypeError that says so,
    rather than a failed comparison deep inside."""
    for key in NUMERIC_OPTIONS & options.keys():
        value = options[key]
        parts = value if isinstance(value, (tuple, list)) else (value,)
        if not all(isinstance(v, (int, float, np.number, Tensor)) and not isinstance(v, bool)
                   for v in parts):
            what = "numbers" if isinstance(value, (tuple, list)) else "a number"
            raise TypeError(f"{name}: {key} must be {what}, got {type(value).__name__} "
                            f"{value!r}" + (f"; write {key}={float(value)!r} (no quotes), "
                                            f"or {key}=float(...)" if _numeric(value) else ""))


def kernel_options(name: str, differentiable: bool = False) -> None:
    """PyTorch's ``foreach``, ``fused`` and ``capturable`` choose its kernels (speed, not
    results): accepted and ignored, so that code written for PyTorch runs.
    ``differentiable=True`` asks for a step that autograd can go through (learning the
    learning rate, say); minigrad's steps update the arrays in place, unrecorded, so it
    is refused rather than ignored."""
    if differentiable:
        raise NotImplementedError(
            f"{name}(differentiable=True): minigrad's optimizers update the parameters in "
            "place without recording the step, so no gradient can flow through it; leave "
            "differentiable=False, or write the update with tensor operations yourself")


def lerp_(start: np.ndarray, end: np.ndarray, weight: float) -> None:
    """``start <- start + weight * (end - start)`` in place, rounded as PyTorch's ``lerp_``
    (which the running averages of Adam & co. use): from the far end when weight >= 0.5,
    so that weight 1 gives ``end`` exactly."""
    if abs(weight) < 0.5:
        start += weight * (end - start)
    else:
        start[...] = end - (end - start) * (1 - weight)


def _numeric(text: Any) -> bool:
    try:
        float(text)
    except (TypeError, ValueError):
        return False
    return isinstance(text, str)


class Optimizer:
    """Base class: ``params`` (tensors, or dicts of options with a ``"params"`` entry) and
    ``defaults`` (the options every group gets unless it gives its own)."""

    _opt_called = False  # has step() run? (a scheduler warns if it steps first, as PyTorch)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "step" in cls.__dict__:  # a subclass's own step (LBFGS, a student's) counts too
            cls.step = _noting_the_call(cls.__dict__["step"])

    def __init__(self, params: Iterable[Tensor] | Iterable[dict], defaults: dict) -> None:
        self.defaults = dict(defaults)
        _check_numbers(type(self).__name__, self.defaults)
        self.check_options(self.defaults)
        self.state: defaultdict[Tensor, dict[str, Any]] = defaultdict(dict)
        self.param_groups: list[dict[str, Any]] = []
        name = type(self).__name__
        if isinstance(params, Tensor):
            raise TypeError(
                f"{name}: params argument given to the optimizer should be an iterable of "
                f"Tensors or dicts, but got Tensor (shape {params.shape}); put it in a list: "
                f"{name}([tensor], ...)"
            )
        if isinstance(params, dict) and "params" not in params and params and all(
                isinstance(key, str) and isinstance(value, Tensor)
                for key, value in params.items()):
            raise TypeError(
                f"{name}: params is a dict of {len(params)} tensor(s) keyed by name "
                f"({', '.join(list(params)[:3])}, ...): a state_dict? The optimizer needs "
                f"the parameters themselves: {name}(model.parameters(), ...). (A state "
                "dict's tensors are copies without gradients: the optimizer would update "
                "nothing.)"
            )
        if isinstance(params, dict):
            raise TypeError(
                f"{name}: params is a single dict; pass a list of param groups: "
                f"{name}([{{'params': ..., 'lr': ...}}], ...)"
            )
        try:
            param_groups = list(params)
        except TypeError:
            raise TypeError(
                f"{name}: params argument given to the optimizer should be an iterable of "
                f"Tensors or dicts, but got {type(params).__name__}"
            ) from None
        if len(param_groups) == 0:
            raise ValueError(
                f"{name}: optimizer got an empty parameter list. Pass model.parameters() or a "
                "list of tensors (note that model.parameters() is a generator: it can be "
                "used only once)."
            )
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for param_group in param_groups:
            self.add_param_group(param_group)

    def __repr__(self) -> str:
        lines = [f"{type(self).__name__} ("]
        for index, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {index}")
            lines += [f"    {key}: {value}" for key, value in group.items() if key != "params"]
        return "\n".join(lines) + "\n)"

    # --- what a subclass provides -------------------------------------------------------

    def check_options(self, group: dict[str, Any]) -> None:
        """Raise ValueError for an option out of range (a subclass checks its own)."""

    def update_param(self, param: np.ndarray, grad: np.ndarray, state: dict[str, Any],
                     group: dict[str, Any]) -> None:
        """Move one parameter: change ``param`` (its own array) in place; ``grad`` is
        read only."""
        raise NotImplementedError(f"{type(self).__name__} must define update_param (or step)")

    # --- parameter groups ---------------------------------------------------------------

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a group of parameters (e.g. a layer unfrozen later) with its own options."""
        name = type(self).__name__
        index = len(self.param_groups)
        if not isinstance(param_group, dict):
            raise TypeError(
                f"{name}: param group {index} must be a dict like {{'params': [...], 'lr': "
                f"0.1}}, but got {type(param_group).__name__}"
            )
        if "params" not in param_group:
            raise ValueError(
                f"{name}: param group {index} has no 'params' entry (it has "
                f"{sorted(param_group)}); give it the tensors to optimize"
            )
        params = param_group["params"]
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, (set, frozenset)):
            raise TypeError(
                f"{name}: optimizer parameters need to be organized in ordered collections, "
                "but the ordering of tensors in sets will change between runs. Please use a "
                "list instead."
            )
        else:
            params = list(params)
        params, names = _split_names(name, index, params)
        for position, param in enumerate(params):
            where = f"param group {index}, position {position}"
            if not isinstance(param, Tensor):
                raise TypeError(
                    f"{name}: optimizer can only optimize Tensors, but the parameter at "
                    f"{where} is a {type(param).__name__}"
                )
            if not (param.is_leaf or param.retains_grad):
                raise ValueError(
                    f"{name}: can't optimize a non-leaf Tensor (the one at {where}, shape "
                    f"{param.shape}, made by {param.grad_fn.name}); the optimizer "
                    "updates tensors you created, such as model.parameters()"
                )
        group = dict(param_group)
        group["params"] = params
        if names is not None:
            group["param_names"] = names
        if any(("param_names" in group) != ("param_names" in other)
               for other in self.param_groups):
            raise ValueError(
                f"{name}: all optimizer param groups should be with/without names: param "
                f"group {index} is {'with' if names is not None else 'without'} names and "
                "an earlier one is not; pass model.named_parameters() (or .parameters()) "
                "for every group"
            )
        for key, default in self.defaults.items():
            group.setdefault(key, default)
        _check_numbers(name, group)
        self.check_options(group)

        ids = [id(param) for param in params]
        if len(set(ids)) != len(ids):
            warnings.warn(
                f"{name}: param group {index} contains the same parameter twice; it would be "
                "updated twice per step. In future this will cause an error.",
                stacklevel=2,
            )
        # tensors compare elementwise with ==, so membership goes by id()
        taken = {id(param) for other in self.param_groups for param in other["params"]}
        for position, param in enumerate(params):
            if id(param) in taken:
                raise ValueError(
                    f"{name}: some parameters appear in more than one parameter group (the "
                    f"one at param group {index}, position {position}, shape {param.shape}, "
                    "is already in an earlier group)"
                )
        self.param_groups.append(group)

    # --- a training step ----------------------------------------------------------------

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Forget the gradients of the last backward: ``grad = None`` (the default), or
        zeros in the gradient tensors themselves with ``set_to_none=False`` (as in
        PyTorch: a reference kept to ``p.grad`` sees them)."""
        zero_grads((p for group in self.param_groups for p in group["params"]), set_to_none)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Update every parameter that has a gradient. ``closure`` (optional) re-computes
        the loss (with grad mode on) and returns it; ``step`` returns what it returned."""
        self._opt_called = True
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        for group in self.param_groups:
            for param in group["params"]:
                if param.grad is None:
                    continue
                values, grad = param.numpy(force=True), param.grad.numpy()
                if grad.dtype != values.dtype:  # state and updates keep the parameter's dtype
                    grad = grad.astype(values.dtype)
                realize_readers(param)  # a deferred op that reads it computes first
                self.update_param(values, grad, self.state[param], group)
                record_write(param)
        return loss

    # --- saving and loading -------------------------------------------------------------

    def state_dict(self) -> dict[str, Any]:
        """``{"state": {index: {...}}, "param_groups": [{options, "params": [indices]}]}``,
        PyTorch's layout: parameters are numbered in order across the groups. The state's
        arrays are Tensors without history, copies: a snapshot that later steps do not
        change (``mg.save`` writes it)."""
        index_of: dict[int, int] = {}
        param_groups = []
        for group in self.param_groups:
            packed = {key: value for key, value in group.items() if key != "params"}
            packed["params"] = [index_of.setdefault(id(p), len(index_of))
                                for p in group["params"]]
            param_groups.append(packed)
        state = {}
        for group in self.param_groups:
            for param in group["params"]:
                if self.state.get(param):
                    state[index_of[id(param)]] = {
                        key: _snapshot(value) for key, value in self.state[param].items()
                    }
        return {"state": state, "param_groups": param_groups}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Take options and state from ``state_dict()`` of an optimizer over parameters of
        the same shapes, in the same groups. Nothing changes unless everything fits."""
        name = type(self).__name__
        if not isinstance(state_dict, dict) or not {"state", "param_groups"} <= set(state_dict):
            raise ValueError(
                f"{name}.load_state_dict: expected a dict with 'state' and 'param_groups' (what "
                f"optimizer.state_dict() returns), got {type(state_dict).__name__}"
                + (f" with keys {sorted(map(str, state_dict))}"
                   if isinstance(state_dict, dict) else "")
            )
        saved_groups = state_dict["param_groups"]
        if len(saved_groups) != len(self.param_groups):
            raise ValueError(
                f"{name}.load_state_dict: loaded state dict has a different number of "
                f"parameter groups ({len(saved_groups)}) than this optimizer "
                f"({len(self.param_groups)})"
            )
        param_of: dict[int, Tensor] = {}
        for index, (group, saved) in enumerate(zip(self.param_groups, saved_groups)):
            if len(saved["params"]) != len(group["params"]):
                raise ValueError(
                    f"{name}.load_state_dict: loaded state dict contains a parameter group "
                    f"that doesn't match the size of optimizer's group: group {index} has "
                    f"{len(saved['params'])} parameters there but {len(group['params'])} here"
                )
            param_of.update(zip(saved["params"], group["params"]))

        state: defaultdict[Tensor, dict[str, Any]] = defaultdict(dict)
        for index, saved_state in state_dict["state"].items():
            if index not in param_of:
                raise ValueError(
                    f"{name}.load_state_dict: the state has an entry for parameter {index}, "
                    f"but the param groups list only {sorted(param_of)}"
                )
            param = param_of[index]
            state[param] = {key: _state_value(value, key, index, param, name)
                            for key, value in saved_state.items()}

        param_groups = []
        for group, saved in zip(self.param_groups, saved_groups):
            new_group = {key: value for key, value in saved.items() if key != "params"}
            new_group = {"params": group["params"], **new_group}
            if "param_names" in group:  # the saved names win, else the group's stay
                new_group.setdefault("param_names", group["param_names"])
            for key, default in self.defaults.items():
                new_group.setdefault(key, default)
            self.check_options(new_group)
            param_groups.append(new_group)
        self.state, self.param_groups = state, param_groups


def _split_names(name: str, index: int, params: list) -> tuple[list, list[str] | None]:
    """``model.named_parameters()`` gives (name, tensor) pairs: the tensors, and the names
    (kept as the group's ``param_names``, as in PyTorch); plain tensors: no names."""
    named = [isinstance(param, tuple) for param in params]
    if not any(named):
        return params, None
    if not all(named):
        raise ValueError(
            f"{name}: all optimizer params should be with/without names: param group "
            f"{index} mixes (name, tensor) pairs with plain tensors"
        )
    for position, pair in enumerate(params):
        if len(pair) != 2 or not isinstance(pair[0], str):
            raise TypeError(
                f"{name}: the parameter at param group {index}, position {position} is a "
                f"tuple of {len(pair)} items; a named parameter is a (name, tensor) pair, "
                "as model.named_parameters() gives"
            )
    return [pair[1] for pair in params], [pair[0] for pair in params]


def _noting_the_call(step: Callable) -> Callable:
    """``step``, noting on the optimizer that it ran (``_opt_called``)."""
    if getattr(step, "notes_the_call", False):
        return step

    @functools.wraps(step)
    def noted_step(self: Optimizer, *args: Any, **kwargs: Any) -> Any:
        self._opt_called = True
        return step(self, *args, **kwargs)

    noted_step.notes_the_call = True
    return noted_step


def _snapshot(value: Any) -> Any:
    """An optimizer state entry for ``state_dict``: arrays (and Tensors) as Tensor copies."""
    if isinstance(value, Tensor):
        value = value.numpy()
    return Tensor._make(value.copy()) if isinstance(value, np.ndarray) else value


def _state_value(value: Any, key: str, index: int, param: Tensor, name: str) -> Any:
    """A loaded state entry: arrays as a copy in the parameter's dtype (checked shape),
    ``step`` as a number, anything else as it is."""
    if key == "step":
        return np.asarray(value).item()  # a number, even if saved as a 0-d array
    if not hasattr(value, "shape"):
        return value
    if hasattr(value, "detach"):  # a minigrad or PyTorch tensor
        value = value.detach().numpy()
    if np.ndim(value) == 0 and param.ndim != 0:  # a number kept as a 0-d tensor (PyTorch's
        return np.asarray(value).item()         # NAdam mu_product, ASGD eta and mu)
    array = np.array(value, dtype=param.dtype)
    if array.shape != param.shape:
        raise ValueError(
            f"{name}.load_state_dict: state '{key}' of parameter {index} has shape "
            f"{array.shape}, but that parameter has shape {param.shape}; was the state dict "
            "saved from an optimizer over a different model?"
        )
    return array
