"""Recurrent layers, RNN, LSTM and GRU (and one step of each as RNNCell, LSTMCell,
GRUCell): a Python loop over time steps, as PyTorch computes them.

At step t a layer reads its input x_t and its previous hidden state h_{t-1}:

    RNN:   h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh)        (or relu)

    LSTM:  i, f, g, o = the four (N, hidden_size) blocks of
                        x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh      (in that order)
           c_t = sigmoid(f) * c_{t-1} + sigmoid(i) * tanh(g)          (forget, then write)
           h_t = sigmoid(o) * tanh(c_t)                               (read out)

    GRU:   r, z (reset and update gates) = sigmoid of their blocks of the same sum;
           n = tanh(x_t W_in^T + b_in + r * (h_{t-1} W_hn^T + b_hn))  (candidate)
           h_t = (1 - z) * n + z * h_{t-1}

The part x_t W_ih^T + b_ih + b_hh does not depend on h, so it is computed for every step
at once, in one matmul before the loop; only h_{t-1} W_hh^T has to wait for the previous
step. Layer k > 0 reads layer k - 1's outputs. With ``bidirectional=True`` a second set of
weights (``weight_ih_l0_reverse`` ...) reads the sequence from the end to the start, and
both directions' outputs are concatenated along the features.

There is no special backward here: autograd walks back through the unrolled loop, which
is backpropagation through time.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

from ..device import check_device
from ..factories import zeros
from ..tensor import Tensor, cat, stack
from . import functional as F
from . import init
from .module import Module, new_parameter


def lstm_step(gates: Tensor, cell: Tensor, size: int) -> tuple[Tensor, Tensor]:
    """One LSTM step from the pre-activations ``gates`` (N, 4 * size) (blocks i, f, g, o)
    and the previous cell state: the new (hidden, cell)."""
    input_gate = gates[:, :size].sigmoid()
    forget_gate = gates[:, size:2 * size].sigmoid()
    candidate = gates[:, 2 * size:3 * size].tanh()
    output_gate = gates[:, 3 * size:].sigmoid()
    cell = forget_gate * cell + input_gate * candidate
    return output_gate * cell.tanh(), cell


def gru_step(input_part: Tensor, hidden_part: Tensor, hidden: Tensor, size: int) -> Tensor:
    """One GRU step: ``input_part`` = x W_ih^T + b_ih and ``hidden_part`` = h W_hh^T + b_hh
    (each (N, 3 * size), blocks r, z, n) and the previous hidden state give the new one.
    The hidden part of n is gated by r before it is added, so the two parts stay apart."""
    reset = (input_part[:, :size] + hidden_part[:, :size]).sigmoid()
    update = (input_part[:, size:2 * size] + hidden_part[:, size:2 * size]).sigmoid()
    candidate = (input_part[:, 2 * size:] + reset * hidden_part[:, 2 * size:]).tanh()
    return (1 - update) * candidate + update * hidden


class _RecurrentBase(Module):
    """What RNN and LSTM share: PyTorch's parameters, the checks of input and initial
    state, and the loop over layers, directions and time steps. A subclass says how many
    gate blocks its weights stack (``gates``), which states it carries (``state_names``)
    and what one step does (``_cell``)."""

    gates = 1
    state_names: tuple[str, ...] = ("h_0",)
    projects = False  # LSTM's proj_size: h = (o * tanh(c)) W_hr^T, of proj_size features

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, proj_size: int = 0, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        name = type(self).__name__
        check_device(device, name)
        if proj_size and not self.projects:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if not isinstance(proj_size, int) or isinstance(proj_size, bool) or proj_size < 0 \
                or (proj_size and proj_size >= hidden_size):
            raise ValueError(f"{name}: proj_size must be an int from 0 up to hidden_size - 1 "
                             f"(hidden_size={hidden_size}), got {proj_size!r}")
        for argument, value in (("input_size", input_size), ("hidden_size", hidden_size),
                                ("num_layers", num_layers)):
            if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
                raise ValueError(f"{name}: {argument} must be a positive int, got {value!r}")
        if not 0.0 <= dropout <= 1.0 or isinstance(dropout, bool):
            raise ValueError(f"{name}: dropout must be a probability between 0 and 1, got "
                             f"{dropout!r}")
        if dropout > 0 and num_layers == 1:
            warnings.warn(f"{name}: dropout is applied between layers, after all but the "
                          f"last one, so dropout={dropout} with num_layers=1 does nothing",
                          stacklevel=2)
        self.input_size, self.hidden_size, self.num_layers = input_size, hidden_size, num_layers
        self.bias, self.batch_first = bias, batch_first
        self.dropout, self.bidirectional = float(dropout), bidirectional
        self.num_directions = 2 if bidirectional else 1
        self.proj_size = proj_size
        output_size = self.output_size  # h's features: proj_size if projected
        # Registered in PyTorch's order, so state-dict keys come out in the same order.
        rows = self.gates * hidden_size
        for layer in range(num_layers):
            layer_input_size = input_size if layer == 0 else output_size * self.num_directions
            for direction in range(self.num_directions):
                suffix = self._suffix(layer, direction)
                setattr(self, f"weight_ih{suffix}",
                        new_parameter(rows, layer_input_size, dtype=dtype))
                setattr(self, f"weight_hh{suffix}", new_parameter(rows, output_size, dtype=dtype))
                if bias:
                    setattr(self, f"bias_ih{suffix}", new_parameter(rows, dtype=dtype))
                    setattr(self, f"bias_hh{suffix}", new_parameter(rows, dtype=dtype))
                if proj_size:
                    setattr(self, f"weight_hr{suffix}",
                            new_parameter(proj_size, hidden_size, dtype=dtype))
        self.reset_parameters()

    @property
    def output_size(self) -> int:
        """The features of h (each direction's output): proj_size, else hidden_size."""
        return self.proj_size or self.hidden_size

    def flatten_parameters(self) -> None:
        """PyTorch packs an RNN's weights into one GPU buffer for cuDNN; on the CPU there is
        nothing to pack, so this does nothing (as in PyTorch without cuDNN)."""

    def reset_parameters(self) -> None:
        """Every weight and bias uniform in +-1/sqrt(hidden_size), as in PyTorch."""
        bound = 1 / math.sqrt(self.hidden_size)
        for parameter in self.parameters():
            init.uniform_(parameter, -bound, bound)

    @staticmethod
    def _suffix(layer: int, direction: int) -> str:
        return f"_l{layer}" + ("_reverse" if direction == 1 else "")

    def _weights(self, layer: int, direction: int) -> tuple:
        """(weight_ih, weight_hh, bias_ih, bias_hh) of one layer and direction."""
        suffix = self._suffix(layer, direction)
        return tuple(getattr(self, name + suffix, None)  # the biases are None if bias=False
                     for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"))

    # --- checks ------------------------------------------------------------------------------

    def _check_input(self, input: Tensor) -> tuple[Tensor, bool]:
        """The input as (L, N, input_size), and whether it had a batch dimension."""
        self._check_input_type(input, self.weight_ih_l0)
        layout = "(N, L, input_size)" if self.batch_first else "(L, N, input_size)"
        if input.ndim not in (2, 3):
            raise self._error(f"expected a 3-D input {layout} or a 2-D unbatched input "
                              f"(L, input_size), got a {input.ndim}-D input of shape "
                              f"{tuple(input.shape)}")
        if input.shape[-1] != self.input_size:
            raise self._error(f"expected the input's last size to be input_size="
                              f"{self.input_size}, got shape {tuple(input.shape)}")
        batched = input.ndim == 3
        if not batched:
            x = input.unsqueeze(1)  # one sequence: a batch of 1
        else:
            x = input.transpose(0, 1) if self.batch_first else input
        if x.shape[0] == 0:
            raise self._error(f"expected a sequence of at least one step, got shape "
                              f"{tuple(input.shape)}")
        return x, batched

    def _initial_states(self, states: tuple, x: Tensor, batched: bool) -> list[Tensor]:
        """Each initial state as (num_layers * num_directions, N, hidden_size); zeros where
        none was given."""
        layers = self.num_layers * self.num_directions
        batch = x.shape[1]
        result = []
        sizes = [("proj_size", self.proj_size) if self.proj_size else ("hidden_size",
                                                                        self.hidden_size),
                 ("hidden_size", self.hidden_size)]  # h's, then c's
        for (name, given), (size_name, size) in zip(zip(self.state_names, states), sizes):
            if given is None:
                result.append(zeros(layers, batch, size, dtype=x.dtype))
                continue
            expected = (layers, batch, size) if batched else (layers, size)
            if not isinstance(given, Tensor) or tuple(given.shape) != expected:
                got = tuple(given.shape) if isinstance(given, Tensor) else type(given).__name__
                raise self._error(
                    f"expected {name} of shape {expected} (num_layers * num_directions, "
                    + ("batch, " if batched else "") + f"{size_name}), got {got}"
                )
            result.append(given if batched else given.unsqueeze(1))
        return result

    # --- the computation -----------------------------------------------------------------

    def _cell(self, gates: Tensor, states: tuple[Tensor, ...]) -> tuple[Tensor, ...]:
        """One time step: the pre-activations ``gates`` (N, gates * hidden_size) and the
        previous states give the new states (the hidden state first)."""
        raise NotImplementedError

    def _run_direction(self, x: Tensor, states: tuple[Tensor, ...], layer: int,
                       direction: int) -> tuple[Tensor, tuple[Tensor, ...]]:
        """One layer in one direction over the sequence x (L, N, features): its outputs
        (L, N, hidden_size) and its final states."""
        weight_ih, weight_hh, bias_ih, bias_hh = self._weights(layer, direction)
        weight_hr = getattr(self, "weight_hr" + self._suffix(layer, direction), None)
        projected = x @ weight_ih.T  # (L, N, gates * hidden): every step's input part at once
        if bias_ih is not None:
            projected = projected + (bias_ih + bias_hh)  # constant over time: added once
        steps = projected.unbind(0)  # one op, whose backward stacks the steps' gradients
        length = x.shape[0]
        outputs: list[Tensor] = [None] * length  # type: ignore[list-item]
        for t in (range(length) if direction == 0 else reversed(range(length))):
            states = self._cell(steps[t] + states[0] @ weight_hh.T, states)
            if weight_hr is not None:  # LSTM's proj_size: h projected down
                states = (states[0] @ weight_hr.T, *states[1:])
            outputs[t] = states[0]
        return stack(outputs), states

    def _forward(self, input: Tensor, given: tuple) -> tuple[Tensor, tuple[Tensor, ...]]:
        """The whole stack: the last layer's outputs and every final state, stacked as
        (num_layers * num_directions, N, hidden_size) in PyTorch's order (layer by layer,
        forward direction first)."""
        x, batched = self._check_input(input)
        initial = self._initial_states(given, x, batched)
        finals = []
        for layer in range(self.num_layers):
            outputs = []
            for direction in range(self.num_directions):
                index = layer * self.num_directions + direction
                output, states = self._run_direction(
                    x, tuple(state[index] for state in initial), layer, direction)
                outputs.append(output)
                finals.append(states)
            x = outputs[0] if len(outputs) == 1 else cat(outputs, dim=-1)
            if layer < self.num_layers - 1:  # dropout between layers, never after the last
                x = F.dropout(x, self.dropout, self.training)
        final = tuple(stack([states[k] for states in finals]) for k in range(len(initial)))
        if not batched:
            return x[:, 0], tuple(state[:, 0] for state in final)
        return (x.transpose(0, 1) if self.batch_first else x), final

    def extra_repr(self) -> str:
        text = f"{self.input_size}, {self.hidden_size}"
        defaults = {"proj_size": 0, "num_layers": 1, "bias": True, "batch_first": False,
                    "dropout": 0.0, "bidirectional": False}  # (PyTorch's order)
        for name, default in defaults.items():
            if getattr(self, name) != default:
                text += f", {name}={getattr(self, name)}"
        return text


class RNN(_RecurrentBase):
    """Elman RNN: h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh), or relu with
    ``nonlinearity="relu"``.

    ``rnn(input, h_0=None)`` with input (L, N, input_size) ((N, L, input_size) when
    ``batch_first``, (L, input_size) unbatched) and h_0 (num_layers * num_directions, N,
    hidden_size) (zeros if omitted) returns ``(output, h_n)``: output (L, N, num_directions
    * hidden_size) (batch first when ``batch_first``), h_n shaped like h_0.
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 nonlinearity: str = "tanh", bias: bool = True, batch_first: bool = False,
                 dropout: float = 0.0, bidirectional: bool = False, device: Any = None,
                 dtype: Any = None) -> None:
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"RNN: unknown nonlinearity {nonlinearity!r}; use 'tanh' or "
                             "'relu'")
        super().__init__(input_size, hidden_size, num_layers, bias, batch_first, dropout,
                         bidirectional, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity

    def _cell(self, gates: Tensor, states: tuple[Tensor, ...]) -> tuple[Tensor, ...]:
        return (gates.tanh() if self.nonlinearity == "tanh" else gates.relu(),)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> tuple[Tensor, Tensor]:
        output, (h_n,) = self._forward(input, (hx,))
        return output, h_n

    def extra_repr(self) -> str:
        text = super().extra_repr()
        if self.nonlinearity != "tanh":
            text += f", nonlinearity={self.nonlinearity!r}"
        return text


class LSTM(_RecurrentBase):
    """Long short-term memory: a cell state c carried along the sequence, changed only
    through gates (input i, forget f, cell candidate g, output o, in PyTorch's order):

        c_t = sigmoid(f) * c_{t-1} + sigmoid(i) * tanh(g),   h_t = sigmoid(o) * tanh(c_t)

    ``lstm(input, (h_0, c_0))`` (the states optional: zeros) with input (L, N, input_size)
    ((N, L, input_size) when ``batch_first``, (L, input_size) unbatched) returns
    ``(output, (h_n, c_n))``: output (L, N, num_directions * hidden_size) (batch first when
    ``batch_first``), h_n and c_n (num_layers * num_directions, N, hidden_size).
    """

    gates = 4
    state_names = ("h_0", "c_0")
    projects = True

    def _cell(self, gates: Tensor, states: tuple[Tensor, ...]) -> tuple[Tensor, ...]:
        return lstm_step(gates, states[1], self.hidden_size)

    def forward(self, input: Tensor, hx: tuple[Tensor, Tensor] | None = None,
                ) -> tuple[Tensor, tuple[Tensor, Tensor]]:
        if hx is None:
            hx = (None, None)
        elif not isinstance(hx, (tuple, list)) or len(hx) != 2:
            raise self._error("expected hx to be a pair (h_0, c_0) of tensors, got "
                              f"{type(hx).__name__}", TypeError)
        output, (h_n, c_n) = self._forward(input, tuple(hx))
        return output, (h_n, c_n)


# --- GRU and the single-step cells (issue 11) --------------------------------------------------


class GRU(_RecurrentBase):
    """Gated recurrent unit (Cho et al., 2014): gates r (reset), z (update) and a candidate
    n, in PyTorch's order and with its weights (``weight_ih_l0`` (3 * hidden_size,
    input_size), ...):

        n = tanh(x W_in^T + b_in + r * (h W_hn^T + b_hn)),   h_t = (1 - z) * n + z * h_{t-1}

    ``gru(input, h_0=None)`` takes and returns what ``RNN`` does: ``(output, h_n)``.
    """

    gates = 3

    def _run_direction(self, x: Tensor, states: tuple[Tensor, ...], layer: int,
                       direction: int) -> tuple[Tensor, tuple[Tensor, ...]]:
        # b_hn is multiplied by r, so the hidden part keeps its own bias (unlike RNN and LSTM)
        weight_ih, weight_hh, bias_ih, bias_hh = self._weights(layer, direction)
        projected = x @ weight_ih.T
        if bias_ih is not None:
            projected = projected + bias_ih
        steps = projected.unbind(0)
        (hidden,) = states
        length = x.shape[0]
        outputs: list[Tensor] = [None] * length  # type: ignore[list-item]
        for t in (range(length) if direction == 0 else reversed(range(length))):
            hidden_part = hidden @ weight_hh.T
            if bias_hh is not None:
                hidden_part = hidden_part + bias_hh
            hidden = gru_step(steps[t], hidden_part, hidden, self.hidden_size)
            outputs[t] = hidden
        return stack(outputs), (hidden,)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> tuple[Tensor, Tensor]:
        output, (h_n,) = self._forward(input, (hx,))
        return output, h_n


class _CellBase(Module):
    """What RNNCell, LSTMCell and GRUCell share: PyTorch's parameters ``weight_ih``
    (gates * hidden_size, input_size), ``weight_hh`` (gates * hidden_size, hidden_size),
    ``bias_ih``, ``bias_hh`` (uniform in +-1/sqrt(hidden_size)), and the input checks.
    A cell computes one time step; the loop over time is the caller's."""

    gates = 1

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 dtype: Any = None) -> None:
        super().__init__()
        name = type(self).__name__
        for argument, value in (("input_size", input_size), ("hidden_size", hidden_size)):
            if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
                raise ValueError(f"{name}: {argument} must be a positive int, got {value!r}")
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        rows = self.gates * hidden_size
        self.weight_ih = new_parameter(rows, input_size, dtype=dtype)
        self.weight_hh = new_parameter(rows, hidden_size, dtype=dtype)
        self.bias_ih = new_parameter(rows, dtype=dtype) if bias else None
        self.bias_hh = new_parameter(rows, dtype=dtype) if bias else None
        self.reset_parameters()

    reset_parameters = _RecurrentBase.reset_parameters

    def _check(self, input: Tensor, states: tuple, names: tuple[str, ...],
               ) -> tuple[Tensor, list[Tensor], bool]:
        """The input as (N, input_size), each state as (N, hidden_size) (zeros where None),
        and whether the input had a batch dimension."""
        self._check_input_type(input, self.weight_ih)
        if input.ndim not in (1, 2) or input.shape[-1] != self.input_size:
            raise self._error(f"expected an input of shape (N, {self.input_size}) or "
                              f"({self.input_size},) (input_size={self.input_size}), got "
                              f"shape {tuple(input.shape)}")
        batched = input.ndim == 2
        x = input if batched else input.unsqueeze(0)
        expected = (x.shape[0], self.hidden_size) if batched else (self.hidden_size,)
        result = []
        for name, state in zip(names, states):
            if state is None:
                result.append(zeros(x.shape[0], self.hidden_size, dtype=x.dtype))
                continue
            if not isinstance(state, Tensor) or tuple(state.shape) != expected:
                got = tuple(state.shape) if isinstance(state, Tensor) else type(state).__name__
                raise self._error(f"expected {name} of shape {expected}, got {got}")
            result.append(state if batched else state.unsqueeze(0))
        return x, result, batched

    def _parts(self, x: Tensor, hidden: Tensor) -> tuple[Tensor, Tensor]:
        """x W_ih^T + b_ih and h W_hh^T + b_hh."""
        return F.linear(x, self.weight_ih, self.bias_ih), F.linear(hidden, self.weight_hh,
                                                                   self.bias_hh)

    def extra_repr(self) -> str:
        return f"{self.input_size}, {self.hidden_size}" + ("" if self.bias else ", bias=False")


