"""Golden cases of the conv family: conv1d, conv2d, conv3d, conv_transpose2d (forward and
gradients for input, weight and bias), unfold and fold (forward and input gradient),
read by tests/golden_nn_conv.cpp."""

import torch
import torch.nn.functional as F

from make_golden import randn
from nn_golden import NnGoldenFile

# Sums of a few dozen products: a little above the per-dtype defaults.
TOL = {
    torch.float32: dict(rtol=1e-5, atol=1e-5),
    torch.float64: dict(rtol=1e-12, atol=1e-12),
    torch.bfloat16: dict(rtol=2e-2, atol=6e-2, grad_rtol=3e-2, grad_atol=2.5e-1),
}


def conv_case(g, name, op, x_shape, w_shape, bias, dtype=torch.float32, transposed_input=False, via_f32=False, **kw):
    """One case: x (stored with its last two dims swapped when transposed_input,
    so ember reads a strided view), w and an optional bias; gradients for all.
    via_f32: torch 1.13 has no CPU kernel for the dtype (bf16 conv_transpose2d):
    compute in float32 from the same values and round once, as ember does."""
    stored = list(x_shape)
    if transposed_input:
        stored[-1], stored[-2] = stored[-2], stored[-1]
    x = randn(f"{name}.x", stored, dtype)
    w = randn(f"{name}.w", w_shape, dtype, scale=0.5)
    out_channels = w_shape[1] * kw.get("groups", 1) if op == "conv_transpose2d" else w_shape[0]
    inputs = [x, w] + ([randn(f"{name}.b", [out_channels], dtype)] if bias else [])
    fn = {"conv1d": F.conv1d, "conv2d": F.conv2d, "conv3d": F.conv3d, "conv_transpose2d": F.conv_transpose2d}[op]

    def run(x, w, b=None):
        if transposed_input:
            x = x.transpose(-1, -2)
        if via_f32:
            b = None if b is None else b.float()
            return fn(x.float(), w.float(), b, **kw).to(x.dtype)
        return fn(x, w, b, **kw)

    args = dict(kw)
    if transposed_input:
        args["transposed_input"] = True
    g.nn_case(name, op, run, inputs, args=args, grads=tuple(range(len(inputs))), **TOL[dtype])


def fold_case(g, name, op, shape, dtype=torch.float32, transposed_input=False, **kw):
    """unfold or fold of one input x (stored with its last two dims swapped when
    transposed_input), with the input gradient. kw are torch's keyword arguments."""
    stored = list(shape)
    if transposed_input:
        stored[-1], stored[-2] = stored[-2], stored[-1]
    x = randn(f"{name}.x", stored, dtype)
    fn = {"unfold": F.unfold, "fold": F.fold}[op]

    def run(x):
        return fn(x.transpose(-1, -2) if transposed_input else x, **kw)

    args = dict(kw)
    if transposed_input:
        args["transposed_input"] = True
    g.nn_case(name, op, run, [x], args=args, grads=(0,), **TOL[dtype])


