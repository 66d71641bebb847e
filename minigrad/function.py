"""Function, Context and the graph Node: how one differentiable operation is written.

A Function is a pair of NumPy computations. ``forward(ctx, *arrays)`` computes the
result and saves what ``backward`` will need on the context; ``backward(ctx,
*grad_outputs)`` turns the gradient of the output into one gradient per input (the
local chain rule). ``Function.apply`` wraps this for Tensors: it unwraps the arrays,
runs forward (now, or later in lazy mode), wraps the results and, when a gradient will
be needed, records a Node in the graph.

    class Mul(Function):
        '''f(x, y) = x * y'''
        @staticmethod
        def forward(ctx, x, y):
            ctx.save_for_backward(x, y)
            return x * y

        @staticmethod
        def backward(ctx, grad_output):
            x, y = ctx.saved_tensors
            return grad_output * y, grad_output * x
"""

from __future__ import annotations

import itertools
import traceback
import weakref
from typing import Any

import numpy as np

from .errors import ShapeError
from .state import state

# One clock orders graph nodes and in-place writes: a node's id is the clock's value when
# it was made, and every in-place write takes the next value. "Was this saved array
# modified after node N saved it?" is then "is its last write later than N?", and a
# backward pass that no write has happened during (the usual case) skips the question.
_clock = itertools.count(1)


def record_write(tensor: Any) -> None:
    """Count an in-place write of ``tensor``'s data on its version counter (the one its
    views and detached copies share, as in PyTorch), stamped with the clock."""
    owner = tensor._counter()
    owner._writes += 1
    owner._stamp = state.last_write = next(_clock)


class Context:
    """What a Function's forward leaves for its backward (PyTorch's ``ctx``).

    - ``save_for_backward(*arrays)`` / ``saved_tensors``: arrays needed by backward.
      They are released after a backward without ``retain_graph=True``.
    - ``needs_input_grad``: one bool per positional forward input.
    - ``mark_non_differentiable(*outputs)``: those outputs get no history.
    - ``set_materialize_grads(flag)``: unused outputs give zeros (True) or None.
    - any other attribute you assign (``ctx.dim = 1``) is kept as is.
    """

    # Defaults live on the class, so making a Context (once per op) costs nothing;
    # assigning one of them on an instance shadows it for that instance only.
    needs_input_grad: tuple[bool, ...] = ()
    materialize_grads = True
    _saved: tuple | None = ()
    _non_differentiable: tuple = ()
    _released = False
    _function_name = "Function"

    def save_for_backward(self, *arrays: Any) -> None:
        self._saved = arrays

    @property
    def saved_tensors(self) -> tuple:
        if self._released:
            raise RuntimeError(
                f"{self._function_name}: its saved tensors were already released by an "
                "earlier backward(). Trying to backward through the graph a second time, "
                "or to read saved tensors after backward? Call the first "
                "backward(retain_graph=True) to keep them."
            )
        return self._saved

    @property
    def saved_tensors_released(self) -> bool:
        return self._released

    def mark_non_differentiable(self, *outputs: np.ndarray) -> None:
        self._non_differentiable = outputs

    def set_materialize_grads(self, value: bool) -> None:
        self.materialize_grads = bool(value)

    def release(self) -> None:
        """Drop the saved arrays (done by backward unless ``retain_graph=True``). A
        context that saved nothing has nothing to drop: as in PyTorch, a graph of such
        ops can be backpropagated through again."""
        if self._saved:
            self._saved = None
            self._released = True

    def __repr__(self) -> str:
        attributes = {"needs_input_grad": self.needs_input_grad,
                      "materialize_grads": self.materialize_grads}
        attributes.update((k, v) for k, v in vars(self).items() if not k.startswith("_"))
        return f"<Context of {self._function_name} {attributes}>"


FunctionCtx = Context


_NO_EDGE = (None, 0)


