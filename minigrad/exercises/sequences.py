"""Chapter 12's classic mistakes (embedding, RNN, LSTM, sampling) and its three checkers,
out of the notebook so that its test cells do not show the answers.

- ``EMBEDDING_MISTAKES``: wrong gradients of ``weight[indices]``, ``{sentence:
  fn(weight, indices, grad_output) -> (grad_weight, None)}``, for ``check_function``.
- ``check_rnn(MyRNN, mistakes=RNN_MISTAKES)``: a recurrent layer returning ``(output,
  h_n)`` against ``nn.RNN`` with the same state dict (``check_module`` wants one output).
- ``check_lstm_cell(lstm_cell, mistakes=LSTM_CELL_MISTAKES)``: one LSTM step written as a
  function of Tensors, against minigrad's ``lstm_step`` (PyTorch's gate order i, f, g, o).
- ``check_generate(generate, mistakes=GENERATE_MISTAKES)``: a sampler, run under a seed
  beside a reference sampler and the wrong ones, on a small LSTM character model.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import numpy as np

from ..state import enable_grad, get_rng_state, manual_seed, no_grad, set_rng_state
from ..nn.module import Module
from ..tensor import Tensor
from .checks import _student_error, checker
from .compare import CheckFailed, Variant, as_array, compare, describe

# --- the embedding -------------------------------------------------------------------------


def embedding_gradient(weight: np.ndarray, indices: np.ndarray,
                       grad_output: np.ndarray) -> np.ndarray:
    """The right gradient of ``weight[indices]``: a scatter-add of the rows."""
    grad = np.zeros(weight.shape)
    np.add.at(grad, indices, grad_output)
    return grad


def _assigned(weight, indices, grad_output):
    grad = np.zeros(weight.shape)
    grad[indices] = grad_output
    return grad, None


def _grad_output_itself(weight, indices, grad_output):
    return grad_output, None


def _loop_over_sequences(weight, indices, grad_output):
    grad = np.zeros(weight.shape)
    if indices.ndim < 2:
        raise ValueError("only a 2-D index has sequences")
    for n in range(indices.shape[0]):
        grad[indices[n]] += grad_output[n]
    return grad, None


def _averaged(weight, indices, grad_output):
    grad = embedding_gradient(weight, indices, grad_output)
    counts = np.bincount(np.asarray(indices).reshape(-1), minlength=weight.shape[0])
    return grad / np.maximum(counts, 1)[:, None], None


EMBEDDING_MISTAKES = {
    "a repeated token kept only one of its gradients: grad[indices] = grad_output (or "
    "+= grad_output) writes each row once and the last write wins, so a token read twice "
    "loses a gradient. Use np.add.at(grad, indices, grad_output), which adds every one "
    "(chapter 6's scatter-add).": _assigned,
    "a loop over the sequences wrote grad[indices[n]] += grad_output[n]: inside one "
    "sequence a repeated token is again a fancy write, and the last write wins. "
    "np.add.at(grad, indices, grad_output) adds every gradient, whatever the index's "
    "shape.": _loop_over_sequences,
    "backward returned grad_output itself, which has the output's shape (one vector per "
    "token read). The weight's gradient has the weight's shape (num_embeddings, "
    "embedding_dim): start from zeros and add each vector to its token's row.":
        _grad_output_itself,
    "each row's gradient was divided by the number of times its token was read: the "
    "gradients of a token read several times add up (the loss depends on the row through "
    "every place it was read), they are not averaged. Drop the division.": _averaged,
}


# --- an RNN layer ----------------------------------------------------------------------------


def _rnn_module(carry: bool = True, activation: bool = True, both_biases: bool = True,
                transpose_hh: bool = True, use_h0: bool = True, shifted: bool = False,
                detach: bool = False) -> type:
    """An RNN layer (1 layer, batch_first), right except for the named mistake."""
    from .. import nn
    from ..tensor import stack

    class WrongRNN(nn.Module):
        def __init__(self, input_size: int, hidden_size: int, batch_first: bool = True):
            super().__init__()
            self.hidden_size = hidden_size
            reference = nn.RNN(input_size, hidden_size, batch_first=True)
            for key, value in reference.named_parameters():
                setattr(self, key, nn.Parameter(value.detach().clone()))

        def forward(self, x: Tensor, h0: Tensor | None = None) -> tuple:
            batch = x.shape[0]
            first = h0[0] if h0 is not None and use_h0 else Tensor(
                np.zeros((batch, self.hidden_size), dtype=x.dtype))
            h, outputs = first, []
            for t in range(x.shape[1]):
                previous = h if carry else first
                if detach:
                    previous = previous.detach()
                if shifted:
                    outputs.append(h)
                recurrent = self.weight_hh_l0.T if transpose_hh else self.weight_hh_l0
                total = x[:, t] @ self.weight_ih_l0.T + self.bias_ih_l0 \
                    + previous @ recurrent
                if both_biases:
                    total = total + self.bias_hh_l0
                h = total.tanh() if activation else total
                if not shifted:
                    outputs.append(h)
            return stack(outputs, dim=1), h.unsqueeze(0)

    return WrongRNN


RNN_MISTAKES = {
    "the hidden state is not carried from one step to the next: each step starts again "
    "from h_0. Keep h in a variable outside the loop and feed the step's new h to the "
    "next step: h = tanh(x_t W_ih^T + b_ih + h W_hh^T + b_hh).": _rnn_module(carry=False),
    "tanh is missing: h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh). Without it "
    "the cell is linear and h grows (or shrinks) geometrically over the steps.":
        _rnn_module(activation=False),
    "bias_hh_l0 is not added: PyTorch's RNN has two biases, bias_ih_l0 and bias_hh_l0, "
    "and adds both (they are redundant, but a state dict from PyTorch has both).":
        _rnn_module(both_biases=False),
    "weight_hh_l0 is not transposed: h @ W_hh computes a different map from h @ W_hh^T "
    "(both run, as W_hh is square). In PyTorch's layout (out, in) every weight is used "
    "as x @ W.T: h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh).":
        _rnn_module(transpose_hh=False),
    "h0 is ignored: the first step starts from zeros even when h0 is given. Start from "
    "h0[0] when h0 is not None (h0 is (1, N, hidden), one state per layer).":
        _rnn_module(use_h0=False),
    "output holds each step's state from BEFORE the step (h_0, ..., h_{L-1}): append the "
    "new h after computing it, so that output[:, t] is the state after reading x[:, t] "
    "and output[:, -1] is h_n.": _rnn_module(shifted=True),
    "the state was detached between the steps: then the gradient stops after one step and "
    "does not flow back through time. Backpropagation through time needs the graph of the "
    "whole loop (detach only between chunks, in section 8).": _rnn_module(detach=True),
}


def _rnn_run(module: Any, x: np.ndarray, h0: np.ndarray | None,
             v: tuple[np.ndarray, np.ndarray] | None) -> tuple:
    """Output, h_n, and the gradients (parameters, input, h_0) for upstream gradients v."""
    xt = Tensor(x.copy(), requires_grad=True)
    ht = Tensor(h0.copy(), requires_grad=True) if h0 is not None else None
    with enable_grad():
        result = module(xt, ht) if ht is not None else module(xt)
        if not isinstance(result, tuple) or len(result) != 2 or \
                not all(isinstance(r, Tensor) for r in result):
            return result, None, None
        output, h_n = result
        if v is not None and output.shape == v[0].shape and h_n.shape == v[1].shape:
            ((output * Tensor(v[0].astype(output.dtype))).sum()
             + (h_n * Tensor(v[1].astype(h_n.dtype))).sum()).backward()
    grads = {key: None if p.grad is None else p.grad.numpy()
             for key, p in module.named_parameters()}
    grads["input"] = None if xt.grad is None else xt.grad.numpy()
    if ht is not None:
        grads["h_0"] = None if ht.grad is None else ht.grad.numpy()
    return output.detach().numpy(), h_n.detach().numpy(), grads


@checker
def check_rnn(module: Callable, *, input_size: int = 3, hidden_size: int = 5,
              mistakes: dict | None = None, seed: int = 0, atol: float = 1e-5,
              rtol: float = 1e-4) -> None:
    """Check an RNN layer ``module(input_size, hidden_size, batch_first=True)`` whose
    ``forward(x, h0=None)`` returns ``(output, h_n)``: it gets the state dict of an
    ``nn.RNN`` (PyTorch's names), then the outputs, h_n and every gradient (parameters,
    input, h_0; random upstream gradients for both outputs) are compared, without and with
    an h_0, on inputs (N, L, input_size). ``mistakes``: ``{sentence: wrong module class}``
    (default ``RNN_MISTAKES``), run alongside."""
    from .. import nn

    mistakes = RNN_MISTAKES if mistakes is None else mistakes
    name = getattr(module, "__name__", type(module).__name__)
    built = f"{name}({input_size}, {hidden_size}, batch_first=True)"
    state = get_rng_state()
    manual_seed(seed)
    try:
        right = nn.RNN(input_size, hidden_size, batch_first=True)
        try:
            mine = module(input_size, hidden_size, batch_first=True)
        except Exception as error:  # noqa: BLE001 - the student's code
            raise _student_error(error, built) from None
        wanted = right.state_dict()
        have = mine.state_dict() if hasattr(mine, "state_dict") else {}
        if set(have) != set(wanted):
            raise CheckFailed(
                f"{built}: its parameters are {sorted(have)}, expected {sorted(wanted)}: "
                "PyTorch's names, registered as nn.Parameter attributes (two biases: "
                "bias_ih_l0 and bias_hh_l0).")
        for key, value in wanted.items():
            if as_array(have[key]).shape != as_array(value).shape:
                raise CheckFailed(f"{built}: {key} has shape {as_array(have[key]).shape}, "
                                  f"expected {as_array(value).shape} (PyTorch's layout: "
                                  "weight_ih_l0 is (hidden_size, input_size)).")
        mine.load_state_dict(wanted)
        wrong = []
        for sentence, make in mistakes.items():
            wrong_module = make(input_size, hidden_size, batch_first=True)
            wrong_module.load_state_dict(wanted)
            wrong.append((sentence, wrong_module))
        rng = np.random.default_rng(seed)
        for batch, length, with_h0 in ((2, 6, False), (3, 4, True)):
            x = rng.uniform(-2, 2, (batch, length, input_size)).astype(np.float32)
            h0 = rng.uniform(-1, 1, (1, batch, hidden_size)).astype(np.float32) \
                if with_h0 else None
            v = (rng.standard_normal((batch, length, hidden_size)),
                 rng.standard_normal((1, batch, hidden_size)))
            call = f"{built} on x of shape {x.shape}" + (
                f" and h0 of shape {h0.shape}" if with_h0 else " (no h0: zeros)")
            _check_rnn_case(mine, right, wrong, x, h0, v, call, atol, rtol)
    finally:
        set_rng_state(state)
    print(f"{name}: output, h_n and every gradient match nn.RNN's.")


def _check_rnn_case(mine, right, wrong, x, h0, v, call, atol, rtol) -> None:
    for module in (mine, right, *(m for _, m in wrong)):
        module.zero_grad()
    try:
        got = _rnn_run(mine, x, h0, v)
    except Exception as error:  # noqa: BLE001
        raise _student_error(error, call) from None
    want = _rnn_run(right, x, h0, v)
    runs = []
    for sentence, module in wrong:
        try:
            runs.append((sentence, _rnn_run(module, x, h0, v)))
        except Exception:  # noqa: BLE001, S112 - a mistake that cannot run names nothing
            continue
    if got[1] is None:
        raise CheckFailed(f"{call} returned {describe(got[0])}; expected a pair of Tensors "
                          "(output, h_n): `return output, h_n`.")
    batch, length, _ = x.shape
    hidden = want[0].shape[-1]
    if h0 is not None and got[0].ndim == 4:
        raise CheckFailed(f"{call}: the output has shape {got[0].shape}, 4 dimensions, "
                          f"expected {want[0].shape}: h0 is (num_layers, N, hidden) = "
                          f"{h0.shape}, one state per layer; start from h0[0], (N, hidden).")
    if got[0].shape == (length, batch, hidden) and length != batch:
        raise CheckFailed(f"{call}: the output has shape {got[0].shape}, (L, N, hidden); with "
                          f"batch_first=True it must be (N, L, hidden) = {want[0].shape}: "
                          "stack the steps along dim 1.")
    if got[1].shape == (batch, hidden):
        raise CheckFailed(f"{call}: h_n has shape {got[1].shape}; PyTorch's h_n is "
                          f"(num_layers, N, hidden) = {want[1].shape}, even for one layer: "
                          "h.unsqueeze(0).")
    compare(got[0], want[0], f"{call}: the output", atol=atol, rtol=rtol,
            variants=[Variant(s, run[0]) for s, run in runs])
    compare(got[1], want[1], f"{call}: h_n", atol=atol, rtol=rtol,
            variants=[Variant(s, run[1]) for s, run in runs]
            + [Variant("h_n is the hidden state after the FIRST step: it is the last "
                       "step's, output[:, -1].", want[0][:, :1].transpose(1, 0, 2))])
    for key, grad in want[2].items():
        mine_grad = got[2].get(key)
        what = (f"{call}, backward with random upstream gradients for output and h_n: "
                f"the gradient of {key}")
        if mine_grad is None:
            raise CheckFailed(f"{what} is None: no gradient reached it. Is {key} used in "
                              "forward, with minigrad operations (no numpy() or detach() on "
                              "the way)?")
        compare(mine_grad, grad, what, atol=atol, rtol=rtol,
                variants=[Variant(s, run[2][key]) for s, run in runs
                          if run[2] and run[2].get(key) is not None])


# --- one LSTM step --------------------------------------------------------------------------

GATES = "ifgo"  # PyTorch's order of the four blocks


def lstm_reference(x, h, c, weight_ih, weight_hh, bias_ih, bias_hh, order: str = GATES,
                   candidate: str = "tanh", squash_cell: bool = True,
                   both_biases: bool = True, forget: bool = True, input_gate: bool = True,
                   output_gate: bool = True, old_cell_out: bool = False,
                   interleaved: bool = False, swapped: bool = False) -> tuple:
    """One LSTM step on Tensors (or arrays: then NumPy), with the blocks read in ``order``
    (PyTorch's: ``"ifgo"``), right unless a keyword names a mistake."""
    from ..nn.recurrent import lstm_step

    if isinstance(x, np.ndarray):
        x, h, c, weight_ih, weight_hh, bias_ih, bias_hh = (
            Tensor(a) for a in (x, h, c, weight_ih, weight_hh, bias_ih, bias_hh))
        return tuple(t.numpy() for t in lstm_reference(
            x, h, c, weight_ih, weight_hh, bias_ih, bias_hh, order, candidate, squash_cell,
            both_biases, forget, input_gate, output_gate, old_cell_out, interleaved, swapped))
    gates = x @ weight_ih.T + bias_ih + h @ weight_hh.T
    if both_biases:
        gates = gates + bias_hh
    size = h.shape[-1]
    if (order, candidate, squash_cell, forget, input_gate, output_gate, old_cell_out,
            interleaved, swapped) == (GATES, "tanh", True, True, True, True, False, False,
                                      False):
        return lstm_step(gates, c, size)
    if interleaved:  # a.reshape(N, H, 4): each block takes every fourth column
        columns = gates.reshape(gates.shape[0], size, 4)
        block = {name: columns[:, :, k] for k, name in enumerate(order)}
    else:
        block = {name: gates[:, k * size:(k + 1) * size] for k, name in enumerate(order)}
    i, f, o = block["i"].sigmoid(), block["f"].sigmoid(), block["o"].sigmoid()
    g = {"tanh": block["g"].tanh(), "sigmoid": block["g"].sigmoid()}[candidate]
    c_new = (f * c if forget else c) + (i * g if input_gate else g)
    read = c if old_cell_out else c_new
    h_new = (read.tanh() if squash_cell else read) * (o if output_gate else 1.0)
    return (c_new, h_new) if swapped else (h_new, c_new)


def _lstm_mistake(**wrong: Any) -> Callable:
    return lambda *arrays: lstm_reference(*arrays, **wrong)


LSTM_CELL_MISTAKES = {
    **{f"the gates are not in PyTorch's order: you read the four blocks of the "
       f"pre-activations as ({', '.join(order)}), PyTorch packs them as (i, f, g, o): "
       "input gate, forget gate, cell candidate, output gate, each hidden_size rows of "
       "weight_ih / weight_hh (or, the same thing, you used one block where another "
       "belongs in the formulas).": _lstm_mistake(order="".join(order))
       for order in itertools.permutations(GATES) if "".join(order) != GATES},
    "the cell candidate g went through a sigmoid: g is the new content written into the "
    "cell, in (-1, 1), so it takes tanh; only the three gates i, f, o take sigmoid.":
        _lstm_mistake(candidate="sigmoid"),
    "tanh is missing on the cell in h = o * tanh(c): the hidden state reads out a "
    "squashed copy of the cell, h_new = o * tanh(c_new).": _lstm_mistake(squash_cell=False),
    "bias_hh is not added: PyTorch's LSTM has two biases and adds both, gates = x W_ih^T "
    "+ b_ih + h W_hh^T + b_hh.": _lstm_mistake(both_biases=False),
    "the forget gate is not applied to the old cell: c_new = f * c + i * g (the forget "
    "gate decides how much of c to keep).": _lstm_mistake(forget=False),
    "the input gate is not applied to the candidate: c_new = f * c + i * g (the input "
    "gate decides how much of g to write).": _lstm_mistake(input_gate=False),
    "the output gate is missing: h_new = o * tanh(c_new) (the output gate decides how "
    "much of the cell to show).": _lstm_mistake(output_gate=False),
    "h_new reads the OLD cell, o * tanh(c): compute c_new first, then h_new = o * "
    "tanh(c_new).": _lstm_mistake(old_cell_out=True),
    "the four blocks were read as interleaved columns (a.reshape(N, H, 4)[:, :, k]): "
    "they are contiguous, hidden_size columns each, a[:, k * H:(k + 1) * H] (or "
    "a.reshape(N, 4, H)[:, k]).": _lstm_mistake(interleaved=True),
    "h_new and c_new are swapped: return (h_new, c_new), in that order.":
        _lstm_mistake(swapped=True),
}


@checker
def check_lstm_cell(function: Callable, *, input_size: int = 4, hidden_size: int = 5,
                    batch: int = 3, mistakes: dict | None = None, seed: int = 0,
                    atol: float = 1e-6, rtol: float = 1e-4) -> None:
    """Check one LSTM step ``function(x, h, c, weight_ih, weight_hh, bias_ih, bias_hh) ->
    (h_new, c_new)`` on float64 Tensors (weights in PyTorch's layout, gates i, f, g, o)
    against minigrad's ``lstm_step``: both outputs, then every input's gradient for random
    upstream gradients of both. ``mistakes``: ``{sentence: fn(*arrays) -> (h, c)}``
    (default ``LSTM_CELL_MISTAKES``)."""
    mistakes = LSTM_CELL_MISTAKES if mistakes is None else mistakes
    name = getattr(function, "__name__", type(function).__name__)
    rng = np.random.default_rng(seed)
    names = ("x", "h", "c", "weight_ih", "weight_hh", "bias_ih", "bias_hh")
    shapes = ((batch, input_size), (batch, hidden_size), (batch, hidden_size),
              (4 * hidden_size, input_size), (4 * hidden_size, hidden_size),
              (4 * hidden_size,), (4 * hidden_size,))
    arrays = [rng.uniform(-1.5, 1.5, shape) for shape in shapes]
    call = f"{name}(" + ", ".join(f"{n} {s}" for n, s in zip(names, shapes)) + ")"
    v = (rng.standard_normal((batch, hidden_size)), rng.standard_normal((batch, hidden_size)))
    tensors = [Tensor(a.copy(), requires_grad=True) for a in arrays]
    try:
        with enable_grad():
            result = function(*tensors)
    except Exception as error:  # noqa: BLE001 - the student's code
        raise _student_error(error, call) from None
    if not isinstance(result, tuple) or len(result) != 2 or \
            not all(isinstance(r, Tensor) for r in result):
        raise CheckFailed(f"{call} returned {describe(result)}; expected a pair of Tensors "
                          "(h_new, c_new): `return h_new, c_new`.")
    right = [Tensor(a.copy(), requires_grad=True) for a in arrays]
    with enable_grad():
        expected = lstm_reference(*right)
        ((expected[0] * Tensor(v[0])).sum() + (expected[1] * Tensor(v[1])).sum()).backward()
    wrong = [(s, make(*arrays)) for s, make in mistakes.items()]
    for k, label in enumerate(("h_new", "c_new")):
        compare(result[k], expected[k].detach().numpy(), f"{call}: {label}", atol=atol,
                rtol=rtol, variants=[Variant(s, w[k]) for s, w in wrong])
    if not any(r.requires_grad for r in result):
        raise CheckFailed(f"{call}: h_new and c_new have no history, so no gradient can reach "
                          "the weights: build them from minigrad operations on the Tensors "
                          "you are given (no .numpy() on the way).")
    try:
        with enable_grad():
            total = sum((r * Tensor(g)).sum() for r, g in zip(result, v) if r.requires_grad)
            total.backward()
    except Exception as error:  # noqa: BLE001
        raise _student_error(error, f"{call}: backward") from None
    for label, mine, ref in zip(names, tensors, right):
        what = f"{call}, backward with random upstream gradients: the gradient of {label}"
        if mine.grad is None:
            raise CheckFailed(f"{what} is None: is {label} used, with minigrad operations?")
        compare(mine.grad.numpy(), ref.grad.numpy(), what, atol=atol, rtol=rtol)
    print(f"{name}: h and c and all 7 gradients match PyTorch's LSTM step (gates i, f, g, o).")


# --- sampling from a character model ------------------------------------------------------


class CharModel(Module):
    """Embedding, LSTM (batch_first), linear head: ``model(ids (N, L), state=None) ->
    (logits (N, L, V), (h, c))`` (a class of this module's own, so that a grader can
    hand it to the student's code in another process)."""

    def __init__(self, vocab_size: int) -> None:
        from .. import nn

        super().__init__()
        self.embed = nn.Embedding(vocab_size, 8)
        self.lstm = nn.LSTM(8, 16, batch_first=True)
        self.head = nn.Linear(16, vocab_size)

    def forward(self, ids: Tensor, state: tuple | None = None) -> tuple:
        out, state = self.lstm(self.embed(ids), state)
        return self.head(out), state


def tiny_char_model(vocab_size: int, seed: int = 3) -> Any:
    """What the checker samples from: embedding, LSTM (batch_first), linear head, with
    random weights made peaked enough that sampling differs from argmax and the
    temperature matters. ``model(ids (N, L), state=None) -> (logits (N, L, V), (h, c))``."""
    saved = get_rng_state()
    manual_seed(seed)
    try:
        model = CharModel(vocab_size)
    finally:
        set_rng_state(saved)
    with no_grad():
        model.lstm.weight_hh_l0.copy_(model.lstm.weight_hh_l0 * 4.0)
        model.head.weight.copy_(model.head.weight * 6.0)
    return model


def reference_generate(model: Any, tokenizer: Any, prompt: str, n: int,
                       temperature: float = 1.0, *, carry: bool = True, greedy: bool = False,
                       times_temperature: bool = False, first_position: bool = False,
                       with_prompt: bool = True, refeed_last: bool = False,
                       ignore_temperature: bool = False, refeed_all: bool = False) -> str:
    """The right sampler (every keyword off), or one with the named mistake."""
    from ..nn import functional as F
    from ..torch_functions import multinomial

    ids = [int(i) for i in tokenizer.encode(prompt)]
    with no_grad():
        logits, state = model(Tensor(np.array([ids])))
        if refeed_last:
            logits, state = model(Tensor(np.array([[ids[-1]]])), state)
        new = []
        for _ in range(n):
            last = logits[0, 0] if first_position else logits[0, -1]
            scaled = last * temperature if times_temperature else last / temperature
            if ignore_temperature:
                scaled = last
            probs = F.softmax(scaled, dim=-1)
            if greedy:
                next_id = int(probs.argmax().item())
            else:
                next_id = int(multinomial(probs, num_samples=1).item())
            new.append(next_id)
            fed = ids + new if refeed_all else [next_id]
            logits, state = model(Tensor(np.array([fed])), state if carry else None)
    return tokenizer.decode((ids if with_prompt else []) + new)


def _sampler(**wrong: Any) -> Callable:
    return lambda *args: reference_generate(*args, **wrong)


GENERATE_MISTAKES = {
    "the state is not carried: each new character was fed to the model alone, without "
    "the state returned by the previous call, so the model forgets everything before it. "
    "Keep `state` and pass it back: logits, state = model(next_ids, state).":
        _sampler(carry=False),
    "the next character is the most likely one (argmax): that is greedy decoding, not "
    "sampling. Draw it: mg.multinomial(probs, num_samples=1).": _sampler(greedy=True),
    "the logits were multiplied by the temperature: divide them, logits / temperature, "
    "so that a temperature below 1 sharpens the distribution and above 1 flattens it.":
        _sampler(times_temperature=True),
    "the next character was sampled from the logits of the FIRST position: the "
    "prediction for the next character is at the last position, logits[0, -1].":
        _sampler(first_position=True),
    "the returned text does not start with the prompt: return the prompt followed by the "
    "n new characters.": _sampler(with_prompt=False),
    "the prompt's last character was fed to the model twice: after running the prompt, "
    "its logits at the last position already predict the first new character.":
        _sampler(refeed_last=True),
    "the temperature changes nothing: dividing the probabilities by it (softmax(logits) "
    "/ temperature) does not, as mg.multinomial normalises them again. Divide the LOGITS "
    "before the softmax: F.softmax(logits[0, -1] / temperature, dim=-1).":
        _sampler(ignore_temperature=True),
    "the whole text was fed again at each step, WITH the state: the state has already "
    "read it, so the model reads it twice. Either feed only the new character with the "
    "state, or the whole text without a state (slower).": _sampler(refeed_all=True),
}


GENERATE_CASES = (("the ", 25, 1.0), ("a", 15, 0.5), ("the cat ", 12, 2.0))


@checker
def check_generate(generate: Callable, *, mistakes: dict | None = None, seed: int = 0,
                   cases: tuple = GENERATE_CASES) -> None:
    """Check a sampler ``generate(model, tokenizer, prompt, n, temperature=1.0) -> str``
    on a small LSTM character model: under the same seed it must return exactly what the
    reference sampler (``reference_generate``) returns, for each ``(prompt, n,
    temperature)`` of ``cases`` (three by default), and the same text twice.
    ``mistakes``: ``{sentence: a wrong generate}`` (default ``GENERATE_MISTAKES``), each
    run under the same seed."""
    from ..data import CharTokenizer, make_char_corpus

    mistakes = GENERATE_MISTAKES if mistakes is None else mistakes
    name = getattr(generate, "__name__", type(generate).__name__)
    tokenizer = CharTokenizer(make_char_corpus(50, seed=0))
    model = tiny_char_model(tokenizer.vocab_size)
    state = get_rng_state()
    try:
        for k, (prompt, n, temperature) in enumerate(cases):
            call = f"{name}(model, tokenizer, {prompt!r}, {n}, temperature={temperature})"

            def run(sampler: Callable, args: tuple = (prompt, n, temperature),
                    at: int = seed + k) -> Any:
                manual_seed(at)
                return sampler(model, tokenizer, *args)

            try:
                got = run(generate)
                again = run(generate)
            except Exception as error:  # noqa: BLE001 - the student's code
                raise _student_error(error, call) from None
            expected = run(reference_generate)
            if not isinstance(got, str):
                raise CheckFailed(f"{call} returned {describe(got)}; expected a str: "
                                  "tokenizer.decode(ids).")
            if got != again:
                raise CheckFailed(f"{call} gave two different texts under the same seed "
                                  f"({got!r}, then {again!r}): draw only with "
                                  "mg.multinomial (the seeded global generator), never "
                                  "with np.random or random.")
            if got == expected:
                continue
            for sentence, wrong in mistakes.items():
                if got == run(wrong):
                    raise CheckFailed(f"{call} returned {got!r}, expected {expected!r} "
                                      f"under the same seed.\n  It looks like {sentence}")
            if len(got) != len(prompt) + n:
                raise CheckFailed(f"{call} returned {len(got)} characters ({got!r}); "
                                  f"expected the prompt and {n} new ones, {len(prompt) + n}.")
            differ = next(i for i, (a, b) in enumerate(zip(got + "\0", expected)) if a != b)
            raise CheckFailed(
                f"{call} returned {got!r}, expected {expected!r} under the same seed: they "
                f"differ from character {differ} on. Sample each character with "
                "probs = F.softmax(logits[0, -1] / temperature, dim=-1) and "
                "mg.multinomial(probs, num_samples=1), exactly once per new character, "
                "and feed it back with the state.")
    finally:
        set_rng_state(state)
    print(f"{name}: the same text as the reference sampler under the same seed "
          f"({len(cases)} prompts).")


__all__ = ["EMBEDDING_MISTAKES", "GENERATE_MISTAKES", "LSTM_CELL_MISTAKES", "RNN_MISTAKES",
           "check_generate", "check_lstm_cell", "check_rnn",
           "embedding_gradient", "lstm_reference", "reference_generate",
           "tiny_char_model"]
