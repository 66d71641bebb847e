"""Grading one submission: the student's code in a sandbox, the checks outside it.

The judge is the grading side of one returned notebook. It starts the student's process
(``student_process.py``) in the sandbox (``sandbox.py``) and sends it the notebook's
cells one by one: the student's answer cells and the chapter's own cells run there, as
in a kernel. The test cells never do: the judge runs each one in its own namespace, made
of the teacher's cells that the tests need (run here, from the teacher's copy) and, for
every other name, what the student's process defined, called across the boundary:

- a ``mg.Function`` subclass becomes a Function here whose forward and backward send
  their arrays to the student's forward and backward (the engine, gradcheck and the
  checks all run here);
- an ``nn.Module`` subclass becomes a module here with the same parameters, whose
  forward and backward run the student's module on the values of these parameters;
- a function is called with values and gives values; other objects stay there and are
  used through handles (their operators too, ``d + e``, but only in the checks that
  compute with them: ``ARITHMETIC``);
- data (numbers, arrays, Tensors) is copied.

A graph that stays in the student's process is one op of the judge's graph. Under
``create_graph=True`` its backward is recorded there, and its gradients are one op here
in turn (``StudentGraph``): a second derivative is taken there too. The other way
round, a function of the check's lent to the student's code is one op there
(``JudgeOp``), run and differentiated here, as often as asked.

So nothing a cell does (rebinding a checker, patching the engine or ``sys.modules``,
exiting, printing "Success") changes a check: only the numbers the student's code
returns do. What an answer *is* is checked too (``integrity.py``): the reference answer
loaded with ``use_reference``, or an answer that subclasses or hands the work to
minigrad's own implementation, scores 0 for that exercise, with a note.

The cells after the last answer and check do not run: they cannot change a grade (a
chapter's closing demonstrations, a student's own experiments), and the first of them says
so in the feedback.

``python -m minigrad.course.judge SUBMISSION.ipynb SOURCE.ipynb RESULT.json`` writes the
notebook with every cell's outputs, and the flags, as JSON.
"""

from __future__ import annotations

import argparse
import ast
import builtins
import contextlib
import inspect
import io
import json
import math
import os
import re
import select
import shutil
import stat
import subprocess
import sys
import tempfile
import time
import traceback
import types
from pathlib import Path

import numpy as np

from . import integrity, mirror, sandbox, wire
from .student_process import (KeptGraph, _array_leaves, _tensors_in,  # (both sides)
                              kept_graph_gradients, recorded_gradients)
from .authoring import exercise_cells, exercise_of_tests, exercise_role, last_exercise_cell

# Checks that hand the student's code objects of their own (a model and its optimizer,
# parameters, a graph, a leaf and an array, a file, a model whose layers count their
# calls, a critic whose weights get gradients through a gradient) or watch the
# process-wide modes while it runs (a grad-mode switch, lazy mode): these run here with
# the objects copied to the student's process and kept in step, the modes with them
# (mirror.py).
HAND_OVER = {"check_training_step", "batch_losses", "check_topological_order",
             "check_accumulate_grad", "check_backward_loop", "check_optimizer_step",
             "check_clip_grad_norm", "check_generate", "check_save_and_resume",
             "epoch_mistakes", "check_grad_switch", "check_grad_switch_deeply",
             "check_evaluate", "check_layer_shapes", "check_gradient_penalty"}

# Checks that compute with instances of the student's class (chapter 16's dual numbers:
# ``d + e``, ``2.5 * d``): the operators of a student's object run in the student's
# process only while one of these runs. Anywhere else a student's object has none, so it
# cannot stand for a number a check computes with (``np.allclose(got, want)`` subtracts:
# a ``__sub__`` of the student's would decide the outcome).
ARITHMETIC = {"check_dual"}


EXCEPTIONS = {name: getattr(builtins, name) for name in dir(builtins)
              if isinstance(getattr(builtins, name), type)
              and issubclass(getattr(builtins, name), Exception)}


# minigrad's own error classes, which checks name mistakes by (a ShapeError from the
# student's layer, a NotTwiceDifferentiableError from a backward that cannot be
# recorded): an error of one of them there is one of them here
MINIGRAD_ERRORS = ("DimensionError", "ShapeError", "GradcheckError", "OpError")


class StudentError(Exception):
    """An error raised by the student's code, in the student's process."""


def _student_error(error: dict) -> Exception:
    """The judge's copy of an error the student's code raised: the nearest built-in
    exception class (a NumPy AxisError is a ValueError) or minigrad error class (a
    ShapeError is a ShapeError), its message, and the line of the
    student's code it came from (``student_where``, which the checkers quote)."""
    from minigrad import errors
    from minigrad.higher_order import NotTwiceDifferentiableError

    names = [str(error.get("type"))] + [str(n) for n in error.get("bases", [])]
    known = {**EXCEPTIONS, **{n: getattr(errors, n) for n in MINIGRAD_ERRORS},
             "NotTwiceDifferentiableError": NotTwiceDifferentiableError}
    kind = next((known[n] for n in names if n in known), StudentError)
    try:
        made = kind(str(error.get("message")))
    except Exception:  # noqa: BLE001 - a class that wants other arguments
        made = StudentError(str(error.get("message")))
    made.student_where = str(error.get("where") or "")
    made.student_type = str(error.get("type"))
    return made


class StudentProcessGone(RuntimeError):
    """The student's process stopped (exited, crashed, killed at a time limit)."""


# --- the channel to the student's process ------------------------------------------------


class StudentProcess:
    """The sandboxed process that holds the student's objects; ``ask`` sends one request
    and waits (at most ``timeout`` seconds) for its answer."""

    def __init__(self, workdir: Path, sandboxed: bool, hide: list[Path], limit: float = 60):
        to_student_r, to_student_w = os.pipe()
        to_judge_r, to_judge_w = os.pipe()
        argv = [sys.executable, "-m", "minigrad.course.student_process",
                str(to_student_r), str(to_judge_w), str(limit)]
        if sandboxed:
            argv = sandbox.command(argv, workdir, hide=hide)
            env = None
        else:
            env = {**os.environ, **sandbox.ONE_THREAD, "MPLBACKEND": "Agg"}
        # (what the student's code prints outside a cell, e.g. warnings while a check
        # calls it, is dropped: a pipe nobody reads would block it at 64 KiB)
        errors = None if os.environ.get("MINIGRAD_JUDGE_DEBUG") else subprocess.DEVNULL
        self.process = subprocess.Popen(argv, pass_fds=(to_student_r, to_judge_w),
                                        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                        stderr=errors, cwd=workdir, env=env)
        os.close(to_student_r)
        os.close(to_judge_w)
        self.requests = os.fdopen(to_student_w, "wb")
        self.replies = os.fdopen(to_judge_r, "rb")
        # what answers the student's code when it calls a function the check lent it
        # (``Remote.callback``); the request waits meanwhile
        self.on_callback = None
        self.ask_raw(None, timeout=120)  # the "ready" line: Python, NumPy, IPython loaded

    def ask_raw(self, message: dict | None, timeout: float) -> dict:
        if self.process.poll() is not None:
            raise StudentProcessGone("the notebook's process has stopped")
        if message is not None:
            try:
                wire.send(self.requests, message)
            except (BrokenPipeError, OSError):
                raise StudentProcessGone("the notebook's process has stopped") from None
        while True:
            ready, _, _ = select.select([self.replies], [], [], timeout)
            if not ready:
                self.stop()
                raise StudentProcessGone(f"no answer from the notebook's code within "
                                         f"{timeout:g} s (an endless loop?); its process "
                                         "was stopped")
            try:
                reply = wire.receive(self.replies)
            except EOFError:
                self.stop()
                raise StudentProcessGone("the notebook's process has stopped (it exited or "
                                         "crashed)") from None
            if "callback" not in reply:
                return reply
            request = reply["callback"]
            answer = self.on_callback(request) if self.on_callback and isinstance(
                request, dict) else {"error": {"type": "RuntimeError",
                                               "message": "nothing to call back"}}
            try:
                wire.send(self.requests, {"answer": answer})
            except (BrokenPipeError, OSError):
                raise StudentProcessGone("the notebook's process has stopped") from None

    def ask(self, op: str, limit: float, **args):
        reply = self.ask_raw({"op": op, "args": args}, limit)
        if "error" in reply:
            raise _student_error(reply["error"])
        return reply

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        for stream in (self.requests, self.replies):  # (else closed whenever collected)
            with contextlib.suppress(OSError):
                stream.close()


