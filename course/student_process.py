"""The student's side of grading: runs one submission's cells and answers the judge.

Started by the judge inside the sandbox (``sandbox.py``), as
``python -m minigrad.course.student_process IN_FD OUT_FD``. It runs the notebook's cells
the judge sends (an IPython shell, as a kernel would), and then lets the judge call what
the cells defined: a Function's forward and backward on arrays, a function on values, a
module's forward and backward. Only data goes back (``wire.py``); the checks themselves
never run here, so nothing a cell does to this process (rebinding a checker, patching
the engine, printing "Success") reaches a grade.

Everything in this process is the student's to change, this file's code included: the
judge trusts no answer from it beyond "here are some numbers".
"""

from __future__ import annotations

import builtins
import functools
import operator
import os
import signal
import sys
import traceback
import types

import numpy as np

from . import mirror, wire


# the modules whose error classes the judge knows by name (a check names a mistake by them)
ERROR_MODULES = ("builtins", "minigrad.errors", "minigrad.higher_order")

# what ``operate`` may do to a student's object (the judge's proxy asks it: ``d + e``)
OPERATORS = {name: getattr(operator, name) for name in (
    "add", "sub", "mul", "truediv", "pow", "matmul", "neg", "pos", "abs")}


class CellTimeout(KeyboardInterrupt):
    """A cell ran past its time limit (raised by the alarm, like Ctrl-C in a kernel)."""


def _alarm(signum, frame):
    raise CellTimeout("the cell ran past its time limit")


def _no_traceback(*args, **kwargs) -> None:
    pass