class Node(Context):
    """One recorded application of a Function: what ``tensor.grad_fn`` returns and
    what the widgets draw. A node is also the ``ctx`` its Function's forward and
    backward receive (as in PyTorch, where ``grad_fn`` is the ctx), so
    ``y.grad_fn.saved_tensors`` and ``y.grad_fn.ctx.saved_tensors`` are the same.

    ``args`` are the positional forward arguments (Tensors and constants) and
    ``inputs`` the Tensors among them; ``next_functions`` has, per positional input,
    ``(node, output_index)`` for an input made by another Function, ``(None, 0)``
    otherwise (the engine then accumulates into that leaf directly).
    """

    __slots__ = ("id", "function", "args", "group", "next_functions", "_saved_at",
                 "_outputs", "output_meta")
    # set by whoever makes the node, right after: weak references to the output Tensors,
    # and each output's (shape, dtype)
    _outputs: list
    output_meta: list[tuple[tuple[int, ...], np.dtype]]
    # class defaults, written to a node only when they change (nodes are made per op)
    _freed = False
    _pending: dict | None = None  # lazy mode: kwargs of a forward not yet run
    _trace: list | None = None  # anomaly mode: where the op was created
    _node_hooks: dict | None = None  # register_hook: called after this node's backward
    _retained = False  # a backward went through it with retain_graph=True

    def __init__(self, function: type[Function], args: tuple,
                 needs_input_grad: tuple[bool, ...]) -> None:
        self.id = self._saved_at = next(_clock)
        self.function = function
        self.needs_input_grad = needs_input_grad
        self.args = args
        self.group = state.group
        self.next_functions = tuple([(a.grad_fn, a._output_index) if isinstance(a, Tensor)
                                     else _NO_EDGE for a in args])
        if state.anomaly:
            self._trace = traceback.format_stack(limit=12)[:-3]

    @property
    def name(self) -> str:
        return self.function.oper

    @property
    def ctx(self) -> Node:
        """The Function's context: the node itself."""
        return self

    @property
    def _function_name(self) -> str:  # what Context's messages call it
        return self.function.oper

    @property
    def inputs(self) -> tuple:
        """The Tensor inputs (after a backward without ``retain_graph``: the leaves)."""
        return tuple([a for a in self.args if isinstance(a, Tensor)])

    @property
    def outputs(self) -> tuple:
        """The output Tensors that are still alive (``None`` for those gone)."""
        return tuple(ref() for ref in self._outputs)

    @property
    def label(self) -> str | None:
        labels = [t.label for t in self.outputs if t is not None and t.label]
        return ", ".join(labels) if labels else None

    @property
    def released(self) -> bool:
        return self._released

    @property
    def freed(self) -> bool:
        return self._freed

    @property
    def retained(self) -> bool:
        """Did a backward with ``retain_graph=True`` go through this node (so its saved
        tensors were kept on purpose)?"""
        return self._retained

    def register_hook(self, hook: Any) -> Any:
        """Call ``hook(grad_inputs, grad_outputs)`` each time backward runs this node
        (PyTorch's ``grad_fn.register_hook``): ``grad_outputs`` are the gradients that
        arrived for its outputs, ``grad_inputs`` those it produced for its inputs, as
        tuples of Tensors (``None`` where there is none). A returned tuple replaces
        ``grad_inputs``. Returns a handle whose ``remove()`` unregisters the hook."""
        from .tensor import RemovableHandle

        if self._node_hooks is None:
            self._node_hooks = {}
        key = max(self._node_hooks, default=-1) + 1
        self._node_hooks[key] = hook
        return RemovableHandle(self._node_hooks, key)

    @property
    def input_meta(self) -> tuple:
        """``(shape, dtype)`` of every positional input (``None`` for constants)."""
        return tuple(self.input_shape_dtype(i) if isinstance(a, Tensor)
                     or (a is None and self.next_functions[i][0] is not None)  # freed
                     else None for i, a in enumerate(self.args))

    def free(self) -> None:
        """After a backward without ``retain_graph``: drop the saved arrays and the
        references to intermediate inputs (results of other nodes), so that their memory
        can go as it does in PyTorch. Leaves and constants stay; so do the graph's edges,
        and the shapes and dtypes of the inputs (``input_shape_dtype``)."""
        if self._saved:
            self.release()
        if not self._freed:
            self._freed = True
            self.args = tuple([None if parent is not None else a
                               for a, (parent, _) in zip(self.args, self.next_functions)])

    def input_shape_dtype(self, position: int) -> tuple:
        """Shape and dtype of positional input ``position``, also after ``free()``."""
        arg = self.args[position]
        if arg is not None:
            return arg.shape, arg.dtype
        parent, index = self.next_functions[position]  # an intermediate: its maker knows
        return parent.output_meta[index]

    def describe(self) -> str:
        """``'Exp #12 (group encoder, label h)'``: how errors name this node."""
        extras = [f"group {self.group}"] if self.group else []
        if self.label:
            extras.append(f"label {self.label}")
        return f"{self.name} #{self.id}" + (f" ({', '.join(extras)})" if extras else "")

    def __repr__(self) -> str:
        return f"<{self.name} #{self.id}>"


