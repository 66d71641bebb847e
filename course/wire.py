"""What crosses between the judge and the student's process while grading: data only.

The student's code runs in a sandboxed process of its own (``student_process.py``); the
checks run in the judge (``judge.py``), which calls the student's objects across the
boundary. Only values travel, as JSON: numbers, strings, lists, tuples, dicts, slices,
NumPy arrays of numeric dtypes (their bytes in base64) and Tensors (an array and
``requires_grad``). Anything else stays where it was made and travels as a *handle*, a
number the other side can name it by. Nothing is unpickled, so no bytes from a student's
process can become code in the judge.

A message is one line of JSON on a pipe; ``send`` and ``receive`` frame it.
"""

from __future__ import annotations

import base64
import json
import math

import numpy as np

# the dtypes an array may have on the wire (object arrays would carry code)
DTYPES = {"bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "float32", "float64", "complex64", "complex128"}
LARGEST = 512 * 2**20  # bytes in one message: a student's answer is not a way to fill memory


class WireError(Exception):
    """A message that is not what the protocol allows (from a student's process: a bug in
    the answer or an attempt to speak for the grader; either way the check fails)."""


class Handle:
    """An object that stayed on the other side, named by ``id``; ``kind`` says what the
    judge may do with it (``function``, ``function-class``, ``module-class``, ``class``,
    ``object``) and ``name`` is for messages."""

    __slots__ = ("id", "kind", "name", "value")

    def __init__(self, id: int, kind: str, name: str, value=None):
        self.id, self.kind, self.name, self.value = id, kind, name, value

    def __repr__(self) -> str:
        return f"<{self.kind} {self.name} in the student's process>"


class TensorData:
    """A Tensor on the wire: its array and whether it requires grad (no history)."""

    __slots__ = ("array", "requires_grad")

    def __init__(self, array: np.ndarray, requires_grad: bool):
        self.array, self.requires_grad = array, requires_grad


def encode(value, handle_of=None, mirror_of=None):
    """``value`` as JSON-ready data; ``handle_of(obj)`` gives a :class:`Handle` for what
    is not data (without it such a value is an error); ``mirror_of(obj)`` the number of
    the judge's object that ``obj`` is the student's copy of, or None (see ``Mirror``)."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if mirror_of is not None and not isinstance(value, (int, float, complex)):
        number = mirror_of(value)
        if isinstance(number, tuple):  # numbered just now: its value goes with it
            return {"t": "mirror", "id": int(number[0]), "v": number[1]}
        if number is not None:
            return {"t": "mirror", "id": int(number)}
    if isinstance(value, int) and not isinstance(value, bool):
        return value if abs(value) < 2**53 else {"t": "int", "v": str(value)}
    if isinstance(value, float):
        return value if math.isfinite(value) else {"t": "float", "v": repr(value)}
    if isinstance(value, complex):
        return {"t": "complex", "v": [encode(value.real), encode(value.imag)]}
    if isinstance(value, np.generic) and value.dtype.name in DTYPES:
        return {"t": "scalar", "dtype": value.dtype.name, "v": encode(value.item())}
    if isinstance(value, np.ndarray) and value.dtype.name in DTYPES:
        array = np.require(value, requirements="C")  # (ascontiguousarray makes 0-d 1-d)
        return {"t": "array", "dtype": array.dtype.name, "shape": list(array.shape),
                "writeable": bool(value.flags.writeable),
                "b64": base64.b64encode(array.tobytes()).decode("ascii")}
    if isinstance(value, np.dtype) and value.name in DTYPES:
        return {"t": "dtype", "v": value.name}
    if isinstance(value, type) and issubclass(value, np.generic) \
            and np.dtype(value).name in DTYPES:
        return {"t": "dtype-type", "v": np.dtype(value).name}
    if isinstance(value, type) and value in (float, int, bool, complex):
        return {"t": "builtin-type", "v": value.__name__}
    if isinstance(value, TensorData):
        return {"t": "tensor", "array": encode(value.array),
                "requires_grad": bool(value.requires_grad)}
    if isinstance(value, Handle):
        return {"t": "handle", "id": value.id, "kind": value.kind, "name": value.name}
    if isinstance(value, (list, tuple)) and type(value) in (list, tuple):
        return {"t": type(value).__name__,
                "v": [encode(v, handle_of, mirror_of) for v in value]}
    if isinstance(value, dict) and type(value) is dict:
        return {"t": "dict", "k": [encode(k, handle_of, mirror_of) for k in value],
                "v": [encode(v, handle_of, mirror_of) for v in value.values()]}
    if isinstance(value, slice):
        return {"t": "slice", "v": [encode(value.start), encode(value.stop),
                                    encode(value.step)]}
    if value is Ellipsis:
        return {"t": "ellipsis"}
    if handle_of is not None:
        return encode(handle_of(value), mirror_of=mirror_of)
    raise WireError(f"{type(value).__name__} cannot cross to the other process")


def decode(data, resolve=None):
    """The value ``data`` stands for; ``resolve(handle)`` turns a handle into an object
    (without it a handle decodes as a :class:`Handle`)."""
    if data is None or isinstance(data, (bool, str, int, float)):
        return data
    if isinstance(data, list):
        raise WireError("a bare list on the wire")
    if not isinstance(data, dict):
        raise WireError(f"unexpected {type(data).__name__} on the wire")
    kind = data.get("t")
    if kind == "int":
        return int(data["v"])
    if kind == "float":
        if data["v"] not in ("nan", "inf", "-inf"):
            raise WireError(f"bad float {data['v']!r}")
        return float(data["v"])
    if kind == "complex":
        return complex(decode(data["v"][0]), decode(data["v"][1]))
    if kind == "scalar":
        return np.dtype(_dtype(data["dtype"])).type(decode(data["v"]))
    if kind == "array":
        dtype = np.dtype(_dtype(data["dtype"]))
        shape = tuple(int(n) for n in data["shape"])
        raw = base64.b64decode(data["b64"], validate=True)
        if len(raw) != dtype.itemsize * math.prod(shape):
            raise WireError("an array's bytes do not match its shape")
        array = np.frombuffer(raw, dtype=dtype).reshape(shape).copy()
        array.flags.writeable = bool(data.get("writeable", True))
        return array
    if kind == "dtype":
        return np.dtype(_dtype(data["v"]))
    if kind == "dtype-type":
        return np.dtype(_dtype(data["v"])).type
    if kind == "builtin-type":
        return {"float": float, "int": int, "bool": bool, "complex": complex}[data["v"]]
    if kind == "tensor":
        return TensorData(decode(data["array"]), bool(data["requires_grad"]))
    if kind == "handle":
        handle = Handle(int(data["id"]), str(data["kind"]), str(data["name"]))
        return resolve(handle) if resolve is not None else handle
    if kind == "mirror":
        if "v" in data:  # an array the other side numbered just now, with its values
            value = decode(data["v"])
            if not isinstance(value, np.ndarray):
                raise WireError("a new numbered object that is not an array")
            handle = Handle(int(data["id"]), "mirror-new", "", value)
        else:
            handle = Handle(int(data["id"]), "mirror", "")
        return resolve(handle) if resolve is not None else handle
    if kind in ("list", "tuple"):
        items = [decode(v, resolve) for v in data["v"]]
        return items if kind == "list" else tuple(items)
    if kind == "dict":
        return {_hashable(decode(k, resolve)): decode(v, resolve)
                for k, v in zip(data["k"], data["v"])}
    if kind == "slice":
        return slice(*(decode(v) for v in data["v"]))
    if kind == "ellipsis":
        return Ellipsis
    raise WireError(f"unknown kind {kind!r} on the wire")


def _dtype(name) -> str:
    if name not in DTYPES:
        raise WireError(f"dtype {name!r} may not cross")
    return name


def _hashable(key):
    try:
        hash(key)
    except TypeError:
        raise WireError("an unhashable dict key on the wire") from None
    return key


def map_values(value, function):
    """``value`` with ``function`` applied to each leaf of its lists, tuples and dicts
    (how Tensors become TensorData for the wire, and back)."""
    if isinstance(value, (list, tuple)):
        return type(value)(map_values(v, function) for v in value)
    if isinstance(value, dict):
        return {k: map_values(v, function) for k, v in value.items()}
    return function(value)


def send(stream, message: dict) -> None:
    stream.write(json.dumps(message, separators=(",", ":")).encode("utf-8") + b"\n")
    stream.flush()


def receive(stream) -> dict:
    line = stream.readline(LARGEST + 1)
    if not line:
        raise EOFError("the other process closed the channel")
    if len(line) > LARGEST:
        raise WireError("a message larger than the protocol allows")
    try:
        message = json.loads(line)
    except ValueError as error:
        raise WireError(f"a message that is not JSON ({error})") from None
    if not isinstance(message, dict):
        raise WireError("a message that is not a JSON object")
    return message