class StudentSide:
    def __init__(self):
        from IPython.core.interactiveshell import InteractiveShell

        self.shell = InteractiveShell.instance()
        self.shell.user_ns["__name__"] = "__main__"
        # IPython would also print each error's coloured traceback (a tenth of a second of
        # syntax highlighting per failing cell, a blank notebook has a dozen); ``run_cell``
        # reports the error itself, as an error output
        self.shell.showtraceback = self.shell.showsyntaxerror = _no_traceback
        self.objects: dict[int, object] = {}
        self.kept: dict[int, int] = {}  # id(object) -> its handle number
        self.graphs: dict[int, tuple] = {}
        self.contexts: dict[int, tuple] = {}
        self.counter = 0
        self.mirrors = mirror.Mirrors(first_new=-1)  # the judge's objects, copied here
        self.live: set[int] = set()  # ids of lists and dicts the judge writes into
        self.mirroring = False  # the request came with the check's changes (mirror.py)
        self.requests = self.replies = None  # the channel (``serve``), for callbacks
        self.limit = 60.0  # seconds a request may run the student's code
        self.judge_objects: dict[int, JudgeCallable] = {}  # what the judge lent this side
        # per backward pass running: (a grad() pass rather than backward()?, retain_graph)
        self.passes: list[tuple[bool, bool]] = []
        self.handed_graphs: list[int] = []  # graphs kept while the judge hands objects over

    # --- handles --------------------------------------------------------------------

    def _keep(self, obj) -> int:
        """The handle number of ``obj`` (the same each time: the judge keeps one proxy
        per object, so a class handed out twice is the same class there)."""
        number = self.kept.get(id(obj))
        if number is not None and self.objects.get(number) is obj:
            return number
        self.counter += 1
        self.objects[self.counter] = obj
        self.kept[id(obj)] = self.counter
        return self.counter

    def handle_of(self, obj):
        import minigrad as mg

        if isinstance(obj, mg.Tensor):
            return wire.TensorData(np.array(obj.detach().numpy()), obj.requires_grad)
        if isinstance(obj, JudgeCallable):  # the judge's object goes back as itself
            return obj._handle
        return wire.Handle(self._keep(obj), _kind(obj), _name(obj))

    def resolve(self, handle: wire.Handle):
        if handle.kind == "judge":  # a function of the check's, lent for a call
            if handle.id not in self.judge_objects:
                self.judge_objects[handle.id] = JudgeCallable(self, handle)
            return self.judge_objects[handle.id]
        return self.objects[handle.id]

    def arguments(self, data):
        import minigrad as mg

        value = wire.decode(data, self.resolve)
        return wire.map_values(value, lambda v: mg.tensor(v.array, requires_grad=v.requires_grad)
                    if isinstance(v, wire.TensorData) else v)

    def out(self, value):
        return wire.encode(value, self.handle_of,
                           self._numbered if self.mirroring else self.mirrors.number_of)

    def _numbered(self, value):
        """While the judge hands objects over: an array this side sends gets a number
        (with its values, the first time), so that what the student's code does to it
        later (a gradient added to in place after it was handed out) reaches the judge."""
        number = self.mirrors.number_of(value)
        if number is not None or not isinstance(value, np.ndarray) \
                or value.dtype.name not in wire.DTYPES:
            return number
        number = self.mirrors.next_new
        self.mirrors.next_new += self.mirrors.step
        self.mirrors.register(number, value)
        return number, wire.encode(value)

    # --- the channel --------------------------------------------------------------------

    OPERATIONS = ("run_cell", "get", "call", "getattr", "setattr", "forward", "backward",
                  "release", "module_new", "signature", "module_forward", "module_backward",
                  "call_graph", "swap", "unswap", "call_pickled", "iter", "next", "forget",
                  "item", "setitem", "len", "enter", "exit", "set_globals", "operate",
                  "graph_grad")

    def answer(self, message: dict, timed: bool) -> None:
        """Carry out one request of the judge's and send the reply (an error as data)."""
        name = message.get("op")
        operation = getattr(self, name) if name in self.OPERATIONS else None
        args = dict(message.get("args", {}))
        sync = args.pop("sync", None)  # what the check changed in its objects since
        limit = self.limit
        try:
            if operation is None:
                raise wire.WireError(f"no operation {name!r}")
            self.mirroring = sync is not None
            if sync is not None:
                self.mirrors.apply(sync)
            if timed:
                signal.setitimer(signal.ITIMER_REAL, limit)
            try:
                reply = operation(**args)
            finally:
                if timed:
                    signal.setitimer(signal.ITIMER_REAL, 0)
        except BaseException as error:  # noqa: BLE001 - every failure goes back as data
            if isinstance(error, SystemExit):
                error = RuntimeError(f"the answer called exit({error.code})")
            if isinstance(error, CellTimeout):
                error = TimeoutError(f"the student's code ran past the time limit ({limit:g} s) "
                                     "and was interrupted (an endless loop?)")
            reply = {"error": {"type": type(error).__name__, "message": str(error)[:4000],
                               "bases": [c.__name__ for c in type(error).__mro__
                                         if c.__module__ in ERROR_MODULES],
                               "where": _where(error),
                               "traceback": "".join(traceback.format_exception(
                                   type(error), error, error.__traceback__))[-4000:]}}
        if sync is not None:
            try:  # what the student's code changed in the check's objects
                reply["sync"] = self.mirrors.changes()
            except Exception as error:  # noqa: BLE001 - e.g. a .grad that is not a Tensor
                reply = {"error": {"type": "TypeError", "traceback": "",
                                   "message": f"the objects the check handed over could not "
                                              f"be sent back: {error}"}}
        try:
            wire.send(self.replies, reply)
        except wire.WireError as error:  # the answer returned something that cannot cross
            wire.send(self.replies, {"error": {"type": "TypeError", "message": str(error),
                                               "traceback": ""}})

    def callback(self, request: dict) -> dict:
        """Ask the judge to run a function it lent (``JudgeCallable``), and wait for its
        answer, carrying out any request it sends meanwhile."""
        wire.send(self.replies, {"callback": request})
        while True:
            message = wire.receive(self.requests)
            if "answer" in message:
                answer = message["answer"]
                if not isinstance(answer, dict):
                    raise wire.WireError("an answer that is not an object")
                if "error" in answer:
                    error = answer["error"]
                    kind = getattr(builtins, str(error.get("type")), None)
                    if not (isinstance(kind, type) and issubclass(kind, Exception)):
                        kind = RuntimeError
                    raise kind(str(error.get("message", "")))
                return answer
            self.answer(message, timed=False)


    # --- requests -------------------------------------------------------------------

    def run_cell(self, source: str, timeout: float) -> dict:
        from IPython.utils.capture import capture_output

        signal.signal(signal.SIGALRM, _alarm)
        error = None
        with capture_output(display=True) as captured:
            signal.setitimer(signal.ITIMER_REAL, timeout)
            try:
                result = self.shell.run_cell(source, store_history=False, silent=False)
            except CellTimeout as stopped:  # raised outside the cell's own code
                result, error = None, stopped
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
        outputs = []
        if captured.stdout:
            outputs.append({"output_type": "stream", "name": "stdout", "text": captured.stdout})
        if captured.stderr:
            outputs.append({"output_type": "stream", "name": "stderr", "text": captured.stderr})
        for rich in captured.outputs:
            data = {k: v for k, v in rich.data.items() if isinstance(v, str)}
            if data:
                outputs.append({"output_type": "display_data", "data": data, "metadata": {}})
        if result is not None:
            error = result.error_before_exec or result.error_in_exec
            if result.result is not None and error is None:
                try:
                    text = repr(result.result)
                except Exception:  # noqa: BLE001 - a repr that fails is the student's
                    text = "<a value whose repr failed>"
                outputs.append({"output_type": "execute_result", "execution_count": None,
                                "data": {"text/plain": text}, "metadata": {}})
        if error is not None:
            timed_out = isinstance(error, CellTimeout)
            lines = traceback.format_exception(type(error), error, error.__traceback__)
            name = "CellTimeoutError" if timed_out else type(error).__name__
            text = (f"the cell ran past its time limit ({timeout:g} s) and was interrupted"
                    if timed_out else str(error))
            shown = [line.rstrip("\n") for line in lines[-12:]]
            if timed_out:  # the page shows the traceback: say what happened in its words
                shown = shown[:-1] + [f"{name}: {text}"]
            outputs.append({"output_type": "error", "ename": name, "evalue": text,
                            "traceback": shown})
        return {"outputs": outputs}

    def get(self, name: str):
        if name not in self.shell.user_ns:
            return {"missing": True}
        return {"value": self.out(self.shell.user_ns[name])}

    def call(self, target, args, kwargs):
        """A call on values; says which arrays and Tensors among the arguments the call
        changed in place (a hook that scales the gradient it was given) and whether it
        returned one of them itself."""
        function = self.resolve(wire.decode(target))
        args, kwargs = self.arguments(args), self.arguments(kwargs)
        leaves = _array_leaves((args, kwargs))
        before = [np.array(_array_of(v)) for v in leaves]
        result = function(*args, **kwargs)
        changed = {str(i): wire.encode(np.asarray(_array_of(v)))
                   for i, (v, b) in enumerate(zip(leaves, before))
                   if not np.array_equal(_array_of(v), b, equal_nan=True)}
        same = next((i for i, v in enumerate(leaves) if v is result), None)
        if same is not None:
            return {"value": None, "same": same, "changed": changed}
        return {"value": self.out(result), "changed": changed}

    def call_pickled(self, target, payload):
        """A call whose arguments the judge pickled: objects of the check's own (a model,
        parameters, a graph), copied here and kept in step with the judge's (mirror.py)."""
        function = self.resolve(wire.decode(target))
        args, kwargs = mirror.unpickled(payload, self.mirrors, self.objects.__getitem__)
        value = function(*args, **kwargs)
        return {"value": self.out(value), **self._keep_handed_graph(value)}

    def _keep_handed_graph(self, value) -> dict:
        """A Tensor result whose graph reaches Tensors the judge handed over (a critic's
        weights): the graph stays here, and the judge makes the result one op of its own
        graph over its own Tensors (``StudentGraph``), so that a backward there gets
        their gradients from here (``graph_grad``). A graph already backpropagated
        through (and freed) comes back as data, as before."""
        import minigrad as mg

        node = getattr(value, "grad_fn", None)
        if not isinstance(value, mg.Tensor) or node is None or node.freed:
            return {}
        leaves = [t for t in _leaves_of(node) if self.mirrors.number_of(t) is not None]
        if not leaves:
            return {}
        self.counter += 1
        self.graphs[self.counter] = (None, leaves, (value,))
        self.handed_graphs.append(self.counter)
        return {"graph": self.counter, "leaves": [self.mirrors.number_of(t) for t in leaves]}

    def iter(self, target):
        obj = self.resolve(wire.decode(target))
        iterator = iter(obj)
        if id(obj) in self.live:
            self.live.add(id(iterator))
            self._keep(obj)  # (kept alive, so that its id stays its own)
        return {"value": self.out(iterator)}

    def next(self, target):
        iterator = self.resolve(wire.decode(target))
        try:
            value = next(iterator)
        except StopIteration:
            return {"stop": True}
        return {"value": self._live(value) if id(iterator) in self.live else self.out(value)}

    def forget(self):
        self.mirrors = mirror.Mirrors(first_new=-1)
        for graph in self.handed_graphs:
            self.graphs.pop(graph, None)
        self.handed_graphs = []
        return {}

    def getattr(self, target, name: str, live: bool = False):
        """An attribute's value; with ``live``, a list or dict stays here and goes as a
        handle, so that the judge's writes into it (a scheduler setting each param
        group's ``lr``) reach the student's object."""
        value = getattr(self.resolve(wire.decode(target)), name)
        return {"value": self._live(value) if live else self.out(value)}

    def _live(self, value):
        """A list or dict as a handle (and what is taken out of it later, likewise)."""
        if type(value) in (list, dict):
            self.live.add(id(value))
            return wire.encode(wire.Handle(self._keep(value), "object", type(value).__name__))
        return self.out(value)

    def item(self, target, key):
        obj = self.resolve(wire.decode(target))
        value = obj[self.arguments(key)]
        return {"value": self._live(value) if id(obj) in self.live else self.out(value)}

    def setitem(self, target, key, payload=None, value=None):
        if payload is not None:
            value = mirror.unpickled(payload, self.mirrors, self.objects.__getitem__)
        else:
            value = self.arguments(value)
        self.resolve(wire.decode(target))[self.arguments(key)] = value
        return {}

    def set_globals(self, values):
        """Data a test cell defined (it ran in the judge), for the cells after it."""
        for name, data in values.items():
            self.shell.user_ns[str(name)] = self.arguments(data)
        return {}

    def enter(self, target):
        return {"value": self.out(self.resolve(wire.decode(target)).__enter__())}

    def exit(self, target, error=None):
        import builtins

        manager = self.resolve(wire.decode(target))
        if error is None:
            return {"value": bool(manager.__exit__(None, None, None))}
        kind = getattr(builtins, str(error.get("type")), Exception)
        if not (isinstance(kind, type) and issubclass(kind, BaseException)):
            kind = Exception
        raised = kind(str(error.get("message")))
        return {"value": bool(manager.__exit__(kind, raised, None))}

    def len(self, target):
        return {"value": len(self.resolve(wire.decode(target)))}

    def setattr(self, target, name: str, value):
        setattr(self.resolve(wire.decode(target)), name, self.arguments(value))
        return {}

    def operate(self, target, name: str, other=None, reflected: bool = False):
        """Operator ``name`` on a student's object (``d + e``, ``2.5 * d``, ``-d``), by
        Python's own rules here (its ``__radd__``, or the TypeError Python raises)."""
        if name not in OPERATORS:
            raise wire.WireError(f"no operator {name!r}")
        obj = self.resolve(wire.decode(target))
        if name in ("neg", "pos", "abs"):
            return {"value": self.out(OPERATORS[name](obj))}
        other = self.arguments(other)
        pair = (other, obj) if reflected else (obj, other)
        return {"value": self.out(OPERATORS[name](*pair))}

    def forward(self, target, needs_input_grad, args, kwargs):
        """A Function's forward on arrays, with a context of this side; returns the
        outputs and what was saved (as a reference to an input or output, or values)."""
        from minigrad.function import Context

        function = self.resolve(wire.decode(target))
        ctx = Context()
        ctx.needs_input_grad = tuple(needs_input_grad)
        ctx._function_name = function.__name__
        inputs = self.arguments(args)
        before = [np.array(a) if isinstance(a, np.ndarray) else None for a in inputs]
        outputs = function.forward(ctx, *inputs, **self.arguments(kwargs))
        ctx._saved_by_forward = tuple(ctx._saved or ())
        self.counter += 1
        self.contexts[self.counter] = (function, ctx, inputs)
        several = isinstance(outputs, tuple)
        listed = outputs if several else (outputs,)
        saved = [_origin(array, inputs, listed) for array in (ctx.saved_arrays() or ())]
        attributes = {}
        for key, value in vars(ctx).items():
            if not key.startswith("_") and key != "needs_input_grad":
                try:
                    attributes[key] = _origin(value, inputs, listed)
                except wire.WireError:
                    pass  # not data: the judge's copy of ctx does without it
        changed = [i for i, (a, b) in enumerate(zip(inputs, before))
                   if b is not None and not np.array_equal(a, b, equal_nan=True)]
        return {"outputs": self.out(outputs), "context": self.counter, "saved": saved,
                "attributes": attributes,
                "non_differentiable": [_position(a, listed) for a in ctx._non_differentiable],
                "materialize_grads": ctx.materialize_grads,
                "changed_inputs": {str(i): wire.encode(np.asarray(inputs[i])) for i in changed}}

    def backward(self, context: int, grads, saved=None, attributes=None,
                 released: bool = False):
        """The Function's backward, its ctx holding what the judge's copy of ctx holds now
        (``saved``: per saved array, None for "as forward saved it" or the judge's value,
        an array a check edited or a stand-in that must not be used; ``attributes``
        likewise); returns the gradients, which of them are ``grad_outputs`` themselves,
        and the ``grad_outputs`` the backward changed in place."""
        function, ctx, inputs = self.contexts[context]
        if saved is not None:
            own = list(ctx._saved_by_forward)
            ctx._saved = tuple(own[i] if data is None and i < len(own) else _given(data)
                               for i, data in enumerate(saved))
        for key, data in (attributes or {}).items():
            setattr(ctx, str(key), _given(data))
        if released:
            ctx.release()
        given = self.arguments(grads)
        before = [np.array(g) if isinstance(g, np.ndarray) else None for g in given]
        result = function.backward(ctx, *given)
        listed = result if isinstance(result, tuple) else (result,)
        same = [[i, j] for i, r in enumerate(listed) for j, g in enumerate(given)
                if r is g and isinstance(g, np.ndarray)]
        return {"value": self.out(result), "same": same, "several": isinstance(result, tuple),
                "changed_grads": {str(i): wire.encode(np.asarray(g))
                                  for i, (g, b) in enumerate(zip(given, before))
                                  if b is not None and not np.array_equal(g, b, equal_nan=True)}}

    def signature(self, target):
        """The names of a Function's forward parameters (the checks' messages use them)."""
        import inspect

        forward = self.resolve(wire.decode(target)).forward
        try:
            parameters = inspect.signature(forward).parameters.values()
        except (TypeError, ValueError):
            return {"names": []}
        return {"names": [p.name for p in parameters
                          if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]}

    def release(self, context: int):
        self.contexts.pop(context, None)
        return {}

    def swap(self, target, paths):
        """Bind names of the student's globals to references (by import path) until
        ``unswap``: the judge checks an exercise on its own when its code uses an
        earlier one's (minigrad/exercises/prerequisites.py)."""
        from minigrad.exercises.prerequisites import swap_globals

        original = self.resolve(wire.decode(target))
        swap = swap_globals(original, dict(paths))
        made = swap.__enter__()  # a class built on the references, or the object itself
        return {"swap": self._keep(swap),
                "value": None if made is None or made is original else self.out(made)}

    def unswap(self, swap: int):
        self.objects.pop(swap).__exit__(None, None, None)
        return {}

    def module_new(self, target, args, kwargs):
        cls = self.resolve(wire.decode(target))
        module = cls(*self.arguments(args), **self.arguments(kwargs))
        return {"module": self._keep(module), **self._module_state(module),
                "frozen": [n for n, p in module.named_parameters() if not p.requires_grad],
                "unregistered": _unregistered(module)}

    def _module_state(self, module) -> dict:
        return {"parameters": {n: wire.encode(np.array(p.detach().numpy()))
                               for n, p in module.named_parameters()},
                "buffers": {n: wire.encode(np.array(b.numpy()))
                            for n, b in module.named_buffers() if b is not None},
                "training": bool(module.training)}

    def module_forward(self, module_id: int, parameters, buffers, training, args, kwargs,
                       grad_enabled, anomaly: bool = False):
        """Run the module on inputs with the judge's parameter values; keep the graph for
        ``module_backward``; return the outputs and the buffers after the call."""
        import minigrad as mg

        module = self.objects[module_id]
        owned = dict(module.named_parameters())
        for name, data in parameters.items():
            owned[name].data = mg.tensor(wire.decode(data))
            owned[name].grad = None
        named_buffers = dict(module.named_buffers())
        for name, data in buffers.items():
            if named_buffers.get(name) is not None:
                named_buffers[name].data = mg.tensor(wire.decode(data))
        module.train(bool(training))
        inputs = self.arguments(args)
        with mg.set_grad_enabled(bool(grad_enabled)), \
                mg.autograd.set_detect_anomaly(bool(anomaly)):
            output = module(*inputs, **self.arguments(kwargs))
        several = isinstance(output, tuple)
        listed = output if several else (output,)
        self.counter += 1
        self.graphs[self.counter] = (module, inputs, listed)
        state = self._module_state(module)
        node = getattr(listed[0], "grad_fn", None) if listed else None
        made_by = getattr(node, "function", None)
        in_graph = [n for n, b in module.named_buffers()
                    if b is not None and getattr(b, "grad_fn", None) is not None]
        return {"outputs": self.out(output), "graph": self.counter,
                "buffers": state["buffers"], "buffers_in_graph": in_graph,
                "ops": _op_names(listed),
                "made_by": self.out(made_by) if _kind(made_by) == "function-class" else None}

    def call_graph(self, target, args, kwargs, grad_enabled, anomaly: bool = False,
                   rng=None):
        """A function called on Tensors that need gradients: keep its graph for
        ``module_backward`` (as for a module without parameters); say which ops it holds
        (a check names a mistake by them) and how many bytes of saved arrays the
        contexts of its outputs hold beyond them (a checkpoint must hold none). ``rng``:
        the judge's random generator state, when the call was lent a function of the
        check's (both sides then draw from one generator, as in one process)."""
        import minigrad as mg

        function = self.resolve(wire.decode(target))
        inputs = self.arguments(args)
        if rng is not None:
            mg.set_rng_state(wire.decode(rng))
        with mg.set_grad_enabled(bool(grad_enabled)), \
                mg.autograd.set_detect_anomaly(bool(anomaly)):
            output = function(*inputs, **self.arguments(kwargs))
        listed = output if isinstance(output, tuple) else (output,)
        self.counter += 1
        self.graphs[self.counter] = (None, inputs, listed)
        reply = {"outputs": self.out(output), "graph": self.counter, "ops": _op_names(listed),
                 "held": sum(_held_by(o.grad_fn) for o in listed
                             if isinstance(o, mg.Tensor) and o.grad_fn is not None)}
        if rng is not None:
            reply["rng"] = wire.encode(mg.get_rng_state())
        return reply

    def module_backward(self, graph: int, grads, anomaly: bool = False, rng=None):
        import minigrad as mg

        if rng is not None:
            mg.set_rng_state(wire.decode(rng))
        reply = self._module_backward(graph, grads, anomaly)
        if rng is not None:
            reply["rng"] = wire.encode(mg.get_rng_state())
        return reply

    def _module_backward(self, graph: int, grads, anomaly: bool):
        import minigrad as mg

        module, inputs, outputs = self.graphs.pop(graph)
        pairs = [(o, g) for o, g in zip(outputs, self.arguments(grads))
                 if g is not None and isinstance(o, mg.Tensor) and o.requires_grad]
        if pairs:
            with mg.autograd.set_detect_anomaly(bool(anomaly)):
                mg.autograd.backward([o for o, _ in pairs],
                                     [mg.tensor(g) for _, g in pairs])
        input_grads = [a.grad.numpy() if isinstance(a, mg.Tensor) and a.grad is not None
                       else None for a in _flat(inputs)]
        parameter_grads = {n: (p.grad.numpy() if p.grad is not None else None)
                           for n, p in module.named_parameters()} if module is not None else {}
        return {"inputs": self.out(input_grads), "parameters": self.out(parameter_grads)}

    def graph_grad(self, graph: int, grads, create_graph: bool, names=(),
                   anomaly: bool = False):
        """The gradients of a graph kept here with respect to its leaves (its call's
        Tensors, then a module's parameters ``names``), for the judge's gradients of its
        outputs: ``mg.autograd.grad``, so no ``.grad`` changes and the graph stays for
        another pass. With ``create_graph`` the gradients are recorded: they are a graph
        kept here in turn, whose leaves are this one's and the gradients given (the judge
        makes them one op of its graph: ``StudentGraph``)."""
        import minigrad as mg

        module, inputs, outputs = self.graphs[graph]
        leaves = [a for a in inputs if isinstance(a, mg.Tensor)]
        if module is not None:
            owned = dict(module.named_parameters())
            leaves += [owned[str(n)] for n in names]
        given = [mg.tensor(g.array, requires_grad=bool(create_graph)
                           and g.array.dtype.kind in "fc")
                 for g in wire.decode(grads) if isinstance(g, wire.TensorData)]
        if len(given) != len(outputs):
            raise wire.WireError("one gradient per output of the graph, please")
        with mg.autograd.set_detect_anomaly(bool(anomaly)):
            results = kept_graph_gradients(outputs, given, leaves,
                                           create_graph=bool(create_graph))
        reply = {"grads": self.out([None if r is None else np.array(r.detach().numpy())
                                    for r in results])}
        if create_graph:
            present = [r for r in results if r is not None]
            self.counter += 1
            self.graphs[self.counter] = (None, [*leaves, *given], tuple(present))
            reply.update(graph=self.counter, history=[bool(r.requires_grad) for r in present])
        return reply


