"""Golden cases of the norm family: softmax, log_softmax, layer_norm,
rms_norm, group_norm and batch_norm (training, with the running statistics
it updates as extra outputs, and eval), forward and gradients for the input
and the affine parameters, read by tests/golden_nn_norm.cpp.

A case stored "transposed" holds x with its last two dims swapped; both torch
and ember transpose it back, so ember reads a strided view. F.rms_norm is
PyTorch's own operator, which torch 1.13 lacks: run this family with
torch >= 2.5 (see tools/golden/README.md)."""

import torch
import torch.nn.functional as F

from make_golden import randn, uniform
from nn_golden import NnGoldenFile, require_torch

f32, f64, bf16 = torch.float32, torch.float64, torch.bfloat16
TAG = {f32: "f32", f64: "f64", bf16: "bf16"}

# f32: ember and torch sum rows in different orders; bf16: torch rounds
# intermediate results to bf16 in places where ember keeps float.
TOL = {
    f32: dict(rtol=1e-5, atol=1e-6, grad_rtol=1e-4, grad_atol=1e-5),
    f64: dict(rtol=1e-12, atol=1e-12, grad_rtol=1e-10, grad_atol=1e-12),
    bf16: dict(rtol=1e-2, atol=1e-2, grad_rtol=3e-2, grad_atol=5e-2),
}


def stored(name, shape, dtype, transposed=False, scale=1.0):
    s = list(shape)
    if transposed:
        s[-1], s[-2] = s[-2], s[-1]
    return randn(name, s, dtype, scale)


def view(x, transposed):
    return x.transpose(-1, -2) if transposed else x


def softmax_cases(g):
    for op, fn in (("softmax", F.softmax), ("log_softmax", F.log_softmax)):
        for shape, dim, dtype, transposed in (
            ([4, 33], -1, f32, False),
            ([5, 7], 0, f32, False),
            ([2, 3, 4], 1, f64, False),
            ([5, 6], -1, f32, True),
            ([6, 5], 0, f64, True),
            ([3, 40], -1, bf16, False),
            ([2, 300, 3], 1, bf16, False),
            ([1, 9], -1, f64, False),
        ):
            name = f"{op}_{'x'.join(map(str, shape))}_dim{dim}_{TAG[dtype]}{'_t' if transposed else ''}"
            x = stored(f"{name}.x", shape, dtype, transposed, scale=3.0)
            g.nn_case(name, op, lambda x, fn=fn, dim=dim, t=transposed: fn(view(x, t), dim), [x],
                      {"dim": dim, "transposed": transposed}, grads=[0], **TOL[dtype])
        # -inf entries (exp gives 0), a row of -inf (NaN in torch), and a large offset.
        x = torch.tensor([[0.0, -float("inf"), 1.0, 2.0], [-float("inf")] * 4, [1000.0, 1001.0, 999.0, 0.0]])
        g.nn_case(f"{op}_special_f32", op, lambda x, fn=fn: fn(x, -1), [x], {"dim": -1}, **TOL[f32])
        x = randn(f"{op}_dtype.x", [3, 5], f32)
        g.nn_case(f"{op}_dtype_f32_to_f64", op, lambda x, fn=fn: fn(x, 1, dtype=f64), [x],
                  {"dim": 1, "dtype": "float64"}, grads=[0], **TOL[f64])


def layer_norm_cases(g):
    for shape, ns, dtype, affine, transposed, eps in (
        ([4, 16], [16], f32, "wb", False, 1e-5),
        ([2, 3, 4], [3, 4], f64, "wb", False, 1e-5),
        ([3, 7], [7], f32, "", False, 1e-3),
        ([5, 6], [6], f32, "w", True, 1e-5),
        ([4, 32], [32], bf16, "wb", False, 1e-5),
        ([1, 5], [5], f64, "wb", False, 1e-5),
        ([2, 37], [37], f32, "wb", False, 1e-5),
    ):
        name = f"layer_norm_{'x'.join(map(str, shape))}_{TAG[dtype]}_{affine or 'plain'}{'_t' if transposed else ''}"
        inputs = [stored(f"{name}.x", shape, dtype, transposed, scale=2.0)]
        args = {"normalized_shape": ns, "eps": eps, "transposed": transposed, "weight": None, "bias": None}
        if "w" in affine:
            args["weight"] = len(inputs)
            inputs.append(randn(f"{name}.w", ns, dtype))
        if "b" in affine:
            args["bias"] = len(inputs)
            inputs.append(randn(f"{name}.b", ns, dtype))

        def fn(*t, args=args):
            w = t[args["weight"]] if args["weight"] is not None else None
            b = t[args["bias"]] if args["bias"] is not None else None
            return F.layer_norm(view(t[0], args["transposed"]), ns, w, b, args["eps"])

        g.nn_case(name, "layer_norm", fn, inputs, args, grads=list(range(len(inputs))), **TOL[dtype])


