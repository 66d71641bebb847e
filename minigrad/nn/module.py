"""Module and Parameter: how a network keeps its weights, and the containers.

A Module is a Python object whose attributes are registered as they are assigned:

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(2, 16)   # a sub-module, named "fc1"
            self.fc2 = nn.Linear(16, 1)

        def forward(self, x):
            return self.fc2(self.fc1(x).relu())

``MLP().state_dict()`` then has the keys ``fc1.weight``, ``fc1.bias``, ``fc2.weight``,
``fc2.bias``, exactly as PyTorch names them. Calling a module runs ``forward`` inside
``mg.group(name)`` for each sub-module, so graph nodes carry the module's path
(``fc1``, ``encoder.layers.0.attn``) and graph views can cluster by layer.
"""

from __future__ import annotations

import os

from collections import OrderedDict, namedtuple
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import numpy as np

from ..errors import ShapeError
from ..state import no_grad, state, thread
from ..device import check_memory_format, not_on_cpu
from ..tensor import Tensor, as_dtype, parse_to
from ..hooks import RemovableHandle
from ..reuse import zero_grads
from . import hooks
from .hooks import CALL_HOOK_DICTS, MODULE_HOOK_DICTS, any_global_hook, call_with_hooks


class Parameter(Tensor):
    """A Tensor that is a module's weight: ``requires_grad=True`` and registered
    automatically when assigned to a Module attribute."""

    def __init__(self, data: Any = None, requires_grad: bool = True) -> None:
        if data is None:
            data = np.zeros(0, dtype=np.float32)
        if isinstance(data, Tensor):
            data = data.detach().numpy()  # shares the array, as torch.nn.Parameter does
        if isinstance(data, np.ndarray):
            self._init(data, False, None, 0)
        else:
            super().__init__(data)
        if requires_grad:
            self.requires_grad_(True)

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

    def __deepcopy__(self, memo: dict) -> Parameter:
        """A new Parameter with a copy of the values and the same ``requires_grad``, and
        nothing else: no ``grad`` (PyTorch's rule, so ``copy.deepcopy(model)`` starts
        without gradients)."""
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(self.numpy(force=True).copy(), self.requires_grad)
        memo[id(self)] = result
        return result


def new_parameter(*shape: int, dtype: Any = None) -> Parameter:
    """A Parameter of zeros of ``shape`` (the default float, float32, unless ``dtype``),
    for a layer's ``__init__`` to fill with its initialisation."""
    return Parameter(np.zeros(shape, dtype=state.default_dtype if dtype is None
                              else as_dtype(dtype)))


def check_sizes(layer: str, **sizes: Any) -> list[int]:
    """The sizes given to a layer's constructor as ints, or a clear error: a size must be
    a positive whole number (``nn.Linear(784 / 2, 10)`` passes the float 392.0)."""
    checked = []
    for argument, value in sizes.items():
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            hint = (" (a float: 784 / 2 is 392.0; write 784 // 2 or int(...))"
                    if isinstance(value, float) else "")
            raise TypeError(f"{layer}: {argument} must be an int, got "
                            f"{type(value).__name__} {value!r}{hint}")
        if value <= 0:
            raise ValueError(f"{layer}: {argument} must be positive, got {value}")
        checked.append(int(value))
    return checked


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """What ``load_state_dict`` returns; printed as PyTorch prints it."""

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


def _as_array(value: Any) -> np.ndarray:
    """A state-dict value as an array: minigrad or torch tensors, NumPy arrays, anything
    with ``__array__``."""
    if hasattr(value, "detach"):
        value = value.detach()
    if hasattr(value, "cpu"):
        value = value.cpu()
    if hasattr(value, "numpy"):
        value = value.numpy()
    return np.asarray(value)


def _copy_into(updates: list[tuple[Module, str, Tensor, Any, np.ndarray]],
               assign: bool) -> None:
    """``load_state_dict``'s writes: each array into its parameter or buffer, or, with
    ``assign``, the state dict's tensor put in their place (PyTorch's ``assign=True``)."""
    with no_grad():
        for module, name, target, value, array in updates:
            if assign:
                setattr(module, name, _assigned(target, value, array))
            else:
                target.copy_(array.astype(target.dtype, copy=False))


def _assigned(target: Tensor, value: Any, array: np.ndarray) -> Tensor:
    """What ``assign=True`` puts in ``target``'s place: the state dict's own tensor (its
    dtype, sharing its memory); for a parameter, a Parameter with ``target``'s
    ``requires_grad``, as PyTorch does."""
    tensor = value if isinstance(value, Tensor) else Tensor._make(array)
    if not isinstance(target, Parameter):
        return tensor
    if isinstance(tensor, Parameter):
        return tensor.requires_grad_(target.requires_grad)
    return Parameter(tensor, requires_grad=target.requires_grad)


def _load_problem(array: np.ndarray, target: Tensor, assign: bool) -> str | None:
    """Why ``array`` cannot be loaded into ``target`` (a line of the error), or None."""
    if array.shape != target.shape:
        return (f"the checkpoint has shape {array.shape}, the model has shape "
                f"{tuple(target.shape)}")
    if array.dtype.kind not in "biuf":
        return f"the checkpoint holds {array.dtype}, the model needs {target.dtype}"
    if assign and array.dtype.kind != "f" and target.requires_grad:
        return (f"the checkpoint holds {array.dtype}, but assign=True would make it a "
                "parameter that requires grad, which must be floating")
    if not assign and array.dtype.kind == "f" and target.dtype.kind in "biu":
        return f"the checkpoint holds {array.dtype}, the model needs {target.dtype}"
    return None


