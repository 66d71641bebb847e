"""RNN and LSTM against PyTorch's, with PyTorch's weights loaded: outputs, final states,
input and state gradients and every parameter gradient; plus parameter names and
initialisation, dropout between layers, gradcheck and the errors a student meets first."""

from __future__ import annotations

import math

import numpy as np
import pytest
from torch_reference import assert_parameter_gradients_match, load_torch_weights

import minigrad as mg
from minigrad import nn


def as_states(tensors):
    """The optional second argument: nothing, h_0 (RNN), or (h_0, c_0) (LSTM)."""
    if not tensors:
        return None
    return tensors[0] if len(tensors) == 1 else tuple(tensors)


def flatten(result):
    """(output, h_n) or (output, (h_n, c_n)) as a flat list of tensors."""
    output, states = result
    return [output] + (list(states) if isinstance(states, tuple) else [states])


def compare_with_torch(torch, ours, theirs, input_shape, state_shapes=(), rtol=1e-10,
                       atol=1e-12):
    """Run both modules in float64 on the same input (and initial states) and compare every
    result, and after a backward pass with a random upstream gradient on every result, the
    gradients of the input, the states and every parameter."""
    theirs = theirs.double()
    load_torch_weights(ours, theirs)
    ours.double()
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(shape) for shape in (input_shape, *state_shapes)]
    ours_in = [mg.tensor(a, requires_grad=True) for a in arrays]
    theirs_in = [torch.tensor(a, requires_grad=True) for a in arrays]
    ours_out = flatten(ours(ours_in[0], as_states(ours_in[1:])))
    theirs_out = flatten(theirs(theirs_in[0], as_states(theirs_in[1:])))
    assert len(ours_out) == len(theirs_out)
    for a, b in zip(ours_out, theirs_out):
        assert a.shape == tuple(b.shape)
        np.testing.assert_allclose(a.numpy(), b.detach().numpy(), rtol, atol)
    upstream = [rng.standard_normal(tuple(b.shape)) for b in theirs_out]
    sum((a * g).sum() for a, g in zip(ours_out, upstream)).backward()
    sum((b * torch.tensor(g)).sum() for b, g in zip(theirs_out, upstream)).backward()
    for a, b in zip(ours_in, theirs_in):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol, atol)
    assert_parameter_gradients_match(ours, theirs, rtol, atol)


# --- RNN against PyTorch --------------------------------------------------------------------


def test_rnn_with_tanh_matches_pytorch(torch):
    compare_with_torch(torch, nn.RNN(3, 4), torch.nn.RNN(3, 4), (5, 2, 3))


def test_rnn_with_relu_matches_pytorch(torch):
    compare_with_torch(torch, nn.RNN(3, 4, nonlinearity="relu"),
                       torch.nn.RNN(3, 4, nonlinearity="relu"), (5, 2, 3))


def test_rnn_with_two_layers_matches_pytorch(torch):
    compare_with_torch(torch, nn.RNN(3, 4, num_layers=2), torch.nn.RNN(3, 4, num_layers=2),
                       (5, 2, 3))


def test_rnn_with_a_given_h0_matches_pytorch(torch):
    compare_with_torch(torch, nn.RNN(3, 4, num_layers=2), torch.nn.RNN(3, 4, num_layers=2),
                       (5, 2, 3), [(2, 2, 4)])


def test_rnn_batch_first_matches_pytorch(torch):
    compare_with_torch(torch, nn.RNN(3, 4, batch_first=True),
                       torch.nn.RNN(3, 4, batch_first=True), (2, 5, 3), [(1, 2, 4)])


def test_rnn_on_an_unbatched_input_matches_pytorch(torch):
    compare_with_torch(torch, nn.RNN(3, 4), torch.nn.RNN(3, 4), (5, 3), [(1, 4)])


def test_rnn_without_bias_matches_pytorch(torch):
    compare_with_torch(torch, nn.RNN(3, 4, bias=False), torch.nn.RNN(3, 4, bias=False),
                       (5, 2, 3))


def test_bidirectional_rnn_with_two_layers_matches_pytorch(torch):
    compare_with_torch(torch, nn.RNN(3, 4, num_layers=2, bidirectional=True),
                       torch.nn.RNN(3, 4, num_layers=2, bidirectional=True), (5, 2, 3),
                       [(4, 2, 4)])


