"""``save`` and ``load``: state dicts (and other nested data) as ``.npz`` files.

No pickle: arrays are stored as arrays, and the structure around them (dicts, lists,
numbers, strings) as a JSON header. Loading never executes code from the file. PyTorch's
call forms work (``mg.save(obj, "model.pt")``, ``mg.load(path, weights_only=True,
map_location="cpu")``, a file object instead of a path); whatever the name, the file is
this ``.npz``.
"""

from __future__ import annotations

import json
import os
import zipfile
from collections import OrderedDict
from typing import Any

import numpy as np

from .device import check_device
from .tensor import Tensor

HEADER = "__minigrad__"

# A file is checked before anything is allocated: every member must be a NumPy array
# whose header fits what the archive holds, all of them together at most this many bytes
# once unpacked (a zip member can expand a thousandfold), and the structure at most this
# deep. Raise the limit for a file you trust: ``mg.serialization.MAX_LOAD_BYTES = ...``.
MAX_LOAD_BYTES = 2**30
MAX_DEPTH = 64

TORCH_SAVE = ("it was written by torch.save: a pickle, which minigrad never reads (a pickle "
              "can run any code it contains). In PyTorch, save the arrays instead: "
              "np.savez(path, **{k: v.numpy() for k, v in state_dict.items()}), or pass "
              "PyTorch's state dict to load_state_dict here directly")


def save(obj: Any, f: str | os.PathLike | Any, pickle_module: Any = None,
         pickle_protocol: int | None = None, _use_new_zipfile_serialization: bool = True) -> None:
    """Write ``obj`` (a dict of arrays/Tensors, possibly nested) to ``f`` (a path or a
    binary file object) exactly. ``pickle_module`` must be None: nothing is pickled."""
    if pickle_module is not None:
        raise ValueError("save: minigrad never pickles (a pickle can run code when it is "
                         "loaded); leave pickle_module out")
    arrays: dict[str, np.ndarray] = {}
    stored: dict[int, str] = {}  # id of a Tensor already stored -> its array's key

    def encode(value: Any) -> Any:
        if isinstance(value, Tensor):
            # one tensor saved under two names loads as one tensor again (PyTorch keeps
            # that identity too), and a Parameter as a Parameter
            if id(value) not in stored:
                stored[id(value)] = store(value.numpy())
            entry = {"tensor": stored[id(value)], "requires_grad": value.requires_grad}
            if type(value).__name__ == "Parameter":
                entry["parameter"] = True
            return entry
        if isinstance(value, (np.ndarray, np.generic)):
            return {"array": store(np.asarray(value))}
        if isinstance(value, dict):
            for key in value:
                if not isinstance(key, (str, int)):
                    raise TypeError(f"save: dict keys must be str or int, got {key!r}")
            kind = "odict" if isinstance(value, OrderedDict) else "dict"  # as it was
            return {kind: [[k, encode(v)] for k, v in value.items()]}
        if isinstance(value, (list, tuple)):
            return {type(value).__name__: [encode(v) for v in value]}
        if value is None or isinstance(value, (bool, int, float, str)):
            return value
        if hasattr(value, "state_dict"):  # mg.save(model): PyTorch would pickle the object
            kind = type(value).__name__
            raise TypeError(
                f"save: cannot store a {kind} object itself (that would need pickle, which "
                f"can run code when loaded); save its state: mg.save(x.state_dict(), path), "
                f"and later x.load_state_dict(mg.load(path)) on a new {kind}")
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
    if hasattr(f, "write"):
        np.savez(f, **{HEADER: np.array(header)}, **arrays)
        return
    with open(f, "wb") as file:
        np.savez(file, **{HEADER: np.array(header)}, **arrays)


def load(f: str | os.PathLike | Any, map_location: Any = None, pickle_module: Any = None, *,
         weights_only: bool = True, mmap: Any = None, **pickle_load_args: Any) -> Any:
    """Read what ``save`` wrote (from a path or a binary file object). A plain ``.npz``
    (``np.savez``) loads as a dict of arrays. Everything loads on the CPU, so
    ``map_location`` may only point there ("cpu", a device, a dict or a function)."""
    if not weights_only:
        raise ValueError(
            "load: weights_only=False would unpickle the file, which can run any code it "
            "contains; minigrad never does. Its files hold only arrays, numbers, strings, "
            "lists and dicts, which weights_only=True (the default) loads.")
    if pickle_module is not None or pickle_load_args:
        raise ValueError("load: minigrad never unpickles; leave out pickle_module and "
                         "pickle arguments")
    if isinstance(map_location, (str, int)) or hasattr(map_location, "type"):
        check_device(map_location, "load(map_location=...)")
    path = getattr(f, "name", f)
    _check_start(f, path)
    try:
        _check_members(f, path)
        archive = np.load(f, allow_pickle=False)
        with archive:
            return _read(archive, path)
    except (ValueError, TypeError, OSError, EOFError, KeyError, zipfile.BadZipFile) as error:
        if getattr(error, "minigrad", False) or isinstance(error, FileNotFoundError):
            raise
        raise not_a_checkpoint(path, _why(error)) from error


