"""PyTorch programs run unchanged, round 2 (issue 29): the call forms, names, layers,
module paths and behaviours that the census of teaching code found missing, each checked
against PyTorch where PyTorch has an answer to compare with.

The differentiable ops (transposed convolutions, pixel shuffles, acos/asin/atan,
cumprod, the norms and paddings, ...) are rows of tests/op_cases_census.py, so
tests/test_ops.py checks their values, gradients against PyTorch, and gradchecks them.
"""

from __future__ import annotations

import importlib
import warnings

import numpy as np
import pytest

import minigrad as mg
import minigrad.nn as nn
import minigrad.nn.functional as F


def as_array(t):
    return t.detach().numpy()


# --- keyword and legacy call forms -----------------------------------------------------------


@pytest.mark.parametrize("factory", ["rand", "randn", "zeros", "ones", "empty"])
def test_a_factory_takes_its_shape_as_size(factory):
    assert getattr(mg, factory)(size=(2, 3)).shape == (2, 3)
    assert getattr(mg, factory)(size=[4]).shape == (4,)


def test_a_shape_given_twice_or_an_unknown_keyword_is_refused():
    with pytest.raises(TypeError, match="give the shape once"):
        mg.rand(2, size=(3,))
    with pytest.raises(TypeError, match="unexpected keyword argument: sizes"):
        mg.zeros(sizes=(3,))


def test_legacy_tensor_of_several_ints_is_a_shape(torch):
    t = mg.Tensor(2, 3, 4)
    assert t.shape == tuple(torch.Tensor(2, 3, 4).shape) and t.dtype == mg.float32
    assert mg.Tensor([2, 3]).tolist() == [2, 3]  # a list is still data


def test_type_converts_to_a_legacy_tensor_class(torch):
    t = mg.tensor([1, 2]).type(mg.FloatTensor)
    assert t.dtype == mg.float32
    assert torch.tensor([1, 2]).type(torch.FloatTensor).dtype == torch.float32
    assert mg.tensor([1.5]).type(mg.LongTensor).dtype == mg.int64


def test_linear_takes_bias_device_and_dtype_by_position():
    layer = nn.Linear(3, 2, False, "cpu", mg.float64)
    assert layer.bias is None and layer.weight.dtype == mg.float64


