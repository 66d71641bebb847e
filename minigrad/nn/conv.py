"""Image layers: Conv2d, MaxPool2d, AvgPool2d, and the seed's ResidualBlock."""

from __future__ import annotations

import math
from typing import Any

from ..device import check_device
from ..tensor import Tensor
from . import functional as F
from . import init
from .functional_checks import _same_padding
from .functional_checks import _single
from .module import Module, Sequential, check_sizes, new_parameter
from .normalization import BatchNorm2d


class Conv2d(Module):
    """2-D cross-correlation: ``weight`` (out_channels, in_channels, kH, kW) slides over
    (N, in_channels, H, W). ``padding``: int, pair, ``"same"`` or ``"valid"``. Weights
    start like PyTorch's (uniform in +-1/sqrt(in_channels * kH * kW))."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, dilation: Any = 1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros", device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        if device is not None:
            check_device(device, "Conv2d")
        if isinstance(padding, str) and padding not in ("same", "valid"):
            raise ValueError(f"Conv2d: padding must be an int, a pair, 'same' or 'valid', "
                             f"got {padding!r}")
        self.padding_mode = check_padding_mode(padding_mode, "Conv2d")
        if padding == "same" and F._pair(stride, "Conv2d", "stride") != (1, 1):
            raise ValueError("Conv2d: padding='same' needs stride 1")
        self.in_channels, self.out_channels = check_sizes(
            "Conv2d", in_channels=in_channels, out_channels=out_channels)
        self.groups = check_groups("Conv2d", in_channels, out_channels, groups)
        self.kernel_size = F._pair(kernel_size, "Conv2d", "kernel_size")
        self.stride = F._pair(stride, "Conv2d", "stride")
        self.padding = padding if isinstance(padding, str) else F._pair(padding, "Conv2d",
                                                                         "padding")
        self.dilation = F._pair(dilation, "Conv2d", "dilation")
        self.weight = new_parameter(out_channels, in_channels // self.groups, *self.kernel_size,
                                    dtype=dtype)
        self.bias = new_parameter(out_channels, dtype=dtype) if bias else None
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:  # PyTorch's fan-in: the weight's dims 1, 2, 3
            fan_in = self.weight.shape[1] * self.kernel_size[0] * self.kernel_size[1]
            bound = 1 / math.sqrt(fan_in)
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input: Tensor) -> Tensor:
        self._check_input_type(input, self.weight)
        if input.ndim not in (3, 4):
            raise self._error(f"expected a 4-D input (N, C, H, W) or a 3-D one (C, H, W), "
                              f"got shape {tuple(input.shape)}")
        channels = input.shape[-3]
        if channels != self.in_channels:
            hint = ("; a 3-D input is one image (C, H, W): for a batch of one-channel images "
                    "(N, H, W) use x.unsqueeze(1)") if input.ndim == 3 else ""
            raise self._error(
                f"expected input with {self.in_channels} channels (in_channels="
                f"{self.in_channels}, dim {input.ndim - 3}), got shape {tuple(input.shape)}"
                + hint
            )
        input, padding = pad_by_mode(self, input, self.padding)
        return F.conv2d(input, self.weight, self.bias, self.stride, padding,
                        self.dilation, self.groups)

    def extra_repr(self) -> str:
        return conv_extra_repr(self, dims=2)


class _Pool(Module):
    """What the pooling layers share: the window's size, stride and padding."""

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = kernel_size if stride is None else stride
        self.padding = padding
        self.ceil_mode = False

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"
                + (", ceil_mode=True" if self.ceil_mode else ""))


class _AvgPool(_Pool):
    """What AvgPool1d and AvgPool2d share: the window's settings, and whether padding
    counts in the mean."""

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 ceil_mode: bool = False, count_include_pad: bool = True) -> None:
        super().__init__(kernel_size, stride, padding)
        self.count_include_pad, self.ceil_mode = count_include_pad, ceil_mode


class _MaxPool(_Pool):
    """What MaxPool1d and MaxPool2d share: the window's settings, and whether forward also
    returns where each maximum is (``return_indices``, for MaxUnpool)."""

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 dilation: Any = 1, return_indices: bool = False,
                 ceil_mode: bool = False) -> None:
        super().__init__(kernel_size, stride, padding)
        self.dilation, self.return_indices, self.ceil_mode = dilation, return_indices, ceil_mode

    def extra_repr(self) -> str:  # PyTorch's
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"
                f", dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class MaxPool2d(_MaxPool):
    """The maximum of each ``kernel_size`` window, ``stride`` apart (default: no overlap).
    With ``return_indices=True``: (values, indices), the indices flat in each (H * W)
    plane."""

    def forward(self, input: Tensor) -> Any:
        return F.max_pool2d(input, self.kernel_size, self.stride, self.padding,
                            self.dilation, ceil_mode=self.ceil_mode,
                            return_indices=self.return_indices)