# --- proxies: the student's objects as the judge sees them --------------------------------


class Remote:
    """Turns what the student's process sends into objects the checks can use.

    While a check that hands the student's code objects of its own runs (``mirroring``),
    calls send their arguments pickled and each request carries what changed in the
    objects on either side (``mirror.py``)."""

    def __init__(self, student: StudentProcess, timeout: float, workdir: Path | None = None,
                 sandboxed: bool = True):
        global GraphCall, StudentGraph
        if GraphCall is None:  # (minigrad is imported lazily)
            GraphCall, StudentGraph = _graph_call(), _student_graph()
        self.student, self.timeout = student, timeout
        self.workdir, self.sandboxed = workdir, sandboxed
        self.files: Path | None = None  # the check's temporary files, shared (mirroring)
        self.mirrors: mirror.Mirrors | None = None
        self.base = 10**9
        self.proxies: dict[int, object] = {}  # one proxy per object of the student's
        # functions of the check's lent to the student's code for a call (``lend``), and
        # the graphs their results have here while the student's side may backpropagate
        self.lent: dict[int, object] = {}
        self.lent_graphs: dict[int, tuple] = {}
        self.arithmetic = False  # a check of ARITHMETIC runs
        student.on_callback = self.callback

    def value(self, data):
        import minigrad as mg

        decoded = wire.decode(data, self.proxy)
        return wire.map_values(decoded, lambda v: mg.tensor(v.array, requires_grad=v.requires_grad)
                    if isinstance(v, wire.TensorData) else v)

    def send(self, value, lend: bool = False):
        """A value of the judge's for the student's process (Tensors as data). ``lend``:
        a function of the check's among them (not data, not the student's) goes as a
        handle the student's code can call back (``callback``)."""
        import minigrad as mg

        def convert(v):
            if isinstance(v, mg.Tensor):
                return wire.TensorData(np.asarray(v.detach().numpy()), v.requires_grad)
            if isinstance(v, (RemoteObject, RemoteFunction)):
                return v._handle
            if lend and callable(v) and not isinstance(v, type) and _handle_of(v) is None:
                return self.lend(v)
            return v

        return wire.encode(wire.map_values(value, convert))

    def lend(self, function) -> wire.Handle:
        numbers = [n for n, lent in self.lent.items() if lent is function]
        number = numbers[0] if numbers else len(self.lent) + 1
        self.lent[number] = function
        return wire.Handle(number, "judge", type(function).__name__)

    def callback(self, request: dict) -> dict:
        """The student's code calls a function the check lent it: run it here on the
        call's values (as leaves), in the student's side's grad mode and with its random
        generator state; a result with a graph keeps it here for ``backward``. Or
        backpropagate such a graph: into ``.grad`` (the block's parameters get theirs)
        when the student's side ran ``backward()``, only to the call's inputs when it ran
        ``grad()``. Returns data only; an error goes back as data."""
        import minigrad as mg

        try:
            rng = wire.decode(request.get("rng"))
            if rng is not None:
                mg.set_rng_state(rng)
            if request.get("op") == "call":
                target = wire.decode(request.get("target"))
                if not (isinstance(target, wire.Handle) and target.kind == "judge"
                        and target.id in self.lent):
                    raise wire.WireError("a call of nothing the check lent")
                args, kwargs = self.value(request["args"]), self.value(request["kwargs"])
                leaves = _tensors_in((args, kwargs))
                with mg.set_grad_enabled(bool(request.get("grad_enabled"))):
                    output = self.lent[target.id](*args, **kwargs)
                graph = None
                if isinstance(output, mg.Tensor) and output.grad_fn is not None:
                    graph = len(self.lent_graphs) + 1
                    self.lent_graphs[graph] = (leaves, [output])
                return {"value": self.send(output), "graph": graph,
                        "rng": wire.encode(mg.get_rng_state())}
            if request.get("op") == "backward":
                return {**self._lent_backward(request), "rng": wire.encode(mg.get_rng_state())}
            raise wire.WireError(f"no callback {request.get('op')!r}")
        except Exception as error:  # noqa: BLE001 - the student's side raises it there
            return {"error": {"type": type(error).__name__, "message": str(error)[:4000]}}

    def _lent_backward(self, request: dict) -> dict:
        """``callback``'s backward through a graph here (a lent function's result, or
        gradients taken here before): into ``.grad`` when the student's side ran
        ``backward()``, only to the leaves when it ran ``grad()``; the graph kept if the
        student's side keeps its own. With ``create_graph`` the gradients are recorded
        and kept as a graph in turn, whose leaves are this one's and the gradients given
        (the student's side makes them the outputs of one op: ``JudgeOp``)."""
        import minigrad as mg

        leaves, outputs = self.lent_graphs[int(request["graph"])]
        create_graph = bool(request.get("create_graph"))
        arrays = wire.decode(request["grads"])
        if not (isinstance(arrays, list) and len(arrays) == len(outputs)
                and all(isinstance(a, np.ndarray) and a.dtype.kind == "f" for a in arrays)):
            raise wire.WireError("one floating array per output of the graph, please")
        given = [mg.tensor(a, requires_grad=create_graph) for a in arrays]
        results = kept_graph_gradients(outputs, given, leaves,
                                       accumulate=bool(request.get("accumulate")),
                                       retain=bool(request.get("retain")),
                                       create_graph=create_graph)
        reply = {"grads": wire.encode([None if r is None else np.array(r.detach().numpy())
                                       for r in results])}
        if create_graph:
            present = [r for r in results if r is not None]
            graph = len(self.lent_graphs) + 1
            self.lent_graphs[graph] = ([*leaves, *given], present)
            reply.update(graph=graph, history=[bool(r.requires_grad) for r in present])
        return reply

    def ask(self, op: str, **args):
        if self.mirrors is None:
            return self.student.ask(op, self.timeout, **args)
        args["sync"] = self.mirrors.changes()
        reply = self.student.ask_raw({"op": op, "args": args}, self.timeout)
        if self.files is not None:
            _only_plain_files(self.files)
        if "sync" in reply:
            self.mirrors.apply(reply["sync"])
        if "error" in reply:
            raise _student_error(reply["error"])
        return reply

    @contextlib.contextmanager
    def mirroring(self):
        """Objects the check hands the student's code are copied there by pickle and kept
        in step (``mirror.py``) until the block ends."""
        import minigrad as mg

        self.mirrors = mirror.Mirrors(first_new=1)
        # the judge's own modes afterwards are its own, whatever the student's side
        # reports for them (an answer cell that rebinds mg.is_grad_enabled there)
        grad, lazy = mg.is_grad_enabled(), mg.is_lazy()
        saved_tempdir = tempfile.tempdir
        if self.workdir is not None:  # a file the check names is one the student's sees
            self.files = self.workdir / "check-files"
            self.files.mkdir(exist_ok=True)
            self.files.chmod(0o777)
            tempfile.tempdir = str(self.files)
        try:
            yield
        finally:
            with contextlib.suppress(Exception):  # the modes as the check left them
                self.ask("forget")
            self.mirrors = None
            mg.set_grad_enabled(grad)
            mg.set_mode("lazy" if lazy else "eager")
            tempfile.tempdir = saved_tempdir
            if self.files is not None:
                shutil.rmtree(self.files, ignore_errors=True)
                self.files = None

    def pickled(self, value) -> dict:
        self.base += 10**6
        paths = None
        if self.files is not None:
            paths = (str(self.files), "/submission/" + self.files.name if self.sandboxed
                     else str(self.files))
        return mirror.pickled(value, self.mirrors, self.base, _handle_of, paths)

    def proxy(self, handle: wire.Handle):
        if handle.kind in ("mirror", "mirror-new"):
            if self.mirrors is None:
                raise wire.WireError("an object number outside a check that hands objects over")
            if handle.kind == "mirror-new":  # an array made there: its changes come back
                if handle.id >= 0 or handle.id in self.mirrors.objects:
                    raise wire.WireError("a new object with a number not the other side's")
                self.mirrors.register(handle.id, handle.value)
            return self.mirrors.resolve(handle.id)
        if handle.kind == "judge":  # a function of the check's, lent: itself
            if handle.id not in self.lent:
                raise wire.WireError("a lent function the check never lent")
            return self.lent[handle.id]
        if handle.id not in self.proxies:
            make = {"function-class": function_class, "module-class": ModuleClass,
                    "autograd-function-class": autograd_function_class,
                    "function": RemoteFunction}.get(handle.kind, RemoteObject)
            self.proxies[handle.id] = make(self, handle)
        return self.proxies[handle.id]