class JudgeCallable:
    """A function of the check's, lent to the student's code for a call (chapter 14's
    checkpoint gets the check's block as ``fn``, chapter 16's hvp the function ``f``):
    calling it asks the judge to run it there on the call's values, with this side's
    grad mode and random generator. If the result has a graph there, it comes back as
    the output of one op here (``JudgeOp``, made by ``_judge_op``), whose backward asks
    the judge to backpropagate through that graph: the check sees every call, and its
    block's parameters get their gradients, on its own side."""

    def __init__(self, side: StudentSide, handle: wire.Handle):
        self._side, self._handle = side, handle
        self.__name__ = self.__qualname__ = handle.name

    def __call__(self, *args, **kwargs):
        import minigrad as mg

        side = self._side
        answer = side.callback({
            "op": "call", "target": wire.encode(self._handle),
            "args": side.out(args), "kwargs": side.out(kwargs),
            "grad_enabled": mg.is_grad_enabled(), "rng": wire.encode(mg.get_rng_state())})
        mg.set_rng_state(wire.decode(answer["rng"]))
        value = side.arguments(answer["value"])
        if answer.get("graph") is None or not isinstance(value, mg.Tensor):
            return value
        tensors = _tensors_in((args, kwargs))
        kept = KeptGraph(side, int(answer["graph"]), [value.detach().numpy()])
        return _judge_op().apply(kept, *tensors)

    def __repr__(self) -> str:
        return f"<the check's {self.__name__}>"


