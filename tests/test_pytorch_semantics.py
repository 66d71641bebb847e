"""PyTorch's semantics (issue 11, part A): dtype inference and promotion, random
generators, devices, the factory extras, mg.autograd, state dicts holding Tensors, save
and load in PyTorch's call forms. Values are checked against PyTorch where it is
installed (the ``torch`` fixture skips otherwise)."""

from __future__ import annotations

import io
import itertools
import operator
import warnings

import numpy as np
import pytest

import minigrad as mg
from minigrad import nn

# --- dtype inference ----------------------------------------------------------------------

PYTHON_DATA = [3, 2.5, True, [1, 2], [1.0, 2.0], [1, 2.5], [True, False], [[1], [2]], [],
               [[1.5, 2], [3, 4]]]


@pytest.mark.parametrize("data", PYTHON_DATA, ids=repr)
def test_python_data_gets_the_dtype_pytorch_gives_it(torch, data):
    assert str(mg.tensor(data).dtype) == str(torch.tensor(data).dtype).removeprefix("torch.")


@pytest.mark.parametrize("dtype", ["float64", "float32", "int32", "int64", "bool", "uint8"])
def test_numpy_arrays_keep_their_dtype_as_in_pytorch(torch, dtype):
    array = np.arange(3).astype(dtype)
    assert str(mg.tensor(array).dtype) == str(torch.tensor(array).dtype).removeprefix("torch.")


# --- type promotion -----------------------------------------------------------------------

OPERAND_DTYPES = ["float32", "float64", "int64", "int32", "bool"]
TENSOR_OPERANDS = [(dtype, zero_d) for dtype in OPERAND_DTYPES for zero_d in (False, True)]
NUMBERS = {"int": 2, "float": 0.5, "bool": True, "np.float64": np.float64(0.5)}
BINARY = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
          "**": operator.pow}


def _operand(lib, operand):
    if isinstance(operand, str):
        return NUMBERS[operand]
    dtype, zero_d = operand
    array = (np.array(2) if zero_d else np.arange(1, 4)).astype(dtype)
    return lib.tensor(array)


def _name(dtype) -> str:
    return str(dtype).removeprefix("torch.")


def _is_bool(operand) -> bool:
    return operand == "bool" or operand[0] == "bool"


PAIRS = [(a, b) for a, b in itertools.product(TENSOR_OPERANDS + list(NUMBERS), repeat=2)
         if not (isinstance(a, str) and isinstance(b, str))]


@pytest.mark.parametrize("op", list(BINARY))
@pytest.mark.parametrize("a, b", PAIRS, ids=str)
def test_binary_ops_promote_dtypes_as_pytorch(torch, a, b, op):
    if op in ("-", "**") and _is_bool(a) and _is_bool(b):
        return  # PyTorch refuses to subtract bools; a power of bools means nothing
    try:
        expected = BINARY[op](_operand(torch, a), _operand(torch, b))
    except RuntimeError:  # e.g. an integer to a negative integer power
        return
    result = BINARY[op](_operand(mg, a), _operand(mg, b))
    assert _name(result.dtype) == _name(expected.dtype)
    np.testing.assert_allclose(result.numpy().astype(np.float64),
                               expected.numpy().astype(np.float64), rtol=1e-6)


def test_float32_with_int64_tensor_or_python_float_stays_float32():
    x, labels = mg.ones(3), mg.tensor([1, 2, 3])
    assert (x * labels).dtype == mg.float32
    assert (x + 0.5).dtype == mg.float32
    assert (labels * 0.5).dtype == mg.float32
    assert (labels / 2).dtype == mg.float32  # true division of integers: the default float


def test_a_gradient_through_a_promotion_comes_back_in_the_inputs_dtype():
    x = mg.ones(3, requires_grad=True)
    scale = mg.tensor(2.0, dtype=mg.float64, requires_grad=True)  # 0-d: x decides
    (x * scale).sum().backward()
    assert (x.grad.dtype, scale.grad.dtype) == (mg.float32, mg.float64)
    assert scale.grad.item() == 3.0