def _only_plain_files(folder: Path) -> None:
    """Remove from the shared folder whatever is not a plain file or folder: the check
    reads what the student's code wrote there, and a link made in the sandbox could point
    at one of the teacher's files here."""
    for root, folders, files in os.walk(folder):
        for name in folders + files:
            path = Path(root) / name
            status = path.lstat()
            plain = stat.S_ISDIR(status.st_mode) or (stat.S_ISREG(status.st_mode)
                                                     and status.st_nlink == 1)
            if not plain:
                with contextlib.suppress(OSError):
                    path.unlink()


def _handle_of(obj) -> int | None:
    """The number of the student's object a proxy stands for (a proxy handed back to the
    student's code is the object itself there)."""
    if isinstance(obj, (RemoteFunction, ModuleClass)):
        return obj._handle.id
    if isinstance(obj, type) and "_student_handle" in vars(obj):
        return obj._student_handle.id
    return None


class RemoteFunction:
    """A function of the student's: called with values, returns values."""

    def __init__(self, remote: Remote, handle: wire.Handle):
        self._remote, self._handle = remote, handle
        self.__name__ = self.__qualname__ = handle.name

    def __call__(self, *args, **kwargs):
        import minigrad as mg

        if self._remote.mirrors is not None:  # the check hands over objects of its own
            args = tuple(list(a) if isinstance(a, types.GeneratorType) else a for a in args)
            reply = self._remote.ask("call_pickled", target=wire.encode(self._handle),
                                     payload=self._remote.pickled((args, kwargs)))
            value = self._remote.value(reply["value"])
            if reply.get("graph") is not None and isinstance(value, mg.Tensor):
                # its graph there reaches Tensors the check handed over (a critic's
                # weights): one op here, over those Tensors themselves
                leaves = [self._remote.mirrors.resolve(int(n)) for n in reply["leaves"]]
                if not all(isinstance(t, mg.Tensor) and t.requires_grad for t in leaves):
                    raise wire.WireError("a graph's leaves that are not the check's Tensors")
                kept = KeptGraph(self._remote, int(reply["graph"]), [value.numpy()])
                value = StudentGraph.apply(kept, *leaves)
            return value
        flat = [a for a in args if isinstance(a, mg.Tensor)]
        if mg.is_grad_enabled() and any(t.requires_grad for t in flat):
            # the student's function computes with Tensors: its graph stays in the
            # student's process, and one op here stands for it
            return GraphCall.apply(self, None, (), args, kwargs, mg.is_grad_enabled(),
                                   *flat)
        reply = self._remote.ask("call", target=wire.encode(self._handle),
                                 args=self._remote.send(args),
                                 kwargs=self._remote.send(kwargs))
        leaves = _array_leaves((args, kwargs))
        for index, data in (reply.get("changed") or {}).items():
            if 0 <= int(index) < len(leaves):  # changed in place there: here too
                _write_into(leaves[int(index)], wire.decode(data))
        same = reply.get("same")
        if same is not None and 0 <= int(same) < len(leaves):
            return leaves[int(same)]  # it returned its argument itself
        return self._remote.value(reply["value"])

    def __repr__(self) -> str:
        return f"<function {self._handle.name}>"

    def __swap_globals__(self, paths: dict[str, str]):
        return _swapped(self._remote, self._handle, paths)


def _write_into(obj, values) -> None:
    """What the student's code wrote into its copy of an argument, written into the
    judge's (a Tensor's array in place, as an in-place op would; never a new shape)."""
    import minigrad as mg

    array = obj._data if isinstance(obj, mg.Tensor) else obj
    if not (isinstance(array, np.ndarray) and isinstance(values, np.ndarray)
            and array.shape == values.shape and array.flags.writeable):
        return
    np.copyto(array, values, casting="unsafe")


def _operator(op: str, reflected: bool = False):
    """``RemoteObject``'s operator ``op`` (``reflected``: ``2.5 + d``): run on the
    student's object, in the student's process, while a check of ``ARITHMETIC`` runs;
    anywhere else the object has none (Python raises its TypeError)."""
    unary = op in ("neg", "pos", "abs")

    def operate(self, other=None):
        if not self._remote.arithmetic:
            if unary:
                raise TypeError(f"bad operand type for {op}(): {self._handle.name!r}")
            return NotImplemented
        reply = self._remote.ask("operate", target=wire.encode(self._handle), name=op,
                                 other=None if unary else self._remote.send(other),
                                 reflected=reflected)
        return self._remote.value(reply["value"])

    operate.__name__ = f"__{'r' if reflected else ''}{op}__"
    return operate