class AvgPool2d(_AvgPool):
    """The mean of each ``kernel_size`` window, ``stride`` apart (default: no overlap)."""

    def forward(self, input: Tensor) -> Tensor:
        return F.avg_pool2d(input, self.kernel_size, self.stride, self.padding,
                            ceil_mode=self.ceil_mode,
                            count_include_pad=self.count_include_pad)


class ResidualBlock(Module):
    """The seed's ResNet basic block: two 3x3 convolutions with batch norm, and a
    shortcut that adds the input back,

        out = relu(bn2(conv2(relu(bn1(conv1(x))))) + shortcut(x))

    The shortcut is the identity, or a 1x1 convolution plus batch norm when the stride
    or the number of channels changes the shape."""

    def __init__(self, in_channels: int, out_channels: int, stride: int = 1) -> None:
        super().__init__()
        self.conv1 = Conv2d(in_channels, out_channels, 3, stride=stride, padding=1, bias=False)
        self.bn1 = BatchNorm2d(out_channels)
        self.conv2 = Conv2d(out_channels, out_channels, 3, stride=1, padding=1, bias=False)
        self.bn2 = BatchNorm2d(out_channels)
        if stride != 1 or in_channels != out_channels:
            self.shortcut = Sequential(
                Conv2d(in_channels, out_channels, 1, stride=stride, bias=False),
                BatchNorm2d(out_channels),
            )
        else:
            self.shortcut = Sequential()

    def forward(self, x: Tensor) -> Tensor:
        out = self.bn1(self.conv1(x)).relu()
        out = self.bn2(self.conv2(out))
        return (out + self.shortcut(x)).relu()


# --- 1-D layers, adaptive pooling, upsampling (issue 11) --------------------------------------