def test_the_deprecated_add_overload_with_alpha_first_runs_as_in_pytorch(torch):
    p, g = mg.tensor([1.0, 2.0]), mg.tensor([10.0, 20.0])
    reference = torch.tensor([1.0, 2.0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reference.add_(-0.1, torch.tensor([10.0, 20.0]))
    p.add_(-0.1, g)
    np.testing.assert_allclose(p.numpy(), reference.numpy(), atol=1e-6)  # float32 rounding
    p.sub_(0.5, g)
    np.testing.assert_allclose(p.numpy(), reference.numpy() - 0.5 * np.array([10.0, 20.0]),
                               atol=1e-6)


# --- constants and helpers -------------------------------------------------------------------


def test_constants_are_pythons(torch):
    for name in ("inf", "pi", "e"):
        assert getattr(mg, name) == getattr(torch, name)
    assert np.isnan(mg.nan)


def test_set_printoptions_changes_how_tensors_print_and_profile_resets():
    mg.set_printoptions(precision=2)
    try:
        assert repr(mg.tensor([1.23456])) == "tensor([1.23])"
    finally:
        mg.set_printoptions(profile="default")
    assert repr(mg.tensor([1.23456])) == "tensor([1.2346])"
    with pytest.raises(ValueError, match="profile"):
        mg.set_printoptions(profile="tiny")


def test_bfloat16_is_a_name_and_making_a_tensor_of_it_says_why_not():
    table = {"float32": mg.float32, "bfloat16": mg.bfloat16}  # nanoGPT's dtype table
    assert repr(table["bfloat16"]) == "torch.bfloat16"
    with pytest.raises(TypeError, match="torch.bfloat16 is not supported by minigrad"):
        mg.zeros(2, dtype=mg.bfloat16)


# --- Tensor methods and operators ------------------------------------------------------------


def test_invert_and_logical_operators_on_bool_tensors_match_pytorch(torch):
    a, b = np.array([True, False, True]), np.array([True, True, False])
    ours, theirs = (mg.tensor(a), mg.tensor(b)), (torch.tensor(a), torch.tensor(b))
    for op in (lambda x, y: ~x, lambda x, y: x & y, lambda x, y: x | y,
               lambda x, y: x ^ y, lambda x, y: x.logical_and(y),
               lambda x, y: x.logical_not()):
        np.testing.assert_array_equal(op(*ours).numpy(), op(*theirs).numpy())


def test_invert_on_integers_flips_bits_and_on_floats_says_what_to_do(torch):
    assert (~mg.tensor([0, 5])).tolist() == (~torch.tensor([0, 5])).tolist()
    with pytest.raises(TypeError, match="only bool and integer"):
        ~mg.tensor([1.0])


def test_narrow_is_a_slice_of_one_dimension_with_pytorchs_errors(torch):
    x = np.arange(12.0).reshape(3, 4)
    np.testing.assert_array_equal(mg.tensor(x).narrow(1, 1, 2).numpy(),
                                  torch.tensor(x).narrow(1, 1, 2).numpy())
    with pytest.raises(IndexError, match="exceeds the size 4 of dim 1"):
        mg.tensor(x).narrow(1, 3, 2)


def test_detach_in_place_forgets_the_history():
    x = mg.ones(2, requires_grad=True)
    y = x * 2
    assert y.detach_() is y
    assert y.grad_fn is None and not y.requires_grad


def test_device_flags_say_cpu(torch):
    t = mg.zeros(1)
    assert (t.is_xpu, t.is_mps, t.is_meta, t.is_cuda) == (False, False, False, False)


def test_small_tensor_methods_match_pytorch(torch):
    x = np.arange(1.0, 7.0).reshape(2, 3)
    ours, theirs = mg.tensor(x), torch.tensor(x)
    for op in (lambda t: t.ravel(), lambda t: t.flip(1), lambda t: t.tile((2,)),
               lambda t: t.swapaxes(0, 1), lambda t: t[:, :2].trace(),
               lambda t: t.cumprod(1)):
        np.testing.assert_allclose(as_array(op(ours)), as_array(op(theirs)))
    assert ours.element_size() == theirs.element_size()
    assert ours.index_add(0, mg.tensor([1, 1]), ours).tolist() == \
        theirs.index_add(0, torch.tensor([1, 1]), theirs).tolist()


def test_meshgrid_matches_pytorch_for_both_indexings(torch):
    for indexing in ("ij", "xy"):
        ours = mg.meshgrid(mg.arange(3), mg.arange(4), indexing=indexing)
        theirs = torch.meshgrid(torch.arange(3), torch.arange(4), indexing=indexing)
        for a, b in zip(ours, theirs):
            np.testing.assert_array_equal(a.numpy(), b.numpy())


# --- layers and options ----------------------------------------------------------------------


@pytest.mark.parametrize("make", [lambda m: m.ReLU(inplace=True), lambda m: m.ReLU(True),
                                  lambda m: m.Dropout(0.5, inplace=True).train(),
                                  lambda m: m.Dropout2d(0.5, inplace=True).train()])
def test_in_place_activations_and_dropouts_write_into_their_input(make, torch):
    x = mg.tensor([[[[-1.0, 2.0]]]])
    assert make(nn)(x) is x
    reference = torch.tensor([[[[-1.0, 2.0]]]])
    assert make(torch.nn)(reference) is reference  # PyTorch returns its input too
    if "ReLU" in repr(make(nn)):
        np.testing.assert_array_equal(x.numpy(), reference.numpy())


def test_relu_in_place_after_a_layer_gives_pytorchs_gradients(torch):
    x = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    w = np.random.default_rng(1).standard_normal((5, 4)).astype(np.float32)
    grads = []
    for lib, relu in ((mg, nn.ReLU(inplace=True)), (torch, torch.nn.ReLU(inplace=True))):
        weight = lib.tensor(w, requires_grad=True)
        relu(lib.tensor(x) @ weight.T).sum().backward()
        grads.append(weight.grad.numpy())
    np.testing.assert_allclose(*grads, rtol=1e-6)


@pytest.mark.parametrize("layer, shape", [("Dropout1d", (4, 6, 5)), ("Dropout2d", (4, 6, 3, 3)),
                                          ("Dropout3d", (2, 6, 2, 2, 2))])
def test_channel_dropout_zeroes_whole_channels_and_scales_the_rest(layer, shape):
    out = getattr(nn, layer)(0.5)(mg.ones(*shape)).numpy()
    per_channel = out.reshape(shape[0], shape[1], -1)
    assert np.all((per_channel == 0).all(-1) | (per_channel == 2).all(-1))
    assert getattr(nn, layer)(0.5).eval()(mg.ones(*shape)).numpy().min() == 1


def test_transposed_convolution_layers_have_pytorchs_parameters_and_outputs(torch):
    for name, shape in (("ConvTranspose2d", (2, 4, 5, 5)), ("ConvTranspose1d", (2, 4, 7))):
        ours = getattr(nn, name)(4, 3, 3, stride=2, padding=1, output_padding=1)
        theirs = getattr(torch.nn, name)(4, 3, 3, stride=2, padding=1, output_padding=1)
        assert {k: tuple(v.shape) for k, v in ours.state_dict().items()} == \
            {k: tuple(v.shape) for k, v in theirs.state_dict().items()}
        ours.load_state_dict(theirs.state_dict())
        x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
        np.testing.assert_allclose(as_array(ours(mg.tensor(x))),
                                   as_array(theirs(torch.tensor(x))), rtol=1e-4, atol=1e-5)


def test_a_transposed_convolution_with_the_wrong_channels_names_both_shapes():
    with pytest.raises(Exception, match=r"input has 3 channels .*\(4, 2, 3, 3\)"):
        F.conv_transpose2d(mg.zeros(1, 3, 4, 4), mg.zeros(4, 2, 3, 3))


def test_pixel_shuffle_layers_undo_each_other():
    x = mg.randn(2, 8, 3, 3)
    assert nn.PixelShuffle(2)(x).shape == (2, 2, 6, 6)
    np.testing.assert_array_equal(nn.PixelUnshuffle(2)(nn.PixelShuffle(2)(x)).numpy(),
                                  x.numpy())


def test_orthogonal_init_gives_orthonormal_rows_or_columns_times_gain():
    for shape in ((3, 5), (5, 3), (4, 2, 2)):
        w = nn.init.orthogonal_(mg.empty(*shape), gain=2.0).numpy().reshape(shape[0], -1)
        small = w @ w.T if w.shape[0] <= w.shape[1] else w.T @ w
        np.testing.assert_allclose(small, 4 * np.eye(len(small)), atol=1e-5)


def test_flatten_parameters_is_accepted_on_recurrent_layers():
    for layer in (nn.RNN(2, 3), nn.LSTM(2, 3), nn.GRU(2, 3)):
        assert layer.flatten_parameters() is None


def test_lazy_layers_become_the_real_layer_at_the_first_batch(torch):
    net = nn.Sequential(nn.LazyConv2d(4, kernel_size=3, padding=1), nn.LazyBatchNorm2d(),
                        nn.ReLU(), nn.Flatten(), nn.LazyLinear(10))
    assert list(net.parameters()) == []
    assert net(mg.randn(2, 3, 5, 5)).shape == (2, 10)
    assert [type(m).__name__ for m in net] == ["Conv2d", "BatchNorm2d", "ReLU", "Flatten",
                                               "Linear"]
    reference = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3, padding=1),
                                    torch.nn.BatchNorm2d(4), torch.nn.ReLU(),
                                    torch.nn.Flatten(), torch.nn.Linear(100, 10))
    assert list(net.state_dict()) == list(reference.state_dict())