class RemoteObject(RemoteFunction):
    """Any other object of the student's, used through its handle."""

    # its operators, run there (only while a check of ARITHMETIC runs: ``_operator``)
    __add__, __radd__ = _operator("add"), _operator("add", reflected=True)
    __sub__, __rsub__ = _operator("sub"), _operator("sub", reflected=True)
    __mul__, __rmul__ = _operator("mul"), _operator("mul", reflected=True)
    __truediv__, __rtruediv__ = _operator("truediv"), _operator("truediv", reflected=True)
    __pow__, __rpow__ = _operator("pow"), _operator("pow", reflected=True)
    __matmul__, __rmatmul__ = _operator("matmul"), _operator("matmul", reflected=True)
    __neg__, __pos__, __abs__ = _operator("neg"), _operator("pos"), _operator("abs")

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        reply = self._remote.ask("getattr", target=wire.encode(self._handle), name=name,
                                 live=self._remote.mirrors is not None)
        return self._remote.value(reply["value"])

    def __getitem__(self, key):
        reply = self._remote.ask("item", target=wire.encode(self._handle),
                                 key=self._remote.send(key))
        return self._remote.value(reply["value"])

    def __setitem__(self, key, value):
        payload = (self._remote.pickled(value) if self._remote.mirrors is not None
                   else None)
        self._remote.ask("setitem", target=wire.encode(self._handle),
                         key=self._remote.send(key), payload=payload,
                         value=None if payload else self._remote.send(value))

    def __len__(self) -> int:
        return int(self._remote.ask("len", target=wire.encode(self._handle))["value"])

    def __enter__(self):
        reply = self._remote.ask("enter", target=wire.encode(self._handle))
        return self._remote.value(reply["value"])

    def __exit__(self, kind, error, trace):
        """The student's ``__exit__``, told the exception's built-in class and message."""
        said = None
        if kind is not None:
            name = next((c.__name__ for c in kind.__mro__ if c.__name__ in EXCEPTIONS),
                        "Exception")
            said = {"type": name, "message": str(error)}
        return bool(self._remote.ask("exit", target=wire.encode(self._handle),
                                     error=said)["value"])

    def __iter__(self):
        reply = self._remote.ask("iter", target=wire.encode(self._handle))
        return self._remote.value(reply["value"])

    def __next__(self):
        reply = self._remote.ask("next", target=wire.encode(self._handle))
        if reply.get("stop"):
            raise StopIteration
        return self._remote.value(reply["value"])

    def __repr__(self) -> str:
        return f"<{self._handle.name} of the student's>"


@contextlib.contextmanager
def _swapped(remote: Remote, handle: wire.Handle, paths: dict[str, str]):
    """Names of the student's globals bound to references (import paths), in the
    student's process, while a check runs an exercise on its own (prerequisites.py)."""
    reply = remote.ask("swap", target=wire.encode(handle),
                       paths={str(k): str(v) for k, v in paths.items()})
    try:  # what the swap gives there (a class rebuilt on the reference), as a proxy
        yield remote.value(reply["value"]) if reply.get("value") is not None else None
    finally:
        remote.ask("unswap", swap=reply["swap"])


def function_class(remote: Remote, handle: wire.Handle):
    """A ``mg.Function`` here whose forward and backward are the student's.

    What the student's forward saved, and kept as ctx attributes, is the judge's own
    input or output where it was one there (a NumPy view of one is the same view of the
    judge's array), so a check sees here what it would see in one process: the input
    itself saved, a view of it, a ctx attribute holding it. Before backward the judge
    sends what its copy of ctx holds where that differs from what forward saved there
    (an input a check edited in place under a saved view, a stand-in a check put in
    place of a saved array); the ``grad_outputs`` a backward changed in place are
    changed here too."""
    import minigrad as mg

    target = wire.encode(handle)

    def forward(ctx, *args, **kwargs):
        reply = remote.ask("forward", target=target,
                           needs_input_grad=list(ctx.needs_input_grad),
                           args=remote.send(args), kwargs=remote.send(kwargs))
        outputs = remote.value(reply["outputs"])
        listed = outputs if isinstance(outputs, tuple) else (outputs,)
        for index, data in reply.get("changed_inputs", {}).items():
            array = args[int(index)]
            np.copyto(array, wire.decode(data))  # the student's forward wrote into it
        watched = {}  # what the student's side has, where an edit here would not show
        saved = []
        for origin in reply["saved"]:
            value, snapshot = _from_origin(origin, args, listed)
            if snapshot is not None:
                watched[("saved", len(saved))] = (value, snapshot)
            saved.append(value)
        ctx.save_for_backward(*saved)
        for key, origin in reply.get("attributes", {}).items():
            value, snapshot = _from_origin(origin, args, listed)
            if snapshot is None and isinstance(value, np.ndarray):
                snapshot = np.array(value)  # (no version counter watches an attribute)
            setattr(ctx, key, value)
            watched[("attribute", key)] = (value, snapshot)
        marked = [listed[i] for i in reply.get("non_differentiable", []) if i is not None]
        if marked:
            ctx.mark_non_differentiable(*marked)
        ctx.set_materialize_grads(reply.get("materialize_grads", True))
        ctx._remote_context = reply["context"]
        ctx._remote_saved = tuple(saved)
        ctx._remote_watched = watched
        return outputs

    def backward(ctx, *grads):
        context = getattr(ctx, "_remote_context", None)
        if context is None:
            raise RuntimeError(f"{handle.name}.backward: this context was not made by "
                               f"{handle.name}.forward")
        saved, attributes = _context_changes(remote, ctx)
        try:
            reply = remote.ask("backward", context=context, grads=remote.send(grads),
                               saved=saved, attributes=attributes,
                               released=bool(ctx._released))
        except Exception as error:  # noqa: BLE001 - the stand-in for an unneeded array
            if getattr(error, "student_type", None) == "_UsedUnneeded" \
                    and str(error).isdigit():
                from minigrad.exercises.context import _UsedUnneeded

                position = int(str(error))  # (the saved array's position)
                raised = _UsedUnneeded(position)
                raised.student_where = getattr(error, "student_where", "")
                raise raised from None
            raise
        for index, data in reply.get("changed_grads", {}).items():
            grad = grads[int(index)]
            if isinstance(grad, np.ndarray) and grad.flags.writeable:
                np.copyto(grad, wire.decode(data), casting="unsafe")
        value = remote.value(reply["value"])
        same = reply.get("same") or []
        if same:  # a gradient that is the grad_output it was given, as it is here
            listed = list(value) if reply.get("several") else [value]
            for i, j in same:
                listed[int(i)] = grads[int(j)]
            value = tuple(listed) if reply.get("several") else listed[0]
        return value

    forward.__signature__ = _forward_signature(remote, target)
    return type(handle.name, (mg.Function,), {
        "forward": staticmethod(forward), "backward": staticmethod(backward),
        "__swap_globals__": staticmethod(lambda paths: _swapped(remote, handle, paths)),
        "_student_handle": handle,
        "__doc__": f"{handle.name}: the student's Function, run in the student's process",
        "__module__": "__main__"})