class Conv1d(Module):
    """1-D cross-correlation: ``weight`` (out_channels, in_channels, kernel_size) slides
    along (N, in_channels, L). ``padding``: int, ``"same"`` or ``"valid"``. Weights start
    like PyTorch's (uniform in +-1/sqrt(in_channels * kernel_size))."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, dilation: Any = 1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros", device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        if device is not None:
            check_device(device, "Conv1d")
        if isinstance(padding, str) and padding not in ("same", "valid"):
            raise ValueError(f"Conv1d: padding must be an int, 'same' or 'valid', got "
                             f"{padding!r}")
        self.padding_mode = check_padding_mode(padding_mode, "Conv1d")
        self.in_channels, self.out_channels = check_sizes(
            "Conv1d", in_channels=in_channels, out_channels=out_channels)
        self.groups = check_groups("Conv1d", in_channels, out_channels, groups)
        self.kernel_size = (_single(kernel_size, "Conv1d", "kernel_size"),)
        self.stride = (_single(stride, "Conv1d", "stride"),)
        if padding == "same" and self.stride != (1,):
            raise ValueError("Conv1d: padding='same' needs stride 1")
        self.padding = padding if isinstance(padding, str) else \
            (_single(padding, "Conv1d", "padding"),)
        self.dilation = (_single(dilation, "Conv1d", "dilation"),)
        self.weight = new_parameter(out_channels, in_channels // self.groups, *self.kernel_size,
                                    dtype=dtype)
        self.bias = new_parameter(out_channels, dtype=dtype) if bias else None
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            bound = 1 / math.sqrt(self.weight.shape[1] * self.kernel_size[0])
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input: Tensor) -> Tensor:
        self._check_input_type(input, self.weight)
        if input.ndim not in (2, 3):
            raise self._error(f"expected a 3-D input (N, C, L) or a 2-D one (C, L), got "
                              f"shape {tuple(input.shape)}")
        if input.shape[-2] != self.in_channels:
            hint = ("; a 2-D input is one sequence (C, L): for a batch of one-channel "
                    "sequences (N, L) use x.unsqueeze(1)") if input.ndim == 2 else ""
            raise self._error(
                f"expected input with {self.in_channels} channels (in_channels="
                f"{self.in_channels}, dim {input.ndim - 2}), got shape {tuple(input.shape)}"
                + hint)
        input, padding = pad_by_mode(self, input, self.padding)
        padding = padding if isinstance(padding, str) else padding[0]
        return F.conv1d(input, self.weight, self.bias, self.stride[0], padding,
                        self.dilation[0], self.groups)

    def extra_repr(self) -> str:
        return conv_extra_repr(self, dims=1)


class MaxPool1d(_MaxPool):
    """The maximum of each ``kernel_size`` window along the last dimension."""

    def forward(self, input: Tensor) -> Any:
        return F.max_pool1d(input, self.kernel_size, self.stride, self.padding,
                            self.dilation, ceil_mode=self.ceil_mode,
                            return_indices=self.return_indices)


class AvgPool1d(_AvgPool):
    """The mean of each ``kernel_size`` window along the last dimension."""

    def forward(self, input: Tensor) -> Tensor:
        if self.ceil_mode:
            raise self._error("ceil_mode=True is supported by minigrad for the 2-D pools "
                              "only", NotImplementedError)
        return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding,
                            self.count_include_pad)


class AdaptiveAvgPool2d(Module):
    """Average pooling to a fixed ``output_size`` (h, w) whatever the input's size;
    ``AdaptiveAvgPool2d(1)`` is global average pooling."""

    def __init__(self, output_size: Any) -> None:
        super().__init__()
        self.output_size = output_size

    def forward(self, input: Tensor) -> Tensor:
        return F.adaptive_avg_pool2d(input, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(AdaptiveAvgPool2d):
    """Average pooling to a fixed length ``output_size``."""

    def forward(self, input: Tensor) -> Tensor:
        return F.adaptive_avg_pool1d(input, self.output_size)


class Upsample(Module):
    """``F.interpolate`` as a layer: to ``size`` or by ``scale_factor``, with ``mode``
    ``"nearest"`` (the default), ``"linear"``, ``"bilinear"`` or ``"area"``."""

    def __init__(self, size: Any = None, scale_factor: Any = None, mode: str = "nearest",
                 align_corners: bool | None = None) -> None:
        super().__init__()
        if scale_factor is not None:  # floats, as PyTorch keeps them
            scale_factor = tuple(float(f) for f in scale_factor) \
                if isinstance(scale_factor, (tuple, list)) else float(scale_factor)
        self.size, self.scale_factor = size, scale_factor
        self.mode, self.align_corners = mode, align_corners

    def forward(self, input: Tensor) -> Tensor:
        return F.interpolate(input, self.size, self.scale_factor, self.mode,
                             self.align_corners)

    def extra_repr(self) -> str:
        what = f"size={self.size}" if self.size is not None else \
            f"scale_factor={self.scale_factor}"
        return f"{what}, mode={self.mode!r}"


PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


def check_padding_mode(padding_mode: Any, layer: str) -> str:
    if padding_mode not in PADDING_MODES:
        raise ValueError(f"{layer}: padding_mode must be one of {PADDING_MODES}, got "
                         f"{padding_mode!r}")
    return padding_mode


def pad_by_mode(conv: Module, input: Tensor, padding: Any) -> tuple[Tensor, Any]:
    """A convolution's input padded by its ``padding_mode`` (PyTorch's way: ``F.pad``
    first, then the convolution without padding); with "zeros", as it is."""
    if conv.padding_mode == "zeros" or padding == "valid":
        return input, padding
    if padding == "same":
        pairs = _same_padding(conv.kernel_size, conv.dilation)
    else:
        pairs = [(p, p) for p in padding]
    pads = [side for pair in reversed(pairs) for side in pair]  # F.pad: the last dim first
    return F.pad(input, pads, mode=conv.padding_mode), (0,) * len(pairs)


def conv_extra_repr(conv: Module, dims: int) -> str:
    """PyTorch's repr of a Conv1d/Conv2d: padding, dilation and bias only when not the
    defaults."""
    text = (f"{conv.in_channels}, {conv.out_channels}, kernel_size={conv.kernel_size}, "
            f"stride={conv.stride}")
    if conv.padding != (0,) * dims:  # (as PyTorch: "same" and "valid" shown, unquoted)
        text += f", padding={conv.padding}"
    if conv.dilation != (1,) * dims:
        text += f", dilation={conv.dilation}"
    if conv.groups != 1:
        text += f", groups={conv.groups}"
    text += "" if conv.bias is not None else ", bias=False"
    padding_mode = getattr(conv, "padding_mode", "zeros")
    return text + ("" if padding_mode == "zeros" else f", padding_mode={padding_mode}")


class _ConvTransposeNd(Module):
    """The transpose of a convolution (``F.conv_transpose1d/2d``): ``weight``
    (in_channels, out_channels, *kernel_size), ``bias`` (out_channels,), initialised as
    PyTorch does (its fan-in is out_channels * kernel elements, weight's dim 1)."""

    dims = 2

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, output_padding: Any = 0, groups: int = 1,
                 bias: bool = True, dilation: Any = 1, padding_mode: str = "zeros",
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        name = type(self).__name__
        if padding_mode != "zeros":
            raise NotImplementedError(f"{name}: only padding_mode='zeros' is supported by "
                                      f"minigrad, got padding_mode={padding_mode!r}")
        self.in_channels, self.out_channels = check_sizes(
            name, in_channels=in_channels, out_channels=out_channels)
        groups = check_groups(name, in_channels, out_channels, groups)
        tuples = [_tuple(v, self.dims, name, n) for v, n in
                  ((kernel_size, "kernel_size"), (stride, "stride"), (padding, "padding"),
                   (output_padding, "output_padding"), (dilation, "dilation"))]
        self.kernel_size, self.stride, self.padding, self.output_padding, self.dilation = tuples
        self.groups, self.padding_mode = groups, padding_mode
        self.weight = new_parameter(in_channels, out_channels // groups, *self.kernel_size,
                                    dtype=dtype)
        self.bias = new_parameter(out_channels, dtype=dtype) if bias else None
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:  # PyTorch's fan-in: the weight's dim 1 times the kernel
            bound = 1 / math.sqrt(self.weight.shape[1] * math.prod(self.kernel_size))
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input: Tensor, output_size: Any = None) -> Tensor:
        self._check_input_type(input, self.weight)
        if output_size is not None:
            raise self._error("output_size= is not supported by minigrad; give "
                              "output_padding to the constructor instead")
        function = F.conv_transpose2d if self.dims == 2 else F.conv_transpose1d
        unpack = (lambda t: t) if self.dims == 2 else (lambda t: t[0])
        return function(input, self.weight, self.bias, unpack(self.stride),
                        unpack(self.padding), unpack(self.output_padding), self.groups,
                        unpack(self.dilation))

    def extra_repr(self) -> str:
        text = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}")
        if any(self.padding):  # PyTorch's order
            text += f", padding={self.padding}"
        if any(d != 1 for d in self.dilation):
            text += f", dilation={self.dilation}"
        if any(self.output_padding):
            text += f", output_padding={self.output_padding}"
        if self.groups != 1:
            text += f", groups={self.groups}"
        return text + ("" if self.bias is not None else ", bias=False")


