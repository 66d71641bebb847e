"""``save`` and ``load``: state dicts (and other nested data) as ``.npz`` files.

No pickle: arrays are stored as arrays, and the structure around them (dicts, lists,
numbers, strings) as a JSON header. Loading never executes code from the file.
"""

from __future__ import annotations

import json
import os
from typing import Any

import numpy as np

from .tensor import Tensor

HEADER = "__minigrad__"


def save(obj: Any, path: str | os.PathLike) -> None:
    """Write ``obj`` (a dict of arrays/Tensors, possibly nested) to ``path`` exactly."""
    arrays: dict[str, np.ndarray] = {}

    def encode(value: Any) -> Any:
        if isinstance(value, Tensor):
            return {"tensor": store(value.numpy()), "requires_grad": value.requires_grad}
        if isinstance(value, (np.ndarray, np.generic)):
            return {"array": store(np.asarray(value))}
        if isinstance(value, dict):
            for key in value:
                if not isinstance(key, (str, int)):
                    raise TypeError(f"save: dict keys must be str or int, got {key!r}")
            return {"dict": [[k, encode(v)] for k, v in value.items()]}
        if isinstance(value, (list, tuple)):
            return {type(value).__name__: [encode(v) for v in value]}
        if value is None or isinstance(value, (bool, int, float, str)):
            return value
        raise TypeError(
            f"save: cannot store a {type(value).__name__}; minigrad saves dicts, lists, "
            "tuples, numbers, strings, None, NumPy arrays and Tensors (no pickle)"
        )

    def store(array: np.ndarray) -> str:
        if array.dtype.hasobject:
            raise TypeError("save: arrays of Python objects would need pickle; convert them")
        key = f"a{len(arrays)}"
        arrays[key] = array
        return key

    header = json.dumps(encode(obj))
    with open(path, "wb") as file:
        np.savez(file, **{HEADER: np.array(header)}, **arrays)


def load(path: str | os.PathLike) -> Any:
    """Read what ``save`` wrote. A plain ``.npz`` (``np.savez``) loads as a dict of arrays."""
    with np.load(path, allow_pickle=False) as archive:
        if HEADER not in archive.files:
            return {name: archive[name] for name in archive.files}
        structure = json.loads(str(archive[HEADER]))

        def decode(value: Any) -> Any:
            if not isinstance(value, dict):
                return value
            if "tensor" in value:
                return Tensor(archive[value["tensor"]], requires_grad=value["requires_grad"])
            if "array" in value:
                return archive[value["array"]]
            if "dict" in value:
                return {k: decode(v) for k, v in value["dict"]}
            if "list" in value:
                return [decode(v) for v in value["list"]]
            if "tuple" in value:
                return tuple(decode(v) for v in value["tuple"])
            raise ValueError(f"load: {path} has an entry this version cannot read: {value}")

        return decode(structure)
