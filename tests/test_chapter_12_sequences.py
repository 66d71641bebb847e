"""Chapter 12 (sequences): the chapter's claims against PyTorch (nn.LSTM's gate order
i, f, g, o and its two biases, nn.RNN's layout and h_n, the embedding's scatter-add),
the reference answers against PyTorch, and the checks of its exercises, each of which
must name its classic mistakes (minigrad/exercises/sequences.py)."""

from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest

import minigrad as mg
import minigrad.nn.functional as F
from minigrad import nn
from minigrad.exercises import check_function
from minigrad.exercises.sequences import (EMBEDDING_MISTAKES, GENERATE_MISTAKES,
                                          LSTM_CELL_MISTAKES, RNN_MISTAKES, check_generate,
                                          check_lstm_cell, check_rnn, embedding_gradient,
                                          lstm_reference, reference_generate)

CHAPTER = pathlib.Path(__file__).resolve().parents[1] / "notebooks" / "12_sequences.ipynb"


def _answers() -> dict:
    """The chapter's solution cells, run: MyEmbeddingFunction, MyRNN, lstm_cell, generate."""
    namespace = {"mg": mg, "np": np, "nn": nn, "F": F}
    for cell in json.loads(CHAPTER.read_text(encoding="utf-8"))["cells"]:
        if cell["metadata"].get("nbgrader", {}).get("solution") and cell["cell_type"] == "code":
            exec("".join(cell["source"]), namespace)
    return namespace


ANSWERS = _answers()


def _squeezed(text: str) -> str:
    return " ".join(text.split())


# --- the claims, against PyTorch -------------------------------------------------------------


def _torch_lstm(torch, input_size=3, hidden_size=5, seed=0):
    torch.manual_seed(seed)
    return torch.nn.LSTM(input_size, hidden_size, batch_first=True).double()