class RNNCell(_CellBase):
    """One step of RNN: h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh) (or relu).
    ``cell(input, hx=None)``: input (N, input_size) or (input_size,), hx (N, hidden_size)
    (zeros if omitted); returns h' (N, hidden_size)."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 nonlinearity: str = "tanh", dtype: Any = None) -> None:
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"RNNCell: unknown nonlinearity {nonlinearity!r}; use 'tanh' or "
                             "'relu'")
        super().__init__(input_size, hidden_size, bias, dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        x, (hidden,), batched = self._check(input, (hx,), ("hx",))
        input_part, hidden_part = self._parts(x, hidden)
        total = input_part + hidden_part
        hidden = total.tanh() if self.nonlinearity == "tanh" else total.relu()
        return hidden if batched else hidden[0]


class LSTMCell(_CellBase):
    """One step of LSTM. ``cell(input, (h, c))`` (the states optional: zeros), input
    (N, input_size) or (input_size,); returns (h', c')."""

    gates = 4

    def forward(self, input: Tensor, hx: tuple[Tensor, Tensor] | None = None,
                ) -> tuple[Tensor, Tensor]:
        if hx is None:
            hx = (None, None)
        elif not isinstance(hx, (tuple, list)) or len(hx) != 2:
            raise self._error("expected hx to be a pair (h, c) of tensors, got "
                              f"{type(hx).__name__}", TypeError)
        x, (hidden, cell), batched = self._check(input, tuple(hx), ("h", "c"))
        input_part, hidden_part = self._parts(x, hidden)
        hidden, cell = lstm_step(input_part + hidden_part, cell, self.hidden_size)
        return (hidden, cell) if batched else (hidden[0], cell[0])


class GRUCell(_CellBase):
    """One step of GRU. ``cell(input, hx=None)``, input (N, input_size) or
    (input_size,); returns h'."""

    gates = 3

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        x, (hidden,), batched = self._check(input, (hx,), ("hx",))
        input_part, hidden_part = self._parts(x, hidden)
        hidden = gru_step(input_part, hidden_part, hidden, self.hidden_size)
        return hidden if batched else hidden[0]
