"""Module hooks: the user's functions that a layer calls around its forward and backward,
as PyTorch's ``nn.Module`` hooks do (``torch.nn.modules.module``, ``torch.utils.hooks``).

    acts = {}
    handle = model.fc1.register_forward_hook(lambda m, args, out: acts.update(fc1=out))
    model(x)            # acts["fc1"] is fc1's output
    handle.remove()

- forward pre-hook ``hook(module, args)``: before forward; a result replaces ``args``.
- forward hook ``hook(module, args, output)``: after forward; a result replaces the output.
- full backward pre-hook ``hook(module, grad_output)``: when the gradient of the outputs
  is known; a result replaces it.
- full backward hook ``hook(module, grad_input, grad_output)``: when the gradient of the
  positional inputs is known; a result replaces ``grad_input``.

The backward hooks see the gradients of the module *as a whole* (however many ops its
forward has) because, as in PyTorch, the inputs and the outputs pass through an identity
Function, ``BackwardHookFunction``: its node on the outputs receives ``grad_output``, its
node on the inputs produces ``grad_input``; hooks on those two nodes call the user's.

``Module.__call__`` comes here only when a hook is registered (``Module._hooked``), so a
model without hooks pays one attribute check per layer call.
"""

from __future__ import annotations

import warnings
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import numpy as np

from ..function import Function
from ..state import thread
from ..tensor import Tensor

# hooks for every module (module.py's register_module_*_hook); they run before each
# module's own
_global_backward_pre_hooks: dict[int, Callable] = OrderedDict()
_global_backward_hooks: dict[int, Callable] = OrderedDict()
_global_is_full_backward_hook: bool | None = None  # full or old-style: one kind at a time
_global_forward_pre_hooks: dict[int, Callable] = OrderedDict()
_global_forward_hooks: dict[int, Callable] = OrderedDict()
_global_forward_hooks_always_called: dict[int, bool] = OrderedDict()
_global_forward_hooks_with_kwargs: dict[int, bool] = OrderedDict()

# a module's own hook dicts, made by Module.__init__ (PyTorch's attribute names)
MODULE_HOOK_DICTS = ("_forward_pre_hooks", "_forward_pre_hooks_with_kwargs", "_forward_hooks",
                     "_forward_hooks_with_kwargs", "_forward_hooks_always_called",
                     "_backward_pre_hooks", "_backward_hooks", "_state_dict_pre_hooks",
                     "_state_dict_hooks", "_load_state_dict_pre_hooks",
                     "_load_state_dict_post_hooks")
# those that make __call__ take the hooks' path
CALL_HOOK_DICTS = ("_forward_pre_hooks", "_forward_hooks", "_backward_pre_hooks",
                   "_backward_hooks")


def any_global_hook() -> bool:
    return bool(_global_backward_pre_hooks or _global_backward_hooks
                or _global_forward_pre_hooks or _global_forward_hooks)


# --- a call with hooks: PyTorch's Module._call_impl ----------------------------------------


def call_with_hooks(module: Any, args: tuple, kwargs: dict) -> Any:
    """``module(*args, **kwargs)`` with its hooks (and the global ones), in PyTorch's
    order: forward pre-hooks, forward, forward hooks; the backward hooks are attached to
    the inputs and the outputs on the way. If forward or a hook raises, the forward hooks
    registered with ``always_call=True`` still run before the error goes on."""
    result = None
    called = set()  # the always_call hooks that ran
    try:
        backward_pre_hooks = [*_global_backward_pre_hooks.values(),
                              *module._backward_pre_hooks.values()]
        full_hooks, old_style_hooks = _backward_hooks_of(module)
        for hook_id, hook in (*_global_forward_pre_hooks.items(),
                              *module._forward_pre_hooks.items()):
            if hook_id in module._forward_pre_hooks_with_kwargs:
                new = hook(module, args, kwargs)
                if new is not None:
                    if not (isinstance(new, tuple) and len(new) == 2):
                        raise RuntimeError("forward pre-hook must return None or a tuple of "
                                           f"(new_args, new_kwargs), but got {new}.")
                    args, kwargs = new
            else:
                new = hook(module, args)
                if new is not None:
                    args = new if isinstance(new, tuple) else (new,)
        backward_hook = None
        if full_hooks or backward_pre_hooks:
            backward_hook = BackwardHook(module, full_hooks, backward_pre_hooks)
            args = backward_hook.setup_input_hook(args)
        result = module.forward(*args, **kwargs)
        for hook_id, hook in (*_global_forward_hooks.items(), *module._forward_hooks.items()):
            if hook_id in module._forward_hooks_always_called \
                    or hook_id in _global_forward_hooks_always_called:
                called.add(hook_id)
            result = _run_forward_hook(module, hook_id, hook, args, kwargs, result)
        if backward_hook is not None:
            if not isinstance(result, (Tensor, tuple)):
                warnings.warn("For backward hooks to be called, module output should be a "
                              f"Tensor or a tuple of Tensors but received {type(result)}",
                              stacklevel=3)
            result = backward_hook.setup_output_hook(result)
        if old_style_hooks:
            _attach_old_style_hooks(module, old_style_hooks, args, result)
        return result
    except Exception:
        for hook_id, hook in (*_global_forward_hooks.items(), *module._forward_hooks.items()):
            if hook_id in called or not (hook_id in module._forward_hooks_always_called or
                                         hook_id in _global_forward_hooks_always_called):
                continue
            try:
                result = _run_forward_hook(module, hook_id, hook, args, kwargs, result)
            except Exception as error:  # the first error is the one to see
                warnings.warn("module forward hook with ``always_call=True`` raised an "
                              "exception that was silenced as another error was raised in "
                              f"forward: {error}", stacklevel=3)
        raise