def _lstm_weights(lstm) -> list[np.ndarray]:
    return [getattr(lstm, f"{name}_l0").detach().numpy().copy()
            for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")]


def test_minigrad_s_lstm_and_the_answer_unrolled_are_pytorch_s_lstm(torch):
    theirs = _torch_lstm(torch)
    rng = np.random.default_rng(0)
    x, h0, c0 = rng.standard_normal((2, 6, 3)), rng.standard_normal((1, 2, 5)), \
        rng.standard_normal((1, 2, 5))
    g_out, g_h = rng.standard_normal((2, 6, 5)), rng.standard_normal((1, 2, 5))
    tx = torch.tensor(x, requires_grad=True)
    out, (h_n, c_n) = theirs(tx, (torch.tensor(h0), torch.tensor(c0)))
    ((out * torch.tensor(g_out)).sum() + (h_n * torch.tensor(g_h)).sum()).backward()
    weights = _lstm_weights(theirs)

    ours = nn.LSTM(3, 5, batch_first=True, dtype=mg.float64)
    ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    mx = mg.tensor(x, requires_grad=True)
    m_out, (m_h, m_c) = ours(mx, (mg.tensor(h0), mg.tensor(c0)))
    ((m_out * mg.tensor(g_out)).sum() + (m_h * mg.tensor(g_h)).sum()).backward()
    np.testing.assert_allclose(m_out.detach().numpy(), out.detach().numpy(), rtol=1e-10)
    np.testing.assert_allclose(m_c.detach().numpy(), c_n.detach().numpy(), rtol=1e-10)
    np.testing.assert_allclose(mx.grad.numpy(), tx.grad.numpy(), rtol=1e-8, atol=1e-12)
    for name in ("weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0"):
        np.testing.assert_allclose(getattr(ours, name).grad.numpy(),
                                   getattr(theirs, name).grad.numpy(), rtol=1e-8, atol=1e-12)

    params = [mg.tensor(w, requires_grad=True) for w in weights]
    ax = mg.tensor(x, requires_grad=True)
    h, c, steps = mg.tensor(h0[0]), mg.tensor(c0[0]), []
    for t in range(6):
        h, c = ANSWERS["lstm_cell"](ax[:, t], h, c, *params)
        steps.append(h)
    a_out = mg.stack(steps, dim=1)
    ((a_out * mg.tensor(g_out)).sum() + (h * mg.tensor(g_h[0])).sum()).backward()
    np.testing.assert_allclose(a_out.detach().numpy(), out.detach().numpy(), rtol=1e-10)
    np.testing.assert_allclose(c.detach().numpy(), c_n[0].detach().numpy(), rtol=1e-10)
    np.testing.assert_allclose(ax.grad.numpy(), tx.grad.numpy(), rtol=1e-8, atol=1e-12)
    for param, name in zip(params, ("weight_ih_l0", "weight_hh_l0", "bias_ih_l0",
                                    "bias_hh_l0")):
        np.testing.assert_allclose(param.grad.numpy(), getattr(theirs, name).grad.numpy(),
                                   rtol=1e-8, atol=1e-12)


def test_pytorch_packs_the_lstm_gates_as_i_f_g_o_with_two_biases(torch):
    """One step of torch's LSTM is the checker's reference with the blocks read as i, f, g,
    o and both biases added, and none of the wrong readings the check names."""
    theirs = _torch_lstm(torch, 4, 5, seed=1)
    with torch.no_grad():  # biases of their own size, so that a missing one shows
        theirs.bias_hh_l0.copy_(torch.linspace(-2, 2, 20, dtype=torch.float64))
    rng = np.random.default_rng(1)
    x, h, c = rng.standard_normal((3, 4)), rng.standard_normal((3, 5)), \
        rng.standard_normal((3, 5))
    _, (h_n, c_n) = theirs(torch.tensor(x[:, None]), (torch.tensor(h[None]),
                                                       torch.tensor(c[None])))
    arrays = [x, h, c, *_lstm_weights(theirs)]
    right = lstm_reference(*arrays)
    np.testing.assert_allclose(right[0], h_n[0].detach().numpy(), rtol=1e-10)
    np.testing.assert_allclose(right[1], c_n[0].detach().numpy(), rtol=1e-10)
    for sentence, wrong in LSTM_CELL_MISTAKES.items():
        h_wrong, c_wrong = wrong(*arrays)
        assert not (np.allclose(h_wrong, right[0]) and np.allclose(c_wrong, right[1])), \
            sentence
    cell = torch.nn.LSTMCell(4, 5).double()
    with torch.no_grad():
        for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
            getattr(cell, name).copy_(getattr(theirs, name + "_l0"))
    h_cell, c_cell = cell(torch.tensor(x), (torch.tensor(h), torch.tensor(c)))
    np.testing.assert_allclose(right[0], h_cell.detach().numpy(), rtol=1e-10)
    np.testing.assert_allclose(right[1], c_cell.detach().numpy(), rtol=1e-10)


@pytest.mark.parametrize("with_h0", [False, True])
def test_the_rnn_answer_and_minigrad_s_rnn_are_pytorch_s(torch, with_h0):
    torch.manual_seed(2)
    theirs = torch.nn.RNN(3, 5, batch_first=True)
    state = {k: v.detach().numpy() for k, v in theirs.state_dict().items()}
    assert list(state) == ["weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0"]
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 7, 3)).astype(np.float32)
    h0 = rng.standard_normal((1, 2, 5)).astype(np.float32) if with_h0 else None
    g_out, g_h = rng.standard_normal((2, 7, 5)), rng.standard_normal((1, 2, 5))
    tx = torch.tensor(x, requires_grad=True)
    out, h_n = theirs(tx, torch.tensor(h0)) if with_h0 else theirs(tx)
    assert tuple(h_n.shape) == (1, 2, 5)
    ((out * torch.tensor(g_out)).sum() + (h_n * torch.tensor(g_h)).sum()).backward()
    for layer in (ANSWERS["MyRNN"](3, 5), nn.RNN(3, 5, batch_first=True)):
        layer.load_state_dict(state)
        mx = mg.tensor(x, requires_grad=True)
        m_out, m_h = layer(mx, mg.tensor(h0)) if with_h0 else layer(mx)
        ((m_out * mg.tensor(g_out)).sum() + (m_h * mg.tensor(g_h)).sum()).backward()
        np.testing.assert_allclose(m_out.detach().numpy(), out.detach().numpy(), atol=1e-6)
        np.testing.assert_allclose(m_h.detach().numpy(), h_n.detach().numpy(), atol=1e-6)
        np.testing.assert_allclose(mx.grad.numpy(), tx.grad.numpy(), atol=1e-5)
        for name, param in layer.named_parameters():
            np.testing.assert_allclose(param.grad.numpy(),
                                       getattr(theirs, name).grad.numpy(), atol=1e-5)


