"""Function, Context and the graph Node: how one differentiable operation is written.

A Function is a pair of NumPy computations. ``forward(ctx, *arrays)`` computes the
result and saves what ``backward`` will need on the context; ``backward(ctx,
*grad_outputs)`` turns the gradient of the output into one gradient per input (the
local chain rule). ``Function.apply`` wraps this for Tensors: it unwraps the arrays,
runs forward, wraps the results and, when a gradient will be needed, records a Node in
the graph. (In lazy mode it records the Node now and ``lazy_mode.py`` runs it later.)

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

import traceback
import weakref
from typing import Any

import numpy as np

from . import lazy_mode, tensor_class
from .forward import raise_explained, read_only, run_forward, wrap_outputs
from .hooks import RemovableHandle
from .state import state, thread
from .versions import clock, record_write, share_version  # noqa: F401 (record_write: re-exported)

# the floating dtypes (kinds f, c), as a set: `apply` looks its result's dtype up per op,
# where `dtype.kind` cost 2% of `a + b` (callgrind, 500 of them: 15.02 M instructions with
# `.kind`, 14.90 M with the set, 14.69 M with no check). Any other result (an integer one
# gets no history, as in PyTorch) takes wrap_outputs, which checks and says why.
_FLOAT_DTYPES = frozenset(np.dtype(c) for c in np.typecodes["All"] if np.dtype(c).kind in "fc")


class Context:
    """What a Function's forward leaves for its backward (PyTorch's ``ctx``).

    - ``save_for_backward(*arrays)`` / ``saved_tensors``: arrays needed by backward.
      They are released after a backward without ``retain_graph=True``.
    - ``needs_input_grad``: one bool per positional forward input.
    - ``mark_non_differentiable(*outputs)``: those outputs get no history.
    - ``mark_dirty(*inputs)``: forward modifies these inputs in place and returns them
      (PyTorch's contract); the input tensor itself becomes the output.
    - ``set_materialize_grads(flag)``: unused outputs give zeros (True) or None.
    - any other attribute you assign (``ctx.dim = 1``) is kept as is.

    A Function written outside minigrad gets its inputs, the arrays it saved and the
    gradients its backward receives as **read-only** NumPy views: they are the arrays of
    the caller's tensors (and of the graph), so an in-place edit (``x[x < 0] = 0``) would
    silently change them. Such an edit raises an error naming the Function; compute a
    new array instead, or call ``ctx.mark_dirty(x)`` first to modify an input on purpose.
    """

    # Defaults live on the class, so making a Context (once per op) costs nothing;
    # assigning one of them on an instance shadows it for that instance only.
    needs_input_grad: tuple[bool, ...] = ()
    materialize_grads = True
    _pending: dict | None = None
    _saved: tuple | None = ()
    _non_differentiable: tuple = ()
    _released = False
    _function_name = "Function"
    _dirty: tuple = ()
    _forward_arrays: list | None = None  # a user Function's inputs, read-only (apply)

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

    def saved_arrays(self) -> tuple:
        """The saved arrays, without raising: ``()`` once they were released (the arrays
        of the Tensors an ``mg.autograd.Function`` saved)."""
        saved = self._saved or ()
        if any(isinstance(a, tensor_class.Tensor) for a in saved):
            saved = tuple([a._data if isinstance(a, tensor_class.Tensor) else a for a in saved])
        return saved

    @property
    def saved_tensors_released(self) -> bool:
        return self._released

    def mark_non_differentiable(self, *outputs: np.ndarray) -> None:
        self._non_differentiable = outputs

    def mark_dirty(self, *inputs: Any) -> None:
        """Say that forward modifies these inputs in place (and returns them): PyTorch's
        ``ctx.mark_dirty``. Call it before the write: it makes the read-only input
        writable. The input tensor itself then becomes the output, its history extended,
        and its version moves on (a node that saved it before will notice)."""
        arrays = self._forward_arrays
        if arrays is None:
            raise RuntimeError(f"{self._function_name}: ctx.mark_dirty can only be called in "
                               "forward, with the inputs forward received")
        if self._pending is not None:
            raise RuntimeError(
                f"{self._function_name}: ctx.mark_dirty in lazy mode is not supported (the "
                "forward runs later, when the input may have been read). Call the Function "
                "outside mg.lazy().")
        dirty = []
        for value in inputs:
            array = value._data if isinstance(value, tensor_class.Tensor) else value
            position = next((i for i, a in enumerate(arrays) if a is array), None)
            if position is None:
                raise RuntimeError(
                    f"{self._function_name}: ctx.mark_dirty was given "
                    f"{type(value).__name__} of shape {np.shape(value)}, which is not one of "
                    "the inputs forward received; mark the input itself (ctx.mark_dirty(x)).")
            tensor = self.args[position] if isinstance(self, Node) else None
            if tensor is not None and tensor.is_leaf and tensor.requires_grad:
                raise RuntimeError(
                    f"{self._function_name}: ctx.mark_dirty(input {position}): a leaf tensor "
                    f"that requires grad (shape {tensor.shape}) is being used in an in-place "
                    "operation; its gradient would be wrong. Apply the Function to a "
                    "clone(), or inside mg.no_grad().")
            if not array.flags.writeable:
                try:
                    array.flags.writeable = True
                except ValueError as error:
                    raise RuntimeError(
                        f"{self._function_name}: ctx.mark_dirty(input {position}): that "
                        f"input (shape {array.shape}) is a read-only view (made by expand() "
                        "or unfold()) and cannot be written; clone() it first.") from error
            dirty.append(position)
        self._dirty = tuple(dirty)

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


class Node(Context):
    """One recorded application of a Function: what ``tensor.grad_fn`` returns and what
    the widgets draw. A node is also the ``ctx`` its Function's forward and backward
    receive (as in PyTorch, where ``grad_fn`` is the ctx), so ``y.grad_fn.saved_tensors``
    and ``y.grad_fn.ctx.saved_tensors`` are the same.

    Its fields (``_`` ones are the engine's; read them through the properties):

    graph      ``id``                a counter in creation order over the whole session
                                     (never ``id()``; drawings number each graph's ops
                                     1, 2, ... instead: ``widgets/trace.py``)
               ``function``          the Function class (``name`` is its ``oper``)
               ``args``              the positional forward arguments: Tensors, constants
               ``next_functions``    per arg: ``(node that made it, which output)``, or
                                     ``(None, 0)`` for a leaf or a constant
               ``group``             the ``mg.group`` it was made in
               ``output_meta``       per output: ``(shape, dtype)``, kept when it is gone
               ``_outputs``          weak references to the outputs (``outputs``)
    context    ``needs_input_grad``, ``materialize_grads``, ``_saved`` (``saved_tensors``,
               ``saved_arrays()``), ``_non_differentiable``, and what forward assigned
    lifecycle  ``_pending``          lazy mode: the forward's kwargs until it runs
                                     (``pending``, ``pending_kwargs``)
               ``_saved_at``         the clock's value when what it saved was saved
               ``_released``         backward dropped the saved arrays (``released``)
               ``_freed``            ... and its intermediate inputs (``freed``)
               ``_retained``         backward went through it with ``retain_graph=True``
               ``_output_counters``  its outputs' version counters, once made
    debugging  ``_trace``            anomaly mode: the stack where it was made
               ``_node_hooks``       ``register_hook``: called after its backward
               ``_output_hooks``     an output has hooks or ``retain_grad`` (backward
                                     looks at the outputs only then)
               ``_old_hooks``        hooks of an output's value before an in-place op
    """

    # slots: the fields every node has, and those every backward writes (_saved by most
    # forwards, _released and _freed by free()): an attribute first written after
    # __init__ goes into the node's __dict__, which costs more than the whole write
    # should (callgrind, 5 dispatch steps: 66.98 M -> 64.94 M instructions as slots)
    __slots__ = ("id", "function", "args", "group", "next_functions", "_saved_at",
                 "_outputs", "output_meta", "needs_input_grad", "_saved", "_released",
                 "_freed")
    # class defaults, written to a node only when they change (nodes are made per op)
    _retained = False
    _output_counters: dict | None = None  # versions.counter_of
    _trace: list | None = None
    _node_hooks: dict | None = None
    _output_hooks = False  # an output has hooks or retains its grad (Tensor sets it)
    _old_hooks: dict | None = None  # output index -> the hooks of its value before an
    # in-place op (hooks.hooks_stay_with_old_value)

    def __init__(self, function: type[Function], args: tuple,
                 needs_input_grad: tuple[bool, ...], next_functions: tuple,
                 modes: Any) -> None:
        """``next_functions``: the edges (see above); ``modes``: the thread's modes
        (``apply`` has both at hand: it reads them once per op)."""
        self.id = self._saved_at = next(clock)
        self._saved, self._released, self._freed = (), False, False  # Context's defaults
        self.function = function
        self.needs_input_grad = needs_input_grad
        self.args = args
        self.group = modes.group
        self.next_functions = next_functions
        # _outputs and output_meta: set by whoever wraps the results (apply's one output,
        # or start_outputs then record_output for each)
        if modes.anomaly:
            self._trace = traceback.format_stack(limit=12)[:-3]

    def start_outputs(self) -> None:
        """No outputs recorded yet: ``record_output`` adds them one by one."""
        self._outputs, self.output_meta = [], []

    def record_output(self, tensor: Any, shape: tuple, dtype: np.dtype) -> None:
        """Remember an output Tensor, weakly (a node must not keep its results alive),
        and its shape and dtype, which stay when it is gone (for drawing, and for the
        shapes of freed inputs)."""
        self._outputs.append(weakref.ref(tensor))
        self.output_meta.append((shape, dtype))

    name = property(lambda self: self.function.oper, doc="The Function's ``oper``.")
    _function_name = name  # what Context's messages call it
    ctx = property(lambda self: self, doc="The Function's context: the node itself.")
    pending = property(lambda self: self._pending is not None,
                       doc="Lazy mode: recorded, but its forward has not run yet.")
    pending_kwargs = property(lambda self: self._pending,
                              doc="Lazy mode: the keyword arguments its forward will get.")
    released = property(lambda self: self._released, doc="Backward dropped the saved arrays.")
    freed = property(lambda self: self._freed, doc="... and its intermediate inputs.")
    retained = property(lambda self: self._retained,
                        doc="A backward went through it with ``retain_graph=True``.")

    @property
    def inputs(self) -> tuple:
        """The Tensor inputs (after a backward without ``retain_graph``: the leaves)."""
        return tuple([a for a in self.args if isinstance(a, tensor_class.Tensor)])

    @property
    def outputs(self) -> tuple:
        """The output Tensors that are still alive (``None`` for those gone)."""
        return tuple(ref() for ref in self._outputs)

    @property
    def label(self) -> str | None:
        labels = [t.label for t in self.outputs if t is not None and t.label]
        return ", ".join(labels) if labels else None

    def register_hook(self, hook: Any) -> RemovableHandle:
        """Call ``hook(grad_inputs, grad_outputs)`` each time backward runs this node
        (PyTorch's ``grad_fn.register_hook``): ``grad_outputs`` are the gradients that
        arrived for its outputs, ``grad_inputs`` those it produced for its inputs, as
        tuples of Tensors (``None`` where there is none). A returned tuple replaces
        ``grad_inputs``. Returns a handle whose ``remove()`` unregisters the hook."""
        if self._node_hooks is None:
            self._node_hooks = {}
        key = max(self._node_hooks, default=-1) + 1
        self._node_hooks[key] = hook
        return RemovableHandle(self._node_hooks, key)

    @property
    def input_meta(self) -> tuple:
        """``(shape, dtype)`` of every positional input (``None`` for constants)."""
        return tuple(self.input_shape_dtype(i) if isinstance(a, tensor_class.Tensor)
                     or (a is None and self.next_functions[i][0] is not None)  # freed
                     else None for i, a in enumerate(self.args))

    def input_shape_dtype(self, position: int) -> tuple:
        """Shape and dtype of positional input ``position``, also after ``free()``."""
        arg = self.args[position]
        if arg is not None:
            return arg.shape, arg.dtype
        parent, index = self.next_functions[position]  # an intermediate: its maker knows
        return parent.output_meta[index]

    def free(self) -> None:
        """After a backward without ``retain_graph``: drop the saved arrays and the
        references to intermediate inputs (results of other nodes), so that their memory
        can go as it does in PyTorch. Leaves and constants stay; so do the graph's edges,
        and the shapes and dtypes of the inputs (``input_shape_dtype``)."""
        if self._saved:  # release()'s lines: this runs for every node of every backward
            self._saved = None
            self._released = True
        if not self._freed:
            self._freed = True
            # written out for one and two inputs, the usual nodes: a loop over zip()
            # cost 2,400 instructions a node, 4% of a dispatch step (callgrind)
            args, edges = self.args, self.next_functions
            if len(args) == 1:
                if edges[0][0] is not None:
                    self.args = (None,)
            elif len(args) == 2:
                self.args = (None if edges[0][0] is not None else args[0],
                             None if edges[1][0] is not None else args[1])
            else:
                kept = []  # (a loop: a list comprehension is a function call in 3.11)
                for a, (parent, _) in zip(args, edges):
                    kept.append(None if parent is not None else a)
                self.args = tuple(kept)

    def describe(self, number: int | None = None) -> str:
        """``'Exp #12 (group encoder, label h)'``: how errors name this node. The number is
        its ``id`` unless ``number`` is given (the drawings number the ops of each graph
        1, 2, ...: ``Trace.number``)."""
        extras = [f"group {self.group}"] if self.group else []
        if self.label:
            extras.append(f"label {self.label}")
        number = self.id if number is None else number
        return f"{self.name} #{number}" + (f" ({', '.join(extras)})" if extras else "")

    def __repr__(self) -> str:
        return f"<{self.name} #{self.id}>"


class Function:
    """Base class of every differentiable operation. Subclass it and write static
    ``forward(ctx, *args)`` and ``backward(ctx, *grad_outputs)``; call ``apply``.

    Class attributes:
    - ``oper``: short label on graph nodes (default: the class name).
    - ``differentiable``: ``False`` for ops like argmax; results never get history.
    - ``view``: ``True`` if the output may be a NumPy view of input 0 (reshape, ...):
      then they share a version counter, as in PyTorch.
    - ``hint``: one line added to error messages, saying what to try.
    - ``twice_differentiable``: ``True`` if ``backward``, run on Tensors through NumPy's
      dispatch, records a correct graph (it differentiates only through saved inputs and
      outputs): then ``create_graph=True`` can go through it (``higher_order.py``).
    """

    oper: str = "Function"
    differentiable = True
    view = False
    hint = ""
    twice_differentiable = False
    _tensor_contract = False  # mg.autograd.Function sets it
    _uses_setup_context = False
    _guarded = False  # a Function written outside minigrad: read-only arrays (Context)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "oper" not in cls.__dict__:
            cls.oper = cls.__name__
        cls._uses_setup_context = cls.setup_context is not Function.setup_context
        # minigrad's own ops are trusted not to write into their inputs (and pay nothing);
        # a user's Function gets read-only views, so a write is an error, not a surprise
        cls._guarded = not cls.__module__.startswith("minigrad.") \
            or cls.__module__.startswith("minigrad.exercises")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if args or kwargs:  # MyMul(a, b): the classic first try
            name = type(self).__name__
            raise TypeError(f"{name} is a Function class, used through its static methods: "
                            f"call {name}.apply(...) with the inputs, not {name}(...)")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        name = type(self).__name__  # MyMul()(a, b): the second classic try
        raise TypeError(f"{name}()(...) calls an instance of the Function class, and "
                        f"Functions are not used through instances (PyTorch's legacy "
                        f"form): call {name}.apply(...) with the inputs, on the class")

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
        modes = thread.modes  # this thread's modes: one thread-local lookup per op
        if modes.lazy:
            return _apply_lazy(cls, args, kwargs)
        Tensor = tensor_class.Tensor
        recording = cls.differentiable and modes.grad_enabled
        # one pass over the arguments, collecting the node's edges too: this runs per op
        arrays, needs_input_grad, edges = [], [], []
        for a in args:
            if isinstance(a, Tensor):
                data = a._data
                arrays.append(data if data is not None else a.realize()._data)
                needs_input_grad.append(a._requires_grad)  # the slot: the property costs per op
                if recording:
                    edges.append((a.grad_fn, a._output_index))
            else:
                arrays.append(a)
                needs_input_grad.append(False)
                if recording:
                    edges.append((None, 0))
        if recording and True in needs_input_grad:
            node = ctx = Node(cls, args, tuple(needs_input_grad), tuple(edges), modes)
        else:  # nothing to record: a plain Context, and results without history
            node, ctx = None, Context()
            ctx.needs_input_grad = (False,) * len(args)
        if cls._guarded:  # the user's Function: read-only inputs (see Context)
            arrays = ctx._forward_arrays = [read_only(a) for a in arrays]
        if cls._uses_setup_context or modes.anomaly:
            outputs = run_forward(cls, ctx, arrays, kwargs, args, modes)
        else:  # run_forward's lines for the usual case, one call less per op (with the
            # one output recorded below without record_output, and backward's look for
            # output hooks only where there are some: callgrind, 5 dispatch steps,
            # 71.22 M -> 69.28 M instructions)
            try:
                outputs = cls.forward(ctx, *arrays, **kwargs)
            except (ValueError, IndexError, TypeError, RuntimeError) as error:
                raise_explained(cls, error, args)
        if type(outputs) is not np.ndarray or cls._guarded or ctx._non_differentiable \
                or outputs.dtype not in _FLOAT_DTYPES:  # wrap_outputs checks and says why
            return wrap_outputs(cls, ctx, node, args, arrays, outputs)
        # the usual case, one array: Tensor._make's lines, one call less per op
        # (callgrind, 5 dispatch steps: 55.23 M -> 54.55 M instructions)
        result = object.__new__(Tensor)
        result._data, result._requires_grad, result.grad_fn, result._output_index = \
            outputs, node is not None, node, 0
        if node is not None:  # record_output's work, for the one output, in tuples
            # (one allocation each where a list takes two, and the cyclic collector
            # untracks them: callgrind, 5 dispatch steps, 62.71 M -> 58.94 M instructions
            # with the collector on, 59.40 M -> 59.00 M with it off, as the bench times)
            node._outputs = (weakref.ref(result),)
            node.output_meta = ((outputs.shape, outputs.dtype),)
        if cls.view and isinstance(args[0], Tensor):
            share_version(result, args[0], arrays[0])
        return result


def _apply_lazy(cls: type[Function], args: tuple, kwargs: dict) -> Any:
    """``apply`` in lazy mode: record the node now, with its results' shapes and dtypes;
    ``lazy_mode.realize`` runs its forward when a value is needed."""
    metas = lazy_mode.result_metas(cls, args, kwargs)
    needs_input_grad = tuple(isinstance(a, tensor_class.Tensor) and a.requires_grad
                             for a in args)
    record = cls.differentiable and state.grad_enabled and True in needs_input_grad
    edges = tuple([(a.grad_fn, a._output_index) if isinstance(a, tensor_class.Tensor)
                   else (None, 0) for a in args])
    node = Node(cls, args, needs_input_grad if record else (False,) * len(args), edges,
                thread.modes)
    return lazy_mode.defer(node, kwargs, metas, record)