class KeptGraph:
    """A graph kept on the other side of the boundary, as the one op that stands for it
    here holds it (``JudgeOp`` on the student's side, ``StudentGraph`` in the judge): the
    channel to that side, the graph's number there, the values of its outputs
    (``several``: the gradients of a graph, one output each) and which of them have a
    history there (the others are constants here too)."""

    def __init__(self, channel, graph: int, values: list, several: bool = False,
                 history: list | None = None):
        self.channel, self.graph, self.values, self.several = channel, graph, values, several
        self.history = [True] * len(values) if history is None else [bool(h) for h in history]

    def outputs(self, ctx):
        """The forward of the op that stands for the graph: the values, those without a
        history marked non-differentiable."""
        ctx.kept = self
        values = [np.array(v) for v in self.values]
        constants = [v for v, history in zip(values, self.history) if not history]
        if constants:
            ctx.mark_non_differentiable(*constants)
        return tuple(values) if self.several else values[0]


def recorded_gradients(channel, op, graph: int, grads: list, history: list,
                       inputs: tuple) -> list:
    """Gradients (arrays, or None) that the other side recorded as its graph ``graph``:
    the outputs of one ``op`` here (``JudgeOp`` or ``StudentGraph``) over ``inputs``, so
    that they are differentiable again, there; a None stays None."""
    present = [i for i, g in enumerate(grads) if g is not None]
    if not present:
        return grads
    kept = KeptGraph(channel, graph, [grads[i] for i in present], several=True,
                     history=history)
    results = [None] * len(grads)
    for i, tensor in zip(present, op.apply(kept, *inputs)):
        results[i] = tensor
    return results