class Module:
    """Base class of every layer and model. Subclasses set their parameters and
    sub-modules as attributes in ``__init__`` and compute in ``forward``."""

    training: bool
    # True (on the instance) once a hook is registered on it, or (here, on the class)
    # once one is registered for every module: then __call__ runs the hooks (hooks.py)
    _hooked = False
    _is_full_backward_hook: bool | None = None  # full or old-style backward hooks

    def __init__(self) -> None:
        object.__setattr__(self, "training", True)
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_buffers", OrderedDict())
        object.__setattr__(self, "_non_persistent_buffers", set())
        object.__setattr__(self, "_modules", OrderedDict())
        for name in MODULE_HOOK_DICTS:  # PyTorch's names: _forward_hooks, ...
            object.__setattr__(self, name, OrderedDict())

    def __setstate__(self, state: dict) -> None:
        """Unpickling (and ``copy.deepcopy``): a module saved before minigrad had hooks
        gets empty hook dicts, as PyTorch fills in the attributes old checkpoints lack."""
        self.__dict__.update(state)
        for name in MODULE_HOOK_DICTS:
            if name not in self.__dict__:
                object.__setattr__(self, name, OrderedDict())

    # --- registration ---------------------------------------------------------------------

    def _check_initialized(self, name: str) -> None:
        if "_parameters" not in self.__dict__:
            raise AttributeError(
                f"cannot assign {name!r} before Module.__init__() was called: call "
                f"super().__init__() first in {type(self).__name__}.__init__"
            )

    def __setattr__(self, name: str, value: Any) -> None:
        if isinstance(value, (Parameter, Module)):
            self._check_initialized(name)
            registry = self._parameters if isinstance(value, Parameter) else self._modules
            self._forget(name, keep=registry)
            self._set_member(registry, name, value)
        elif name in self.__dict__.get("_parameters", {}):
            if value is not None:
                raise TypeError(
                    f"cannot assign a {type(value).__name__} to parameter {name!r} of "
                    f"{type(self).__name__}: use nn.Parameter(...) or None"
                )
            self._set_member(self._parameters, name, None)
        elif name in self.__dict__.get("_modules", {}):
            if value is not None:
                raise TypeError(f"cannot assign a {type(value).__name__} to sub-module "
                                f"{name!r} of {type(self).__name__}: use a Module or None")
            self._set_member(self._modules, name, None)
        elif name in self.__dict__.get("_buffers", {}):
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign a {type(value).__name__} to buffer "
                                f"{name!r} of {type(self).__name__}: use a Tensor or None")
            self._set_member(self._buffers, name, value)
        else:
            object.__setattr__(self, name, value)

    def _set_member(self, registry: dict, name: str, value: Any) -> None:
        """Register a parameter, buffer or sub-module. The registry is what counts; the
        value is also kept as a plain attribute (unless the class has that name, like
        ModuleDict.keys), so ``self.weight`` is found at once, without __getattr__."""
        registry[name] = value
        if not hasattr(type(self), name):
            self.__dict__[name] = value

    def _forget(self, name: str, keep: dict | None = None) -> None:
        """Drop ``name`` before it is registered again in ``keep``: from every other
        registry, so that a layer or parameter replaced by another keeps its place in the
        order (``model.fc1 = Linear(...)``, ``layers[0] = ...``), as in PyTorch."""
        for where in (self.__dict__, self._parameters, self._modules, self._buffers):
            if where is not keep:
                where.pop(name, None)
        self._non_persistent_buffers.discard(name)

    def __getattr__(self, name: str) -> Any:
        # only called when normal lookup fails: parameters, buffers and modules live in dicts
        registries = self.__dict__
        for where in ("_parameters", "_modules", "_buffers"):
            registry = registries.get(where)
            if registry is not None and name in registry:
                return registry[name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __delattr__(self, name: str) -> None:
        for where in (self._parameters, self._buffers, self._modules):
            if name in where:
                del where[name]
                self.__dict__.pop(name, None)
                self._non_persistent_buffers.discard(name)
                return
        object.__delattr__(self, name)

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | set(self._parameters) | set(self._buffers)
                      | set(self._modules))

    def _check_name(self, name: Any, who: str) -> None:
        """A parameter's, buffer's or sub-module's name: a non-empty str without ".", which
        separates the levels of the paths in ``state_dict()`` (PyTorch's rule)."""
        if not isinstance(name, str):
            raise TypeError(f"{type(self).__name__}.{who}: the name must be a str, got "
                            f"{type(name).__name__} {name!r}")
        if name == "" or "." in name:
            raise KeyError(f"{type(self).__name__}.{who}: the name must not be empty or contain "
                           f"\".\" (it separates levels in state_dict keys), got {name!r}")

    def _check_free(self, name: str, registry: dict, who: str) -> None:
        """PyTorch's rule: a name may be registered again in its own registry, but not
        over another attribute (a method, a plain attribute, a parameter registered as a
        buffer...), which it would hide or be hidden by."""
        if name not in registry and hasattr(self, name):
            raise KeyError(f"{type(self).__name__}.{who}: attribute {name!r} already exists; "
                           f"choose another name (or delete the attribute first: del "
                           f"module.{name})")

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"register_parameter: {name!r} must be a Parameter or None, got "
                            f"{type(param).__name__}")
        self._check_name(name, "register_parameter")
        self._check_initialized(name)
        self._check_free(name, self._parameters, "register_parameter")
        self._forget(name, keep=self._parameters)
        self._set_member(self._parameters, name, param)

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """A tensor that belongs to the module's state but is not trained (running
        statistics); it is in ``state_dict()`` unless ``persistent=False``."""
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"register_buffer: {name!r} must be a Tensor or None, got "
                            f"{type(tensor).__name__}")
        self._check_name(name, "register_buffer")
        self._check_initialized(name)
        self._check_free(name, self._buffers, "register_buffer")
        self._forget(name, keep=self._buffers)
        self._set_member(self._buffers, name, tensor)
        if not persistent:
            self._non_persistent_buffers.add(name)

    def add_module(self, name: str, module: Module | None) -> None:
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"add_module: {name!r} must be a Module, got {type(module).__name__}")
        self._check_name(name, "add_module")
        self._check_initialized(name)
        self._check_free(name, self._modules, "add_module")
        self._forget(name, keep=self._modules)
        self._set_member(self._modules, name, module)

    register_module = add_module

    # --- running --------------------------------------------------------------------------

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__} has no forward(); define one")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        # The module runs inside a group named by its path below the module that called
        # it (through containers such as ModuleList, which are never called themselves),
        # nested in that module's group: "encoder" + "layers.0" -> "encoder.layers.0".
        # The outermost module called opens no group of its own.
        modes = thread.modes  # this thread's (a layer called in another thread: its own)
        caller, outer_group = modes.module, modes.group
        path = caller._path_of(self) if caller is not None else None
        modes.module = self
        if path is not None:
            modes.group = path if outer_group is None else f"{outer_group}.{path}"
        try:
            if self._hooked:  # hooks on this module or on every module (one check)
                return self._call_with_hooks(args, kwargs)
            return self.forward(*args, **kwargs)
        except Exception as error:
            # an error from inside (a functional, an op, the user's own code) gets a
            # note naming the innermost layer it came from, its message unchanged
            if not hasattr(error, "layer"):
                error.layer = self._describe()
                if hasattr(error, "add_note"):  # Python 3.11+ (3.10: error.layer only)
                    error.add_note(f"(raised in layer {error.layer})")
            raise
        finally:
            modes.module, modes.group = caller, outer_group

    def _call_with_hooks(self, args: tuple, kwargs: dict) -> Any:
        """``__call__``'s body when hooks are registered (hooks.py). Once they are all
        removed, the flags go back to False and calls take the short path again."""
        if not any(self.__dict__.get(name) for name in CALL_HOOK_DICTS):
            self.__dict__.pop("_hooked", None)
        if not any_global_hook():
            Module._hooked = False
        return call_with_hooks(self, args, kwargs)

    def _path_of(self, descendant: Module) -> str | None:
        """``descendant``'s path below this module (``fc1``, ``layers.0``); None if it is
        not below. A path found is remembered (by the descendant's id, with its names) and
        checked by walking it again, which is one dict lookup per level: without that,
        every layer of a Sequential searched its siblings, and a 200-layer one cost
        7.7 us a layer for 1.0 us with 5 layers. A module moved, replaced or deleted
        fails the walk and is searched again."""
        known = self.__dict__.get("_paths_below")
        if known is None:
            known = {}
            object.__setattr__(self, "_paths_below", known)
        entry = known.get(id(descendant))
        if entry is not None:
            path, names = entry
            module = self
            for name in names:
                module = module._modules.get(name) if module is not None else None
            if module is descendant:
                return path
        path = self._search_path_of(descendant)
        if path is not None:
            if len(known) > 10_000:  # ids of modules long gone: start again
                known.clear()
            known[id(descendant)] = (path, tuple(path.split(".")))
        return path

    def _search_path_of(self, descendant: Module) -> str | None:
        """``_path_of`` without the memory: searched one level at a time."""
        level = [("", self)]
        while level:
            deeper = []
            for prefix, module in level:
                for name, child in module._modules.items():
                    if child is descendant:
                        return prefix + name
                    if child is not None and child._modules:
                        deeper.append((f"{prefix}{name}.", child))
            level = deeper
        return None

    def _describe(self) -> str:
        """``Linear 'encoder.fc1'``: the class and, while the model runs, the path."""
        return type(self).__name__ + (f" '{state.group}'" if state.group else "")

    def _error(self, message: str, kind: type = ShapeError) -> Exception:
        """An error whose message names the layer (class and path) first."""
        error = kind(f"{self._describe()}: {message}")
        error.minigrad = True
        error.layer = self._describe()
        return error

    def _check_input_type(self, input: Tensor, weight: Tensor | None, name: str = "input") -> None:
        """The input must be a Tensor (not a NumPy array or a list, as in PyTorch), and, as
        in PyTorch, a layer computes in its weights' dtype: a float64 or integer
        input into float32 weights is an error (NumPy arrays are float64 by default),
        not a silent switch to slower float64."""
        if not isinstance(input, Tensor):
            raise self._error(f"expected the {name} to be a Tensor, got "
                              f"{type(input).__name__}; wrap it: mg.tensor(x)", TypeError)
        if weight is None or input.dtype == weight.dtype:
            return
        fix = ("convert it with .float()" if weight.dtype == np.float32 else
               f"convert it with .to('{weight.dtype}')")
        if input.dtype.kind == "f":
            fix += f", or the model with .to('{input.dtype}')"
        raise self._error(f"expected a {weight.dtype} {name} (the dtype of the layer's "
                          f"weights), got {input.dtype} of shape {tuple(input.shape)}; {fix}",
                          TypeError)

    # --- hooks (hooks.py runs them) --------------------------------------------------------

    def _add_hook(self, registry: dict, hook: Callable, prepend: bool,
                  marks: dict[str, bool] | None = None) -> RemovableHandle:
        """Keep ``hook`` in ``registry`` (first if ``prepend``) under a new handle's id,
        with a True under that id in each dict of ``marks`` whose value is True."""
        if not callable(hook):
            raise TypeError(f"{type(self).__name__}: a hook must be callable, got "
                            f"{type(hook).__name__} {hook!r:.60}")
        marks = marks or {}
        handle = RemovableHandle(registry, extra_dict=[self.__dict__[m] for m in marks])
        registry[handle.id] = hook
        if prepend:
            registry.move_to_end(handle.id, last=False)
        for name, marked in marks.items():
            if marked:
                self.__dict__[name][handle.id] = True
        object.__setattr__(self, "_hooked", True)
        return handle

    def register_forward_pre_hook(self, hook: Callable, *, prepend: bool = False,
                                  with_kwargs: bool = False) -> RemovableHandle:
        """``hook(module, args)`` runs before each ``forward``; a result replaces the
        positional ``args`` (one value is made a 1-tuple). ``with_kwargs``:
        ``hook(module, args, kwargs)``, returning None or ``(args, kwargs)``.
        ``prepend``: run before the hooks already registered."""
        return self._add_hook(self._forward_pre_hooks, hook, prepend,
                              {"_forward_pre_hooks_with_kwargs": with_kwargs})

    def register_forward_hook(self, hook: Callable, *, prepend: bool = False,
                              with_kwargs: bool = False,
                              always_call: bool = False) -> RemovableHandle:
        """``hook(module, args, output)`` runs after each ``forward`` (to record
        activations, say); a result replaces the output. ``with_kwargs``:
        ``hook(module, args, kwargs, output)``. ``always_call``: run it also when
        forward raised (``output`` is then None)."""
        return self._add_hook(self._forward_hooks, hook, prepend,
                              {"_forward_hooks_with_kwargs": with_kwargs,
                               "_forward_hooks_always_called": always_call})

    def register_full_backward_pre_hook(self, hook: Callable,
                                        prepend: bool = False) -> RemovableHandle:
        """``hook(module, grad_output)`` runs when the gradient of the module's outputs is
        known (a tuple, None for outputs that are not Tensors or got no gradient); a
        result replaces ``grad_output``."""
        return self._add_hook(self._backward_pre_hooks, hook, prepend)

    def register_full_backward_hook(self, hook: Callable,
                                    prepend: bool = False) -> RemovableHandle:
        """``hook(module, grad_input, grad_output)`` runs when the gradient of the
        module's positional inputs is known: ``grad_input`` for them (None for those
        that are not Tensors), ``grad_output`` for the outputs, as tuples; a result
        replaces ``grad_input``. If no input requires grad, it runs with the outputs'
        gradient and ``grad_input`` all None. (As in PyTorch, forward then receives,
        and the caller gets, new tensors with the same values: hooks.py.)"""
        handle = self._add_hook(self._backward_hooks, hook, prepend)
        self._backward_hook_kind(full=True, handle=handle)
        return handle

    def register_backward_hook(self, hook: Callable) -> RemovableHandle:
        """Deprecated in PyTorch for ``register_full_backward_hook``: ``hook(module,
        grad_input, grad_output)`` on the node that made the output, so ``grad_input`` is
        the gradient for that last op's inputs (the module's own inputs only when its
        forward is one op, which a FutureWarning says otherwise)."""
        handle = self._add_hook(self._backward_hooks, hook, False)
        self._backward_hook_kind(full=False, handle=handle)
        return handle

    def _backward_hook_kind(self, full: bool, handle: RemovableHandle) -> None:
        """A module has full or old-style backward hooks, not both (PyTorch's rule): a
        hook of the other kind is taken away again, with an error."""
        if self._is_full_backward_hook is (not full):
            handle.remove()
            raise RuntimeError("Cannot use both regular backward hooks and full backward "
                               "hooks on a single Module. Please use only one of them.")
        object.__setattr__(self, "_is_full_backward_hook", full)

    # --- walking the tree -----------------------------------------------------------------

    def named_modules(self, memo: set | None = None, prefix: str = "",
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Module]]:
        memo = set() if memo is None else memo  # of modules, as PyTorch's (not their ids)
        if remove_duplicate:
            if self in memo:
                return
            memo.add(self)
        yield prefix, self
        for name, child in self._modules.items():
            if child is not None:
                yield from child.named_modules(memo, f"{prefix}.{name}" if prefix else name,
                                               remove_duplicate)

    def modules(self) -> Iterator[Module]:
        for _, module in self.named_modules():
            yield module

    def named_children(self) -> Iterator[tuple[str, Module]]:
        seen = set()
        for name, child in self._modules.items():
            if child is not None and id(child) not in seen:
                seen.add(id(child))
                yield name, child

    def children(self) -> Iterator[Module]:
        for _, child in self.named_children():
            yield child

    def get_submodule(self, target: str) -> Module:
        """The module at ``target``, a path as in ``named_modules()`` (``"body.0"``; ``""``
        is this module itself)."""
        module = self
        if target == "":
            return module
        walked = []
        for name in target.split("."):
            child = module._modules.get(name)
            if child is None:
                where = f"{type(module).__name__} '{'.'.join(walked)}'" if walked else \
                    type(module).__name__
                raise AttributeError(
                    f"{type(self).__name__}.get_submodule({target!r}): {where} has no "
                    f"submodule {name!r} (it has: {', '.join(module._modules) or 'none'})")
            walked.append(name)
            module = child
        return module

    def get_parameter(self, target: str) -> Parameter:
        """The parameter at ``target`` (``"body.0.weight"``), as ``named_parameters()``
        names it."""
        return self._get_member(target, "_parameters", "get_parameter", "parameter")

    def get_buffer(self, target: str) -> Tensor:
        """The buffer at ``target`` (``"norm.running_mean"``), as ``named_buffers()``
        names it."""
        return self._get_member(target, "_buffers", "get_buffer", "buffer")

    def _get_member(self, target: str, registry: str, who: str, kind: str) -> Any:
        path, _, name = target.rpartition(".")
        module = self.get_submodule(path)
        members = getattr(module, registry)
        if members.get(name) is None:
            raise AttributeError(
                f"{type(self).__name__}.{who}({target!r}): {type(module).__name__}"
                f"{f' {path!r}' if path else ''} has no {kind} {name!r} (its {kind}s: "
                f"{', '.join(n for n, v in members.items() if v is not None) or 'none'})")
        return members[name]

    def _named_members(self, registry: str, prefix: str, recurse: bool,
                       remove_duplicate: bool = True) -> Iterator[tuple[str, Tensor]]:
        modules = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) \
            if recurse else [(prefix, self)]
        seen = set()
        for module_prefix, module in modules:
            for name, value in getattr(module, registry).items():
                if value is None or (remove_duplicate and id(value) in seen):
                    continue
                seen.add(id(value))
                yield (f"{module_prefix}.{name}" if module_prefix else name), value

    def named_parameters(self, prefix: str = "", recurse: bool = True,
                         remove_duplicate: bool = True) -> Iterator[tuple[str, Parameter]]:
        yield from self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def named_buffers(self, prefix: str = "", recurse: bool = True,
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Tensor]]:
        yield from self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        for _, buffer in self.named_buffers(recurse=recurse):
            yield buffer

    def num_parameters(self, trainable_only: bool = False) -> int:
        """How many numbers the model learns (each shared parameter counted once)."""
        return sum(p.numel() for p in self.parameters()
                   if p.requires_grad or not trainable_only)

    # --- state dict -----------------------------------------------------------------------

    def _state_items(self) -> Iterator[tuple[str, tuple[Module, str, Tensor]]]:
        """Every parameter and persistent buffer with its flat key and its owner, as
        PyTorch lists them (module by module, parameters before buffers; shared tensors
        under every name)."""
        for module_prefix, module in self.named_modules(remove_duplicate=False):
            items = list(module._parameters.items()) + [
                (name, b) for name, b in module._buffers.items()
                if name not in module._non_persistent_buffers]
            for name, value in items:
                if value is not None:
                    key = f"{module_prefix}.{name}" if module_prefix else name
                    yield key, (module, name, value)

    def state_dict(self, *args: Any, destination: dict | None = None, prefix: str = "",
                   keep_vars: bool = False) -> dict[str, Tensor]:
        """Every parameter and persistent buffer as a Tensor without history, under
        PyTorch's flat keys (``"0.weight"``). Unlike PyTorch's, the values are copies: a
        snapshot that later training does not change. ``keep_vars=True`` gives the
        parameters and buffers themselves."""
        if args:  # PyTorch's old positional form state_dict(destination, prefix, keep_vars)
            destination, prefix, keep_vars = (list(args) + [destination, prefix,
                                                            keep_vars][len(args):])[:3]
        result = OrderedDict() if destination is None else destination
        self._save_state(result, prefix, keep_vars)
        return result

    def _save_state(self, result: dict, prefix: str, keep_vars: bool) -> None:
        """``state_dict`` of this module into ``result``: its state-dict pre-hooks, its
        own entries, its sub-modules', then its post-hooks (PyTorch's order)."""
        for hook in list(self._state_dict_pre_hooks.values()):
            hook(self, prefix, keep_vars)
        persistent = [(name, b) for name, b in self._buffers.items()
                      if name not in self._non_persistent_buffers]
        for name, value in [*self._parameters.items(), *persistent]:
            if value is not None and prefix + name not in result:
                result[prefix + name] = value if keep_vars else Tensor._make(value.numpy().copy())
        for name, child in self._modules.items():
            if child is not None:
                child._save_state(result, f"{prefix}{name}.", keep_vars)
        for hook in list(self._state_dict_hooks.values()):
            if hook(self, result, prefix, {"version": 1}) is not None:
                raise RuntimeError("state_dict post-hook must return None (it may change the "
                                   "state dict it is given in place)")

    def register_state_dict_pre_hook(self, hook: Callable) -> RemovableHandle:
        """``hook(module, prefix, keep_vars)`` runs when ``state_dict()`` starts on this
        module (``prefix``: its keys' beginning, ``"fc1."``), before any value is read."""
        return self._add_state_hook(self._state_dict_pre_hooks, hook)

    def register_state_dict_post_hook(self, hook: Callable) -> RemovableHandle:
        """``hook(module, state_dict, prefix, local_metadata)`` runs when this module's
        entries (its own and its sub-modules') are in ``state_dict``; it may change that
        dict in place and must return None."""
        return self._add_state_hook(self._state_dict_hooks, hook)

    def register_load_state_dict_pre_hook(self, hook: Callable) -> RemovableHandle:
        """``hook(module, state_dict, prefix, local_metadata, strict, missing_keys,
        unexpected_keys, error_msgs)`` runs when ``load_state_dict`` starts, before any
        key is matched: it may change ``state_dict`` (a copy of the one given) in place,
        to rename old keys say, and add messages to ``error_msgs`` (then nothing loads)."""
        return self._add_state_hook(self._load_state_dict_pre_hooks, hook)

    def register_load_state_dict_post_hook(self, hook: Callable) -> RemovableHandle:
        """``hook(module, incompatible_keys)`` runs after ``load_state_dict`` loaded the
        values; ``incompatible_keys.missing_keys`` and ``.unexpected_keys`` are lists it
        may change in place (emptying them lets a strict load pass); it returns None."""
        return self._add_state_hook(self._load_state_dict_post_hooks, hook)

    def _add_state_hook(self, registry: dict, hook: Callable) -> RemovableHandle:
        """A state-dict hook: kept as the call hooks are, but it leaves ``__call__`` alone."""
        if not callable(hook):
            raise TypeError(f"{type(self).__name__}: a hook must be callable, got "
                            f"{type(hook).__name__} {hook!r:.60}")
        handle = RemovableHandle(registry)
        registry[handle.id] = hook
        return handle

    def _modules_after_their_children(self) -> Iterator[Module]:
        """Every module below and this one, each after its sub-modules (shared ones once
        per place): the order PyTorch's recursive ``load_state_dict`` finishes them."""
        for child in self._modules.values():
            if child is not None:
                yield from child._modules_after_their_children()
        yield self

    def load_state_dict(self, state_dict: dict, strict: bool = True,
                        assign: bool = False) -> _IncompatibleKeys:
        """Copy arrays (minigrad or PyTorch tensors, NumPy arrays, anything with
        ``__array__``) into the parameters and buffers. ``assign=True``: put the state
        dict's tensors themselves in their place instead (their dtype; parameters stay
        Parameters with their ``requires_grad``; an optimizer made before holds the old
        ones), as in PyTorch.
        Every missing, unexpected and mis-shaped key is listed in one error; nothing is
        changed unless everything fits (with ``strict=False`` missing and unexpected keys
        are allowed and returned)."""
        if isinstance(state_dict, (str, os.PathLike)):
            raise TypeError(
                f"load_state_dict: expected a dict of arrays, got the file name "
                f"{str(state_dict)!r}; load the file first: "
                f"model.load_state_dict(mg.load({str(state_dict)!r})), as in PyTorch")
        if not hasattr(state_dict, "keys"):
            raise TypeError(f"load_state_dict: expected a dict of arrays, got "
                            f"{type(state_dict).__name__}")
        own = OrderedDict(self._state_items())
        missing, unexpected, problems = [], [], []
        pre_hooked = [(f"{path}." if path else "", module) for path, module
                      in self.named_modules(remove_duplicate=False)
                      if module._load_state_dict_pre_hooks]
        if pre_hooked:  # they may rename keys: in a copy, as PyTorch's
            state_dict = OrderedDict(state_dict)
            for prefix, module in pre_hooked:
                for hook in list(module._load_state_dict_pre_hooks.values()):
                    hook(module, state_dict, prefix, {"version": 1}, strict, missing,
                         unexpected, problems)
            problems = [f"  {message}" for message in problems]
        missing += [key for key in own if key not in state_dict]
        unexpected += [key for key in state_dict if key not in own]
        updates = []
        for key, (module, name, target) in own.items():
            if key not in state_dict:
                continue
            try:
                array = _as_array(state_dict[key])
            except (TypeError, ValueError) as error:
                problems.append(f"  {key}: cannot read it as an array ({error})")
                continue
            problem = _load_problem(array, target, assign)
            if problem:
                problems.append(f"  {key}: {problem}")
            else:
                updates.append((module, name, target, state_dict[key], array))
        hooked = [m for m in self._modules_after_their_children()
                  if m._load_state_dict_post_hooks]
        if hooked and not problems:  # PyTorch's order: load, the post-hooks (which may
            # forgive missing or unexpected keys), then the strict check
            _copy_into(updates, assign)
            updates, incompatible = [], _IncompatibleKeys(missing, unexpected)
            for module in hooked:
                for hook in list(module._load_state_dict_post_hooks.values()):
                    if hook(module, incompatible) is not None:
                        raise AssertionError(
                            "Hooks registered with ``register_load_state_dict_post_hook`` are "
                            "not expected to return new values, if incompatible_keys need to "
                            "be modified, it should be done inplace.")
        if strict:
            problems += [f"  missing key {key!r} (in the model, not in the state dict)"
                         for key in missing]
            problems += [f"  unexpected key {key!r} (in the state dict, not in the model)"
                         for key in unexpected]
        if problems:
            raise RuntimeError(
                f"load_state_dict: the state dict does not fit {type(self).__name__} "
                f"({len(problems)} problem{'s' if len(problems) > 1 else ''}); "
                + ("the values that fit were loaded (before the load_state_dict post-hooks "
                   "ran)" if hooked and not updates else "nothing was loaded")
                + ":\n" + "\n".join(problems)
            )
        _copy_into(updates, assign)
        return _IncompatibleKeys(missing, unexpected)

    # --- modes and helpers ----------------------------------------------------------------

    def train(self, mode: bool = True) -> Module:
        if not isinstance(mode, bool):
            raise ValueError("train: mode must be True or False")
        for module in self.modules():
            object.__setattr__(module, "training", mode)
        return self

    def eval(self) -> Module:
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        for param in self.parameters():
            param.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Forget the gradients: ``grad = None`` (the default), or, with
        ``set_to_none=False``, zeros in the gradient tensors themselves (as in PyTorch: a
        reference kept to ``p.grad`` sees the zeros)."""
        zero_grads(self.parameters(), set_to_none)

    def compile(self, *args: Any, **kwargs: Any) -> None:
        """``model.compile()``: no compiler here; the module runs as it is (same results)."""

    def apply(self, fn: Callable[[Module], Any]) -> Module:
        """Call ``fn`` on every sub-module (children first) and on this module."""
        for child in self.children():
            child.apply(fn)
        fn(self)
        return self

    def to(self, *args: Any, dtype: Any = None, device: Any = None,
           non_blocking: bool = False, memory_format: Any = None) -> Module:
        """PyTorch's forms: ``to(device)`` (the CPU: nothing moves), ``to(dtype)``
        (floating parameters and buffers, as ``model.to(mg.float64)``), both, or
        ``to(tensor)`` (its dtype). ``memory_format``: accepted (values stay in row order)."""
        check_memory_format(memory_format, f"{type(self).__name__}.to")
        _, dtype = parse_to(args, device, dtype, f"{type(self).__name__}.to")
        if dtype is not None and dtype.kind != "f":  # PyTorch's rule and words
            raise TypeError(f"{type(self).__name__}.to: nn.Module.to only accepts floating "
                            f"point dtypes, but got desired dtype={dtype}; to convert "
                            "every tensor whatever its dtype, use module.type(dtype)")
        return self if dtype is None else self._cast(dtype)

    def cpu(self) -> Module:
        return self

    def cuda(self, device: Any = None) -> Module:
        raise RuntimeError(not_on_cpu("cuda" if device is None else device,
                                      f"{type(self).__name__}.cuda()"))

    def double(self) -> Module:
        return self._cast(np.float64)

    def float(self) -> Module:
        return self._cast(np.float32)

    def half(self) -> Module:
        return self._cast(np.float16)

    def bfloat16(self) -> Module:
        return self._cast(as_dtype("bfloat16"))  # an error that says why not

    def type(self, dst_type: Any) -> Module:
        """Every parameter and buffer to ``dst_type``, integer ones too (unlike ``to``)."""
        return self._cast(as_dtype(dst_type), floating_only=False)

    def _cast(self, dtype: Any, floating_only: bool = True) -> Module:
        """Floating parameters and buffers (all, unless ``floating_only``) to ``dtype``
        (the same Parameter objects)."""
        for tensor in list(self.parameters()) + list(self.buffers()):
            if tensor.dtype.kind == "f" or not floating_only:
                tensor._data = tensor._data.astype(dtype)
                if tensor.grad is not None:
                    tensor.grad = Tensor._make(tensor.grad._data.astype(dtype))
        return self

    # --- printing -------------------------------------------------------------------------

    def extra_repr(self) -> str:
        """The arguments shown in ``repr`` (``in_features=2, out_features=3``)."""
        return ""

    def __repr__(self) -> str:
        """PyTorch's layout: ``Name(extra)`` for a one-line ``extra_repr`` and no
        sub-modules, otherwise one line of ``extra_repr`` or sub-module each, indented."""
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [f"({name}): {indent(repr(child))}"
                       for name, child in self._modules.items()]
        if not child_lines and len(extra_lines) <= 1:
            return f"{type(self).__name__}({extra})"
        body = "\n  ".join(extra_lines + child_lines)
        return f"{type(self).__name__}(\n  {body}\n)"


def indent(text: str) -> str:
    """``text``'s lines after the first indented by two spaces (blank ones left empty), for
    a sub-module's repr inside its parent's."""
    first, *rest = text.split("\n")
    return "\n".join([first] + [f"  {line}" if line.strip() else "" for line in rest])


# --- hooks for every module: torch.nn.modules.module.register_module_*_hook ----------------


def register_module_forward_pre_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """``hook(module, args)`` before every module's forward (before the module's own
    pre-hooks); a result replaces ``args`` (one value is made a 1-tuple)."""
    return _add_global_hook(hooks._global_forward_pre_hooks, hook)


def register_module_forward_hook(hook: Callable[..., Any], *, with_kwargs: bool = False,
                                 always_call: bool = False) -> RemovableHandle:
    """``hook(module, args, output)`` (``with_kwargs``: ``hook(module, args, kwargs,
    output)``) after every module's forward (before the module's own forward hooks); a
    result replaces the output. ``always_call``: also when forward raised."""
    handle = _add_global_hook(hooks._global_forward_hooks, hook, extra_dict=[
        hooks._global_forward_hooks_always_called, hooks._global_forward_hooks_with_kwargs])
    if with_kwargs:
        hooks._global_forward_hooks_with_kwargs[handle.id] = True
    if always_call:
        hooks._global_forward_hooks_always_called[handle.id] = True
    return handle


def register_module_full_backward_pre_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """``hook(module, grad_output)`` for every module, as
    ``Module.register_full_backward_pre_hook`` (before the module's own)."""
    return _add_global_hook(hooks._global_backward_pre_hooks, hook)


def register_module_full_backward_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """``hook(module, grad_input, grad_output)`` for every module, as
    ``Module.register_full_backward_hook`` (before the module's own)."""
    return _add_global_backward_hook(hook, full=True)


def register_module_backward_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """Deprecated in PyTorch for ``register_module_full_backward_hook``: the old-style
    hook of ``Module.register_backward_hook``, for every module."""
    return _add_global_backward_hook(hook, full=False)


def _add_global_backward_hook(hook: Callable[..., Any], full: bool) -> RemovableHandle:
    if hooks._global_is_full_backward_hook is (not full):
        raise RuntimeError("Cannot use both regular backward hooks and full backward hooks as "
                           "a global Module hook. Please use only one of them.")
    hooks._global_is_full_backward_hook = full
    return _add_global_hook(hooks._global_backward_hooks, hook)


def _add_global_hook(registry: dict, hook: Callable[..., Any],
                     extra_dict: list | None = None) -> RemovableHandle:
    if not callable(hook):
        raise TypeError(f"register_module_*_hook: a hook must be callable, got "
                        f"{type(hook).__name__} {hook!r:.60}")
    handle = RemovableHandle(registry, extra_dict=extra_dict)
    registry[handle.id] = hook
    Module._hooked = True  # every module's __call__ now looks at the hooks
    return handle


# --- containers ---------------------------------------------------------------------------


class _ModuleSequence(Module):
    """What Sequential and ModuleList share: modules numbered 0, 1, ... that index, slice,
    replace, insert and delete like a list, renumbered after each change, as in PyTorch."""

    def _key(self, index: Any, who: str) -> str:
        """The name of the module at ``index`` (an int, negative from the end)."""
        if isinstance(index, bool) or not isinstance(index, (int, np.integer)):
            raise TypeError(f"{type(self).__name__}.{who}: indices are ints (or slices), got "
                            f"{type(index).__name__} {index!r}")
        size = len(self._modules)
        if not -size <= index < size:
            raise IndexError(f"{type(self).__name__}.{who}: index {index} is out of range for "
                             f"{size} module(s)")
        return list(self._modules)[index % size]

    def _renumber(self, modules: list) -> None:
        """Hold exactly ``modules``, named 0, 1, ... in that order."""
        for name in list(self._modules):
            self._modules.pop(name)
            self.__dict__.pop(name, None)
        for index, module in enumerate(modules):
            self.add_module(str(index), module)

    def _of(self, items: list) -> Any:
        """A new container of this kind holding the ``(name, module)`` ``items`` (what a
        slice gives)."""
        raise NotImplementedError

    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return self._of(list(self._modules.items())[index])
        return self._modules[self._key(index, "__getitem__")]

    def __setitem__(self, index: int, module: Module) -> None:
        self.add_module(self._key(index, "__setitem__"), module)

    def __delitem__(self, index: int | slice) -> None:
        if not isinstance(index, slice):
            self._key(index, "__delitem__")  # an int in range, or the error that says not
        modules = list(self._modules.values())
        del modules[index]
        self._renumber(modules)

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def append(self, module: Module) -> Any:
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules: Iterable[Module]) -> Any:
        for module in modules:
            self.append(module)
        return self

    def insert(self, index: int, module: Module) -> None:
        """Put ``module`` before position ``index`` (``len(self)``: at the end)."""
        modules = list(self._modules.values())
        if isinstance(index, bool) or not isinstance(index, (int, np.integer)) \
                or not -len(modules) <= index <= len(modules):
            raise IndexError(f"{type(self).__name__}.insert: index {index!r} is out of range "
                             f"for {len(modules)} module(s)")
        modules.insert(index, module)
        self._renumber(modules)

    def pop(self, index: int | slice = -1) -> Any:
        """Remove the module at ``index`` (the last one by default) and return it."""
        module = self[index]
        del self[index]
        return module