def _forward_signature(remote: Remote, target) -> inspect.Signature:
    """The student's forward's parameters, by name (the checks' messages name the inputs
    as the student did: ``kept input 0 (x) as a ctx attribute``)."""
    try:
        names = remote.ask("signature", target=target).get("names", [])
    except Exception:  # noqa: BLE001 - the messages then say x0, x1, ...
        names = []
    kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
    if not (isinstance(names, list) and len(names) < 100
            and all(isinstance(n, str) and n.isidentifier() for n in names)
            and len(set(names)) == len(names)):
        names = ["ctx"]
    return inspect.Signature([inspect.Parameter(n, kind) for n in names])


def _from_origin(origin: dict, inputs, outputs):
    """A saved array or ctx attribute the student's forward reported, as the judge's
    object: an input or output itself, a view of one, or the values sent; and, for a
    view or values, a copy of what the student's side holds (to see later edits)."""
    if "output" in origin:
        return outputs[int(origin["output"])], None
    if "input" in origin:
        return inputs[int(origin["input"])], None
    value = wire.decode(origin["value"])
    view = origin.get("view")
    if view is not None:
        listed = inputs if view.get("of") == "input" else outputs
        index = int(view.get("index", -1))
        if 0 <= index < len(listed):
            made = _view_of(listed[index], int(view["offset"]), view["shape"],
                            view["strides"], value)
            if made is not None:
                return made, np.array(made)
    return value, (np.array(value) if isinstance(value, np.ndarray) else None)