def test_instance_norm_rms_norm_and_padding_layers_match_pytorch(torch):
    x = np.random.default_rng(0).standard_normal((2, 3, 4, 5)).astype(np.float32)
    for make in (lambda m: m.InstanceNorm2d(3, affine=True), lambda m: m.RMSNorm(5),
                 lambda m: m.ZeroPad2d((1, 2, 0, 1)), lambda m: m.ReflectionPad2d(2),
                 lambda m: m.ReplicationPad2d((1, 0, 2, 1)), lambda m: m.ConstantPad2d(1, 3.0)):
        np.testing.assert_allclose(as_array(make(nn)(mg.tensor(x))),
                                   as_array(make(torch.nn)(torch.tensor(x))), atol=1e-5)


def test_pools_in_ceil_mode_match_pytorch(torch):
    x = np.random.default_rng(0).standard_normal((1, 2, 5, 7)).astype(np.float32)
    for make in (lambda m: m.AvgPool2d(2, ceil_mode=True), lambda m: m.MaxPool2d(3, 2, 1,
                                                                                   ceil_mode=True)):
        np.testing.assert_allclose(as_array(make(nn)(mg.tensor(x))),
                                   as_array(make(torch.nn)(torch.tensor(x))), atol=1e-6)


def test_pad_sequence_pads_to_the_longest_as_pytorch(torch):
    lengths = (2, 4, 1)
    ours = nn.utils.rnn.pad_sequence([mg.ones(n, 3) for n in lengths], batch_first=True,
                                     padding_value=-1.0)
    theirs = torch.nn.utils.rnn.pad_sequence([torch.ones(n, 3) for n in lengths],
                                             batch_first=True, padding_value=-1.0)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    with pytest.raises(NotImplementedError, match="pack_padded_sequence is not supported"):
        nn.utils.rnn.pack_padded_sequence(ours, [2, 4, 1])


