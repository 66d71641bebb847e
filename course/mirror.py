"""The judge's objects handed to the student's code, and what that code does to them.

Some checks hand the student's code objects of their own: a model and its optimizer for a
training step, parameters whose gradients a clipping function scales, a leaf and the
array to accumulate into its ``.grad``, a graph for a topological order. Those objects
cross to the student's process *pickled*, in one direction only: the student's side may
unpickle what the judge made (it is the judge's own data), the judge never unpickles
anything the student's side sends (``wire.py``).

Every object in such a pickle gets a number, the same on both sides (its place in the
pickle's memo plus a base the judge picks), so the same object handed over twice is the
same copy there, and a value that comes back as "number 17" is the judge's own object 17:
a list of graph nodes in some order names the judge's nodes. After each call the student's
side sends back, as data, what its code changed in the copies (an array's values, a
Tensor's array, ``.grad`` and ``requires_grad``, a module's ``training``), and the judge
writes it into its objects, so the check reads them as it would in one process. Before
each call the judge sends what the check changed since, the same way.

Everything that comes back is data the check examines; none of it is code, and the
check's own objects (its records of what happened, its reference results) stay here.
"""

from __future__ import annotations

import base64
import collections
import io
import json
import pickle
import types
import weakref

import numpy as np

from . import wire

CONTAINERS = (list, dict, collections.OrderedDict, collections.defaultdict)
UNTRACKED = (str, bytes, bytearray, int, float, complex, bool, tuple, frozenset, type,
             types.FunctionType, types.BuiltinFunctionType, types.MethodType,
             types.ModuleType, type(None))


def tracked(obj) -> bool:
    """Whether an object of a pickle gets a number (what has an identity worth keeping)."""
    return not isinstance(obj, UNTRACKED)


def _has_attributes(obj) -> bool:
    """An object whose attributes are kept in step (not a Tensor or an array, which are
    kept in step by their own rules)."""
    import minigrad as mg

    return (isinstance(getattr(obj, "__dict__", None), dict)
            and not isinstance(obj, (mg.Tensor, np.ndarray, type)))


def _dead_reference():
    """A weak reference whose object is gone (what a weak reference to nothing becomes)."""
    class Gone:
        pass
    return weakref.ref(Gone())


def weak_reference_to(obj):
    """Unpickles a weak reference as one to ``obj`` (graph nodes keep their outputs by
    weak reference; the copy's outputs are the copies of the judge's)."""
    return weakref.ref(obj) if obj is not None else _dead_reference()