def _view_of(base, offset: int, shape, strides, value):
    """The view of ``base`` the student's side described (start ``offset`` bytes into
    its memory, ``shape``, ``strides``), if it lies inside ``base`` and shows the values
    sent; else None (the values are used as they are)."""
    if not (isinstance(base, np.ndarray) and isinstance(value, np.ndarray)
            and base.flags.c_contiguous and base.dtype == value.dtype):
        return None
    shape = tuple(int(n) for n in shape)
    strides = tuple(int(s) for s in strides)
    size = base.dtype.itemsize
    if len(shape) != len(strides) or shape != value.shape or not value.size \
            or offset % size or any(s % size for s in strides):
        return None
    low = offset + sum((n - 1) * s for n, s in zip(shape, strides) if s < 0)
    high = offset + sum((n - 1) * s for n, s in zip(shape, strides) if s > 0)
    if low < 0 or high + size > base.nbytes:  # never a view outside the judge's array
        return None
    made = np.lib.stride_tricks.as_strided(base.reshape(-1)[offset // size:], shape, strides)
    return made if np.array_equal(made, value, equal_nan=True) else None


def _context_changes(remote: Remote, ctx):
    """What the judge's copy of ctx holds where the student's side holds something else:
    per saved array None ("as forward saved it") or the value; the changed attributes."""
    from minigrad.exercises.context import _Unneeded

    def sent(value):
        if isinstance(value, _Unneeded):
            return {"unneeded": int(value.position)}
        return remote.send(value)

    current = tuple(ctx._saved or ())
    first = getattr(ctx, "_remote_saved", ())
    watched = getattr(ctx, "_remote_watched", {})
    saved = None
    replies = []
    for index, value in enumerate(current):
        same = index < len(first) and value is first[index]
        kept = watched.get(("saved", index))
        if same and (kept is None or kept[1] is None
                     or np.array_equal(kept[1], value, equal_nan=True)):
            replies.append(None)
        else:
            replies.append(sent(value))
    if any(r is not None for r in replies) or len(current) != len(first):
        saved = replies
    attributes = {}
    for (kind, key), (value, snapshot) in watched.items():
        if kind != "attribute":
            continue
        now = getattr(ctx, key, None)
        if now is not value or (snapshot is not None
                                and not np.array_equal(snapshot, now, equal_nan=True)):
            with contextlib.suppress(wire.WireError):
                attributes[key] = sent(now)
    return saved, attributes


class ModuleClass:
    """The student's ``nn.Module`` subclass: calling it makes a :class:`RemoteModule`."""

    def __init__(self, remote: Remote, handle: wire.Handle):
        self._remote, self._handle = remote, handle
        self.__name__ = self.__qualname__ = handle.name

    def __swap_globals__(self, paths: dict[str, str]):
        return _swapped(self._remote, self._handle, paths)

    def __call__(self, *args, **kwargs):
        reply = self._remote.ask("module_new", target=wire.encode(self._handle),
                                 args=self._remote.send(args),
                                 kwargs=self._remote.send(kwargs))
        return remote_module(self._remote, self._handle.name, reply)

    def __repr__(self) -> str:
        return f"<class {self._handle.name}>"


def remote_module(remote: Remote, name: str, reply: dict):
    import minigrad as mg

    class RemoteModule(mg.nn.Module):
        """The student's module: parameters here, computation in the student's process."""

        def __init__(self):
            super().__init__()
            self._remote_id = reply["module"]
            self._remote_context = remote
            for path, data in reply["parameters"].items():
                _set_path(self, path, mg.nn.Parameter(mg.tensor(wire.decode(data))))
            for path, data in reply["buffers"].items():
                owner, leaf = _owner(self, path)
                owner.register_buffer(leaf, mg.tensor(wire.decode(data)))
            parameters = dict(self.named_parameters())
            for path in reply.get("frozen", []):
                if str(path) in parameters:
                    parameters[str(path)].requires_grad_(False)
            for key, what in reply.get("unregistered", {}).items():
                _keep_unregistered(self, str(key), what)
            self.train(reply["training"])

        def forward(self, *inputs, **kwargs):
            parameters = dict(self.named_parameters())
            flat = [a for a in inputs if isinstance(a, mg.Tensor)]
            return GraphCall.apply(None, self, list(parameters), inputs, kwargs,
                                   mg.is_grad_enabled(), *flat, *parameters.values())

    RemoteModule.__name__ = RemoteModule.__qualname__ = name
    return RemoteModule()


def _keep_unregistered(module, key: str, what) -> None:
    """A Tensor or array the student's module keeps outside its registries, kept the
    same way here (zeros of its shape: only what it is matters to a check; the student's
    forward uses its own)."""
    import minigrad as mg

    if not (key.isidentifier() and isinstance(what, dict)) or hasattr(module, key):
        return
    kind = what.get("kind")
    if kind in ("tensor", "array"):
        shape = tuple(int(n) for n in what.get("shape", []))
        if math.prod(shape) > 10**7:
            return
        value = np.zeros(shape, np.float32)
        object.__setattr__(module, key, mg.tensor(value) if kind == "tensor" else value)
    elif kind in ("list", "tuple", "dict"):
        tensors = [mg.zeros(1) for _ in range(min(int(what.get("tensors", 0)), 100))]
        value = {str(i): t for i, t in enumerate(tensors)} if kind == "dict" else (
            tensors if kind == "list" else tuple(tensors))
        object.__setattr__(module, key, value)


def _owner(module, path: str):
    import minigrad as mg

    *parents, leaf = path.split(".")
    for part in parents:
        child = getattr(module, part, None) if part in module._modules else None
        if child is None:
            child = mg.nn.Module()
            setattr(module, part, child)
        module = child
    return module, leaf


def _set_path(module, path: str, value) -> None:
    owner, leaf = _owner(module, path)
    setattr(owner, leaf, value)


def _graph_call():
    import minigrad as mg

    class GraphCall(mg.autograd.Function):
        """One call of the student's function or module as one op of the judge's graph:
        its inputs are the call's Tensors (and the module's parameters); forward and
        backward run in the student's process, where the call's own graph stays."""

        @staticmethod
        def forward(ctx, function, module, names, args, kwargs, grad_enabled, *tensors):
            if module is not None:
                remote = module._remote_context
            else:
                remote = function._remote
            count = len(tensors) - len(names)
            inputs, parameters = tensors[:count], tensors[count:]
            tensor_inputs = iter(zip(inputs, ctx.needs_input_grad[6:]))
            sent = tuple(_as_here(*next(tensor_inputs)) if isinstance(a, mg.Tensor)
                         else a for a in args)
            if module is not None:
                reply = remote.ask(
                    "module_forward", module_id=module._remote_id,
                    parameters={n: wire.encode(np.asarray(p.detach().numpy()))
                                for n, p in zip(names, parameters)},
                    buffers={n: wire.encode(np.asarray(b.numpy()))
                             for n, b in module.named_buffers() if b is not None},
                    training=module.training, args=remote.send(sent),
                    kwargs=remote.send(kwargs), grad_enabled=grad_enabled,
                    anomaly=mg.is_anomaly_enabled())
                for path, data in reply["buffers"].items():
                    owner, leaf = _owner(module, path)
                    if getattr(owner, leaf, None) is not None:
                        getattr(owner, leaf).data = mg.tensor(wire.decode(data))
                for path in reply.get("buffers_in_graph", []):
                    # a buffer the student's forward computed with the graph recording (a
                    # running mean updated outside no_grad): part of this call's graph here
                    owner, leaf = _owner(module, str(path))
                    buffer = getattr(owner, leaf, None)
                    if isinstance(buffer, mg.Tensor) and hasattr(ctx, "next_functions"):
                        buffer.grad_fn = ctx
            else:
                sent_args = remote.send(sent, lend=True)
                sent_kwargs = remote.send(kwargs, lend=True)
                # a function of the check's lent to the call (a checkpoint's block): both
                # sides draw from one random generator, as in one process
                ctx.shares_rng = any(h.kind == "judge" for h in _handles_in(
                    (wire.decode(sent_args), wire.decode(sent_kwargs))))
                rng = wire.encode(mg.get_rng_state()) if ctx.shares_rng else None
                before = set(remote.lent_graphs)
                reply = remote.ask("call_graph", target=wire.encode(function._handle),
                                   args=sent_args, kwargs=sent_kwargs,
                                   grad_enabled=grad_enabled,
                                   anomaly=mg.is_anomaly_enabled(), rng=rng)
                if ctx.shares_rng:
                    mg.set_rng_state(wire.decode(reply["rng"]))
                # bytes of saved arrays the call holds (a checkpoint must hold none), read
                # by the checkpoint's check (modes._held_by): the graphs a lent function's
                # calls recorded here, measured here (where its activations are), plus
                # what the student's side says its outputs hold there (a report that can
                # only add: it cannot hide the graphs kept here)
                from minigrad.exercises.modes import activation_bytes

                ctx.held_bytes = int(reply.get("held") or 0) + sum(
                    activation_bytes(output) for number, (_, outputs)
                    in remote.lent_graphs.items() if number not in before
                    for output in outputs)
            ctx.graph, ctx.remote, ctx.names, ctx.count = reply["graph"], remote, names, count
            # the ops of the call's graph there (a check may name a mistake by them)
            ctx.inner_ops = [str(n) for n in reply.get("ops", [])]
            # the Function of the student's that made the output there (a check may ask
            # whether forward used the student's own Function: linear.uses_function)
            ctx.made_by = remote.value(reply["made_by"]) if reply.get("made_by") else None
            outputs = remote.value(reply["outputs"])
            return tuple(o.detach() if isinstance(o, mg.Tensor) else o for o in outputs) \
                if isinstance(outputs, tuple) else outputs.detach()

        @staticmethod
        def backward(ctx, *grads):
            remote = ctx.remote
            if mg.is_grad_enabled():  # create_graph: the call's backward recorded there
                return (None,) * 6 + tuple(_gradients_there(remote, ctx.graph, ctx.args[6:],
                                                            grads, ctx.names))
            shares_rng = getattr(ctx, "shares_rng", False)
            reply = remote.ask("module_backward", graph=ctx.graph,
                               grads=remote.send(tuple(grads)),
                               anomaly=mg.is_anomaly_enabled(),
                               rng=wire.encode(mg.get_rng_state()) if shares_rng else None)
            if shares_rng:
                mg.set_rng_state(wire.decode(reply["rng"]))
            inputs = remote.value(reply["inputs"])
            parameters = remote.value(reply["parameters"])
            grads_in = [mg.tensor(g) if isinstance(g, np.ndarray) else g for g in inputs]
            grads_p = [mg.tensor(parameters[n]) if isinstance(parameters.get(n), np.ndarray)
                       else None for n in ctx.names]
            return (None, None, None, None, None, None, *grads_in[:ctx.count], *grads_p)

    return GraphCall


def _student_graph():
    import minigrad as mg

    class StudentGraph(mg.autograd.Function):
        """A graph kept in the student's process (a result computed with the check's
        Tensors, or gradients taken there) as one op of the judge's graph: its inputs are
        the judge's Tensors that its leaves there stand for, its outputs the values
        computed there; backward asks there for the gradients (``_gradients_there``),
        recorded under create_graph, and then again one StudentGraph."""

        @staticmethod
        def forward(ctx, kept, *tensors):
            return kept.outputs(ctx)

        @staticmethod
        def backward(ctx, *grads):
            kept = ctx.kept
            return (None, *_gradients_there(kept.channel, kept.graph, ctx.args[1:], grads))

    return StudentGraph


def _gradients_there(remote: Remote, graph: int, inputs: tuple, grads: tuple,
                     names=()) -> list:
    """The gradients of a graph kept in the student's process with respect to its leaves,
    which ``inputs`` stand for here (a call's Tensors, then a module's parameters
    ``names``), for ``grads`` of its outputs; taken there with ``mg.autograd.grad``, the
    graph kept for another pass. In a recorded backward (create_graph: grad mode on)
    they are recorded there too, and come back as the outputs of one op here
    (``StudentGraph``) whose inputs are ``inputs`` and ``grads``: differentiable again,
    there. The judge's engine routes them (into the check's ``.grad``, or to its
    ``grad()``); what the student's side says is only numbers."""
    import minigrad as mg

    create_graph = mg.is_grad_enabled()
    if create_graph and any(t is None for t in inputs):
        raise RuntimeError("backward through a call of the student's code a second time, "
                           "after its graph was freed: call the first backward with "
                           "retain_graph=True")
    reply = remote.ask("graph_grad", graph=graph, grads=remote.send(list(grads)),
                       create_graph=create_graph, names=list(names),
                       anomaly=mg.is_anomaly_enabled())
    values = remote.value(reply["grads"])
    if not (isinstance(values, list) and len(values) == len(inputs)
            and all(v is None or isinstance(v, np.ndarray) for v in values)):
        raise wire.WireError("gradients that are not one array (or None) per input")
    if not create_graph:
        return [None if v is None else mg.tensor(v) for v in values]
    present = [i for i, v in enumerate(values) if v is not None]
    history = reply.get("history")
    if not (isinstance(history, list) and len(history) == len(present)):
        raise wire.WireError("recorded gradients without their history")
    return recorded_gradients(remote, StudentGraph, int(reply.get("graph") or 0), values,
                              history, (*inputs, *grads))


def _handles_in(value) -> list:
    if isinstance(value, (list, tuple)):
        return [h for v in value for h in _handles_in(v)]
    if isinstance(value, dict):
        return [h for v in value.values() for h in _handles_in(v)]
    return [value] if isinstance(value, wire.Handle) else []


def autograd_function_class(remote: Remote, handle: wire.Handle):
    """An ``mg.autograd.Function`` of the student's (Tensors in and out: chapter 14's
    checkpoint): ``apply`` runs the student's own ``apply`` there as one op of the
    judge's graph (``GraphCall``), so forward, backward and the graph between them stay
    in the student's process. A function of the check's among the arguments (the block
    a checkpoint runs) is lent: the student's code calls it back here (``callback``),
    where the check sees each call and the block's parameters get their gradients."""
    import minigrad as mg

    target = wire.encode(handle)
    asked = []  # the student's apply, asked for once (gradgradcheck calls it ~150 times)

    def apply(cls, *args, **kwargs):
        if not asked:
            reply = remote.ask("getattr", target=target, name="apply")
            asked.append(remote.value(reply["value"]))
        function = asked[0]
        if not isinstance(function, RemoteFunction):
            raise TypeError(f"{handle.name}.apply is not a function")
        flat = [a for a in args if isinstance(a, mg.Tensor)]
        return GraphCall.apply(function, None, (), args, kwargs, mg.is_grad_enabled(), *flat)

    return type(handle.name, (mg.autograd.Function,), {
        "apply": classmethod(apply), "_student_handle": handle,
        "__swap_globals__": staticmethod(lambda paths: _swapped(remote, handle, paths)),
        "__doc__": f"{handle.name}: the student's Function, run in the student's process",
        "__module__": "__main__"})


def _as_here(tensor, requires_grad: bool):
    """A Tensor for the student's process, requiring grad there as it does here (forward
    gets it without history): the student's code may ask (a Hessian-vector product's
    ``v`` does not require grad), and backward hands back a gradient where one is
    needed."""
    import minigrad as mg

    data = tensor.detach().numpy()
    return mg.tensor(data, requires_grad=bool(requires_grad) and data.dtype.kind in "fc")


GraphCall = StudentGraph = None  # made on first use (minigrad is imported lazily)


# --- the namespace the test cells run in ---------------------------------------------------


class JudgeNamespace(dict):
    """The teacher's names, and for any other name what the student's process defined."""

    def __init__(self, remote: Remote):
        super().__init__()
        self.remote = remote
        self["__name__"] = "__main__"
        self["__builtins__"] = builtins

    def __missing__(self, name: str):
        if hasattr(builtins, name) or name.startswith("__") or not isinstance(name, str):
            raise KeyError(name)
        reply = self.remote.ask("get", name=name)
        if reply.get("missing"):
            raise KeyError(name)
        return self.remote.value(reply["value"])

    def __contains__(self, name) -> bool:  # ``"grad_w" in globals()`` in a test cell
        if dict.__contains__(self, name):
            return True
        try:
            self.__missing__(name)
        except KeyError:
            return False
        return True

    def get(self, name, default=None):
        return self[name] if name in self else default


def _bound_names(tree: ast.AST) -> set[str]:
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
    return names


def _loaded_names(tree: ast.AST) -> set[str]:
    """The names a cell reads that it does not bind itself (arguments included)."""
    arguments = {a.arg for a in ast.walk(tree) if isinstance(a, ast.arg)}
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)
            and isinstance(n.ctx, ast.Load)} - arguments - _bound_names(tree)


