"""ParameterList and ParameterDict: a list or dict of parameters that a Module registers
(a plain list or dict would hide them from ``parameters()`` and the state dict). Keys
are PyTorch's: ``params.0``, ``params.1``, ... and ``params.<name>``."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from ..tensor import Tensor
from .module import Module, Parameter


def _as_parameter(value: Any, who: str) -> Parameter:
    """A Parameter as it is; any other Tensor wrapped in one (as PyTorch does)."""
    if isinstance(value, Parameter):
        return value
    if isinstance(value, Tensor):
        return Parameter(value)
    raise TypeError(f"{who}: expected a Parameter or a Tensor, got {type(value).__name__}")


def _replace(container: Module, key: str, value: Parameter) -> None:
    """Register ``value`` under ``key``; a key already there keeps its place in the order."""
    if key in container._parameters:
        container._set_member(container._parameters, key, value)
    else:
        container.register_parameter(key, value)


class ParameterList(Module):
    """A list of parameters: ``self.weights = nn.ParameterList([nn.Parameter(...), ...])``."""

    def __init__(self, values: Iterable[Any] | None = None) -> None:
        super().__init__()
        for value in values or ():
            self.append(value)

    def append(self, value: Any) -> ParameterList:
        self.register_parameter(str(len(self)), _as_parameter(value, "ParameterList"))
        return self

    def extend(self, values: Iterable[Any]) -> ParameterList:
        for value in values:
            self.append(value)
        return self

    def __getitem__(self, index: int | slice) -> Any:
        values = list(self._parameters.values())
        return ParameterList(values[index]) if isinstance(index, slice) else values[index]

    def __setitem__(self, index: int, value: Any) -> None:
        _replace(self, list(self._parameters)[index], _as_parameter(value, "ParameterList"))

    def __len__(self) -> int:
        return len(self._parameters)

    def __iter__(self) -> Iterator[Parameter]:
        return iter(self._parameters.values())

    def __repr__(self) -> str:
        return _repr(self)


class ParameterDict(Module):
    """A dict of parameters: ``self.scales = nn.ParameterDict({"a": nn.Parameter(...)})``."""

    def __init__(self, parameters: Any = None) -> None:
        super().__init__()
        if parameters is not None:
            self.update(parameters)

    def update(self, parameters: Any) -> None:
        """Add (or replace, in place) the parameters of a mapping or of an iterable of
        ``(key, value)`` pairs. As in PyTorch, a plain dict's come in sorted key order
        (an OrderedDict's or a ParameterDict's in their own order)."""
        if isinstance(parameters, (OrderedDict, ParameterDict)):
            items = list(parameters.items())
        elif isinstance(parameters, Mapping):
            items = sorted(parameters.items())
        elif isinstance(parameters, Iterable):
            items = list(parameters)
        else:
            raise TypeError(f"ParameterDict.update: expected a mapping or an iterable of "
                            f"(key, value) pairs, got {type(parameters).__name__}")
        for position, pair in enumerate(items):
            if not isinstance(pair, (tuple, list)) or len(pair) != 2:
                raise TypeError(f"ParameterDict.update: expected (key, value) pairs, but "
                                f"element {position} is {type(pair).__name__} {pair!r:.60}")
            self[pair[0]] = pair[1]

    def __getitem__(self, key: str) -> Parameter:
        return self._parameters[key]

    def __setitem__(self, key: str, value: Any) -> None:
        _replace(self, key, _as_parameter(value, "ParameterDict"))

    def __delitem__(self, key: str) -> None:
        if key not in self._parameters:
            raise KeyError(key)
        delattr(self, key)

    def __contains__(self, key: str) -> bool:
        return key in self._parameters

    def __len__(self) -> int:
        return len(self._parameters)

    def __iter__(self) -> Iterator[str]:
        return iter(self._parameters)

    def keys(self):
        return self._parameters.keys()

    def values(self):
        return self._parameters.values()

    def items(self):
        return self._parameters.items()

    def get(self, key: str, default: Any = None) -> Any:
        return self._parameters.get(key, default)

    def pop(self, key: str) -> Parameter:
        value = self._parameters[key]
        del self[key]
        return value

    def popitem(self) -> tuple[str, Parameter]:
        """Remove the last key added and return it with its parameter."""
        key = next(reversed(self._parameters))
        return key, self.pop(key)

    def setdefault(self, key: str, default: Any = None) -> Parameter:
        if key not in self:
            self[key] = default
        return self[key]

    def clear(self) -> None:
        for key in list(self._parameters):
            del self[key]

    def copy(self) -> ParameterDict:
        """A new ParameterDict holding the same Parameter objects."""
        return ParameterDict(OrderedDict(self.items()))

    def fromkeys(self, keys: Iterable[str], default: Any = None) -> ParameterDict:
        return ParameterDict(OrderedDict((key, default) for key in keys))

    def __or__(self, other: ParameterDict) -> ParameterDict:
        union = self.copy()
        union.update(other)
        return union

    def __ior__(self, other: ParameterDict) -> ParameterDict:
        self.update(other)
        return self

    def __reversed__(self) -> Iterator[str]:
        return reversed(list(self._parameters))

    def __repr__(self) -> str:
        return _repr(self)


def _repr(container: Module) -> str:
    """One line per parameter, as PyTorch prints these containers."""
    lines = [f"  ({key}): Parameter containing: [{p.dtype} of size "
             f"{'x'.join(map(str, p.shape))}]" for key, p in container._parameters.items()]
    return f"{type(container).__name__}(" + ("\n" + "\n".join(lines) + "\n" if lines else "") + ")"