class Sequential(_ModuleSequence):
    """Modules applied one after another: ``Sequential(Linear(2, 8), ReLU(), Linear(8, 1))``.
    Also accepts an ordered dict of named modules."""

    def __init__(self, *modules: Module) -> None:
        super().__init__()
        if len(modules) == 1 and isinstance(modules[0], dict):
            for name, module in modules[0].items():
                self.add_module(name, module)
        else:
            for index, module in enumerate(modules):
                if isinstance(module, (list, tuple)):
                    raise TypeError("Sequential takes the modules as separate arguments: "
                                    "Sequential(*layers), not Sequential(layers)")
                self.add_module(str(index), module)

    def _of(self, items: list) -> Sequential:
        return Sequential(OrderedDict(items))  # the names stay, as in PyTorch

    def __add__(self, other: Sequential) -> Sequential:
        """A new Sequential: this one's layers, then ``other``'s (the same objects)."""
        if not isinstance(other, Sequential):
            raise ValueError(f"Sequential + {type(other).__name__}: only a Sequential can be "
                             "added to a Sequential")
        return Sequential(*self, *other)

    def __iadd__(self, other: Sequential) -> Sequential:
        if not isinstance(other, Sequential):
            raise ValueError(f"Sequential += {type(other).__name__}: only a Sequential can be "
                             "added to a Sequential")
        return self.extend(list(other))

    def __mul__(self, times: int) -> Sequential:
        """The layers repeated ``times`` times: the same objects, so they share weights."""
        if isinstance(times, bool) or not isinstance(times, (int, np.integer)):
            raise TypeError(f"Sequential * {type(times).__name__}: the factor must be an int")
        if times <= 0:
            raise ValueError(f"Sequential * {times}: the factor must be positive")
        return Sequential(*(list(self) * int(times)))

    __rmul__ = __mul__

    def __imul__(self, times: int) -> Sequential:
        repeated = self * times
        self._renumber(list(repeated))
        return self

    def forward(self, x: Any) -> Any:
        for module in self._modules.values():
            x = module(x)
        return x