def test_mse_loss_of_float32_and_int64_is_float32_with_pytorchs_value(torch):
    prediction = np.array([0.5, 1.5, 2.5], dtype=np.float32)
    target = np.array([1, 2, 2])
    ours = nn.MSELoss()(mg.tensor(prediction), mg.tensor(target))
    theirs = torch.nn.MSELoss()(torch.tensor(prediction), torch.tensor(target))
    assert ours.dtype == mg.float32
    np.testing.assert_allclose(ours.item(), theirs.item(), rtol=1e-6)


def test_where_cat_and_stack_promote_as_pytorch(torch):
    condition = np.array([True, False, True])
    floats, ints = np.ones(3, np.float32), np.arange(3)
    for lib in (mg, torch):
        lib.result = (lib.where(lib.tensor(condition), lib.tensor(floats), 0).dtype,
                      lib.where(lib.tensor(condition), lib.tensor(floats), lib.tensor(ints)).dtype,
                      lib.cat([lib.tensor(floats), lib.tensor(ints)]).dtype,
                      lib.stack([lib.tensor(ints), lib.tensor(floats)]).dtype)
    assert [_name(d) for d in mg.result] == [_name(d) for d in torch.result]
    del mg.result, torch.result


def test_set_default_dtype_changes_python_floats_factories_and_new_parameters():
    assert mg.get_default_dtype() == mg.float32
    mg.set_default_dtype(mg.float64)
    try:
        assert mg.tensor([1.5]).dtype == mg.zeros(2).dtype == mg.randn(2).dtype == mg.float64
        assert mg.tensor([1]).dtype == mg.int64
        assert nn.Linear(2, 3).weight.dtype == mg.float64
    finally:
        mg.set_default_dtype(mg.float32)
    with pytest.raises(TypeError, match="set_default_dtype: only floating"):
        mg.set_default_dtype(mg.int64)


def test_dtype_names_include_pytorchs():
    assert mg.bool == np.dtype(bool) and mg.tensor([True]).dtype == mg.bool
    assert mg.tensor([1], dtype="torch.float64").dtype == mg.float64
    assert mg.tensor([1], dtype=float).dtype == mg.float64  # Python's float: as PyTorch's


# --- random generators --------------------------------------------------------------------


def test_a_generator_gives_the_same_numbers_for_the_same_seed_whatever_else_draws():
    first = mg.randn(4, generator=mg.Generator().manual_seed(7))
    mg.randn(10)  # the global generator moves on; the private one is unaffected
    second = mg.randn(4, generator=mg.Generator().manual_seed(7))
    np.testing.assert_array_equal(first.numpy(), second.numpy())


@pytest.mark.parametrize("draw", [
    lambda g: mg.rand(3, generator=g), lambda g: mg.randn(2, 3, generator=g),
    lambda g: mg.randint(0, 10, (5,), generator=g), lambda g: mg.randperm(6, generator=g),
    lambda g: mg.rand_like(mg.zeros(3), generator=g),
    lambda g: mg.randn_like(mg.zeros(3), generator=g),
    lambda g: mg.randint_like(mg.zeros(3), 5, generator=g)])
def test_random_factories_draw_from_the_generator_given(draw):
    generator = mg.Generator().manual_seed(3)
    state = generator.get_state()
    global_state = mg.get_rng_state()
    first = draw(generator).numpy().copy()
    assert mg.get_rng_state() == global_state  # the global generator was not used
    generator.set_state(state)
    np.testing.assert_array_equal(draw(generator).numpy(), first)


def test_generator_seed_and_initial_seed():
    generator = mg.Generator()
    assert generator.manual_seed(5) is generator and generator.initial_seed() == 5
    seed = generator.seed()
    assert generator.initial_seed() == seed
    assert mg.manual_seed(4) is mg.default_generator and mg.initial_seed() == 4


def test_cuda_manual_seed_seeds_the_one_generator():
    mg.cuda.manual_seed_all(11)
    first = mg.rand(3).numpy().copy()
    mg.cuda.manual_seed(11)
    np.testing.assert_array_equal(mg.rand(3).numpy(), first)


def test_a_generator_that_is_not_one_is_named_in_the_error():
    with pytest.raises(TypeError, match="randn: generator must be a minigrad Generator"):
        mg.randn(2, generator=np.random.default_rng(0))


# --- devices ------------------------------------------------------------------------------