class Mirrors:
    """The objects with a number on this side, and what the other side last saw of them."""

    def __init__(self, first_new: int):
        self.objects: dict[int, object] = {}
        self.numbers: dict[int, int] = {}  # id(object) -> number
        self.seen: dict[int, object] = {}  # number -> the state the other side has
        self.next_new = first_new  # numbers for objects made on this side (judge > 0)
        self.step = 1 if first_new > 0 else -1

    def __len__(self) -> int:
        return len(self.objects)

    def register(self, number: int, obj) -> None:
        self.objects[number] = obj
        self.numbers[id(obj)] = number
        self.seen[number] = self._state(obj)

    def number_of(self, obj) -> int | None:
        number = self.numbers.get(id(obj))
        if number is not None and self.objects.get(number) is obj:
            return number
        return None

    def resolve(self, number: int):
        if number not in self.objects:
            raise wire.WireError(f"no object numbered {number}")
        return self.objects[number]

    # --- states -------------------------------------------------------------------------

    @staticmethod
    def _state(obj):
        import minigrad as mg

        if isinstance(obj, np.ndarray):
            return np.array(obj, copy=True)
        if isinstance(obj, mg.Tensor):
            return (obj._data, obj.grad, bool(obj._requires_grad))
        return None

    def settle(self, numbers: list[int]) -> None:
        """What the other side has of the lists and dicts just numbered (both sides hold
        the same contents once a pickle has crossed)."""
        for number in numbers:
            obj = self.objects[number]
            if type(obj) in CONTAINERS:
                try:
                    self.seen[number] = json.dumps(self._contents(obj, False))
                except wire.WireError:
                    self.seen[number] = None
            elif _has_attributes(obj):
                self.seen[number] = json.dumps(self._attributes(obj, False))

    def _attributes(self, obj, new: bool) -> dict:
        """An object's attributes that can cross (the others are left out)."""
        found = {}
        for key, value in list(vars(obj).items()):
            try:
                found[key] = self._attempt(self._contents, value, new)
            except wire.WireError:
                continue
        return found

    def _contents(self, value, new: bool):
        """A list's or dict's contents: data as data, arrays, Tensors and numbered
        objects by reference (``new``: arrays and Tensors not numbered yet get a number;
        else only references to known objects)."""
        import minigrad as mg

        if type(value) in (list, tuple):
            return {"l" if type(value) is list else "u":
                    [self._contents(v, new) for v in value]}
        if isinstance(value, dict) and type(value) in CONTAINERS:
            return {"k": [self._contents(k, new) for k in value],
                    "v": [self._contents(v, new) for v in value.values()]}
        if value is None or isinstance(value, (bool, int, float, str, np.generic)):
            return {"d": wire.encode(value)}
        if self.number_of(value) is not None:
            return {"r": {"m": self.number_of(value)}}
        if new and isinstance(value, (np.ndarray, mg.Tensor)):
            return {"r": self._ref(value)}
        raise wire.WireError(f"{type(value).__name__} cannot cross to the other process")

    def _read_contents(self, data):
        if not isinstance(data, dict):
            raise wire.WireError("bad contents on the wire")
        if "l" in data:
            return [self._read_contents(v) for v in data["l"]]
        if "u" in data:
            return tuple(self._read_contents(v) for v in data["u"])
        if "k" in data:
            return {self._read_contents(k): self._read_contents(v)
                    for k, v in zip(data["k"], data["v"])}
        if "d" in data:
            return wire.decode(data["d"])
        if "r" in data:
            return self._resolve_ref(data["r"])
        raise wire.WireError("bad contents on the wire")

    def _ref(self, obj):
        """How the other side finds ``obj``: its number, or (made since) a new number
        with its value."""
        import minigrad as mg

        if obj is None:
            return None
        number = self.number_of(obj)
        if number is not None:
            return {"m": number}
        number = self.next_new
        self.next_new += self.step
        if isinstance(obj, np.ndarray):
            self.register(number, obj)
            return {"a": number, "v": wire.encode(np.asarray(obj))}
        if isinstance(obj, mg.Tensor):
            self.register(number, obj)
            return {"t": number, "data": self._ref(obj._data),
                    "rg": bool(obj._requires_grad)}
        raise wire.WireError(f"{type(obj).__name__} cannot cross to the other process")

    def changes(self) -> dict:
        """What changed in the numbered objects since the other side last saw them: a list
        of entries applied in order (an object made since is sent, with a new number, at
        its first mention, and named by that number after)."""
        import minigrad as mg

        entries = []
        for number, obj in list(self.objects.items()):
            seen = self.seen.get(number)
            if isinstance(obj, np.ndarray):
                if seen is None or seen.shape != obj.shape or seen.dtype != obj.dtype \
                        or not np.array_equal(seen, obj, equal_nan=obj.dtype.kind in "fc"):
                    entries.append(["array", number, wire.encode(np.asarray(obj))])
                    self.seen[number] = np.array(obj, copy=True)
            elif isinstance(obj, mg.Tensor):
                grad = obj.grad
                if seen is None or seen[0] is not obj._data or seen[1] is not grad \
                        or seen[2] != bool(obj._requires_grad):
                    entries.append(["tensor", number, {
                        "data": self._ref(obj._data), "grad": self._ref(grad),
                        "rg": bool(obj._requires_grad)}])
                    self.seen[number] = self._state(obj)
            elif type(obj) in CONTAINERS:
                try:  # (an optimizer's state, a check's record of calls)
                    data = self._attempt(self._contents, obj, True)
                except wire.WireError:
                    continue  # holds something that is not data: left as it is
                text = json.dumps(data)
                if text != seen:
                    entries.append(["contents", number, data])
                    self.seen[number] = text
            elif _has_attributes(obj):  # (an optimizer's state, replaced on loading)
                data = self._attributes(obj, True)
                text = json.dumps(data)
                if text != seen:
                    entries.append(["attributes", number, data])
                    self.seen[number] = text
        return {"entries": entries, "modes": modes()}

    def _attempt(self, encode, value, new: bool):
        """``encode(value, new)``, forgetting the numbers it gave if it fails (the other
        side would never hear of them)."""
        first = self.next_new
        try:
            return encode(value, new)
        except wire.WireError:
            for number in range(first, self.next_new, self.step):
                obj = self.objects.pop(number, None)
                self.seen.pop(number, None)
                if obj is not None:
                    self.numbers.pop(id(obj), None)
            self.next_new = first
            raise

    def _apply_array(self, number: int, obj, data) -> None:
        new = wire.decode(data)
        if not (isinstance(obj, np.ndarray) and isinstance(new, np.ndarray)):
            raise wire.WireError("an array change for what is not an array")
        if obj.shape == new.shape:
            writeable = obj.flags.writeable
            try:
                obj.flags.writeable = True
                np.copyto(obj, new, casting="unsafe")
            except ValueError:
                pass  # a view of a read-only array: its values stay as they were
            finally:
                if obj.flags.writeable != writeable:
                    obj.flags.writeable = writeable
        self.seen[number] = np.array(obj, copy=True)

    def _apply_tensor(self, number: int, obj, state) -> None:
        import minigrad as mg

        if not isinstance(obj, mg.Tensor) or not isinstance(state, dict):
            raise wire.WireError("a Tensor change for what is not a Tensor")
        data = self._resolve_ref(state.get("data"))
        grad = self._resolve_ref(state.get("grad"))
        if isinstance(data, np.ndarray):
            obj._data = data
        if grad is None or isinstance(grad, mg.Tensor):
            obj.grad = grad
        obj._requires_grad = bool(state.get("rg"))
        self.seen[number] = self._state(obj)

    def _apply_contents(self, number: int, obj, data) -> None:
        contents = self._read_contents(data)
        if type(obj) is list and isinstance(contents, list):
            obj[:] = contents
        elif isinstance(obj, dict) and isinstance(contents, dict):
            obj.clear()
            obj.update(contents)
        else:
            raise wire.WireError("a list or dict change for what is not one")
        self.seen[number] = json.dumps(self._contents(obj, False))

    def _apply_attributes(self, number: int, obj, data) -> None:
        if not (_has_attributes(obj) and isinstance(data, dict)):
            raise wire.WireError("an attribute change for what has none")
        for name, value in data.items():
            vars(obj)[str(name)] = self._read_contents(value)
        self.seen[number] = json.dumps(self._attributes(obj, False))

    def _resolve_ref(self, ref):
        import minigrad as mg

        if ref is None:
            return None
        if not isinstance(ref, dict):
            raise wire.WireError("a bad reference on the wire")
        if "m" in ref:
            return self.resolve(int(ref["m"]))
        if "a" in ref:
            array = wire.decode(ref["v"])
            if not isinstance(array, np.ndarray):
                raise wire.WireError("an array reference without an array")
            self.register(int(ref["a"]), array)
            return array
        if "t" in ref:
            data = self._resolve_ref(ref["data"])
            if not isinstance(data, np.ndarray):
                raise wire.WireError("a Tensor reference without an array")
            tensor = mg.Tensor._make(data, requires_grad=bool(ref["rg"]))
            self.register(int(ref["t"]), tensor)
            return tensor
        raise wire.WireError("a bad reference on the wire")

    def apply(self, changes: dict) -> None:
        """Write what the other side changed into this side's objects."""

        if not isinstance(changes, dict):
            raise wire.WireError("bad changes on the wire")
        for entry in changes.get("entries", []):
            if not (isinstance(entry, list) and len(entry) == 3):
                raise wire.WireError("a bad change on the wire")
            kind, number, data = entry
            obj = self.resolve(int(number))
            {"array": self._apply_array, "tensor": self._apply_tensor,
             "contents": self._apply_contents, "attributes": self._apply_attributes}.get(
                kind, _bad_change)(int(number), obj, data)
        if "modes" in changes:
            set_modes(changes["modes"])


