"""Ways to make tensors: from data, filled with a value, ranges, and random ones.

Every random factory draws from the one global generator (``mg.manual_seed``), or from
the ``Generator`` given as ``generator=``. Every factory takes PyTorch's ``device=``
(the CPU: minigrad computes with NumPy) and ``dtype=``; floats default to
``mg.get_default_dtype()`` (float32).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .device import check_device, check_memory_format
from .state import rng_for, state
from .tensor import Tensor, _unpack_shape, as_dtype


def tensor(data: Any, requires_grad: bool = False, dtype: Any = None,
           label: str | None = None, device: Any = None, pin_memory: bool = False) -> Tensor:
    """Same as ``Tensor(...)``: Python floats become float32, ints int64, bools bool;
    NumPy arrays keep their dtype. The data is copied."""
    return Tensor(data, requires_grad=requires_grad, dtype=dtype, label=label, device=device)


def _new(array: np.ndarray, dtype: Any, requires_grad: bool, device: Any = None,
         who: str = "factory") -> Tensor:
    if device is not None:
        check_device(device, who)
    t = Tensor._make(array.astype(as_dtype(dtype) if dtype is not None else array.dtype,
                                  copy=False))
    return t.requires_grad_(True) if requires_grad else t


def _sizes(size: tuple, keywords: dict, who: str) -> tuple:
    """The shape from ``zeros(2, 3)``, ``zeros((2, 3))`` or PyTorch's ``zeros(size=(2, 3))``."""
    if set(keywords) - {"size"}:
        unknown = ", ".join(sorted(set(keywords) - {"size"}))
        raise TypeError(f"{who}() got an unexpected keyword argument: {unknown}")
    if "size" in keywords:
        if size:
            raise TypeError(f"{who}(): give the shape once, as positions or as size=, "
                            f"not both (got {size} and size={keywords['size']})")
        size = (keywords["size"],)
    return _unpack_shape(size)


def _float(dtype: Any) -> np.dtype:
    """The dtype to make floats in: ``dtype`` if it is floating, else the default."""
    if dtype is not None and as_dtype(dtype).kind == "f":
        return as_dtype(dtype)
    return state.default_dtype


def zeros(*size, dtype=None, device=None, requires_grad=False,
          **keywords) -> Tensor:
    return _new(np.zeros(_sizes(size, keywords, "zeros"), dtype=_float(dtype)), dtype,
                requires_grad, device, "zeros")


def ones(*size, dtype=None, device=None, requires_grad=False,
         **keywords) -> Tensor:
    return _new(np.ones(_sizes(size, keywords, "ones"), dtype=_float(dtype)), dtype,
                requires_grad, device, "ones")


def empty(*size, dtype=None, device=None, requires_grad=False,
          **keywords) -> Tensor:
    """Uninitialized in PyTorch; zeros here (NumPy's empty would show leftover memory)."""
    return _new(np.zeros(_sizes(size, keywords, "empty"), dtype=_float(dtype)), dtype,
                requires_grad, device, "empty")


def full(size, fill_value, dtype=None, device=None, requires_grad=False) -> Tensor:
    """As PyTorch: a bool fill gives bool, an int fill int64, a float fill float32."""
    if dtype is None and isinstance(fill_value, (bool, np.bool_)):
        dtype = np.bool_
    elif dtype is None and isinstance(fill_value, (int, np.integer)):
        dtype = np.int64
    return _new(np.full(_unpack_shape((size,)), fill_value, dtype=_float(dtype)), dtype,
                requires_grad, device, "full")


def zeros_like(input: Tensor, dtype=None, device=None, requires_grad=False, *,
               memory_format=None) -> Tensor:
    check_memory_format(memory_format, "zeros_like")
    return _new(np.zeros(input.shape, dtype=input.dtype), dtype, requires_grad, device,
                "zeros_like")


def ones_like(input: Tensor, dtype=None, device=None, requires_grad=False, *,
              memory_format=None) -> Tensor:
    check_memory_format(memory_format, "ones_like")
    return _new(np.ones(input.shape, dtype=input.dtype), dtype, requires_grad, device,
                "ones_like")


def empty_like(input: Tensor, dtype=None, device=None, requires_grad=False, *,
               memory_format=None) -> Tensor:
    check_memory_format(memory_format, "empty_like")
    return _new(np.zeros(input.shape, dtype=input.dtype), dtype, requires_grad, device,
                "empty_like")