# --- module paths ----------------------------------------------------------------------------


@pytest.mark.parametrize("path", [
    "minigrad.nn.parallel", "minigrad.backends.cudnn", "minigrad.distributed",
    "minigrad.utils.data.dataset", "minigrad.nn.modules.loss", "minigrad.nn.modules.module",
    "minigrad.serialization", "minigrad.amp", "minigrad.cuda.amp", "minigrad.nn.utils.rnn",
])
def test_the_module_paths_programs_import_exist(path):
    importlib.import_module(path)


def test_paths_under_pytorch_names_are_the_same_classes():
    from minigrad.nn.modules.linear import Linear
    from minigrad.utils.data.dataset import Dataset, IterableDataset

    assert Linear is nn.Linear and Dataset is mg.data.Dataset
    assert IterableDataset is mg.data.IterableDataset


@pytest.mark.parametrize("path", ["minigrad.distributed.rpc", "minigrad.fx",
                                  "minigrad.utils.tensorboard", "minigrad.multiprocessing"])
def test_a_module_path_left_out_on_purpose_says_why_when_imported(path):
    with pytest.raises(ImportError, match="is not supported by minigrad: .+"):
        importlib.import_module(path)


def test_distributed_is_not_available_and_its_functions_say_why():
    from minigrad.distributed import destroy_process_group, init_process_group  # noqa: F401

    assert not mg.distributed.is_available() and not mg.distributed.is_initialized()
    with pytest.raises(RuntimeError, match="init_process_group is not supported"):
        init_process_group(backend="gloo")


def test_data_parallel_runs_the_module_itself_with_pytorchs_keys(torch):
    model = nn.DataParallel(nn.Linear(2, 3))
    assert list(model.state_dict()) == list(torch.nn.DataParallel(
        torch.nn.Linear(2, 3)).state_dict())
    assert model(mg.ones(4, 2)).shape == (4, 3)
    with pytest.raises(RuntimeError, match="DistributedDataParallel is not supported"):
        nn.parallel.DistributedDataParallel(nn.Linear(2, 3))


def test_backend_switches_are_settable_and_change_nothing():
    mg.backends.cuda.matmul.allow_tf32 = True
    mg.backends.cudnn.allow_tf32 = True
    mg.backends.cudnn.benchmark = True
    assert mg.backends.cudnn.is_available() is False