def _run_forward_hook(module: Any, hook_id: int, hook: Callable, args: tuple, kwargs: dict,
                      result: Any) -> Any:
    if hook_id in module._forward_hooks_with_kwargs \
            or hook_id in _global_forward_hooks_with_kwargs:
        new = hook(module, args, kwargs, result)
    else:
        new = hook(module, args, result)
    return result if new is None else new


def _backward_hooks_of(module: Any) -> tuple[list, list]:
    """The full backward hooks and the old-style ones (``register_backward_hook``) that
    apply to ``module``: the global ones first."""
    full: list = []
    old_style: list = []
    if _global_backward_hooks:
        (full if _global_is_full_backward_hook else old_style).extend(
            _global_backward_hooks.values())
    if module._backward_hooks:
        (full if module._is_full_backward_hook else old_style).extend(
            module._backward_hooks.values())
    return full, old_style


# --- full backward hooks: an identity on the inputs and one on the outputs ----------------


class BackwardHookFunction(Function):
    """f(x1, ..., xn) = (x1, ..., xn), gradient (g1, ..., gn) passed on unchanged: where a
    module's full backward hooks see its gradients (PyTorch's, there on views; here on
    copies, so an in-place edit of them cannot reach the tensors they came from)."""

    twice_differentiable = True  # the backward returns its Tensors as they are

    @staticmethod
    def forward(ctx: Any, *arrays: np.ndarray) -> tuple:
        copies = tuple(np.array(a, copy=True) for a in arrays)
        ctx.mark_non_differentiable(*[c for c, needed in zip(copies, ctx.needs_input_grad)
                                      if not needed])
        ctx.set_materialize_grads(False)  # an output not used: its gradient stays None
        return copies

    @staticmethod
    def backward(ctx: Any, *grad_outputs: Any) -> tuple:
        return grad_outputs

    @staticmethod
    def output_shape(*inputs: Any) -> tuple:
        return tuple(tuple(a.shape) for a in inputs)

    @staticmethod
    def output_dtype(*inputs: Any) -> tuple:
        return tuple(a.dtype for a in inputs)