def check_groups(layer: str, in_channels: int, out_channels: int, groups: Any) -> int:
    """``groups`` of a convolution layer: a positive int dividing both channel counts, with
    PyTorch's messages (and its ValueError)."""
    if isinstance(groups, bool) or not isinstance(groups, int):
        raise TypeError(f"{layer}: groups must be an int, got {type(groups).__name__} "
                        f"{groups!r}")
    if groups <= 0:
        raise ValueError(f"{layer}: groups must be a positive integer, got {groups}")
    for name, channels in (("in_channels", in_channels), ("out_channels", out_channels)):
        if channels % groups:
            raise ValueError(f"{layer}: {name} must be divisible by groups, got {name}="
                             f"{channels} and groups={groups}")
    return groups


def _tuple(value: Any, dims: int, who: str, name: str) -> tuple[int, ...]:
    values = (value,) * dims if isinstance(value, int) else tuple(value)
    if len(values) != dims or not all(isinstance(v, int) for v in values):
        raise TypeError(f"{who}: {name} must be an int or {dims} ints, got {value!r}")
    return values


class ConvTranspose2d(_ConvTransposeNd):
    """(N, C_in, H, W) -> (N, C_out, H', W'), H' = (H - 1) stride - 2 padding +
    dilation (kH - 1) + output_padding + 1: upsampling, as in decoders and GAN generators."""

    dims = 2


class ConvTranspose1d(_ConvTransposeNd):
    """(N, C_in, L) -> (N, C_out, L'), L' = (L - 1) stride - 2 padding +
    dilation (K - 1) + output_padding + 1."""

    dims = 1


class UpsamplingNearest2d(Upsample):
    """``Upsample(mode="nearest")`` under its older name."""

    def __init__(self, size: Any = None, scale_factor: Any = None) -> None:
        super().__init__(size, scale_factor, mode="nearest")