def build():
    g = NnGoldenFile("conv")
    f64, bf16 = torch.float64, torch.bfloat16
    # conv2d
    conv_case(g, "conv2d_basic", "conv2d", [2, 3, 7, 6], [4, 3, 3, 3], True, padding=1)
    conv_case(g, "conv2d_basic_f64", "conv2d", [2, 3, 7, 6], [4, 3, 3, 3], True, f64, padding=1)
    conv_case(g, "conv2d_basic_bf16", "conv2d", [2, 3, 7, 6], [4, 3, 3, 3], True, bf16, padding=1)
    conv_case(g, "conv2d_wide", "conv2d", [2, 3, 6, 5], [12, 3, 3, 3], True, padding=(2, 1), dilation=(2, 1))
    conv_case(g, "conv2d_batch1_nonsquare", "conv2d", [1, 2, 9, 7], [3, 2, 2, 3], False, stride=(2, 1),
              padding=(2, 1))
    conv_case(g, "conv2d_padding3_dilation2", "conv2d", [2, 2, 6, 6], [2, 2, 3, 2], True, f64, padding=3,
              dilation=2)
    conv_case(g, "conv2d_groups_strided", "conv2d", [2, 4, 5, 6], [6, 2, 3, 3], True, stride=2, groups=2)
    conv_case(g, "conv2d_groups_bf16", "conv2d", [2, 4, 5, 6], [6, 2, 3, 3], True, bf16, padding=1, groups=2)
    conv_case(g, "conv2d_depthwise", "conv2d", [2, 3, 8, 8], [3, 1, 3, 3], True, padding=1, groups=3)
    conv_case(g, "conv2d_depthwise_multiplier_f64", "conv2d", [1, 2, 6, 5], [4, 1, 3, 2], False, f64, stride=(1, 2),
              groups=2)
    conv_case(g, "conv2d_same_even_kernel", "conv2d", [1, 2, 6, 7], [3, 2, 4, 2], True, padding="same",
              dilation=(1, 2))
    conv_case(g, "conv2d_same_odd_kernel_f64", "conv2d", [2, 2, 5, 5], [2, 2, 3, 3], False, f64, padding="same")
    conv_case(g, "conv2d_valid", "conv2d", [2, 3, 6, 5], [2, 3, 3, 3], True, padding="valid")
    conv_case(g, "conv2d_strided_input", "conv2d", [2, 3, 6, 5], [4, 3, 3, 2], True, transposed_input=True,
              padding=1)
    conv_case(g, "conv2d_pointwise", "conv2d", [2, 5, 4, 4], [3, 5, 1, 1], True)
    conv_case(g, "conv2d_unbatched", "conv2d", [3, 5, 5], [2, 3, 3, 3], True, padding=1)
    # conv1d
    conv_case(g, "conv1d_basic", "conv1d", [2, 3, 10], [4, 3, 3], True, stride=2, padding=1)
    conv_case(g, "conv1d_basic_bf16", "conv1d", [2, 3, 10], [4, 3, 3], True, bf16, stride=2, padding=1)
    conv_case(g, "conv1d_same_even_kernel", "conv1d", [1, 2, 8], [2, 2, 4], True, padding="same")
    conv_case(g, "conv1d_dilated_groups_f64", "conv1d", [2, 4, 9], [4, 2, 3], True, f64, padding=2, dilation=2,
              groups=2)
    # conv3d
    conv_case(g, "conv3d_basic", "conv3d", [2, 3, 4, 5, 6], [4, 3, 3, 3, 2], True, padding=1)
    conv_case(g, "conv3d_basic_f64", "conv3d", [2, 3, 4, 5, 6], [4, 3, 3, 3, 2], True, f64, padding=(1, 0, 1))
    conv_case(g, "conv3d_basic_bf16", "conv3d", [1, 3, 4, 5, 5], [4, 3, 2, 3, 3], True, bf16, padding=1)
    conv_case(g, "conv3d_strided_dilated_groups", "conv3d", [1, 4, 7, 6, 5], [6, 2, 2, 3, 2], True, stride=(2, 1, 2),
              padding=(1, 2, 0), dilation=(2, 1, 1), groups=2)
    conv_case(g, "conv3d_wide_f64", "conv3d", [2, 2, 3, 4, 4], [10, 2, 2, 2, 2], True, f64, padding=(0, 1, 1))
    conv_case(g, "conv3d_same_even_kernel", "conv3d", [1, 2, 4, 5, 5], [3, 2, 2, 3, 4], True, padding="same")
    conv_case(g, "conv3d_valid", "conv3d", [2, 2, 4, 4, 5], [2, 2, 3, 3, 3], False, padding="valid")
    conv_case(g, "conv3d_strided_input", "conv3d", [2, 2, 3, 5, 4], [3, 2, 2, 2, 3], True, transposed_input=True,
              padding=1)
    conv_case(g, "conv3d_pointwise", "conv3d", [2, 5, 3, 4, 4], [3, 5, 1, 1, 1], True)
    conv_case(g, "conv3d_unbatched", "conv3d", [3, 4, 4, 5], [2, 3, 3, 3, 3], True, padding=1)
    # unfold, fold
    fold_case(g, "unfold_basic", "unfold", [2, 3, 5, 6], kernel_size=(2, 3))
    fold_case(g, "unfold_padded_strided_dilated_f64", "unfold", [1, 2, 7, 6], torch.float64, kernel_size=(3, 2),
              dilation=(2, 1), padding=(1, 2), stride=(2, 3))
    fold_case(g, "unfold_unbatched", "unfold", [3, 4, 5], kernel_size=2, padding=1)
    fold_case(g, "unfold_transposed", "unfold", [2, 2, 5, 6], transposed_input=True, kernel_size=2, dilation=(1, 2),
              stride=(2, 1))
    fold_case(g, "unfold_bf16", "unfold", [1, 2, 6, 6], torch.bfloat16, kernel_size=3, stride=2)
    fold_case(g, "fold_basic", "fold", [2, 18, 16], output_size=(5, 6), kernel_size=(2, 3))
    fold_case(g, "fold_padded_strided_dilated_f64", "fold", [1, 12, 9], torch.float64, output_size=(7, 6),
              kernel_size=(3, 2), dilation=(2, 1), padding=(1, 2), stride=(2, 3))
    fold_case(g, "fold_unbatched", "fold", [16, 30], output_size=(4, 5), kernel_size=2, padding=1)
    fold_case(g, "fold_transposed", "fold", [2, 18, 16], transposed_input=True, output_size=(5, 6),
              kernel_size=(2, 3))
    # conv_transpose2d
    conv_case(g, "conv_transpose2d_basic", "conv_transpose2d", [2, 3, 4, 5], [3, 2, 3, 3], True, stride=2,
              padding=1, output_padding=1)
    conv_case(g, "conv_transpose2d_basic_f64", "conv_transpose2d", [2, 3, 4, 5], [3, 2, 3, 3], True, f64,
              stride=2, padding=1, output_padding=1)
    conv_case(g, "conv_transpose2d_basic_bf16", "conv_transpose2d", [2, 3, 4, 5], [3, 2, 3, 3], True, bf16,
              via_f32=True, stride=2, padding=1, output_padding=1)
    conv_case(g, "conv_transpose2d_groups_dilated", "conv_transpose2d", [1, 4, 3, 4], [4, 3, 3, 2], True,
              stride=(1, 2), padding=(1, 0), output_padding=(1, 1), groups=2, dilation=(2, 1))
    conv_case(g, "conv_transpose2d_batch1_nonsquare", "conv_transpose2d", [1, 2, 3, 5], [2, 3, 2, 4], False,
              stride=(3, 1), padding=(0, 2))
    return g