def test_mixed_precision_disabled_runs_and_enabled_autocast_says_why():
    scaler = mg.cuda.amp.GradScaler(enabled=False)
    p = nn.Parameter(mg.ones(2))
    opt = mg.optim.SGD([p], lr=0.5)
    with mg.amp.autocast(device_type="cpu", dtype=mg.bfloat16, enabled=False):
        loss = (p * p).sum()
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
    assert p.tolist() == [0.0, 0.0]
    with pytest.raises(RuntimeError, match="not supported by minigrad.*enabled=False"):
        mg.autocast(device_type="cpu")
    with pytest.warns(UserWarning, match="disabling"):
        assert not mg.amp.GradScaler().is_enabled()


def test_device_queries_answer_as_pytorch_without_cuda(torch):
    assert mg.cuda.max_memory_allocated() == torch.cuda.max_memory_allocated() == 0
    assert mg.accelerator.current_accelerator() is torch.accelerator.current_accelerator()
    assert mg.version.cuda is None
    with pytest.raises(AttributeError, match="torch.cuda.set_device is not supported"):
        mg.cuda.set_device(0)


def test_compile_returns_the_model_unchanged():
    model = nn.Linear(2, 2)
    assert mg.compile(model) is model and model.compile() is None


# --- behaviour -------------------------------------------------------------------------------


def test_random_sampler_with_replacement_draws_lazily():
    dataset = mg.data.TensorDataset(mg.arange(10))
    sampler = mg.data.RandomSampler(dataset, replacement=True, num_samples=10 ** 10)
    loader = mg.data.DataLoader(dataset, batch_size=4, sampler=sampler)
    batch, = next(iter(loader))  # a 74.5 GiB draw up front would fail here
    assert batch.shape == (4,) and len(loader) == 10 ** 10 // 4
    assert 0 <= next(iter(sampler)) < 10


def test_an_iterable_dataset_is_batched_in_its_own_order():
    class Stream(mg.data.IterableDataset):
        def __iter__(self):
            return iter(range(7))

    assert [b.tolist() for b in mg.data.DataLoader(Stream(), batch_size=3)] == \
        [[0, 1, 2], [3, 4, 5], [6]]
    assert [b.tolist() for b in mg.data.DataLoader(Stream(), batch_size=3,
                                                   drop_last=True)] == [[0, 1, 2], [3, 4, 5]]
    with pytest.raises(ValueError, match="IterableDataset"):
        mg.data.DataLoader(Stream(), shuffle=True)


def test_autograd_grad_accepts_only_inputs():
    x = mg.ones(2, requires_grad=True)
    (grad,) = mg.autograd.grad((x * x).sum(), x, only_inputs=True)
    assert grad.tolist() == [2.0, 2.0]


def test_step_lr_accepts_a_float_step_size_as_pytorch(torch):
    lrs = []
    for lib in (mg, torch):
        p = lib.nn.Parameter(lib.ones(1))
        opt = lib.optim.SGD([p], lr=1.0)
        scheduler = lib.optim.lr_scheduler.StepLR(opt, step_size=1.0, gamma=0.5)
        for _ in range(3):
            opt.step()
            scheduler.step()
        lrs.append(opt.param_groups[0]["lr"])
    assert lrs[0] == lrs[1]


@pytest.mark.parametrize("batch_first, norm_first", [(False, False), (True, True)])
def test_transformer_matches_pytorch_in_values_and_gradients(batch_first, norm_first, torch):
    options = dict(d_model=8, nhead=2, num_encoder_layers=2, num_decoder_layers=2,
                   dim_feedforward=16, dropout=0.0, batch_first=batch_first,
                   norm_first=norm_first)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PyTorch's note about its nested-tensor fast path
        theirs = torch.nn.Transformer(**options)
    ours = nn.Transformer(**options)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    ours.load_state_dict(theirs.state_dict())
    rng = np.random.default_rng(0)
    src, tgt = (rng.standard_normal(shape).astype(np.float32) for shape in ((5, 3, 8),
                                                                            (4, 3, 8)))
    if batch_first:
        src, tgt = src.transpose(1, 0, 2).copy(), tgt.transpose(1, 0, 2).copy()
    results = []
    for lib, model in ((mg, ours), (torch, theirs)):
        mask = type(model).generate_square_subsequent_mask(4)
        out = model(lib.tensor(src), lib.tensor(tgt), tgt_mask=mask)
        (out * lib.tensor(np.linspace(-1, 1, out.numel(), dtype=np.float32)
                          .reshape(tuple(out.shape)))).sum().backward()
        grads = {k: p.grad.numpy() for k, p in model.named_parameters()}
        results.append((out.detach().numpy(), grads))
    np.testing.assert_allclose(results[0][0], results[1][0], atol=1e-5)
    for name, grad in results[1][1].items():
        np.testing.assert_allclose(results[0][1][name], grad, atol=1e-4, err_msg=name)