def full_like(input: Tensor, fill_value, dtype=None, device=None,
              requires_grad=False, *, memory_format=None) -> Tensor:
    """``fill_value`` in ``input``'s shape, in ``dtype`` (else ``input``'s): filled in
    that dtype, so ``full_like(ints, 2.5, dtype=float64)`` holds 2.5."""
    check_memory_format(memory_format, "full_like")
    dtype = input.dtype if dtype is None else as_dtype(dtype)
    return _new(np.full(input.shape, fill_value, dtype=dtype), dtype, requires_grad,
                device, "full_like")


def _number(value: Any) -> Any:
    """A bound of a range as a Python number (a one-element tensor gives its item)."""
    return value.item() if isinstance(value, Tensor) else value


def arange(start=0, end=None, step=1, dtype=None, device=None,
           requires_grad=False) -> Tensor:
    """Like PyTorch: integers only -> int64, any float -> float32; ``ceil((end - start) /
    step)`` values ``start + i * step``. An integer ``dtype`` computes the values from
    the bounds truncated to integers, as PyTorch does (``arange(0, 5, 1.5, dtype=int64)``
    steps by 1); for int64 the count too, for smaller integer dtypes the count comes from
    the bounds as given (``dtype=int32``: [0, 1, 2, 3])."""
    if end is None:
        start, end = 0, start
    start, end, step = (_number(v) for v in (start, end, step))
    if step == 0 or (end - start) * step < 0:
        raise RuntimeError(f"arange: upper bound and lower bound inconsistent with step "
                           f"sign (start {start}, end {end}, step {step}); use a "
                           f"{'negative' if step > 0 else 'positive'} step to go that way"
                           if step else f"arange: step must be nonzero (start {start}, "
                           f"end {end})")
    if dtype is not None and as_dtype(dtype).kind in "iub":
        return _integer_arange(start, end, step, as_dtype(dtype), requires_grad, device)
    integral = all(isinstance(v, (int, np.integer)) for v in (start, end, step))
    array = np.arange(start, end, step, dtype=np.int64 if integral else _float(dtype))
    return _new(array, dtype, requires_grad, device, "arange")