def _read(archive: Any, path: Any) -> Any:
    """The object saved in ``archive`` (an open ``.npz``)."""
    if HEADER not in archive.files:
        if not archive.files:
            raise not_a_checkpoint(path, "it is a zip archive, but not of NumPy arrays")
        return {name: archive[name] for name in archive.files}
    header = str(archive[HEADER])
    _check_depth(header, path)
    structure = json.loads(header)
    tensors: dict[str, Tensor] = {}  # array key -> the Tensor made of it (saved once)

    def decode(value: Any) -> Any:
        if not isinstance(value, dict):
            return value
        if "tensor" in value:
            key = value["tensor"]
            if key not in tensors:
                tensors[key] = _tensor(archive[key], value)
            return tensors[key]
        if "array" in value:
            return archive[value["array"]]
        if "dict" in value:
            return {k: decode(v) for k, v in value["dict"]}
        if "odict" in value:
            return OrderedDict((k, decode(v)) for k, v in value["odict"])
        if "list" in value:
            return [decode(v) for v in value["list"]]
        if "tuple" in value:
            return tuple(decode(v) for v in value["tuple"])
        raise ValueError(f"load: {path} has an entry this version cannot read: {value}")

    return decode(structure)


def _tensor(array: np.ndarray, entry: dict) -> Tensor:
    """A saved tensor: a Parameter if it was one, else a Tensor."""
    if entry.get("parameter"):
        from .nn.module import Parameter  # here: nn imports this module's package
        return Parameter(array, requires_grad=entry["requires_grad"])
    return Tensor(array, requires_grad=entry["requires_grad"])


def _check_members(f: Any, path: Any) -> None:
    """Before NumPy allocates anything: each member of the archive is a NumPy array
    (``.npy``) whose header promises no more data than the member holds, and all of
    them together stay under ``MAX_LOAD_BYTES`` once unpacked. Every error names the
    file and the member."""
    position = f.tell() if hasattr(f, "seek") and hasattr(f, "tell") else None
    if hasattr(f, "read") and position is None:
        return  # a stream that cannot rewind: NumPy cannot read it either
    try:
        with zipfile.ZipFile(f) as archive:
            names = archive.namelist()
            if any(name.endswith(".pkl") for name in names):
                raise not_a_checkpoint(path, TORCH_SAVE)
            other = next((name for name in names if not name.endswith(".npy")), None)
            if other is not None:
                raise not_a_checkpoint(path, f"it is a zip archive, but not of NumPy arrays "
                                             f"(its member {other!r} is not a .npy)")
            total = 0
            for info in archive.infolist():
                total += info.file_size
                if total > MAX_LOAD_BYTES:
                    raise not_a_checkpoint(path, (
                        f"once unpacked, its members would take {total:,} bytes or more "
                        f"(member {info.filename!r}: {info.file_size:,} bytes, "
                        f"{info.compress_size:,} in the file), more than "
                        f"mg.serialization.MAX_LOAD_BYTES = {MAX_LOAD_BYTES:,}. If you "
                        "trust the file, raise that limit"))
                with archive.open(info) as member:
                    _check_member(member, info, path)
    finally:
        if position is not None:
            f.seek(position)