def _tensors_in(value) -> list:
    import minigrad as mg

    if isinstance(value, mg.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in _tensors_in(v)]
    if isinstance(value, dict):
        return [t for v in value.values() for t in _tensors_in(v)]
    return []


@functools.cache
def _judge_op():
    import minigrad as mg

    class JudgeOp(mg.Function):
        """The judge's function on this side's graph (or the gradients of its graph
        there): the outputs, and the backward, done by the judge. Recorded
        (``create_graph``), the backward is recorded there too, and its gradients are
        the outputs of another JudgeOp: the judge's function is differentiable twice,
        and more, from here, and only the judge ever runs it."""

        twice_differentiable = True  # (its backward, recorded: tensor_backward)

        @staticmethod
        def forward(ctx, kept, *arrays):
            return kept.outputs(ctx)

        @staticmethod
        def backward(ctx, *grad_outputs):
            return (None, *_judge_gradients(ctx, grad_outputs, create_graph=False))

        @staticmethod
        def tensor_backward(ctx, *grad_outputs):
            return (None, *_judge_gradients(ctx, grad_outputs, create_graph=True))

    return JudgeOp


def _judge_gradients(node, grad_outputs, create_graph: bool) -> list:
    """The gradients of the judge's graph behind a ``JudgeOp`` node for its inputs,
    asked of the judge; into its function's parameters' ``.grad`` too when this side
    runs ``backward()`` rather than ``grad()``, as in one process. With
    ``create_graph``, recorded there: the outputs of a new ``JudgeOp`` whose inputs are
    this node's and the ``grad_outputs``."""
    import minigrad as mg

    side = node.kept.channel
    capturing, retain = side.passes[-1] if side.passes else (False, False)
    arrays = [np.asarray(g._data if isinstance(g, mg.Tensor) else g) for g in grad_outputs]
    answer = side.callback({
        "op": "backward", "graph": node.kept.graph, "grads": wire.encode(arrays),
        "accumulate": not capturing, "retain": retain, "create_graph": create_graph,
        "rng": wire.encode(mg.get_rng_state())})
    mg.set_rng_state(wire.decode(answer["rng"]))
    grads = wire.decode(answer["grads"])
    if not create_graph:
        return grads
    return recorded_gradients(side, _judge_op(), int(answer.get("graph") or 0), grads,
                              answer.get("history"), (*node.args[1:], *grad_outputs))


