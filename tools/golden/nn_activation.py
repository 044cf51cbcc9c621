"""Golden cases of the activation family: leaky_relu, elu, hardswish,
hardsigmoid, mish, log_sigmoid, forward and input gradients, read by
tests/golden_nn_activation.cpp."""

import torch
import torch.nn.functional as F

from make_golden import randn
from nn_golden import NnGoldenFile

f32, f64, bf16 = torch.float32, torch.float64, torch.bfloat16

# float32: ember's vectorised exp/log1p/tanh are within a few ulp of torch's.
TOL = {
    f32: dict(rtol=1e-5, atol=1e-6),
    f64: dict(rtol=1e-12, atol=1e-12),
    bf16: dict(rtol=1e-2, atol=1e-2, grad_rtol=2e-2, grad_atol=2e-2),
}

# op name in ember's runner -> (torch function of x and the args, the args of each case)
OPS = {
    "leaky_relu": (lambda x, a: F.leaky_relu(x, **a), [{}, {"negative_slope": 0.2}]),
    "elu": (lambda x, a: F.elu(x, **a), [{}, {"alpha": 0.5}]),
    "hardswish": (lambda x, a: F.hardswish(x), [{}]),
    "hardsigmoid": (lambda x, a: F.hardsigmoid(x), [{}]),
    "mish": (lambda x, a: F.mish(x), [{}]),
    "log_sigmoid": (lambda x, a: F.logsigmoid(x), [{}]),
}


def has_kernel(fn, x):
    try:
        fn(x.detach())
        return True
    except RuntimeError as e:
        if "not implemented for" not in str(e):
            raise
        return False


def case(g, name, op, shape, args, dtype, transposed=False):
    """Values spread over [-6, 6] (both sides of every kink); stored with the
    last two dims swapped when transposed (ember then reads a strided view).
    Where torch has no kernel for the dtype it computes in float32 from the
    same values and rounds once, as ember does."""
    fn = OPS[op][0]
    stored = list(shape)
    if transposed:
        stored[-1], stored[-2] = stored[-2], stored[-1]
    x = randn(f"{name}.x", stored, dtype, scale=3.0)
    via_f32 = not has_kernel(lambda t: fn(t, args), x)

    def run(x):
        if transposed:
            x = x.transpose(-1, -2)
        if via_f32:
            return fn(x.float(), args).to(dtype)
        return fn(x, args)

    spec = dict(args)
    if transposed:
        spec["transposed_input"] = True
    tol = dict(TOL[dtype])
    if op == "hardsigmoid" and dtype == f64:
        # torch's float64 backward multiplies by float(1/6) = 0.16666667163...; ember by 1/6.
        tol["grad_rtol"] = 1e-7
    g.nn_case(name, op, run, [x], args=spec, grads=(0,), **tol)


def build():
    g = NnGoldenFile("activation")
    for op, (_, arg_sets) in OPS.items():
        for k, args in enumerate(arg_sets):
            tag = f"{op}_a{k}"
            case(g, f"{tag}_f32", op, [3, 37], args, f32)
            case(g, f"{tag}_batch1_f32", op, [1, 5, 7], args, f32)
            case(g, f"{tag}_transposed_f32", op, [6, 9], args, f32, transposed=True)
            case(g, f"{tag}_f64", op, [4, 11], args, f64)
            case(g, f"{tag}_bf16", op, [5, 13], args, bf16)
    return g