def test_device_agnostic_code_runs_on_the_cpu():
    device = mg.device("cuda" if mg.cuda.is_available() else "cpu")
    model = nn.Linear(2, 3).to(device)
    x = mg.randn(4, 2, device=device).to(device)
    assert model(x).device == device == mg.device("cpu") == "cpu"
    assert str(device) == "cpu" and repr(device) == "device(type='cpu')"
    assert x.cpu() is x and model.cpu() is model and not x.is_cuda
    assert not mg.backends.mps.is_available() and mg.cuda.device_count() == 0


def test_to_takes_pytorchs_forms():
    x = mg.ones(2)
    assert x.to("cpu") is x
    assert x.to(mg.float64).dtype == x.to("cpu", mg.float64).dtype == mg.float64
    assert x.to(device="cpu", dtype="float64").dtype == mg.float64
    assert x.to(mg.tensor([1])).dtype == mg.int64
    assert x.to(mg.float32, copy=True) is not x
    assert nn.Linear(2, 2).to("cpu", mg.float64).weight.dtype == mg.float64


@pytest.mark.parametrize("ask", [
    lambda: mg.ones(2).cuda(), lambda: mg.ones(2).to("cuda"), lambda: mg.ones(2).to("cuda:0"),
    lambda: mg.zeros(2, device="mps"), lambda: mg.tensor([1.0], device="cuda"),
    lambda: nn.Linear(2, 2).cuda(), lambda: nn.Linear(2, 2).to("cuda"),
    lambda: mg.set_default_device("cuda"), lambda: mg.ones(2).to(0)])
def test_asking_for_a_gpu_says_plainly_that_minigrad_runs_on_the_cpu(ask):
    with pytest.raises(RuntimeError, match="minigrad runs on the CPU only"):
        ask()


def test_set_default_device_cpu_is_accepted():
    mg.set_default_device("cpu")
    assert mg.get_default_device() == "cpu"


def test_unknown_device_names_are_refused():
    with pytest.raises(RuntimeError, match="unknown device type 'gpu'"):
        mg.device("gpu")


# --- factory extras ---------------------------------------------------------------------------


def test_empty_and_like_factories_have_the_shape_and_dtype(torch):
    x = mg.zeros(2, 3, dtype=mg.float64)
    for made in (mg.empty(2, 3, dtype=mg.float64), mg.empty_like(x), mg.rand_like(x),
                 mg.randn_like(x)):
        assert (made.shape, made.dtype) == ((2, 3), mg.float64)
    assert mg.randint_like(mg.zeros(4, dtype=mg.int64), 3).dtype == mg.int64
    assert mg.empty((2,)).dtype == mg.float32


def test_from_numpy_shares_memory_and_as_tensor_does_not_copy():
    array = np.zeros(3, dtype=np.float64)
    t = mg.from_numpy(array)
    array[0] = 5
    assert t.dtype == mg.float64 and t[0].item() == 5
    assert mg.as_tensor(array).numpy() is array
    assert mg.as_tensor(t) is t
    assert mg.as_tensor([1, 2]).dtype == mg.int64
    with pytest.raises(TypeError, match="from_numpy: expected a NumPy array"):
        mg.from_numpy([1, 2])


def test_is_tensor_numel_and_legacy_constructors(torch):
    assert mg.is_tensor(mg.ones(1)) and not mg.is_tensor(np.ones(1))
    assert mg.numel(mg.ones(2, 3)) == 6
    for name in ("LongTensor", "FloatTensor", "DoubleTensor", "BoolTensor"):
        ours, theirs = getattr(mg, name)([1, 0]), getattr(torch, name)([1, 0])
        assert _name(ours.dtype) == _name(theirs.dtype) and ours.tolist() == theirs.tolist()
    assert mg.FloatTensor(2, 3).shape == (2, 3)


def test_full_infers_its_dtype_from_the_fill_value_as_pytorch(torch):
    for value in (1, 1.5, True):
        assert _name(mg.full((2,), value).dtype) == _name(torch.full((2,), value).dtype)


def test_inference_mode_records_nothing_and_restores():
    x = mg.ones(2, requires_grad=True)
    with mg.inference_mode():
        assert (x * 2).grad_fn is None
    assert mg.is_grad_enabled() and (x * 2).grad_fn is not None

    @mg.inference_mode()
    def evaluate():
        return x * 2

    assert evaluate().grad_fn is None


# --- mg.autograd.Function -------------------------------------------------------------------