def _check_member(member: Any, info: zipfile.ZipInfo, path: Any) -> None:
    """One member: a ``.npy`` array whose header fits the member's size."""
    start = member.read(len(np.lib.format.MAGIC_PREFIX))
    if start != np.lib.format.MAGIC_PREFIX:
        member_text = start + member.read(40)
        what = ("a Git LFS pointer (the real file was never downloaded: run `git lfs "
                "pull`)" if member_text.startswith(b"version https://git-lfs")
                else f"it starts with {member_text[:24]!r}")
        raise not_a_checkpoint(path, f"its member {info.filename!r} is not a NumPy array: "
                                     f"{what}")
    try:
        version = (member.read(1)[0], member.read(1)[0])
        read_header = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                       else np.lib.format.read_array_header_2_0)
        shape, _, dtype = read_header(member)
    except (ValueError, IndexError, SyntaxError, TypeError) as error:
        raise not_a_checkpoint(path, f"its member {info.filename!r} has a broken array "
                                     f"header ({error})") from error
    if dtype.hasobject:
        raise not_a_checkpoint(path, f"its member {info.filename!r} holds Python objects, "
                                     "which minigrad does not load (they need pickle)")
    size = dtype.itemsize
    for n in shape:
        size *= int(n)
    if size > info.file_size:
        raise not_a_checkpoint(path, (
            f"its member {info.filename!r} claims an array of shape {tuple(shape)}, {dtype} "
            f"({size:,} bytes), but holds only {info.file_size:,} bytes: the file is "
            "corrupted or was made to exhaust memory"))


def _check_depth(header: str, path: Any) -> None:
    """The saved structure nests at most ``MAX_DEPTH`` levels (JSON nested 100,000 deep
    would exhaust the stack)."""
    depth = deepest = 0
    in_string = escaped = False
    for character in header:
        if in_string:
            if escaped:
                escaped = False
            elif character == "\\":
                escaped = True
            elif character == '"':
                in_string = False
        elif character == '"':
            in_string = True
        elif character in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > 3 * MAX_DEPTH:  # each saved level is about three in JSON
                    raise not_a_checkpoint(path, (
                        f"its structure ({HEADER}) is nested more than {MAX_DEPTH} levels "
                        "deep; mg.save never writes that (a corrupted or hostile file)"))
        elif character in "]}":
            depth -= 1


def not_a_checkpoint(path: Any, why: str) -> ValueError:
    error = ValueError(f"load: {path} is not a minigrad checkpoint: {why}. minigrad reads "
                       "the .npz files that mg.save writes (and plain np.savez archives).")
    error.minigrad = True  # already explained
    return error


def _check_start(f: Any, path: Any) -> None:
    """Look at the first bytes, so that what the file really is can be said (an HTML
    page saved instead of a download, a pickle, an empty file) before NumPy guesses."""
    if hasattr(f, "read"):
        if not (hasattr(f, "seek") and hasattr(f, "tell")):
            return
        position = f.tell()
        start = f.read(64)
        f.seek(position)
    else:
        try:
            with open(f, "rb") as file:
                start = file.read(64)
        except FileNotFoundError:
            raise FileNotFoundError(f"load: there is no file {path}") from None
    if isinstance(start, str):
        start = start.encode()
    if start.startswith(b"PK"):
        return  # a zip archive: an .npz
    if not start:
        why = "the file is empty"
    elif start.startswith(b"version https://git-lfs"):
        why = ("it is a Git LFS pointer, not the file itself (it was never downloaded: "
               "run `git lfs pull`)")
    elif start.startswith(b"\x93NUMPY"):
        why = "it holds a single NumPy array (np.save), not an archive; read it with np.load"
    elif start.lstrip().lower().startswith((b"<!doctype", b"<html", b"<?xml", b"<")):
        why = ("it is an HTML or XML page, not a download of the file itself (a web page "
               "saved by mistake? download the raw file)")
    elif start.startswith(b"\x80"):
        why = ("it is a Python pickle, which minigrad never reads (a pickle can run any code "
               "it contains)")
    else:
        why = "it does not start like a .npz archive"
    raise not_a_checkpoint(path, why)


def _why(error: BaseException) -> str:
    """What went wrong, in a reader's terms (NumPy's own words would suggest pickle)."""
    if isinstance(error, (zipfile.BadZipFile, EOFError)) or "CRC" in str(error):
        return f"it is truncated or corrupted ({error})"
    if "pickle" in str(error):
        return "it holds Python objects, which minigrad does not load"
    return f"it could not be read ({type(error).__name__}: {str(error)[:200]})"


# --- PyTorch's allow-lists for unpickling: nothing is unpickled here, so nothing to allow ---


def add_safe_globals(safe_globals: list) -> None:
    """``torch.serialization.add_safe_globals``: accepted; minigrad's files hold no pickle,
    so there are no classes to allow."""


def get_safe_globals() -> list:
    return []


class safe_globals:  # noqa: N801 - PyTorch's name
    """``with torch.serialization.safe_globals([...]):`` accepted (nothing is unpickled)."""

    def __init__(self, safe_globals: list) -> None:
        self.safe_globals = safe_globals

    def __enter__(self) -> safe_globals:
        return self

    def __exit__(self, *exc_info) -> None:
        return None