# tensor.py imports this module, so the Tensor class is handed over from there once it
# exists (see register_tensor_class) instead of being imported here, which would be a cycle
Tensor: type = type(None)


def register_tensor_class(cls: type) -> None:
    global Tensor
    Tensor = cls


class Function:
    """Base class of every differentiable operation. Subclass it and write static
    ``forward(ctx, *args)`` and ``backward(ctx, *grad_outputs)``; call ``apply``.

    Class attributes:
    - ``oper``: short label on graph nodes (default: the class name).
    - ``differentiable``: ``False`` for ops like argmax; results never get history.
    - ``view``: ``True`` if the output may be a NumPy view of input 0 (reshape, ...):
      then they share a version counter, as in PyTorch.
    - ``hint``: one line added to error messages, saying what to try.
    """

    oper: str = "Function"
    differentiable = True
    view = False
    hint = ""
    _uses_setup_context = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "oper" not in cls.__dict__:
            cls.oper = cls.__name__
        cls._uses_setup_context = cls.setup_context is not Function.setup_context

    @staticmethod
    def forward(ctx: Context, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("write forward(ctx, *inputs) in your Function subclass")

    @staticmethod
    def setup_context(ctx: Context, inputs: tuple, output: Any) -> None:
        """Alternative form (PyTorch 2): ``forward(*inputs)`` without ctx, then this."""

    @staticmethod
    def backward(ctx: Context, *grad_outputs: Any) -> Any:
        raise NotImplementedError("write backward(ctx, *grad_outputs) in your Function subclass")

    @staticmethod
    def output_shape(*inputs: Any, **kwargs: Any) -> tuple:
        """Shape of the result, known before computing it (used by lazy mode).
        Default: the broadcast shape of the array-like inputs. A Function with several
        outputs returns a tuple of shapes."""
        shapes = [a.shape for a in inputs if hasattr(a, "shape")]
        return tuple(np.broadcast_shapes(*shapes)) if shapes else ()

    @staticmethod
    def output_dtype(*inputs: Any, **kwargs: Any) -> Any:
        """Dtype of the result (used by lazy mode). Default: NumPy's promotion of the
        array-like inputs and Python numbers (other arguments, like shapes, don't count)."""
        return np.result_type(*(a.dtype if hasattr(a, "dtype") else a for a in inputs
                                if hasattr(a, "dtype") or isinstance(a, (int, float, complex))))

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        """Run the Function on Tensors (or numbers) and record it in the graph."""
        if state.lazy:
            return _apply_lazy(cls, args, kwargs)
        # This runs for every op, so it is written for speed: one pass over the
        # arguments, a Node only when a gradient will be needed, and the usual result
        # (one array) wrapped right here; _wrap_outputs does the general case.
        arrays, needs_input_grad = [], []
        for a in args:
            if isinstance(a, Tensor):
                arrays.append(a._data if a._data is not None else _data_of(a))
                needs_input_grad.append(a.requires_grad)
            else:
                arrays.append(a)
                needs_input_grad.append(False)
        if cls.differentiable and state.grad_enabled and True in needs_input_grad:
            node = ctx = Node(cls, args, tuple(needs_input_grad))  # the node is the ctx
        else:
            node, ctx = None, Context()
            ctx.needs_input_grad = (False,) * len(args)
        outputs = _run_forward(cls, ctx, arrays, kwargs, args)
        if type(outputs) is not np.ndarray or ctx._non_differentiable:
            return _wrap_outputs(cls, ctx, node, args, arrays, outputs)
        result = Tensor._make(outputs, node is not None, node)
        if cls.view:
            _maybe_share_version(result, args, arrays)
        if node is not None:
            node._outputs = [weakref.ref(result)]
            node.output_meta = [(outputs.shape, outputs.dtype)]
        return result


# --- the machinery behind apply --------------------------------------------------------


def _data_of(tensor: Any) -> np.ndarray:
    if tensor._data is None:  # a lazy tensor used in eager mode
        tensor.realize()
    return tensor._data


def _describe_args(args: tuple) -> str:
    parts = []
    for i, a in enumerate(args):
        if isinstance(a, Tensor):
            name = f" '{a.label}'" if a.label else ""
            parts.append(f"input {i}{name}: shape {tuple(a.shape)}, {a.dtype}")
        elif a is None:
            parts.append(f"input {i}: (freed by an earlier backward)")
        elif isinstance(a, np.ndarray):
            parts.append(f"input {i}: array of shape {a.shape}, {a.dtype}")
        else:
            parts.append(f"input {i}: {type(a).__name__} {a!r:.40}")
    return "; ".join(parts)


def _run_forward(cls: type[Function], ctx: Context, arrays: tuple, kwargs: dict,
                 args: tuple) -> Any:
    try:
        if cls._uses_setup_context:
            outputs = cls.forward(*arrays, **kwargs)
            cls.setup_context(ctx, tuple(arrays), outputs)
        else:
            outputs = cls.forward(ctx, *arrays, **kwargs)
    except (ValueError, IndexError, TypeError, RuntimeError) as error:
        if getattr(error, "minigrad", False):
            raise
        raise _explain(cls, error, args) from error
    if state.anomaly:
        where = f"{cls.oper} (forward" + (f", group {state.group})" if state.group else ")")
        _check_finite(outputs, where, args)
    return outputs


def _explain(cls: type[Function], error: Exception, args: tuple) -> Exception:
    """Re-raise a NumPy error with the op, its inputs' shapes and a hint."""
    text = str(error)
    named = text.lower().startswith(cls.oper.lower() + ":")  # already says which op
    message = f"{text if named else f'{cls.oper}: {text}'}\n  {_describe_args(args)}"
    if cls.hint:
        message += f"\n  hint: {cls.hint}"
    kind = ShapeError if isinstance(error, ValueError) else type(error)
    try:
        new = kind(message)
    except TypeError:  # an exception type that takes other arguments
        new = RuntimeError(message)
    new.minigrad = True
    return new


def _check_finite(outputs: Any, who: str, args: tuple, trace: list | None = None) -> None:
    """Anomaly mode: raise if an array in ``outputs`` holds NaN or Inf, naming ``who``
    made it (and, from ``trace``, where the op was created)."""
    arrays = outputs if isinstance(outputs, tuple) else (outputs,)
    for i, a in enumerate(arrays):
        if a is None:
            continue
        a = np.asarray(a)
        if a.dtype.kind in "fc" and not np.all(np.isfinite(a)):
            bad = "NaN" if np.isnan(a).any() else "Inf"
            message = (f"detect_anomaly: {who} produced {bad} in output {i} "
                       f"(shape {a.shape})\n  {_describe_args(args)}")
            if trace:
                message += "\n  the op was created here:\n" + "".join(trace[-4:])
            error = FloatingPointError(message)
            error.minigrad = True
            raise error


def _as_output_tuple(outputs: Any, ctx: Context) -> tuple[tuple, tuple, bool]:
    """A forward's result as a tuple of arrays; which of them were marked
    non-differentiable (asked before NumPy scalars become arrays, which makes new
    objects); and whether there were several."""
    several = isinstance(outputs, tuple)
    raw = outputs if several else (outputs,)
    marked = tuple(any(o is nd for nd in ctx._non_differentiable) for o in raw) \
        if ctx._non_differentiable else (False,) * len(raw)
    arrays = tuple(o if type(o) is np.ndarray else np.asarray(o) for o in raw)
    return arrays, marked, several


def _wrap_outputs(cls: type[Function], ctx: Context, node: Node | None, args: tuple,
                  arrays: list, outputs: Any) -> Any:
    """Tensors for a forward's outputs (one or several; arrays or NumPy scalars), made
    by ``node`` (None when nothing is recorded)."""
    outputs, marked, several = _as_output_tuple(outputs, ctx)
    results = [Tensor._make(out, node is not None and not marked[i],
                            None if marked[i] else node, i)
               for i, out in enumerate(outputs)]
    if cls.view:
        _maybe_share_version(results[0], args, arrays)
    if node is not None:
        node._outputs = [weakref.ref(t) for t in results]
        node.output_meta = [(t._data.shape, t._data.dtype) for t in results]
    return tuple(results) if several else results[0]


def _maybe_share_version(result: Any, args: tuple, arrays: list) -> None:
    """If a view Function's output is a view of its input 0, edits of one are edits of
    the other: they share one version counter, as in PyTorch."""
    base = args[0]
    if isinstance(base, Tensor) and np.may_share_memory(result._data, arrays[0]):
        result._counter_of = base._counter()
        result._base = base._base if base._base is not None else base


def check_saved_versions(node: Node) -> None:
    """Raise if an array saved by ``node`` was modified in place after it was saved."""
    for position, array in enumerate(node._saved):
        if isinstance(array, Tensor):  # saved by an mg.autograd.Function
            array = array._data
        owner = _owner_of(node, array)
        if owner is not None and owner._counter()._stamp > node._saved_at:
            error = RuntimeError(
                f"{node.describe()}: saved tensor {position} (shape {np.shape(array)}) was "
                f"modified by an in-place operation after it was saved (it is now at "
                f"version {owner._version}). Its gradient would be wrong. Do the in-place "
                "edit on a clone() instead, or before the op."
            )
            error.minigrad = True
            raise error


def _owner_of(node: Node, array: Any) -> Any:
    """The input or output Tensor of ``node`` whose data ``array`` is, if any. (An output
    that is gone cannot have been modified: a view or a detached copy of it would have
    kept it alive, as they share its version counter.)"""
    for arg in node.args:
        if isinstance(arg, Tensor) and arg._data is array:
            return arg
    for ref in node._outputs:
        output = ref()
        if output is not None and output._data is array:
            return output
    return None


def _apply_lazy(cls: type[Function], args: tuple, kwargs: dict) -> Any:
    """Lazy mode: record the op with its result's shape and dtype; compute later."""
    needs_input_grad = tuple(isinstance(a, Tensor) and a.requires_grad for a in args)
    record = cls.differentiable and state.grad_enabled and True in needs_input_grad
    try:
        shape = cls.output_shape(*args, **kwargs)
        dtype = cls.output_dtype(*args, **kwargs)
    except (ValueError, IndexError, TypeError) as error:
        if getattr(error, "minigrad", False):
            raise
        raise _explain(cls, error, args) from error
    several = len(shape) > 0 and isinstance(shape[0], tuple)
    shapes = shape if several else (shape,)
    dtypes = dtype if isinstance(dtype, tuple) else (dtype,) * len(shapes)
    node = Node(cls, args, needs_input_grad if record else (False,) * len(args))
    node._pending = kwargs
    results = []
    for index, (s, d) in enumerate(zip(shapes, dtypes)):
        differentiable = record and np.dtype(d).kind == "f"  # e.g. not the indices of max
        t = Tensor._make(None, differentiable, node if differentiable else None, index)
        t._lazy_shape, t._lazy_dtype, t._lazy_node = tuple(s), np.dtype(d), node
        results.append(t)
    node._outputs = [weakref.ref(t) for t in results]
    node.output_meta = [(t._lazy_shape, t._lazy_dtype) for t in results]
    return tuple(results) if several else results[0]


def realize_node(node: Node) -> None:
    """Run the forward that lazy mode deferred; its inputs are already realized."""
    cls, ctx, args = node.function, node, node.args
    arrays = tuple(a._data if isinstance(a, Tensor) else a for a in args)
    previous, state.group = state.group, node.group  # errors name the group it was made in
    try:
        outputs, marked, _ = _as_output_tuple(
            _run_forward(cls, ctx, arrays, node._pending, args), ctx)
    finally:
        state.group = previous
    node._pending = None
    results = []
    for index, (out, ref, (shape, _)) in enumerate(zip(outputs, node._outputs, node.output_meta)):
        if out.shape != shape:
            raise ShapeError(
                f"{cls.oper}: output_shape() promised shape {shape} for output {index} but "
                f"forward returned {out.shape}; fix {cls.__name__}.output_shape"
            )
        node.output_meta[index] = (out.shape, out.dtype)
        t = ref()
        if t is not None:
            t._data, t._lazy_node = out, None
            if marked[index]:
                t.requires_grad, t.grad_fn = False, None
            results.append(t)
    node._saved_at = next(_clock)  # what was saved is as of now
    if not any(t.grad_fn is node for t in results):
        node.ctx.release()  # nothing will backpropagate through it

