"""Golden cases of the pooling family: max_pool2d/3d (values and indices),
avg_pool2d/3d, adaptive_avg_pool2d/3d, pad (constant, reflect, replicate, circular) and
interpolate (nearest, bilinear), forward and input gradients, read by
tests/golden_nn_pooling.cpp."""

import torch
import torch.nn.functional as F

from make_golden import perm, randn
from nn_golden import NnGoldenFile

f32, f64, bf16 = torch.float32, torch.float64, torch.bfloat16

# bf16: torch rounds every partial sum of a gradient to bf16, ember sums a
# plane in float and rounds once.
TOL = {
    f32: dict(rtol=1e-5, atol=1e-6),
    f64: dict(rtol=1e-12, atol=1e-12),
    bf16: dict(rtol=1e-2, atol=1e-2, grad_rtol=3e-2, grad_atol=5e-2),
}


def make_input(name, shape, dtype, distinct, transposed):
    """randn values, or distinct ones (max pooling: no ties, so the gradient is
    defined); stored with the last two dims swapped when transposed (ember
    then reads a strided view)."""
    stored = list(shape)
    if transposed:
        stored[-1], stored[-2] = stored[-2], stored[-1]
    if distinct:
        n = 1
        for s in stored:
            n *= s
        # At most 256 distinct integers (times 1/4) are exact in bf16.
        return perm(f"{name}.x", stored, dtype, scale=0.25 if n <= 1024 or dtype != bf16 else 1.0, offset=-8.0)
    return randn(f"{name}.x", stored, dtype)


def has_kernel(fn, x):
    """Whether torch 1.13 has a CPU kernel for x's dtype (bf16 replication_pad has none)."""
    try:
        fn(x.detach())
        return True
    except RuntimeError as e:
        if "not implemented for" not in str(e):
            raise
        return False


def case(g, name, op, shape, fn, args, dtype=f32, transposed=False, distinct=False, grads=True, force_f32=False):
    """One case with gradients for the input. Where torch has no kernel for the
    dtype (or force_f32), it computes in float32 from the same values and
    rounds once, as ember does."""
    x = make_input(name, shape, dtype, distinct, transposed)
    via_f32 = force_f32 or not has_kernel(fn, x.transpose(-1, -2) if transposed else x)

    def run(x):
        if transposed:
            x = x.transpose(-1, -2)
        if via_f32:
            out = fn(x.float())
            return tuple(t.to(dtype) if t.is_floating_point() else t for t in out) if isinstance(out, tuple) \
                else out.to(dtype)
        return fn(x)

    args = dict(args)
    if transposed:
        args["transposed_input"] = True
    g.nn_case(name, op, run, [x], args=args, grads=(0,) if grads else (), **TOL[dtype])


def max_case(g, name, shape, dtype=f32, transposed=False, **kw):
    def fn(x):
        return F.max_pool2d(x, return_indices=True, **kw)
    case(g, name, "max_pool2d", shape, fn, kw, dtype, transposed, distinct=True)


def avg_case(g, name, shape, dtype=f32, transposed=False, **kw):
    case(g, name, "avg_pool2d", shape, lambda x: F.avg_pool2d(x, **kw), kw, dtype, transposed)


def adaptive_case(g, name, shape, output_size, dtype=f32, transposed=False):
    case(g, name, "adaptive_avg_pool2d", shape, lambda x: F.adaptive_avg_pool2d(x, output_size),
         {"output_size": output_size}, dtype, transposed)


def max3d_case(g, name, shape, dtype=f32, transposed=False, **kw):
    def fn(x):
        return F.max_pool3d(x, return_indices=True, **kw)
    case(g, name, "max_pool3d", shape, fn, kw, dtype, transposed, distinct=True)


def avg3d_case(g, name, shape, dtype=f32, transposed=False, **kw):
    case(g, name, "avg_pool3d", shape, lambda x: F.avg_pool3d(x, **kw), kw, dtype, transposed)


def adaptive3d_case(g, name, shape, output_size, dtype=f32, transposed=False):
    case(g, name, "adaptive_avg_pool3d", shape, lambda x: F.adaptive_avg_pool3d(x, output_size),
         {"output_size": output_size}, dtype, transposed)