def test_the_embedding_s_backward_adds_repeated_tokens_as_pytorch(torch):
    rng = np.random.default_rng(3)
    weight, indices = rng.standard_normal((6, 4)), np.array([[1, 3, 1, 5], [0, 0, 2, 1]])
    g = rng.standard_normal((2, 4, 4))
    tw = torch.tensor(weight, requires_grad=True)
    out = torch.nn.functional.embedding(torch.tensor(indices), tw)
    out.backward(torch.tensor(g))
    np.testing.assert_allclose(embedding_gradient(weight, indices, g), tw.grad.numpy())
    mw = mg.tensor(weight, requires_grad=True)
    mine = ANSWERS["MyEmbeddingFunction"].apply(mw, indices)
    (mine * mg.tensor(g)).sum().backward()
    np.testing.assert_allclose(mine.detach().numpy(), out.detach().numpy())
    np.testing.assert_allclose(mw.grad.numpy(), tw.grad.numpy())
    assigned = EMBEDDING_MISTAKES[next(iter(EMBEDDING_MISTAKES))](weight, indices, g)[0]
    assert not np.allclose(assigned, tw.grad.numpy())  # the repeats are what it loses


def test_clip_grad_norm_keeps_the_direction_as_pytorch(torch):
    rng = np.random.default_rng(4)
    grads = [rng.standard_normal((3, 4)) * 100, rng.standard_normal(4)]
    ours = [mg.tensor(np.zeros_like(g), requires_grad=True) for g in grads]
    theirs = [torch.zeros(g.shape, dtype=torch.float64, requires_grad=True) for g in grads]
    for o, t, g in zip(ours, theirs, grads):
        o.grad, t.grad = mg.tensor(g.copy()), torch.tensor(g.copy())
    total = nn.utils.clip_grad_norm_(ours, 1.0)
    assert np.isclose(total.item(), torch.nn.utils.clip_grad_norm_(theirs, 1.0).item())
    for o, t, g in zip(ours, theirs, grads):
        np.testing.assert_allclose(o.grad.numpy(), t.grad.numpy())
        np.testing.assert_allclose(o.grad.numpy() * total.item(), g, rtol=1e-6)


# --- the checks name each mistake -------------------------------------------------------------


def _embedding_with(gradient):
    class WrongEmbedding(mg.Function):
        @staticmethod
        def forward(ctx, weight, indices):
            ctx.save_for_backward(weight)
            ctx.indices = indices
            return weight[indices]

        @staticmethod
        def backward(ctx, grad_output):
            (weight,) = ctx.saved_tensors
            return gradient(weight, ctx.indices, grad_output)

    return WrongEmbedding


def _check_embedding(function):
    check_function(function, inputs=[[(6, 4), np.array([[1, 3, 1, 5], [0, 0, 2, 1]])],
                                     [(6, 4), np.array([2, 2, 2, 0])]],
                   reference=lambda weight, indices: F.embedding(indices, weight),
                   mistakes=EMBEDDING_MISTAKES, exact_shapes=True)


@pytest.mark.parametrize("mistake", list(EMBEDDING_MISTAKES))
def test_the_embedding_check_names_each_mistake(mistake):
    with pytest.raises(AssertionError) as error:
        _check_embedding(_embedding_with(EMBEDDING_MISTAKES[mistake]))
    assert mistake[:50] in _squeezed(str(error.value))


def test_the_embedding_check_passes_the_answer_and_fails_a_blank_one():
    _check_embedding(ANSWERS["MyEmbeddingFunction"])
    _check_embedding(_embedding_with(lambda w, i, g: (embedding_gradient(w, i, g), None)))

    def blank(*arrays):
        raise NotImplementedError()

    with pytest.raises(AssertionError, match="NotImplementedError"):
        _check_embedding(_embedding_with(blank))


@pytest.mark.parametrize("mistake", list(RNN_MISTAKES))
def test_the_rnn_check_names_each_mistake(mistake):
    with pytest.raises(AssertionError) as error:
        check_rnn(RNN_MISTAKES[mistake])
    assert mistake[:50] in _squeezed(str(error.value))


def _rnn_returning(shape_mistake):
    class Wrong(ANSWERS["MyRNN"]):
        def forward(self, x, h0=None):
            output, h_n = super().forward(x, h0)
            if shape_mistake == "h_n without its layer dimension":
                return output, h_n[0]
            if shape_mistake == "time first":
                return output.transpose(0, 1), h_n
            if shape_mistake == "h_n after the first step":
                return output, output[:, :1].transpose(0, 1)
            return output

    return Wrong


@pytest.mark.parametrize("shape_mistake, words", [
    ("h_n without its layer dimension", "even for one layer: h.unsqueeze(0)"),
    ("time first", "with batch_first=True it must be (N, L, hidden)"),
    ("h_n after the first step", "h_n is the hidden state after the FIRST step"),
    ("only the output", "expected a pair of Tensors (output, h_n)")])
def test_the_rnn_check_names_what_it_returns_wrong(shape_mistake, words):
    with pytest.raises(AssertionError) as error:
        check_rnn(_rnn_returning(shape_mistake))
    assert words in _squeezed(str(error.value))