def _integer_arange(start, end, step, dtype: np.dtype, requires_grad, device) -> Tensor:
    """arange in an integer dtype: ``int(start) + i * int(step)``, PyTorch's values."""
    if dtype == np.bool_:
        raise TypeError("arange: no bool ranges (as in PyTorch); make an integer one and "
                        "compare it, e.g. mg.arange(5) > 2")
    count = math.ceil((end - start) / step) if dtype != np.int64 else None
    start, end, step = int(start), int(end), int(step)
    if step == 0:
        raise ValueError(f"arange: step must be nonzero once truncated to an integer for "
                         f"dtype {dtype} (start {start}, end {end}); give an integer step")
    if count is None:  # int64: the count of the truncated range
        count = max(-(-(end - start) // step), 0)
    values = start + step * np.arange(count, dtype=np.int64)
    return _new(values.astype(dtype), dtype, requires_grad, device, "arange")


def linspace(start, end, steps, dtype=None, device=None, requires_grad=False) -> Tensor:
    start, end = _number(start), _number(end)
    return _new(np.linspace(start, end, steps, dtype=_float(dtype)), dtype, requires_grad,
                device, "linspace")


def logspace(start, end, steps, base=10.0, dtype=None, device=None,
             requires_grad=False) -> Tensor:
    """``base ** linspace(start, end, steps)``: ``steps`` values evenly spaced on a log
    scale from ``base ** start`` to ``base ** end``."""
    start, end = _number(start), _number(end)
    exponents = np.linspace(start, end, steps, dtype=np.float64)
    return _new((float(base) ** exponents).astype(_float(dtype)), dtype, requires_grad,
                device, "logspace")


def eye(n, m=None, dtype=None, device=None, requires_grad=False) -> Tensor:
    return _new(np.eye(n, m, dtype=_float(dtype)), dtype, requires_grad, device, "eye")


# --- from other data ---------------------------------------------------------------------


def from_numpy(array: np.ndarray) -> Tensor:
    """A tensor sharing ``array``'s memory (writing one changes the other), its dtype kept."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"from_numpy: expected a NumPy array, got {type(array).__name__}")
    if array.dtype.kind not in "biuf":
        raise TypeError(f"from_numpy: cannot make a tensor of a {array.dtype} array; "
                        "arrays of numbers or bools only")
    return Tensor._make(array)


def as_tensor(data: Any, dtype: Any = None, device: Any = None) -> Tensor:
    """``data`` as a tensor, without copying when it already is one (or a NumPy array of
    the requested dtype, whose memory is then shared)."""
    check_device(device, "as_tensor")
    if isinstance(data, Tensor):
        return data if dtype is None else data.to(dtype)
    if isinstance(data, np.ndarray) and (dtype is None or as_dtype(dtype) == data.dtype):
        return from_numpy(data)
    return Tensor(data, dtype=dtype)


def is_tensor(obj: Any) -> bool:
    return isinstance(obj, Tensor)


def numel(input: Tensor) -> int:
    return input.numel()


def _legacy(name: str, dtype: Any):
    def constructor(*data: Any) -> Tensor:
        # PyTorch's old spelling: LongTensor([1, 2]) is data; LongTensor(2, 3) a shape
        if len(data) == 1 and not isinstance(data[0], (int, np.integer)):
            return Tensor(data[0], dtype=dtype)
        return zeros(*data, dtype=dtype)

    constructor.legacy_dtype = np.dtype(dtype)  # for t.type(torch.FloatTensor)
    constructor.__name__ = constructor.__qualname__ = name
    constructor.__doc__ = (f"PyTorch's legacy constructor: ``{name}(data)`` is "
                           f"``mg.tensor(data, dtype={np.dtype(dtype).name})``, "
                           f"``{name}(2, 3)`` zeros of that shape.")
    return constructor


FloatTensor = _legacy("FloatTensor", np.float32)
DoubleTensor = _legacy("DoubleTensor", np.float64)
LongTensor = _legacy("LongTensor", np.int64)
IntTensor = _legacy("IntTensor", np.int32)
BoolTensor = _legacy("BoolTensor", np.bool_)
ByteTensor = _legacy("ByteTensor", np.uint8)


# --- random ------------------------------------------------------------------------------


def _draw_dtype(dtype, who: str) -> np.dtype:
    """Draw float64 numbers when float64 is asked for (not float32 ones, cast). As in
    PyTorch, integer and bool dtypes have no uniform or normal numbers."""
    if dtype is not None and as_dtype(dtype).kind != "f":
        raise TypeError(f"{who}: cannot draw {as_dtype(dtype)} numbers, only floating ones "
                        "(as in PyTorch); use randint for integers, or give dtype=float32")
    return np.dtype(np.float64) if dtype is not None and as_dtype(dtype) == np.float64 \
        else _float(None)


def rand(*size, generator=None, dtype=None, device=None, requires_grad=False,
         **keywords) -> Tensor:
    """Uniform on [0, 1)."""
    rng = rng_for(generator, "rand")
    return _new(rng.random(_sizes(size, keywords, "rand"), dtype=_draw_dtype(dtype, "rand")), dtype,
                requires_grad, device, "rand")


def randn(*size, generator=None, dtype=None, device=None, requires_grad=False,
          **keywords) -> Tensor:
    """Standard normal."""
    rng = rng_for(generator, "randn")
    drawn = rng.standard_normal(_sizes(size, keywords, "randn"),
                                dtype=_draw_dtype(dtype, "randn"))
    return _new(drawn, dtype, requires_grad, device, "randn")


def randint(low, high=None, size=None, *, generator=None, dtype=None, device=None,
            requires_grad=False) -> Tensor:
    """Integers in [low, high); ``randint(high, size)`` as in PyTorch. int64."""
    if size is None:  # randint(high, size)
        low, high, size = 0, low, high
    if size is None:
        raise TypeError("randint: give the size, e.g. randint(0, 10, (3,)) or randint(10, (3,))")
    rng = rng_for(generator, "randint")
    return _new(rng.integers(low, high, _unpack_shape((size,)), dtype=np.int64), dtype,
                requires_grad, device, "randint")


def randperm(n, *, generator=None, dtype=None, device=None, requires_grad=False) -> Tensor:
    """The integers 0 .. n-1 in a random order."""
    rng = rng_for(generator, "randperm")
    return _new(rng.permutation(n).astype(np.int64), dtype, requires_grad, device, "randperm")


def rand_like(input: Tensor, *, generator=None, dtype=None, device=None,
              requires_grad=False) -> Tensor:
    return rand(input.shape, generator=generator, dtype=dtype or input.dtype, device=device,
                requires_grad=requires_grad)


def randn_like(input: Tensor, *, generator=None, dtype=None, device=None,
               requires_grad=False) -> Tensor:
    return randn(input.shape, generator=generator, dtype=dtype or input.dtype, device=device,
                 requires_grad=requires_grad)


def randint_like(input: Tensor, low, high=None, *, generator=None, dtype=None, device=None,
                 requires_grad=False) -> Tensor:
    if high is None:
        low, high = 0, low
    return randint(low, high, input.shape, generator=generator, dtype=dtype or input.dtype,
                   device=device, requires_grad=requires_grad)