class ModuleList(_ModuleSequence):
    """A list of modules whose parameters are registered (a plain list would hide them)."""

    def __init__(self, modules: Iterable[Module] | None = None) -> None:
        super().__init__()
        for module in modules or ():
            self.append(module)

    def _of(self, items: list) -> ModuleList:
        return ModuleList(module for _, module in items)  # numbered again, as in PyTorch

    def __add__(self, other: Iterable[Module]) -> ModuleList:
        """A new ModuleList: this one's modules, then ``other``'s (the same objects)."""
        return ModuleList([*self, *other])

    def __iadd__(self, other: Iterable[Module]) -> ModuleList:
        return self.extend(other)

    def __repr__(self) -> str:
        """As PyTorch prints a ModuleList: a run of modules that print alike is one line,
        ``(0-4): 5 x Linear(...)``."""
        runs: list[list] = []  # [first index, last index, repr]
        for index, module in enumerate(self):
            text = repr(module)
            if runs and runs[-1][2] == text:
                runs[-1][1] = index
            else:
                runs.append([index, index, text])
        if not runs:
            return f"{type(self).__name__}()"
        lines = [indent(f"({first}): {text}" if first == last else
                        f"({first}-{last}): {last - first + 1} x {text}")
                 for first, last, text in runs]
        return f"{type(self).__name__}(\n  " + "\n  ".join(lines) + "\n)"