class BackwardHook:
    """One call's backward hooks (PyTorch's ``torch.utils.hooks.BackwardHook``): the
    output node's hook keeps ``grad_output`` (after the pre-hooks); the input node's hook
    calls the full backward hooks with ``grad_input`` and that ``grad_output``. Entries
    for arguments that are not Tensors are None."""

    def __init__(self, module: Any, user_hooks: list, user_pre_hooks: list) -> None:
        self.module, self.user_hooks, self.user_pre_hooks = module, user_hooks, user_pre_hooks
        self.grad_outputs: tuple | None = None
        self.n_inputs = self.n_outputs = -1
        self.input_tensors_index: list | None = None
        self.output_tensors_index: list | None = None

    def setup_input_hook(self, args: tuple) -> tuple:
        args, self.input_tensors_index = self._apply_on_tensors(self._input_hook, args)
        self.n_inputs = len(args)
        return args

    def setup_output_hook(self, result: Any) -> Any:
        several = isinstance(result, tuple)
        outputs = result if several else (result,)
        outputs, self.output_tensors_index = self._apply_on_tensors(self._output_hook,
                                                                    outputs)
        self.n_outputs = len(outputs)
        return outputs if several else outputs[0]

    def _apply_on_tensors(self, hook: Callable, args: tuple) -> tuple[tuple, list | None]:
        """``args`` with its Tensors passed through one ``BackwardHookFunction`` whose
        node gets ``hook``; and their positions (None: none requires grad, no node)."""
        positions = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        if not (thread.modes.grad_enabled and any(args[i].requires_grad for i in positions)):
            return args, None
        new = BackwardHookFunction.apply(*[args[i] for i in positions])
        node = next(t.grad_fn for t in new if t.grad_fn is not None)
        node.register_hook(hook)
        replaced = list(args)
        for i, tensor in zip(positions, new):
            replaced[i] = tensor
        return tuple(replaced), positions

    def _pack(self, positions: list | None, values: tuple, size: int) -> tuple:
        packed: list = [None] * size
        for i, value in zip(positions or (), values):
            packed[i] = value
        return tuple(packed)

    def _output_hook(self, _grad_inputs: tuple, grad_outputs: tuple) -> tuple | None:
        self.grad_outputs = self._pack(self.output_tensors_index, grad_outputs,
                                       self.n_outputs)
        for pre_hook in self.user_pre_hooks:
            new = self._call(pre_hook, "backward pre-hook", self.grad_outputs)
            if new is None:
                continue
            new = new if isinstance(new, tuple) else (new,)
            if len(new) != len(self.grad_outputs):
                raise RuntimeError(
                    f"Backward pre hook returned an invalid number of grad_output, got "
                    f"{len(new)}, but expected {len(self.grad_outputs)} (one per output of "
                    f"{self.module._describe()})")
            self.grad_outputs = new
        grad_outputs = self.grad_outputs
        if self.input_tensors_index is None:  # no input needs a gradient: hooks run now
            warnings.warn("Full backward hook is firing when gradients are computed with "
                          "respect to module outputs since no inputs require gradients.",
                          stacklevel=2)
            grad_inputs = self._pack(None, (), self.n_inputs)
            for hook in self.user_hooks:
                new = self._call(hook, "backward hook", grad_inputs, self.grad_outputs)
                if new is not None and not (isinstance(new, tuple)
                                            and all(g is None for g in new)):
                    raise RuntimeError("Backward hook for Modules where no input requires "
                                       "gradient should always return None or None for "
                                       "all gradients.")
            self.grad_outputs = None
        return tuple(grad_outputs[i] for i in self.output_tensors_index)

    def _input_hook(self, grad_inputs: tuple, _grad_outputs: tuple) -> tuple | None:
        if self.grad_outputs is None:  # the gradient came to the inputs another way
            return None
        packed = self._pack(self.input_tensors_index, grad_inputs, self.n_inputs)
        for hook in self.user_hooks:
            new = self._call(hook, "backward hook", packed, self.grad_outputs)
            if new is None:
                continue
            new = new if isinstance(new, tuple) else (new,)
            if len(new) != len(packed):
                raise RuntimeError(
                    f"Backward hook returned an invalid number of grad_input, got {len(new)}, "
                    f"but expected {len(packed)} (one per positional input of "
                    f"{self.module._describe()})")
            packed = new
        self.grad_outputs = None
        return tuple(packed[i] for i in self.input_tensors_index)

    def _call(self, hook: Callable, kind: str, *grads: tuple) -> Any:
        """``hook(module, *grads)``; an error in it gets a note naming the layer, as an
        error in forward does."""
        try:
            return hook(self.module, *grads)
        except Exception as error:
            if hasattr(error, "add_note"):
                name = getattr(hook, "__name__", type(hook).__name__)
                error.add_note(f"(raised in {kind} '{name}' of layer "
                               f"{type(self.module).__name__})")
            raise


# --- old-style backward hooks: on the node that made the output ----------------------------


def _attach_old_style_hooks(module: Any, hooks: list, args: tuple, result: Any) -> None:
    """``register_backward_hook`` (deprecated in PyTorch): each hook is a hook on the
    node that made the (first) output, so ``grad_input`` is the gradient of that node's
    inputs: the module's own inputs only when its forward is one op (ReLU, Tanh)."""
    output = result
    while not isinstance(output, Tensor):
        output = next(v for v in output.values() if isinstance(v, Tensor)) \
            if isinstance(output, dict) else output[0]
    node = output.grad_fn
    if node is None:
        return
    for hook in hooks:
        node.register_hook(lambda grad_input, grad_output, hook=hook:
                           hook(module, grad_input, grad_output))
    inputs = [a for a in args if isinstance(a, Tensor)]
    if not all(any(t is a for a in node.args) for t in inputs):
        warnings.warn(
            f"Using a non-full backward hook when the forward contains multiple autograd "
            f"Nodes is deprecated and will be removed in future versions. This hook will "
            f"be missing some grad_input: {module._describe()}'s forward is more than one "
            f"op, and grad_input is the gradient for the inputs of its last op "
            f"({node.name}). Please use register_full_backward_hook to get the documented "
            "behavior.", FutureWarning, stacklevel=4)