# --- LSTM against PyTorch -------------------------------------------------------------------


def test_lstm_matches_pytorch(torch):
    compare_with_torch(torch, nn.LSTM(3, 4), torch.nn.LSTM(3, 4), (5, 2, 3))


def test_lstm_with_two_layers_matches_pytorch(torch):
    compare_with_torch(torch, nn.LSTM(3, 4, num_layers=2), torch.nn.LSTM(3, 4, num_layers=2),
                       (5, 2, 3))


def test_lstm_batch_first_matches_pytorch(torch):
    compare_with_torch(torch, nn.LSTM(3, 4, batch_first=True),
                       torch.nn.LSTM(3, 4, batch_first=True), (2, 5, 3))


def test_lstm_with_given_h0_and_c0_matches_pytorch(torch):
    compare_with_torch(torch, nn.LSTM(3, 4, num_layers=2), torch.nn.LSTM(3, 4, num_layers=2),
                       (5, 2, 3), [(2, 2, 4), (2, 2, 4)])


def test_lstm_on_an_unbatched_input_matches_pytorch(torch):
    compare_with_torch(torch, nn.LSTM(3, 4), torch.nn.LSTM(3, 4), (5, 3))


def test_lstm_on_an_unbatched_input_with_given_states_matches_pytorch(torch):
    compare_with_torch(torch, nn.LSTM(3, 4, num_layers=2), torch.nn.LSTM(3, 4, num_layers=2),
                       (5, 3), [(2, 4), (2, 4)])


def test_lstm_without_bias_matches_pytorch(torch):
    compare_with_torch(torch, nn.LSTM(3, 4, bias=False), torch.nn.LSTM(3, 4, bias=False),
                       (5, 2, 3))


def test_bidirectional_lstm_with_two_layers_matches_pytorch(torch):
    compare_with_torch(torch, nn.LSTM(3, 4, num_layers=2, bidirectional=True, batch_first=True),
                       torch.nn.LSTM(3, 4, num_layers=2, bidirectional=True, batch_first=True),
                       (2, 5, 3), [(4, 2, 4), (4, 2, 4)])


def test_lstm_in_float32_matches_pytorch(torch):
    theirs = torch.nn.LSTM(3, 4)
    ours = nn.LSTM(3, 4)
    load_torch_weights(ours, theirs)
    x = np.random.default_rng(0).standard_normal((5, 2, 3)).astype(np.float32)
    output, (h_n, c_n) = ours(mg.tensor(x))
    expected, (expected_h, expected_c) = theirs(torch.tensor(x))
    assert output.dtype == np.float32
    np.testing.assert_allclose(output.numpy(), expected.detach().numpy(), atol=1e-6)
    np.testing.assert_allclose(c_n.numpy(), expected_c.detach().numpy(), atol=1e-6)


# --- parameters -----------------------------------------------------------------------------


@pytest.mark.parametrize("kind, kwargs", [
    ("RNN", {}), ("RNN", {"num_layers": 3, "bidirectional": True}),
    ("RNN", {"bias": False, "nonlinearity": "relu"}),
    ("LSTM", {}), ("LSTM", {"num_layers": 2, "bidirectional": True}),
    ("LSTM", {"num_layers": 2, "bias": False}),
], ids=str)
def test_state_dict_keys_and_shapes_match_pytorch_in_order(torch, kind, kwargs):
    ours, theirs = getattr(nn, kind)(3, 4, **kwargs), getattr(torch.nn, kind)(3, 4, **kwargs)
    assert [(k, v.shape) for k, v in ours.state_dict().items()] == \
        [(k, tuple(v.shape)) for k, v in theirs.state_dict().items()]


def test_lstm_weights_stack_the_four_gates():
    lstm = nn.LSTM(3, 5, num_layers=2)
    assert lstm.weight_ih_l0.shape == (20, 3)
    assert lstm.weight_hh_l0.shape == (20, 5)
    assert lstm.weight_ih_l1.shape == (20, 5)  # layer 1 reads layer 0's hidden state
    assert lstm.bias_ih_l1.shape == lstm.bias_hh_l1.shape == (20,)