class ModuleDict(Module):
    """A dict of modules whose parameters are registered."""

    def __init__(self, modules: Any = None) -> None:
        super().__init__()
        if modules is not None:
            self.update(modules)

    def update(self, modules: Any) -> None:
        """Add (or replace, in place) the modules of a dict, a ModuleDict or an iterable of
        ``(name, module)`` pairs, in their order."""
        pairs = modules.items() if isinstance(modules, (dict, ModuleDict)) else modules
        for position, pair in enumerate(pairs):
            if not isinstance(pair, (tuple, list)) or len(pair) != 2:
                raise TypeError(f"ModuleDict.update: expected (name, module) pairs, but "
                                f"element {position} is {type(pair).__name__} {pair!r:.60}")
            self[pair[0]] = pair[1]

    def pop(self, name: str) -> Module:
        """Remove the module called ``name`` and return it."""
        module = self[name]
        del self[name]
        return module

    def clear(self) -> None:
        for name in list(self._modules):
            del self[name]

    def __getitem__(self, name: str) -> Module:
        return self._modules[name]

    def __setitem__(self, name: str, module: Module) -> None:
        self.add_module(name, module)

    def __delitem__(self, name: str) -> None:
        delattr(self, name) if name in self._modules else self._modules.pop(name)

    def __contains__(self, name: str) -> bool:
        return name in self._modules

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[str]:
        return iter(self._modules)

    def keys(self):
        return self._modules.keys()

    def values(self):
        return self._modules.values()

    def items(self):
        return self._modules.items()