def test_the_rnn_check_names_an_h0_used_with_its_layer_dimension():
    class WholeH0(ANSWERS["MyRNN"]):
        def forward(self, x, h0=None):  # h starts as h0, (1, N, H): every step broadcasts
            h = h0 if h0 is not None else mg.zeros(x.shape[0], self.hidden_size)
            outputs = []
            for t in range(x.shape[1]):
                h = (x[:, t] @ self.weight_ih_l0.T + self.bias_ih_l0
                     + h @ self.weight_hh_l0.T + self.bias_hh_l0).tanh()
                outputs.append(h)
            return mg.stack(outputs, dim=1), h.reshape(1, x.shape[0], -1)

    with pytest.raises(AssertionError) as error:
        check_rnn(WholeH0)
    assert "one state per layer; start from h0[0]" in _squeezed(str(error.value))


def test_the_rnn_check_names_pytorch_s_parameter_names_and_passes_the_answer():
    check_rnn(ANSWERS["MyRNN"])
    check_rnn(lambda i, h, batch_first: nn.RNN(i, h, batch_first=batch_first))

    class OneBias(nn.Module):
        def __init__(self, input_size, hidden_size, batch_first=True):
            super().__init__()
            self.weight_ih_l0 = nn.Parameter(mg.zeros(hidden_size, input_size))
            self.weight_hh_l0 = nn.Parameter(mg.zeros(hidden_size, hidden_size))
            self.bias = nn.Parameter(mg.zeros(hidden_size))

    with pytest.raises(AssertionError) as error:
        check_rnn(OneBias)
    assert "two biases: bias_ih_l0 and bias_hh_l0" in _squeezed(str(error.value))


@pytest.mark.parametrize("mistake", list(LSTM_CELL_MISTAKES))
def test_the_lstm_check_names_each_mistake(mistake):
    wrong = LSTM_CELL_MISTAKES[mistake]

    def lstm_cell(*tensors):  # the same mistake, on Tensors
        return lstm_reference(*tensors, **_keywords(wrong, tensors))

    with pytest.raises(AssertionError) as error:
        check_lstm_cell(lstm_cell)
    assert mistake[:80] in _squeezed(str(error.value))


def _keywords(wrong, tensors) -> dict:
    """The keywords of lstm_reference that a mistake of LSTM_CELL_MISTAKES uses (read from
    the lambda's closure)."""
    return wrong.__closure__[0].cell_contents


def test_the_lstm_check_passes_the_answer_and_minigrad_s_cell_and_fails_a_blank_one():
    check_lstm_cell(ANSWERS["lstm_cell"])
    check_lstm_cell(lambda *tensors: lstm_reference(*tensors))

    def detached(x, h, c, *weights):
        h_new, c_new = ANSWERS["lstm_cell"](x, h, c, *weights)
        return mg.tensor(h_new.numpy()), mg.tensor(c_new.numpy())

    with pytest.raises(AssertionError, match="have no history"):
        check_lstm_cell(detached)

    def blank(*tensors):
        raise NotImplementedError()

    with pytest.raises(AssertionError, match="NotImplementedError"):
        check_lstm_cell(blank)


@pytest.mark.parametrize("mistake", list(GENERATE_MISTAKES))
def test_the_generate_check_names_each_mistake(mistake):
    with pytest.raises(AssertionError) as error:
        check_generate(GENERATE_MISTAKES[mistake])
    assert mistake[:50] in _squeezed(str(error.value))


def test_the_generate_check_passes_the_answer_and_names_an_unseeded_or_doubled_one():
    check_generate(ANSWERS["generate"])
    check_generate(reference_generate)

    def unseeded(model, tokenizer, prompt, n, temperature=1.0):
        return prompt + tokenizer.decode(np.random.randint(0, tokenizer.vocab_size, n))

    with pytest.raises(AssertionError, match="under the same seed"):
        check_generate(unseeded)

    def twice(*args):
        return 2 * ANSWERS["generate"](*args)

    with pytest.raises(AssertionError, match="expected the prompt and"):
        check_generate(twice)


def test_the_rnn_lstm_and_generate_checks_fail_a_blank_answer():
    class Blank(nn.Module):
        def __init__(self, input_size, hidden_size, batch_first=True):
            raise NotImplementedError()

    with pytest.raises(AssertionError, match="NotImplementedError"):
        check_rnn(Blank)

    def blank_generate(*args):
        raise NotImplementedError()

    with pytest.raises(AssertionError, match="NotImplementedError"):
        check_generate(blank_generate)
