"""Golden cases of the indexing family: gather, scatter (tensor and value),
scatter_add, index_select, index_add, masked_select, repeat, flip, roll,
forward and gradients of the floating inputs, read by
tests/golden_nn_indexing.cpp. Index tensors and masks are stored as inputs."""

import torch

from make_golden import randint, randn
from nn_golden import NnGoldenFile

f32, f64, bf16, i64 = torch.float32, torch.float64, torch.bfloat16, torch.int64

# bf16 scatter_add/index_add: both torch and ember round after every add.
TOL = {
    f32: dict(rtol=1e-6, atol=1e-6),
    f64: dict(rtol=1e-12, atol=1e-12),
    bf16: dict(rtol=1e-2, atol=1e-2, grad_rtol=2e-2, grad_atol=2e-2),
    i64: dict(rtol=0.0, atol=0.0),
}


def x_of(name, shape, dtype, transposed=False):
    """randn values (integers for int64); stored with the last two dims swapped
    when transposed, and read back through a transpose by both sides."""
    stored = list(shape)
    if transposed:
        stored[-1], stored[-2] = stored[-2], stored[-1]
    if dtype == i64:
        return randint(f"{name}.x", stored, -50, 50)
    return randn(f"{name}.x", stored, dtype)


def distinct_ids(name, shape, dim, n):
    """ids in [0, n) that do not repeat along dim (scatter has one defined result)."""
    keys = torch.rand(list(shape[:dim]) + [n] + list(shape[dim + 1:]), generator=torch.Generator().manual_seed(len(name)))
    return keys.argsort(dim=dim).narrow(dim, 0, shape[dim]).contiguous()


def case(g, name, op, fn, inputs, args, dtype, floating, transposed=False):
    """fn(*inputs); `floating` lists the inputs torch differentiates."""
    spec = dict(args)
    if transposed:
        spec["transposed_input"] = True

    def run(*xs):
        xs = list(xs)
        if transposed:
            xs[0] = xs[0].transpose(-1, -2)
        return fn(*xs)

    grads = floating if dtype != i64 else ()
    g.nn_case(name, op, run, inputs, args=spec, grads=grads, **TOL[dtype])


def build():
    g = NnGoldenFile("indexing")
    for dtype, tag in [(f32, "f32"), (f64, "f64"), (bf16, "bf16"), (i64, "i64")]:
        # gather: index longer than self along dim, smaller elsewhere, transposed self.
        n = f"gather_{tag}"
        case(g, n, "gather", lambda x, i: torch.gather(x, 1, i), [x_of(n, [4, 5], dtype), randint(n + ".i", [3, 7], 0, 5)],
             {"dim": 1}, dtype, (0,))
        n = f"gather_dim0_transposed_{tag}"
        case(g, n, "gather", lambda x, i: torch.gather(x, 0, i),
             [x_of(n, [6, 3], dtype, True), randint(n + ".i", [9, 3], 0, 6)], {"dim": 0}, dtype, (0,), True)
        # scatter: distinct ids (torch 1.13 cannot differentiate a src larger than index).
        n = f"scatter_{tag}"
        case(g, n, "scatter", lambda x, i, s: torch.scatter(x, 1, i, s),
             [x_of(n, [3, 6], dtype), distinct_ids(n, [3, 4], 1, 6), x_of(n + ".s", [3, 4], dtype)], {"dim": 1},
             dtype, (0, 2))
        n = f"scatter_value_{tag}"
        case(g, n, "scatter_value", lambda x, i: torch.scatter(x, 0, i, 2.5),
             [x_of(n, [5, 3], dtype), distinct_ids(n, [2, 3], 0, 5)], {"dim": 0, "value": 2.5}, dtype, (0,))
        # scatter_add and index_add: repeated ids accumulate.
        n = f"scatter_add_{tag}"
        case(g, n, "scatter_add", lambda x, i, s: torch.scatter_add(x, 0, i, s),
             [x_of(n, [4, 5], dtype), randint(n + ".i", [7, 5], 0, 4), x_of(n + ".s", [7, 5], dtype)], {"dim": 0},
             dtype, (0, 2))
        n = f"index_select_{tag}"
        case(g, n, "index_select", lambda x, i: torch.index_select(x, 1, i),
             [x_of(n, [3, 7], dtype, True), randint(n + ".i", [9], 0, 7)], {"dim": 1}, dtype, (0,), True)
        n = f"index_add_{tag}"
        alpha = 2 if dtype == i64 else 0.5
        case(g, n, "index_add", lambda x, i, s: torch.index_add(x, 0, i, s, alpha=alpha),
             [x_of(n, [5, 4], dtype), randint(n + ".i", [8], 0, 5), x_of(n + ".s", [8, 4], dtype)],
             {"dim": 0, "alpha": alpha}, dtype, (0, 2))
        n = f"masked_select_{tag}"
        case(g, n, "masked_select", lambda x, m: torch.masked_select(x, m),
             [x_of(n, [3, 1, 5], dtype), randint(n + ".m", [4, 1], 0, 2).bool()], {}, dtype, (0,))
        n = f"repeat_{tag}"
        case(g, n, "repeat", lambda x: x.repeat(2, 1, 3), [x_of(n, [3, 4], dtype, True)], {"repeats": [2, 1, 3]},
             dtype, (0,), True)
        n = f"flip_{tag}"
        case(g, n, "flip", lambda x: torch.flip(x, [0, 2]), [x_of(n, [2, 3, 5], dtype)], {"dims": [0, 2]}, dtype, (0,))
        n = f"roll_{tag}"
        case(g, n, "roll", lambda x: torch.roll(x, [2, -3], [0, 1]), [x_of(n, [4, 6], dtype, True)],
             {"shifts": [2, -3], "dims": [0, 1]}, dtype, (0,), True)
        n = f"roll_flat_{tag}"
        case(g, n, "roll", lambda x: torch.roll(x, 5), [x_of(n, [3, 4], dtype)], {"shifts": [5], "dims": []}, dtype,
             (0,))
    return g