def rms_norm_cases(g):
    for shape, ns, dtype, weight, eps in (
        ([4, 16], [16], f32, True, None),
        ([2, 3, 4], [3, 4], f64, True, 1e-6),
        ([3, 7], [7], f32, False, 1e-5),
        ([4, 32], [32], bf16, True, None),
    ):
        name = f"rms_norm_{'x'.join(map(str, shape))}_{TAG[dtype]}{'_w' if weight else ''}"
        inputs = [randn(f"{name}.x", shape, dtype, 2.0)]
        if weight:
            inputs.append(randn(f"{name}.w", ns, dtype))

        def fn(x, *w, ns=ns, eps=eps):
            return F.rms_norm(x, ns, w[0] if w else None, eps)

        g.nn_case(name, "rms_norm", fn, inputs, {"normalized_shape": ns, "eps": eps, "weight": weight},
                  grads=list(range(len(inputs))), **TOL[dtype])


def group_norm_cases(g):
    for shape, groups, dtype, affine in (
        ([2, 6, 3, 3], 3, f32, True),
        ([3, 4, 5], 2, f64, True),
        ([2, 8, 4, 4], 4, bf16, True),
        ([1, 4, 6], 1, f32, False),
        ([2, 4, 3], 4, f64, False),
    ):
        name = f"group_norm_{'x'.join(map(str, shape))}_g{groups}_{TAG[dtype]}{'_affine' if affine else ''}"
        inputs = [randn(f"{name}.x", shape, dtype, 2.0)]
        if affine:
            inputs += [randn(f"{name}.w", [shape[1]], dtype), randn(f"{name}.b", [shape[1]], dtype)]
        def fn(x, *wb, groups=groups, dtype=dtype):
            if dtype != bf16:
                return F.group_norm(x, groups, *wb)
            # torch 1.13's bf16 group_norm rounds its scale and shift to bf16 (errors
            # of 3 bf16 ulps); ember computes in float and rounds once, as here.
            return F.group_norm(x.double(), groups, *[t.double() for t in wb]).to(dtype)

        g.nn_case(name, "group_norm", fn, inputs,
                  {"num_groups": groups, "affine": affine}, grads=list(range(len(inputs))), **TOL[dtype])


def batch_norm_cases(g):
    for shape, dtype, training, affine, running in (
        ([4, 3, 5, 5], f32, True, True, True),
        ([4, 3, 5, 5], f64, False, True, True),
        ([8, 5], f32, True, True, True),
        ([3, 4, 6], f64, True, False, False),
        ([4, 3, 4, 4], bf16, True, True, True),
        ([6, 4], f32, False, False, True),
        ([1, 3, 2, 2], f64, True, True, True),
    ):
        mode = "train" if training else "eval"
        name = f"batch_norm_{'x'.join(map(str, shape))}_{TAG[dtype]}_{mode}{'_affine' if affine else ''}"
        c = shape[1]
        inputs = [randn(f"{name}.x", shape, dtype, 2.0)]
        if affine:
            inputs += [randn(f"{name}.w", [c], dtype), randn(f"{name}.b", [c], dtype)]
        if running:
            inputs += [randn(f"{name}.rm", [c], dtype), uniform(f"{name}.rv", [c], 0.5, 2.0, dtype)]

        def fn(x, *rest, affine=affine, running=running, training=training):
            w, b = (rest[0], rest[1]) if affine else (None, None)
            rm, rv = (rest[-2].detach().clone(), rest[-1].detach().clone()) if running else (None, None)
            y = F.batch_norm(x, rm, rv, w, b, training=training, momentum=0.2, eps=1e-5)
            return [y, rm, rv] if running else [y]

        grads = [0, 1, 2] if affine else [0]
        g.nn_case(name, "batch_norm", fn, inputs,
                  {"training": training, "affine": affine, "running": running, "momentum": 0.2, "eps": 1e-5},
                  grads=grads, **TOL[dtype])


def build():
    require_torch((2, 5), "norm")
    g = NnGoldenFile("norm")
    softmax_cases(g)
    layer_norm_cases(g)
    rms_norm_cases(g)
    group_norm_cases(g)
    batch_norm_cases(g)
    return g