def test_every_parameter_starts_uniform_within_one_over_sqrt_hidden_size():
    lstm = nn.LSTM(3, 16, num_layers=2)
    bound = 1 / math.sqrt(16)
    for name, param in lstm.named_parameters():
        assert np.abs(param.numpy()).max() <= bound, name
        assert np.abs(param.numpy()).max() > 0.8 * bound, name  # spread over the range


def test_initialisation_follows_manual_seed():
    mg.manual_seed(3)
    first = nn.LSTM(3, 4).state_dict()
    mg.manual_seed(3)
    second = nn.LSTM(3, 4).state_dict()
    for key in first:
        np.testing.assert_array_equal(first[key], second[key])


# --- behaviour ------------------------------------------------------------------------------


def test_h_n_of_the_last_layer_is_the_last_output():
    lstm = nn.LSTM(3, 4, num_layers=2, batch_first=True)
    output, (h_n, _) = lstm(mg.randn(2, 5, 3))
    np.testing.assert_array_equal(h_n.numpy()[-1], output.numpy()[:, -1])


def test_states_start_at_zero_when_omitted():
    lstm = nn.LSTM(3, 4)
    x = mg.randn(5, 2, 3)
    zeros = mg.zeros(1, 2, 4)
    np.testing.assert_array_equal(lstm(x)[0].numpy(), lstm(x, (zeros, zeros))[0].numpy())


def test_lstm_passes_gradcheck_for_its_input_and_a_weight():
    lstm = nn.LSTM(2, 3).double()
    x = mg.randn(3, 2, 2, dtype=mg.float64, requires_grad=True)
    weight = mg.tensor(lstm.weight_hh_l0.numpy(), requires_grad=True)

    def run(x, weight_hh):
        lstm._parameters["weight_hh_l0"] = weight_hh  # the checked copy stands in for it
        output, (h_n, c_n) = lstm(x)
        return output, h_n, c_n

    assert mg.gradcheck(run, (x, weight))


def test_dropout_between_layers_is_off_in_eval_mode():
    lstm = nn.LSTM(3, 4, num_layers=2, dropout=0.5).eval()
    x = mg.randn(5, 2, 3)
    np.testing.assert_array_equal(lstm(x)[0].numpy(), lstm(x)[0].numpy())


def test_dropout_between_layers_changes_the_output_in_training_mode():
    lstm = nn.LSTM(3, 4, num_layers=2, dropout=0.5)
    x = mg.randn(5, 2, 3)
    assert not np.allclose(lstm(x)[0].numpy(), lstm(x)[0].numpy())


def test_dropout_in_training_mode_is_reproducible_under_manual_seed():
    lstm = nn.LSTM(3, 4, num_layers=2, dropout=0.5)
    x = mg.randn(5, 2, 3)
    mg.manual_seed(7)
    first = lstm(x)[0].numpy()
    mg.manual_seed(7)
    np.testing.assert_array_equal(first, lstm(x)[0].numpy())


def test_repr_shows_the_arguments_that_differ_from_the_defaults():
    assert repr(nn.LSTM(3, 4, num_layers=2, batch_first=True)) == \
        "LSTM(3, 4, num_layers=2, batch_first=True)"
    assert repr(nn.RNN(3, 4, nonlinearity="relu")) == "RNN(3, 4, nonlinearity='relu')"


# --- errors ---------------------------------------------------------------------------------


def test_a_4d_input_is_rejected_with_the_expected_layouts():
    with pytest.raises(mg.ShapeError, match=r"LSTM: expected a 3-D input \(L, N, input_size\)"
                       r".*got a 4-D input of shape \(5, 2, 3, 1\)"):
        nn.LSTM(3, 4)(mg.randn(5, 2, 3, 1))


def test_a_wrong_feature_size_names_input_size_and_the_shape():
    with pytest.raises(mg.ShapeError, match=r"input_size=3, got shape \(5, 2, 7\)"):
        nn.RNN(3, 4)(mg.randn(5, 2, 7))


def test_a_wrong_h0_shape_says_expected_and_got():
    with pytest.raises(mg.ShapeError, match=r"expected h_0 of shape \(2, 2, 4\) "
                       r"\(num_layers \* num_directions, batch, hidden_size\), got \(1, 2, 4\)"):
        nn.RNN(3, 4, num_layers=2)(mg.randn(5, 2, 3), mg.zeros(1, 2, 4))