class LinearFunction(mg.autograd.Function):
    """PyTorch's documentation example, unchanged but for the import."""

    @staticmethod
    def forward(ctx, input, weight, bias=None):
        ctx.save_for_backward(input, weight, bias)
        output = input @ weight.T
        if bias is not None:
            output += bias.unsqueeze(0).expand_as(output)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        input, weight, bias = ctx.saved_tensors
        grad_input = grad_weight = grad_bias = None
        if ctx.needs_input_grad[0]:
            grad_input = grad_output @ weight
        if ctx.needs_input_grad[1]:
            grad_weight = grad_output.T @ input
        if bias is not None and ctx.needs_input_grad[2]:
            grad_bias = grad_output.sum(0)
        return grad_input, grad_weight, grad_bias


def test_autograd_function_receives_tensors_and_matches_pytorch(torch):
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s).astype(np.float32) for s in ((4, 3), (2, 3), (2,))]
    ours = [mg.tensor(a, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]

    class TorchLinear(torch.autograd.Function):
        forward = staticmethod(LinearFunction.forward.__wrapped__)
        backward = staticmethod(LinearFunction.backward.__wrapped__)

    weights = rng.standard_normal((4, 2)).astype(np.float32)
    (LinearFunction.apply(*ours) * mg.tensor(weights)).sum().backward()
    (TorchLinear.apply(*theirs) * torch.tensor(weights)).sum().backward()
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_autograd_function_passes_float64_gradcheck():
    inputs = [mg.randn(*s, dtype=mg.float64, requires_grad=True) for s in ((4, 3), (2, 3), (2,))]
    assert mg.autograd.gradcheck(LinearFunction.apply, inputs, eps=1e-6, atol=1e-5)


def test_autograd_function_forward_and_backward_run_without_recording():
    seen = {}

    class Probe(mg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            seen["forward"] = (type(x), mg.is_grad_enabled())
            return x * 2

        @staticmethod
        def backward(ctx, grad_output):
            seen["backward"] = (type(grad_output), mg.is_grad_enabled())
            return grad_output * 2

    Probe.apply(mg.ones(2, requires_grad=True)).sum().backward()
    assert seen == {"forward": (mg.Tensor, False), "backward": (mg.Tensor, False)}


def test_autograd_function_with_setup_context_materialize_grads_and_non_differentiable():
    class SortWithIndices(mg.autograd.Function):
        @staticmethod
        def forward(x):
            indices = mg.tensor(np.argsort(x.numpy()))
            return x[indices], indices

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.mark_non_differentiable(output[1])
            ctx.save_for_backward(output[1])
            ctx.set_materialize_grads(False)

        @staticmethod
        @mg.autograd.once_differentiable
        def backward(ctx, grad_values, grad_indices):
            assert grad_indices is None  # not materialized
            (indices,) = ctx.saved_tensors
            grad = mg.zeros(grad_values.shape)
            grad[indices] = grad_values
            return grad

    x = mg.tensor([3.0, 1.0, 2.0], requires_grad=True)
    values, indices = SortWithIndices.apply(x)
    assert not indices.requires_grad and values.requires_grad
    (values * mg.tensor([1.0, 2.0, 3.0])).sum().backward()
    assert x.grad.tolist() == [3.0, 1.0, 2.0]


def test_autograd_function_notices_a_saved_tensor_modified_in_place():
    class Square(mg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, grad_output):
            (x,) = ctx.saved_tensors
            return 2 * x * grad_output

    a = mg.ones(2, requires_grad=True)
    b = a * 1
    y = Square.apply(b)
    b += 1
    with pytest.raises(RuntimeError, match="Square.*modified by an in-place operation"):
        y.sum().backward()


def test_autograd_function_works_in_lazy_mode():
    x = mg.randn(3, 2, requires_grad=True)
    w = mg.randn(4, 2, requires_grad=True)
    with mg.lazy():
        y = LinearFunction.apply(x, w).sum()
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), np.tile(w.numpy().sum(0), (3, 1)), rtol=1e-5)