def test_embedding_padding_row_starts_at_zero_and_gets_no_gradient(torch):
    ours, theirs = nn.Embedding(5, 3, padding_idx=0), torch.nn.Embedding(5, 3, padding_idx=0)
    assert not ours.weight.numpy()[0].any()
    ours.load_state_dict(theirs.state_dict())
    index = np.array([[0, 2, 0, 4]])
    ours(mg.tensor(index)).sum().backward()
    theirs(torch.tensor(index)).sum().backward()
    np.testing.assert_array_equal(ours.weight.grad.numpy(), theirs.weight.grad.numpy())


def test_prelu_and_upsampling_nearest_have_pytorchs_parameters_and_outputs(torch):
    x = np.random.default_rng(0).standard_normal((2, 3, 2, 2)).astype(np.float32)
    for make in (lambda m: m.PReLU(3), lambda m: m.UpsamplingNearest2d(scale_factor=2)):
        ours, theirs = make(nn), make(torch.nn)
        assert list(ours.state_dict()) == list(theirs.state_dict())
        np.testing.assert_allclose(as_array(ours(mg.tensor(x))),
                                   as_array(theirs(torch.tensor(x))))


def test_range_includes_its_end_as_pytorchs_deprecated_range(torch):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = torch.range(0, 1, 0.25)
    np.testing.assert_array_equal(mg.range(0, 1, 0.25).numpy(), expected.numpy())


def test_small_tensor_and_module_names_pytorch_code_uses():
    torch = pytest.importorskip("torch")
    x, t = mg.randn(2, 3, 4, 5), torch.randn(2, 3, 4, 5)
    assert x.get_device() == t.get_device() == -1
    assert repr(x.layout) == repr(t.layout) == "torch.strided"
    assert x.real is x and t.real is t
    with pytest.raises(RuntimeError, match="imag is not implemented for tensors with "
                                           "non-complex dtypes"):
        x.imag
    for fmt in ("contiguous_format", "channels_last", "preserve_format"):
        ours, theirs = getattr(mg, fmt), getattr(torch, fmt)
        assert repr(ours) == repr(theirs)
        if fmt != "preserve_format":
            assert x.is_contiguous(memory_format=ours) == t.is_contiguous(memory_format=theirs)
        np.testing.assert_array_equal(x.contiguous(memory_format=ours).numpy(), x.numpy())
        np.testing.assert_array_equal(x.to(memory_format=ours).numpy(), x.numpy())
    nhwc = mg.tensor(x.numpy().transpose(0, 2, 3, 1).copy()).permute(0, 3, 1, 2)
    assert nhwc.is_contiguous(memory_format=mg.channels_last) and not nhwc.is_contiguous()
    model = mg.nn.Conv2d(3, 4, 3)
    assert model.to(memory_format=mg.channels_last) is model
    np.testing.assert_array_equal(mg.arange(4.0).flip(dims=(0,)).numpy(), [3, 2, 1, 0])
    with pytest.warns(FutureWarning, match="assert_allclose\\(\\)` is deprecated"):
        mg.testing.assert_allclose(mg.tensor([1.0, float("nan")]), [1.0, float("nan")])
    from minigrad.autograd.function import Function, once_differentiable
    assert Function is mg.autograd.Function and once_differentiable is \
        mg.autograd.once_differentiable