def _parse(source: str) -> ast.AST:
    try:
        return ast.parse(integrity.python_code(source))
    except SyntaxError:
        return ast.Module(body=[], type_ignores=[])


def teacher_cells_needed(cells: list[dict]) -> set[int]:
    """Indices of the teacher's cells (neither answers nor tests) that define what the
    test cells use, and what those use in turn, leaving out cells that use an answer's
    names (their values come from the student's process): the judge runs these itself,
    from the teacher's copy of the notebook."""
    roles = [exercise_role(c) if c["cell_type"] == "code" else None for c in cells]
    trees = [_parse(_text(c)) if c["cell_type"] == "code" else None for c in cells]
    answers = set()
    for role, tree in zip(roles, trees):
        if role and role.get("solution") and tree is not None:
            answers |= set(integrity.top_level(tree))
    needed: set[int] = set()
    wanted: set[str] = set()
    for index in range(len(cells) - 1, -1, -1):
        role, tree = roles[index], trees[index]
        if tree is None:
            continue
        if role and role.get("grade") and not role.get("solution"):
            wanted |= _loaded_names(tree)
        elif not (role and role.get("solution")):
            uses = _loaded_names(tree)
            if _bound_names(tree) & wanted and not uses & answers:
                needed.add(index)
                wanted |= uses
    return needed