def test_a_wrong_c0_shape_says_expected_and_got():
    with pytest.raises(mg.ShapeError, match=r"expected c_0 of shape \(1, 2, 4\).*got \(1, 3, 4\)"):
        nn.LSTM(3, 4)(mg.randn(5, 2, 3), (mg.zeros(1, 2, 4), mg.zeros(1, 3, 4)))


def test_an_unbatched_input_needs_2d_states():
    with pytest.raises(mg.ShapeError, match=r"expected h_0 of shape \(1, 4\)"):
        nn.RNN(3, 4)(mg.randn(5, 3), mg.zeros(1, 1, 4))


def test_lstm_states_must_be_a_pair():
    with pytest.raises(TypeError, match=r"LSTM: expected hx to be a pair \(h_0, c_0\)"):
        nn.LSTM(3, 4)(mg.randn(5, 2, 3), mg.zeros(1, 2, 4))


def test_an_unknown_nonlinearity_is_rejected():
    with pytest.raises(ValueError, match="unknown nonlinearity 'sigmoid'"):
        nn.RNN(3, 4, nonlinearity="sigmoid")


def test_dropout_outside_zero_to_one_is_rejected():
    with pytest.raises(ValueError, match="dropout must be a probability between 0 and 1"):
        nn.LSTM(3, 4, num_layers=2, dropout=1.5)


def test_dropout_with_a_single_layer_warns_that_it_does_nothing():
    with pytest.warns(UserWarning, match="does nothing"):
        nn.LSTM(3, 4, dropout=0.5)


# --- LSTM's proj_size ------------------------------------------------------------------------


@pytest.mark.parametrize("kwargs", [
    {"proj_size": 2}, {"proj_size": 3, "num_layers": 2, "bidirectional": True},
    {"proj_size": 2, "batch_first": True, "bias": False},
])
def test_lstm_with_a_projection_matches_pytorch(kwargs):
    torch = pytest.importorskip("torch")
    ours, theirs = nn.LSTM(3, 5, **kwargs), torch.nn.LSTM(3, 5, **kwargs)
    assert repr(ours) == repr(theirs)
    assert [(n, tuple(p.shape)) for n, p in ours.named_parameters()] == \
        [(n, tuple(p.shape)) for n, p in theirs.named_parameters()]
    theirs.double()
    load_torch_weights(ours, theirs)
    x = np.random.default_rng(0).standard_normal((2, 4, 3) if kwargs.get("batch_first")
                                                 else (4, 2, 3))
    layers = kwargs.get("num_layers", 1) * (2 if kwargs.get("bidirectional") else 1)
    h0 = np.random.default_rng(1).standard_normal((layers, 2, kwargs["proj_size"]))
    c0 = np.random.default_rng(2).standard_normal((layers, 2, 5))
    ours.double()
    out, (h, c) = ours(mg.tensor(x), (mg.tensor(h0), mg.tensor(c0)))
    t_out, (t_h, t_c) = theirs(torch.tensor(x), (torch.tensor(h0), torch.tensor(c0)))
    for a, b in ((out, t_out), (h, t_h), (c, t_c)):
        np.testing.assert_allclose(a.numpy(), b.detach().numpy(), rtol=1e-10, atol=1e-12)
    (out.sum() + h.sum()).backward()
    (t_out.sum() + t_h.sum()).backward()
    assert_parameter_gradients_match(ours, theirs, rtol=1e-10, atol=1e-12)


def test_lstm_projection_errors_name_the_layer_and_sizes():
    with pytest.raises(ValueError, match="proj_size must be an int from 0 up to hidden_size"):
        nn.LSTM(3, 4, proj_size=4)
    with pytest.raises(ValueError, match="proj_size argument is only supported for LSTM"):
        nn.GRU(3, 4, proj_size=2)
    lstm = nn.LSTM(3, 4, proj_size=2)
    with pytest.raises(ValueError, match=r"expected h_0 of shape \(1, 2, 2\) .*proj_size"):
        lstm(mg.randn(5, 2, 3), (mg.zeros(1, 2, 4), mg.zeros(1, 2, 4)))