def pad_case(g, name, shape, pad, mode="constant", value=None, dtype=f32, transposed=False):
    args = {"pad": list(pad), "mode": mode}
    if value is not None:
        args["value"] = value
    kw = {} if value is None else {"value": value}
    case(g, name, "pad", shape, lambda x: F.pad(x, pad, mode=mode, **kw), args, dtype, transposed)


def interp_case(g, name, shape, dtype=f32, transposed=False, force_f32=False, **kw):
    args = dict(kw)
    for k in ("size", "scale_factor"):
        if k in args and not isinstance(args[k], (list, tuple)):
            args[k] = [args[k]]
    case(g, name, "interpolate", shape, lambda x: F.interpolate(x, **kw), args, dtype, transposed,
         force_f32=force_f32)


def build():
    g = NnGoldenFile("pooling")
    # max_pool2d: values and indices
    max_case(g, "max_basic", [2, 3, 7, 9], kernel_size=3, stride=2, padding=1)
    max_case(g, "max_batch1_nonsquare_dilated", [1, 2, 8, 7], kernel_size=(2, 3), stride=(1, 2), padding=(1, 0),
             dilation=(2, 1))
    max_case(g, "max_ceil", [2, 2, 9, 8], kernel_size=3, stride=2, ceil_mode=True)
    max_case(g, "max_ceil_padding", [1, 2, 6, 7], kernel_size=(3, 2), stride=(2, 2), padding=(1, 1), ceil_mode=True)
    max_case(g, "max_unbatched", [3, 6, 5], kernel_size=2)
    max_case(g, "max_transposed", [2, 2, 6, 5], transposed=True, kernel_size=2, stride=1)
    max_case(g, "max_f64", [2, 2, 6, 6], f64, kernel_size=3, stride=1, padding=1)
    max_case(g, "max_bf16", [1, 2, 6, 6], bf16, kernel_size=2, stride=2)
    x = randn("max_nan.x", [1, 2, 4, 4], f32)
    x[0, 0, 1, 1] = float("nan")
    x[0, 1, 0, 0] = float("nan")
    x[0, 1, 0, 1] = float("nan")
    x[0, 1, 3, 3] = -float("inf")
    g.nn_case("max_nan", "max_pool2d", lambda t: F.max_pool2d(t, 2, return_indices=True), [x],
              args={"kernel_size": 2})
    # avg_pool2d
    avg_case(g, "avg_basic", [2, 3, 7, 9], kernel_size=3, stride=2, padding=1)
    avg_case(g, "avg_exclude_pad_ceil", [2, 2, 8, 7], kernel_size=(3, 2), stride=(2, 1), padding=(1, 1),
             ceil_mode=True, count_include_pad=False)
    avg_case(g, "avg_ceil_include_pad", [1, 2, 5, 6], kernel_size=3, stride=2, padding=1, ceil_mode=True)
    avg_case(g, "avg_divisor_override", [1, 2, 6, 6], kernel_size=2, divisor_override=3)
    avg_case(g, "avg_unbatched", [3, 5, 6], kernel_size=(2, 3), stride=(1, 2))
    avg_case(g, "avg_transposed", [2, 2, 6, 5], transposed=True, kernel_size=2, padding=1)
    avg_case(g, "avg_f64", [2, 2, 7, 6], f64, kernel_size=3, stride=2, padding=1, count_include_pad=False)
    avg_case(g, "avg_bf16", [2, 3, 8, 8], bf16, kernel_size=2, stride=2)
    # adaptive_avg_pool2d
    adaptive_case(g, "adaptive_basic", [2, 3, 7, 9], [3, 4])
    adaptive_case(g, "adaptive_global", [2, 4, 5, 6], [1, 1])
    adaptive_case(g, "adaptive_larger_than_input", [1, 2, 3, 5], [5, 7])
    adaptive_case(g, "adaptive_unbatched", [3, 10, 7], [4, 3])
    adaptive_case(g, "adaptive_transposed", [2, 2, 7, 6], [3, 2], transposed=True)
    adaptive_case(g, "adaptive_f64", [2, 2, 9, 8], [4, 3], f64)
    adaptive_case(g, "adaptive_bf16", [2, 3, 8, 8], [3, 3], bf16)
    # max_pool3d, avg_pool3d, adaptive_avg_pool3d
    max3d_case(g, "max3d_basic", [2, 2, 5, 6, 7], kernel_size=3, stride=2, padding=1)
    max3d_case(g, "max3d_nonsquare_dilated", [1, 2, 6, 7, 5], kernel_size=(2, 3, 2), stride=(1, 2, 1),
               padding=(1, 0, 1), dilation=(2, 1, 2))
    max3d_case(g, "max3d_ceil_padding", [1, 2, 7, 6, 5], kernel_size=3, stride=2, padding=1, ceil_mode=True)
    max3d_case(g, "max3d_unbatched", [2, 4, 6, 5], kernel_size=2)
    max3d_case(g, "max3d_transposed", [1, 2, 4, 5, 6], transposed=True, kernel_size=2, stride=1)
    max3d_case(g, "max3d_f64", [1, 2, 5, 5, 6], f64, kernel_size=3, stride=1, padding=1)
    max3d_case(g, "max3d_bf16", [1, 2, 4, 4, 4], bf16, kernel_size=2)
    avg3d_case(g, "avg3d_basic", [2, 2, 5, 6, 7], kernel_size=3, stride=2, padding=1)
    avg3d_case(g, "avg3d_exclude_pad_ceil", [1, 2, 6, 7, 5], kernel_size=(3, 2, 3), stride=(2, 1, 2),
               padding=(1, 1, 0), ceil_mode=True, count_include_pad=False)
    avg3d_case(g, "avg3d_divisor_override", [1, 2, 4, 4, 6], kernel_size=2, divisor_override=3)
    avg3d_case(g, "avg3d_unbatched", [2, 4, 5, 6], kernel_size=(2, 3, 2), stride=(1, 2, 1))
    avg3d_case(g, "avg3d_transposed", [1, 2, 4, 5, 6], transposed=True, kernel_size=2, padding=1)
    avg3d_case(g, "avg3d_f64", [2, 2, 5, 7, 6], f64, kernel_size=3, stride=2, padding=1, count_include_pad=False)
    avg3d_case(g, "avg3d_bf16", [1, 3, 4, 6, 6], bf16, kernel_size=2, stride=2)
    adaptive3d_case(g, "adaptive3d_basic", [2, 2, 5, 6, 7], [2, 3, 4])
    adaptive3d_case(g, "adaptive3d_global", [2, 3, 4, 5, 6], [1, 1, 1])
    adaptive3d_case(g, "adaptive3d_larger_than_input", [1, 2, 2, 3, 5], [3, 5, 7])
    adaptive3d_case(g, "adaptive3d_unbatched_transposed", [2, 6, 7, 5], [4, 3, 2], transposed=True)
    adaptive3d_case(g, "adaptive3d_f64", [2, 2, 7, 9, 8], [3, 4, 3], f64)
    adaptive3d_case(g, "adaptive3d_bf16", [1, 3, 4, 8, 8], [2, 3, 3], bf16)
    # pad
    pad_case(g, "pad_constant", [2, 3, 4, 5], (1, 2, 0, 1), value=0.5)
    pad_case(g, "pad_constant_negative", [2, 3, 4, 5], (-1, 2, 1, -2))
    pad_case(g, "pad_constant_three_dims", [2, 3, 4, 5], (1, 1, 2, 0, 0, 1))
    pad_case(g, "pad_constant_transposed", [2, 3, 4, 5], (2, 1, 1, 3), value=-1.0, transposed=True)
    pad_case(g, "pad_reflect1d", [2, 3, 6], (2, 3), "reflect")
    pad_case(g, "pad_reflect1d_unbatched", [3, 6], (5, 1), "reflect")
    pad_case(g, "pad_reflect2d", [2, 2, 5, 6], (1, 2, 3, 0), "reflect")
    pad_case(g, "pad_reflect2d_negative", [1, 2, 5, 6], (-1, 2, 2, -1), "reflect")
    pad_case(g, "pad_reflect3d", [1, 2, 3, 4, 5], (1, 1, 2, 0, 1, 2), "reflect")
    pad_case(g, "pad_replicate1d", [2, 3, 4], (3, 5), "replicate")
    pad_case(g, "pad_replicate2d", [2, 2, 4, 5], (2, 1, 0, 3), "replicate", transposed=True)
    pad_case(g, "pad_replicate2d_negative", [1, 2, 4, 5], (-2, 3, 1, -1), "replicate")
    pad_case(g, "pad_replicate3d", [2, 3, 4, 5], (1, 2, 0, 1, 2, 1), "replicate")
    pad_case(g, "pad_circular1d", [2, 3, 6], (2, 3), "circular")
    pad_case(g, "pad_circular1d_crop_then_wrap", [2, 3, 5], (-1, 2), "circular")
    pad_case(g, "pad_circular2d", [2, 2, 4, 5], (1, 2, 3, 0), "circular", transposed=True)
    pad_case(g, "pad_circular2d_negative", [1, 2, 3, 4], (1, 2, -1, 2), "circular")
    pad_case(g, "pad_circular3d", [1, 2, 3, 4, 5], (1, 1, 2, 0, 1, 2), "circular")
    pad_case(g, "pad_circular2d_f64", [2, 2, 5, 6], (5, 6, 5, 0), "circular", dtype=f64)
    pad_case(g, "pad_circular2d_bf16", [2, 2, 5, 6], (2, 2, 1, 3), "circular", dtype=bf16)
    pad_case(g, "pad_reflect2d_f64", [2, 2, 5, 6], (2, 2, 1, 3), "reflect", dtype=f64)
    pad_case(g, "pad_replicate2d_bf16", [2, 2, 5, 6], (2, 2, 1, 3), "replicate", dtype=bf16)
    pad_case(g, "pad_constant_bf16", [2, 3, 4, 5], (1, 2, 2, 1), value=2.0, dtype=bf16)
    # interpolate
    interp_case(g, "nearest_size", [2, 3, 4, 5], size=(7, 9))
    interp_case(g, "nearest_scale", [1, 2, 5, 5], scale_factor=1.5)
    interp_case(g, "nearest_scale_recompute", [1, 2, 5, 5], scale_factor=1.5, recompute_scale_factor=True)
    interp_case(g, "nearest_double", [2, 2, 3, 4], scale_factor=2.0)
    interp_case(g, "nearest_down", [1, 3, 7, 8], size=(3, 5))
    interp_case(g, "nearest_3d", [2, 3, 5], size=12)
    interp_case(g, "nearest_3d_scale", [2, 3, 7], scale_factor=0.6)
    interp_case(g, "nearest_transposed", [2, 2, 5, 4], transposed=True, size=(8, 6))
    interp_case(g, "nearest_bf16", [2, 2, 4, 5], bf16, size=(6, 11))
    interp_case(g, "bilinear_size", [2, 3, 4, 5], mode="bilinear", size=(7, 9))
    interp_case(g, "bilinear_align_corners", [2, 3, 4, 5], mode="bilinear", size=(7, 9), align_corners=True)
    interp_case(g, "bilinear_scale", [1, 2, 5, 6], mode="bilinear", scale_factor=(1.5, 1.7))
    interp_case(g, "bilinear_scale_recompute", [1, 2, 5, 6], mode="bilinear", scale_factor=(1.5, 1.7),
                recompute_scale_factor=True)
    interp_case(g, "bilinear_down", [1, 2, 9, 8], mode="bilinear", size=(4, 3))
    interp_case(g, "bilinear_down_align_corners", [1, 2, 9, 8], mode="bilinear", size=(4, 1), align_corners=True)
    interp_case(g, "bilinear_same_h", [2, 2, 5, 4], mode="bilinear", size=(5, 7))
    interp_case(g, "bilinear_transposed", [2, 2, 5, 4], transposed=True, mode="bilinear", size=(8, 6))
    interp_case(g, "bilinear_f64", [2, 2, 4, 5], f64, mode="bilinear", size=(9, 7))
    interp_case(g, "bilinear_f64_align_corners", [2, 2, 4, 5], f64, mode="bilinear", size=(9, 7), align_corners=True)
    # torch 1.13's bf16 bilinear rounds its intermediate sums to bf16 (errors up to 3e-2 here); ember
    # computes in float32 and rounds once, which is what this case pins.
    interp_case(g, "bilinear_bf16", [2, 2, 4, 5], bf16, force_f32=True, mode="bilinear", size=(6, 11))
    return g