def test_autograd_function_backward_returning_too_few_gradients_says_so():
    class Bad(mg.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            return x + y

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output

    with pytest.raises(RuntimeError, match="Bad.backward returned 1 gradient"):
        Bad.apply(mg.ones(2, requires_grad=True), mg.ones(2)).sum().backward()


def test_mg_function_keeps_the_array_contract():
    assert mg.Function is not mg.autograd.Function
    assert issubclass(mg.autograd.Function, mg.Function)


# --- mg.autograd.grad and backward ------------------------------------------------------------


def test_autograd_grad_of_leaves_and_intermediates_matches_pytorch(torch):
    array = np.array([0.5, -1.0, 2.0], dtype=np.float32)
    results = {}
    for lib in (mg, torch):
        x = lib.tensor(array, requires_grad=True)
        h = x * 3
        y = (h.sin() * x).sum()
        results[lib.__name__] = [g.numpy() for g in lib.autograd.grad(y, [x, h])]
        assert x.grad is None
    for ours, theirs in zip(results["minigrad"], results["torch"]):
        np.testing.assert_allclose(ours, theirs, rtol=1e-6)


def test_autograd_grad_with_grad_outputs_and_several_outputs(torch):
    array = np.array([1.0, 2.0], dtype=np.float32)
    results = {}
    for lib in (mg, torch):
        x = lib.tensor(array, requires_grad=True)
        a, b = x * x, x.exp()
        (grad,) = lib.autograd.grad([a, b], x, grad_outputs=[lib.ones(2), lib.tensor(array)])
        results[lib.__name__] = grad.numpy()
    np.testing.assert_allclose(results["minigrad"], results["torch"], rtol=1e-6)


def test_autograd_grad_of_an_unused_input_raises_unless_allowed():
    x, unused = mg.ones(2, requires_grad=True), mg.ones(2, requires_grad=True)
    y = (x * 2).sum()
    with pytest.raises(RuntimeError, match="input 1 .*was not used.*allow_unused=True"):
        mg.autograd.grad(y, [x, unused], retain_graph=True)
    assert mg.autograd.grad(y, [x, unused], allow_unused=True)[1] is None


def test_autograd_grad_create_graph_gives_a_gradient_with_history():
    x = mg.ones(2, requires_grad=True)
    (g,) = mg.autograd.grad((x * x * x).sum(), x, create_graph=True)
    assert g.requires_grad and g.grad_fn is not None
    (gg,) = mg.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(gg.numpy(), [6.0, 6.0])


def test_autograd_backward_of_several_tensors_and_of_chosen_inputs():
    x, w = mg.ones(2, requires_grad=True), mg.full((2,), 3.0, requires_grad=True)
    mg.autograd.backward([(x * w).sum(), (x * 2).sum()])
    assert x.grad.tolist() == [5.0, 5.0] and w.grad.tolist() == [1.0, 1.0]
    x.grad = w.grad = None
    (x * w).sum().backward(inputs=[w])
    assert x.grad is None and w.grad.tolist() == [1.0, 1.0]


def test_anomaly_mode_under_autograd_names():
    with mg.autograd.detect_anomaly():
        assert mg.is_anomaly_enabled()
    with mg.autograd.set_detect_anomaly(True):
        assert mg.is_anomaly_enabled()
    assert not mg.is_anomaly_enabled()


# --- state dicts, save and load --------------------------------------------------------------


def test_a_pytorch_state_dict_loads_directly(torch):
    theirs = torch.nn.Sequential(torch.nn.Conv2d(1, 2, 3), torch.nn.Flatten(),
                                 torch.nn.Linear(8, 3))
    ours = nn.Sequential(nn.Conv2d(1, 2, 3), nn.Flatten(), nn.Linear(8, 3))
    ours.load_state_dict(theirs.state_dict())
    x = np.random.default_rng(0).standard_normal((2, 1, 4, 4)).astype(np.float32)
    np.testing.assert_allclose(ours(mg.tensor(x)).numpy(),
                               theirs(torch.tensor(x)).detach().numpy(), rtol=1e-5, atol=1e-6)


def test_a_minigrad_state_dict_loads_into_pytorch(torch):
    ours, theirs = nn.Linear(3, 2), torch.nn.Linear(3, 2)
    theirs.load_state_dict({k: torch.as_tensor(v.numpy()) for k, v in ours.state_dict().items()})
    np.testing.assert_array_equal(theirs.weight.detach().numpy(), ours.weight.numpy())


def test_load_state_dict_takes_arrays_and_anything_with_array():
    class Wrapped:
        def __init__(self, array):
            self.array = array

        def __array__(self, dtype=None, copy=None):
            return self.array

    model = nn.Linear(2, 1)
    model.load_state_dict({"weight": Wrapped(np.ones((1, 2), np.float32)),
                           "bias": np.zeros(1, np.float32)})
    assert model.weight.tolist() == [[1.0, 1.0]]


def test_optimizer_state_dict_holds_tensors_and_loads_pytorchs(torch):
    array = np.array([1.0, -2.0], dtype=np.float32)
    theirs = torch.tensor(array, requires_grad=True)
    torch_optimizer = torch.optim.Adam([theirs], lr=0.1)
    ours = mg.tensor(array, requires_grad=True)
    optimizer = mg.optim.Adam([ours], lr=0.1)
    for _ in range(2):  # two steps in PyTorch, then continue its state here
        torch_optimizer.zero_grad()
        (theirs ** 2).sum().backward()
        torch_optimizer.step()
    ours.data = mg.tensor(theirs.detach().numpy())
    optimizer.load_state_dict(torch_optimizer.state_dict())
    for _ in range(2):
        torch_optimizer.zero_grad()
        (theirs ** 2).sum().backward()
        torch_optimizer.step()
        optimizer.zero_grad()
        (ours ** 2).sum().backward()
        optimizer.step()
    np.testing.assert_allclose(ours.numpy(), theirs.detach().numpy(), rtol=1e-6)
    saved = optimizer.state_dict()["state"][0]
    assert isinstance(saved["exp_avg"], mg.Tensor) and saved["exp_avg"].shape == (2,)


def test_save_and_load_take_pytorchs_call_forms(tmp_path):
    model = nn.Linear(2, 2)
    path = tmp_path / "model.pt"
    mg.save(model.state_dict(), path)
    loaded = mg.load(path, weights_only=True, map_location="cpu")
    assert all(isinstance(v, mg.Tensor) for v in loaded.values())
    buffer = io.BytesIO()
    mg.save(model.state_dict(), buffer)
    buffer.seek(0)
    fresh = nn.Linear(2, 2)
    fresh.load_state_dict(mg.load(buffer, map_location=mg.device("cpu")))
    np.testing.assert_array_equal(fresh.weight.numpy(), model.weight.numpy())


def test_load_refuses_weights_only_false_and_a_gpu_map_location(tmp_path):
    path = tmp_path / "model.pt"
    mg.save({"a": mg.ones(1)}, path)
    with pytest.raises(ValueError, match="weights_only=False would unpickle"):
        mg.load(path, weights_only=False)
    with pytest.raises(RuntimeError, match="minigrad runs on the CPU only"):
        mg.load(path, map_location="cuda:0")


def test_load_of_a_torch_save_file_explains(torch, tmp_path):
    path = tmp_path / "theirs.pt"
    torch.save(torch.nn.Linear(2, 2).state_dict(), path)
    with pytest.raises(ValueError, match="written by torch.save: a pickle"):
        mg.load(path)


# --- DataLoader ----------------------------------------------------------------------------------


def _dataset(n=10):
    return mg.data.TensorDataset(mg.arange(float(n)), mg.arange(n))


def _labels(loader):
    return [labels.tolist() for _, labels in loader]


def test_batch_sampler_batches_as_pytorchs(torch):
    for drop_last in (False, True):
        ours = list(mg.data.BatchSampler(mg.data.SequentialSampler(range(10)), 3, drop_last))
        theirs = list(torch.utils.data.BatchSampler(
            torch.utils.data.SequentialSampler(range(10)), 3, drop_last))
        assert ours == theirs


def test_dataloader_shuffle_with_a_generator_is_repeatable():
    loader = mg.data.DataLoader(_dataset(), batch_size=4, shuffle=True,
                                generator=mg.Generator().manual_seed(1))
    first = _labels(loader)
    loader.generator.manual_seed(1)
    assert _labels(loader) == first and sorted(sum(first, [])) == list(range(10))


def test_dataloader_takes_a_sampler_and_a_batch_sampler():
    dataset = _dataset()
    sampler = mg.data.SubsetRandomSampler([1, 3, 5])
    assert sorted(sum(_labels(mg.data.DataLoader(dataset, batch_size=2, sampler=sampler)),
                      [])) == [1, 3, 5]
    batches = mg.data.BatchSampler(mg.data.SequentialSampler(dataset), 4, drop_last=True)
    assert _labels(mg.data.DataLoader(dataset, batch_sampler=batches)) == [[0, 1, 2, 3],
                                                                           [4, 5, 6, 7]]
    assert _labels(mg.data.DataLoader(dataset, batch_size=5, sampler=[9, 8])) == [[9, 8]]


def test_random_sampler_with_replacement_draws_num_samples():
    sampler = mg.data.RandomSampler(range(3), replacement=True, num_samples=7,
                                    generator=mg.Generator().manual_seed(0))
    drawn = list(sampler)
    assert len(drawn) == len(sampler) == 7 and set(drawn) <= {0, 1, 2}


def test_dataloader_sampler_and_shuffle_are_mutually_exclusive():
    with pytest.raises(ValueError, match="sampler option is mutually exclusive with shuffle"):
        mg.data.DataLoader(_dataset(), sampler=[0, 1], shuffle=True)
    with pytest.raises(ValueError, match="batch_sampler option is mutually exclusive"):
        mg.data.DataLoader(_dataset(), batch_size=2, batch_sampler=[[0, 1]])


def test_dataloader_num_workers_explains_once_and_loads_the_same_batches():
    import minigrad.data.dataloader as dataloader

    dataloader._told_about_workers = False
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        loader = mg.data.DataLoader(_dataset(), batch_size=4, num_workers=2, pin_memory=True,
                                    persistent_workers=True)
        mg.data.DataLoader(_dataset(), batch_size=4, num_workers=4)
    assert len(caught) == 1 and "main process" in str(caught[0].message)
    assert _labels(loader) == _labels(mg.data.DataLoader(_dataset(), batch_size=4))


def test_random_split_with_a_generator_is_repeatable_and_subsets_index_the_dataset():
    parts = mg.data.random_split(_dataset(), [0.7, 0.3], generator=mg.Generator().manual_seed(2))
    again = mg.data.random_split(_dataset(), [7, 3], generator=mg.Generator().manual_seed(2))
    assert [p.indices for p in parts] == [p.indices for p in again]
    assert isinstance(parts[0], mg.data.Subset) and len(parts[0]) == 7


def test_torch_utils_data_path_works():
    from minigrad.utils.data import DataLoader

    assert DataLoader is mg.data.DataLoader and mg.utils.data is mg.data


# --- a PyTorch program, run unchanged on both --------------------------------------------------


def polynomial_fit_with_a_custom_function(torch):
    """PyTorch's tutorial "Defining new autograd functions" (Legendre polynomial fit),
    written once against a torch-like namespace (``x.sin()`` for ``torch.sin(x)``)."""
    import math

    class LegendrePolynomial3(torch.autograd.Function):
        @staticmethod
        def forward(ctx, input):
            ctx.save_for_backward(input)
            return 0.5 * (5 * input ** 3 - 3 * input)

        @staticmethod
        def backward(ctx, grad_output):
            input, = ctx.saved_tensors
            return grad_output * 1.5 * (5 * input ** 2 - 1)

    dtype = torch.float
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    x = torch.linspace(-math.pi, math.pi, 2000, device=device, dtype=dtype)
    y = x.sin()
    a = torch.full((), 0.0, device=device, dtype=dtype, requires_grad=True)
    b = torch.full((), -1.0, device=device, dtype=dtype, requires_grad=True)
    c = torch.full((), 0.0, device=device, dtype=dtype, requires_grad=True)
    d = torch.full((), 0.3, device=device, dtype=dtype, requires_grad=True)
    learning_rate = 5e-6
    for _ in range(200):
        P3 = LegendrePolynomial3.apply
        y_pred = a + b * P3(c + d * x)
        loss = (y_pred - y).pow(2).sum()
        loss.backward()
        with torch.no_grad():
            a -= learning_rate * a.grad
            b -= learning_rate * b.grad
            c -= learning_rate * c.grad
            d -= learning_rate * d.grad
            a.grad = None
            b.grad = None
            c.grad = None
            d.grad = None
    return loss.item(), [p.item() for p in (a, b, c, d)]


def test_pytorchs_custom_function_tutorial_runs_unchanged_with_pytorchs_numbers(torch):
    ours = polynomial_fit_with_a_custom_function(mg)
    theirs = polynomial_fit_with_a_custom_function(torch)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-3)
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-3, atol=1e-5)