def _called(source: str) -> set[str]:
    tree = _parse(source)
    return {_name_of(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}


def _name_of(node: ast.AST) -> str:
    return node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", "")


def _text(cell: dict) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else source


def is_test(cell: dict) -> bool:
    role = exercise_role(cell) if cell.get("cell_type") == "code" else None
    return bool(role and role.get("grade") and not role.get("solution"))


def owners(cells: list[dict]) -> dict[str, str]:
    """``{grade_id: exercise}`` of each solution cell (itself) and each test cell."""
    found = {meta["grade_id"]: meta["grade_id"] for _, meta in exercise_cells(
        {"cells": cells}) if meta.get("solution")}
    return {**found, **exercise_of_tests({"cells": cells})}


def run_in_judge(source: str, namespace: JudgeNamespace, label: str) -> list[dict]:
    """Run a teacher's cell here; its printed text and error as notebook outputs."""
    stdout, stderr = io.StringIO(), io.StringIO()
    outputs = []
    try:
        code = compile(integrity.python_code(source), f"<{label}>", "exec")
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            exec(code, namespace)
        error = None
    except BaseException as caught:  # noqa: BLE001 - a failing check is an error output
        error = caught
        if os.environ.get("MINIGRAD_JUDGE_DEBUG"):
            traceback.print_exc()
    if stdout.getvalue():
        outputs.append({"output_type": "stream", "name": "stdout", "text": stdout.getvalue()})
    if stderr.getvalue():
        outputs.append({"output_type": "stream", "name": "stderr", "text": stderr.getvalue()})
    if error is not None:
        if isinstance(error, StudentProcessGone):
            name = "CellTimeoutError" if "within" in str(error) else "StudentProcessGone"
        else:
            name = type(error).__name__
        outputs.append({"output_type": "error", "ename": name, "evalue": str(error),
                        "traceback": _traceback(error, label)})
    return outputs


def _traceback(error: BaseException, label: str) -> list[str]:
    """The lines of a check's traceback that concern the cell, not the grader's files."""
    lines = []
    for frame in traceback.extract_tb(error.__traceback__):
        if frame.filename == f"<{label}>":
            lines.append(f"  line {frame.lineno} of the test cell")
    return lines + [f"{type(error).__name__}: {error}"]


# --- one notebook ---------------------------------------------------------------------------


def judge(submission: dict, source: dict, data_folder: Path | None, timeout: float,
          sandboxed: bool = True, hide: tuple[Path, ...] = ()) -> dict:
    """The submission with each cell's outputs, and the flags found; see the module's
    docstring for what runs where."""
    cells = merged_cells(submission, source)
    exercise_of = owners(cells)
    teachers = source["cells"]
    flags = integrity.inspect(cells, exercise_of, teachers)
    zeroed = {f["exercise"]: f for f in flags if f.get("zero")}
    results: list[list[dict] | None] = [None] * len(cells)
    needed = sorted(teacher_cells_needed(teachers))
    position = {exercise_role(c)["grade_id"]: i for i, c in enumerate(teachers)
                if c["cell_type"] == "code" and exercise_role(c)}
    last = last_exercise_cell(cells)
    skipped = False
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="minigrad-grading-") as folder:
        workdir = Path(folder)
        if data_folder is not None and data_folder.is_dir():
            for entry in data_folder.iterdir():
                if entry.suffix != ".ipynb":
                    copy = shutil.copytree if entry.is_dir() else shutil.copy2
                    copy(entry, workdir / entry.name)
        student = StudentProcess(workdir, sandboxed, list(hide), timeout)
        remote = Remote(student, timeout + 15,  # the student's side interrupts at timeout
                        workdir, sandboxed)
        namespace = JudgeNamespace(remote)
        try:
            for index, cell in enumerate(cells):
                if cell["cell_type"] != "code" or not _text(cell).strip():
                    continue
                if index > last:  # after the last answer and check: cannot change a grade
                    results[index] = [] if skipped else [NOT_RUN]
                    skipped = True
                    continue
                if not is_test(cell):
                    results[index] = run_student_cell(student, _text(cell), timeout)
                    continue
                label = exercise_role(cell)["grade_id"]
                while needed and needed[0] < position.get(label, -1):
                    teacher = needed.pop(0)  # the teacher's cells before this test
                    run_in_judge(_text(teachers[teacher]), namespace, f"cell {teacher}")
                exercise = exercise_of.get(label)
                called = _called(_text(cell))
                if exercise in zeroed:
                    note = zeroed[exercise]["note"]
                    results[index] = [{"output_type": "error", "ename": "NotYourWork",
                                       "evalue": note, "traceback": [f"NotYourWork: {note}"]}]
                elif called & HAND_OVER:
                    with remote.mirroring():
                        results[index] = run_in_judge(_text(cell), namespace, label)
                else:
                    remote.arithmetic = bool(called & ARITHMETIC)
                    try:
                        results[index] = run_in_judge(_text(cell), namespace, label)
                    finally:
                        remote.arithmetic = False
                share_data(_text(cell), namespace, remote)
        finally:
            student.stop()
    for cell, outputs in zip(cells, results):
        if cell["cell_type"] == "code":
            cell["outputs"] = outputs or []
            cell["execution_count"] = None
    notebook = dict(submission, cells=cells)
    return {"notebook": notebook, "flags": flags, "sandboxed": sandboxed,
            "seconds": round(time.monotonic() - started, 2)}


NOT_RUN = {"output_type": "stream", "name": "stdout",
           "text": "(Not run while grading: this cell and the ones after it come after the "
                   "last check, so they cannot change a grade. Run them in your own "
                   "notebook.)\n"}


def share_data(source: str, namespace: JudgeNamespace, remote: Remote) -> None:
    """The data a test cell's visible part defined (``with_ties = np.array(...)``),
    given to the student's process too: in a kernel, later cells of the chapter may use
    it. Nothing its hidden tests bind crosses (a later answer cell could print it)."""
    hidden = re.findall(r"### BEGIN HIDDEN TESTS(.*?)(?:### END HIDDEN TESTS|$)", source,
                        flags=re.S)
    visible = re.sub(r"### BEGIN HIDDEN TESTS.*?(### END HIDDEN TESTS|$)", "", source,
                     flags=re.S)
    secret = set().union(*(_bound_names(_parse(part)) for part in hidden))
    shared = {}
    for name in sorted(_bound_names(_parse(visible)) - secret):
        if dict.__contains__(namespace, name) and not name.startswith("_"):
            try:
                shared[name] = remote.send(namespace[name])
            except wire.WireError:
                continue  # not data (a function, a model): stays with the checks
    if shared:
        with contextlib.suppress(Exception):
            remote.ask("set_globals", values=shared)


def run_student_cell(student: StudentProcess, source: str, timeout: float) -> list[dict]:
    try:
        return student.ask("run_cell", timeout + 15, source=source,
                           timeout=float(timeout))["outputs"]
    except StudentProcessGone as gone:
        name = "CellTimeoutError" if "within" in str(gone) else "StudentProcessGone"
        return [{"output_type": "error", "ename": name, "evalue": str(gone),
                 "traceback": [f"{name}: {gone}"]}]


def merged_cells(submission: dict, source: dict) -> list[dict]:
    """The submission's cells, each locked or test cell replaced by the teacher's copy
    (hidden tests included), matched by grade_id, as nbgrader's autograde does."""
    teacher = {exercise_role(c)["grade_id"]: c for c in source["cells"]
               if exercise_role(c) and (exercise_role(c).get("locked")
                                        or exercise_role(c).get("grade"))
               and not exercise_role(c).get("solution")}
    merged = []
    for cell in submission["cells"]:
        role = exercise_role(cell)
        if role and role["grade_id"] in teacher:
            cell = teacher[role["grade_id"]]
        merged.append(json.loads(json.dumps(cell)))
    return merged


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m minigrad.course.judge")
    parser.add_argument("submission")
    parser.add_argument("source")
    parser.add_argument("result")
    parser.add_argument("--data", help="folder of files the chapter reads")
    parser.add_argument("--timeout", type=float, default=60)
    parser.add_argument("--unsandboxed", action="store_true")
    parser.add_argument("--hide", action="append", default=[])
    args = parser.parse_args(argv)
    submission = json.loads(Path(args.submission).read_text(encoding="utf-8"))
    source = json.loads(Path(args.source).read_text(encoding="utf-8"))
    result = judge(submission, source, Path(args.data) if args.data else None, args.timeout,
                   sandboxed=not args.unsandboxed, hide=tuple(Path(h) for h in args.hide))
    Path(args.result).write_text(json.dumps(result), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