def _bad_change(number, obj, data):
    raise wire.WireError("a change of an unknown kind on the wire")


def modes() -> dict:
    """The process-wide state a check sets and the student's code may change: recording
    (grad mode), lazy mode and the random generator's state."""
    import minigrad as mg

    return {"grad": bool(mg.is_grad_enabled()), "lazy": bool(mg.is_lazy()),
            "rng": wire.encode(mg.get_rng_state())}


def set_modes(data) -> None:
    import minigrad as mg

    if not isinstance(data, dict):
        raise wire.WireError("bad modes on the wire")
    mg.set_grad_enabled(bool(data.get("grad", True)))
    mg.set_mode("lazy" if data.get("lazy") else "eager")
    rng = wire.decode(data.get("rng"))
    if isinstance(rng, dict) and rng != mg.get_rng_state():
        try:
            mg.set_rng_state(rng)
        except Exception as error:  # noqa: BLE001 - not a generator's state
            raise wire.WireError(f"a random generator state that is not one: {error}") \
                from None


# --- the judge's side: pickling what a check hands over ----------------------------------


class _JudgePickler(pickle._Pickler):
    def __init__(self, file, mirrors: Mirrors, handle_of, paths: tuple[str, str] | None):
        super().__init__(file, protocol=4)
        self.mirrors, self.handle_of, self.paths = mirrors, handle_of, paths

    def persistent_id(self, obj):
        if type(obj) is str:
            if self.paths and obj.startswith(self.paths[0]):  # a file in the shared folder
                return ("p", self.paths[1] + obj[len(self.paths[0]):])
            return None
        handle = self.handle_of(obj)
        if handle is not None:
            return ("h", handle)
        if tracked(obj):
            number = self.mirrors.number_of(obj)
            if number is not None:
                return ("m", number)
        return None

    def reducer_override(self, obj):
        if isinstance(obj, weakref.ref) and not isinstance(obj, weakref.WeakMethod):
            return (weak_reference_to, (obj(),))
        return NotImplemented