def kept_graph_gradients(outputs, given, leaves, accumulate: bool = False,
                         retain: bool = True, create_graph: bool = False) -> list:
    """The gradients of a graph one side keeps, for the other side's gradients ``given``
    of its ``outputs``, with respect to ``leaves`` (None where none arrives): by
    ``mg.autograd.grad``, or by ``backward()`` into their ``.grad`` when ``accumulate``;
    recorded with ``create_graph``. Both sides use it: the judge for the graph of a
    function it lent, the student's side for the graph of a call the judge made."""
    import minigrad as mg

    pairs = [(o, g) for o, g in zip(outputs, given)
             if isinstance(o, mg.Tensor) and o.requires_grad]
    wanted = [t for t in leaves if t.requires_grad]
    found = {}
    if pairs and accumulate:
        for t in wanted:
            t.grad = None
        mg.autograd.backward([o for o, _ in pairs], [g for _, g in pairs],
                             retain_graph=retain or create_graph, create_graph=create_graph)
        found = {id(t): t.grad for t in wanted}
    elif pairs and wanted:
        grads = mg.autograd.grad([o for o, _ in pairs], wanted, [g for _, g in pairs],
                                 retain_graph=retain or create_graph,
                                 create_graph=create_graph, allow_unused=True)
        found = {id(t): g for t, g in zip(wanted, grads)}
    return [found.get(id(t)) for t in leaves]