def pickled(value, mirrors: Mirrors, base: int, handle_of,
            paths: tuple[str, str] | None = None) -> dict:
    """``value`` pickled for the student's process, its objects numbered from ``base``;
    ``paths``: (a folder here, the same folder as the student's process sees it)."""
    buffer = io.BytesIO()
    pickler = _JudgePickler(buffer, mirrors, handle_of, paths)
    pickler.dump(value)
    numbered = []
    for index, obj in sorted(pickler.memo.values(), key=lambda pair: pair[0]):
        if tracked(obj) and mirrors.number_of(obj) is None:
            mirrors.register(base + index, obj)
            numbered.append([index, type(obj).__name__])
    mirrors.settle([base + index for index, _ in numbered])
    return {"b64": base64.b64encode(buffer.getvalue()).decode("ascii"), "base": base,
            "numbered": numbered}


# --- the student's side ---------------------------------------------------------------------


class _StudentUnpickler(pickle._Unpickler):
    def __init__(self, file, mirrors: Mirrors, resolve_handle):
        super().__init__(file)
        self.mirrors, self.resolve_handle = mirrors, resolve_handle

    def persistent_load(self, pid):
        kind, number = pid
        if kind == "h":
            return self.resolve_handle(number)
        if kind == "p":
            return str(number)
        return self.mirrors.resolve(number)


def unpickled(payload: dict, mirrors: Mirrors, resolve_handle):
    """The judge's value, its objects numbered as the judge numbered them."""
    unpickler = _StudentUnpickler(io.BytesIO(base64.b64decode(payload["b64"])), mirrors,
                                  resolve_handle)
    value = unpickler.load()
    base = int(payload["base"])
    numbers = []
    for index, name in payload["numbered"]:
        obj = unpickler.memo.get(int(index))
        if obj is not None and type(obj).__name__ == name:
            mirrors.register(base + int(index), obj)
            numbers.append(base + int(index))
    mirrors.settle(numbers)
    return value