def _leaves_of(node) -> list:
    """The leaves that require grad in the graph ending at ``node``, each once."""
    import minigrad as mg
    from minigrad.graph import grad_parents, walk

    found = {}
    for inner in walk([node], grad_parents):
        for arg, (parent, _) in zip(inner.args, inner.next_functions):
            if parent is None and isinstance(arg, mg.Tensor) and arg.requires_grad:
                found.setdefault(id(arg), arg)
    return list(found.values())


def _held_by(node) -> int:
    """Bytes of saved arrays in the graphs of the Tensors a node's context holds (as the
    checkpoint's check measures in one process: ``modes._held_by``)."""
    from minigrad.exercises.modes import _held_by as held

    try:
        return int(held(node))
    except Exception:  # noqa: BLE001 - a context the measure does not know
        return 0


def _unregistered(module) -> dict:
    """The Tensors and arrays a module keeps outside its registries (a bias made a plain
    Tensor, parameters kept in a Python list): attribute name -> what it holds, so that
    the judge's copy of the module shows them as the student's does (a check names the
    mistake by them)."""
    import minigrad as mg

    found = {}
    for key, value in list(vars(module).items())[:1000]:
        if not isinstance(key, str) or key.startswith("_"):
            continue
        if isinstance(value, mg.Tensor):
            found[key] = {"kind": "tensor", "shape": list(value.shape)}
        elif isinstance(value, np.ndarray):
            found[key] = {"kind": "array", "shape": list(value.shape)}
        elif type(value) in (list, tuple, dict):
            items = list(value.values()) if isinstance(value, dict) else list(value)
            count = sum(isinstance(v, mg.Tensor) for v in items)
            if count:
                found[key] = {"kind": type(value).__name__, "tensors": min(count, 100)}
    return found


def _op_names(outputs) -> list[str]:
    """The name of each op in the graph of ``outputs`` (once per node)."""
    seen, names = set(), []
    stack = [getattr(o, "grad_fn", None) for o in outputs]
    while stack and len(names) < 10_000:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        names.append(str(getattr(node, "name", type(node).__name__)))
        stack += [n for n, _ in (getattr(node, "next_functions", None) or ())]
    return names


def _array_leaves(value) -> list:
    """The arrays and Tensors among a call's arguments, in the order ``wire.map_values``
    visits them (the judge lists its own the same way)."""
    import minigrad as mg

    found = []
    wire.map_values(value, lambda v: found.append(v)
                    if isinstance(v, (np.ndarray, mg.Tensor)) else None)
    return found


def _array_of(value):
    import minigrad as mg

    return value._data if isinstance(value, mg.Tensor) else value


def _flat(values):
    for value in values:
        if isinstance(value, (list, tuple)):
            yield from _flat(value)
        else:
            yield value


def _where(error: BaseException) -> str:
    """`` (line N: code)``: the last line of the student's own code where ``error`` was
    raised, as the checkers say it (their messages quote it)."""
    try:
        from minigrad.exercises.checks import _where as where

        return where(error)
    except Exception:  # noqa: BLE001 - a message without the line is still a message
        return ""


def _position(array, outputs) -> int | None:
    for index, output in enumerate(outputs):
        if array is output:
            return index
    return None


def _origin(array, inputs, outputs):
    """What a saved array (or a ctx attribute) is: one of the inputs or outputs (by
    identity, as the judge's checks compare), a NumPy view of one (where in its memory, so
    that the judge's copy of ctx holds the same view of the judge's array: an edit of the
    input shows through it there too), or values of its own."""
    for index, output in enumerate(outputs):
        if array is output:
            return {"output": index}
    for index, value in enumerate(inputs):
        if array is value:
            return {"input": index}
    value = wire.encode(array)
    if isinstance(array, np.ndarray):
        for kind, listed in (("input", inputs), ("output", outputs)):
            for index, base in enumerate(listed):
                if isinstance(base, np.ndarray) and base.dtype == array.dtype \
                        and array.size and np.shares_memory(array, base):
                    start = (array.__array_interface__["data"][0]
                             - base.__array_interface__["data"][0])
                    return {"view": {"of": kind, "index": index, "offset": int(start),
                                     "shape": list(array.shape),
                                     "strides": list(array.strides)}, "value": value}
    return {"value": value}


def _given(data):
    """A saved array or ctx attribute as the judge's copy of ctx holds it now."""
    if isinstance(data, dict) and "unneeded" in data:  # the check's own stand-in
        from minigrad.exercises.context import _Unneeded

        return _Unneeded(int(data["unneeded"]), -1)
    return wire.decode(data)


def _kind(obj) -> str:
    import minigrad as mg
    from minigrad.function import Function

    if isinstance(obj, type):
        if issubclass(obj, mg.autograd.Function):  # Tensors in, Tensors out
            return "autograd-function-class"
        if issubclass(obj, Function):
            return "function-class"
        if issubclass(obj, mg.nn.Module):
            return "module-class"
        return "class"
    # a plain function; any other callable (a context manager made by
    # @contextlib.contextmanager is one) is an object the judge may also enter, index...
    plain = (types.FunctionType, types.BuiltinFunctionType, types.MethodType,
             functools.partial)
    return "function" if isinstance(obj, plain) else "object"


def _name(obj) -> str:
    name = getattr(obj, "__qualname__", None) or type(obj).__qualname__
    return name if isinstance(name, str) else "object"


def serve(requests, replies, limit: float = 60.0) -> None:
    """Answer the judge's requests until it closes the channel; a call into the student's
    code that runs past ``limit`` seconds is interrupted (the judge stops the process
    only if even that does not end it)."""
    side = StudentSide()
    side.requests, side.replies, side.limit = requests, replies, limit
    signal.signal(signal.SIGALRM, _alarm)
    _watch_capturing_passes(side)
    wire.send(replies, {"ready": True})
    while True:
        try:
            message = wire.receive(requests)
        except EOFError:
            return
        side.answer(message, timed=message.get("op") != "run_cell")  # (run_cell: its own)


def _watch_capturing_passes(side: StudentSide) -> None:
    """Note, for each backward pass while it runs, whether it is one that captures
    gradients (``mg.autograd.grad``) rather than accumulating them into ``.grad``, and
    whether it keeps the graph: a function lent by the judge is told, so the judge's
    side of its graph does the same (its parameters get a ``.grad`` from ``backward()``,
    none from ``grad()``; its graph there is kept for a second pass as here)."""
    from minigrad import autograd

    passes = autograd._backward

    def watched(tensors, gradients, retain_graph, report, captured=None, *rest, **named):
        side.passes.append((captured is not None, bool(retain_graph)))
        try:
            yield from passes(tensors, gradients, retain_graph, report, captured, *rest,
                              **named)
        finally:
            side.passes.pop()

    autograd._backward = watched


def main() -> None:
    requests = os.fdopen(int(sys.argv[1]), "rb")
    replies = os.fdopen(int(sys.argv[2]), "wb")
    serve(requests, replies, float(sys.argv[3]) if len(sys.argv) > 3 else 60.0)


if __name__ == "__main__":
    main()
