#!/usr/bin/python3
"""Golden values for ember's op tests, computed with PyTorch on CPU.

Writes tests/golden/{elementwise,reductions,matmul,shape_ops,products,distances,sampling}.safetensors
and tests/golden/autograd/gradients.safetensors.
The convention (names, metadata, tolerances) is in tools/golden/README.md.

Run from the repository root with the Python that has torch (Debian's
python3-torch lives in /usr/bin/python3):

    /usr/bin/python3 tools/golden/make_golden.py [--out tests/golden]

The output is deterministic: each case draws its inputs from a generator
seeded with a hash of the case name, torch runs on one thread, and the files
are written in a fixed order, so a re-run gives the same bytes.
"""

import argparse
import json
import math
import os
import struct
import sys
import zlib

import torch
import torch.nn.functional as F

torch.set_num_threads(1)
torch.use_deterministic_algorithms(True)

INF = math.inf
NAN = math.nan

# ---------------------------------------------------------------------------
# A minimal safetensors writer (the format ember reads; tensors laid out as
# the reference writer does: widest dtype first, then by name).

_ST_DTYPES = {  # torch dtype -> (safetensors name, layout rank: lower first)
    torch.int64: ("I64", 0),
    torch.float64: ("F64", 1),
    torch.float32: ("F32", 2),
    torch.int32: ("I32", 3),
    torch.bfloat16: ("BF16", 4),
    torch.float16: ("F16", 5),
    torch.uint8: ("U8", 6),
    torch.bool: ("BOOL", 7),
}


def _tensor_bytes(t):
    t = t.detach().contiguous().cpu()
    if t.dtype in (torch.bfloat16, torch.float16):
        t = t.view(torch.int16)  # numpy has no bfloat16; the bits are what we store
    data = t.numpy().tobytes()
    assert sys.byteorder == "little"
    return data


def write_safetensors(path, tensors, metadata):
    """tensors: dict name -> torch.Tensor; metadata: dict str -> str."""
    items = []
    for name, t in tensors.items():
        if t.dtype not in _ST_DTYPES:
            raise TypeError(f"{name}: dtype {t.dtype} has no ember equivalent")
        st_name, rank = _ST_DTYPES[t.dtype]
        items.append((rank, name, st_name, list(t.shape), _tensor_bytes(t)))
    items.sort(key=lambda it: (it[0], it[1]))

    header = {}
    if metadata:
        header["__metadata__"] = {k: metadata[k] for k in sorted(metadata)}
    offset = 0
    for _, name, st_name, shape, data in items:
        header[name] = {"dtype": st_name, "shape": shape, "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
    text = json.dumps(header, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for *_, data in items:
            f.write(data)


# ---------------------------------------------------------------------------
# Cases


class GoldenFile:
    def __init__(self, name):
        self.name = name
        self.tensors = {}
        self.metadata = {}

    def case(self, name, op, inputs, outputs, args=None, rtol=None, atol=None):
        """inputs/outputs: lists of tensors, stored as name.in0.., name.out0..
        rtol/atol default from the first output's dtype."""
        assert name not in self.metadata, f"duplicate case {name}"
        assert "." not in name
        if not isinstance(outputs, (list, tuple)):
            outputs = [outputs]
        default_rtol, default_atol = default_tolerance(outputs[0].dtype)
        spec = {
            "op": op,
            "args": args or {},
            "rtol": float(default_rtol if rtol is None else rtol),
            "atol": float(default_atol if atol is None else atol),
        }
        # allow_nan=False: every value must be plain JSON (the C++ side uses
        # nlohmann::json); infinite p is written as the string "inf".
        self.metadata[name] = json.dumps(spec, separators=(",", ":"), allow_nan=False)
        for i, t in enumerate(inputs):
            self.tensors[f"{name}.in{i}"] = t
        for i, t in enumerate(outputs):
            self.tensors[f"{name}.out{i}"] = t

    def write(self, out_dir):
        path = os.path.join(out_dir, f"{self.name}.safetensors")
        write_safetensors(path, self.tensors, self.metadata)
        return path


def default_tolerance(dtype):
    if dtype == torch.float64:
        return 1e-12, 1e-12
    if dtype == torch.float32:
        return 1e-6, 1e-6
    if dtype == torch.float16:
        return 1e-3, 1e-3
    if dtype == torch.bfloat16:
        return 1e-2, 1e-2
    return 0.0, 0.0  # integers and bool: exact


def gen(name):
    """A generator seeded by the case name, so cases do not shift each other."""
    return torch.Generator().manual_seed(zlib.crc32(name.encode()))


def randn(name, shape, dtype=torch.float32, scale=1.0):
    return (torch.randn(shape, generator=gen(name), dtype=torch.float64) * scale).to(dtype)


def uniform(name, shape, lo, hi, dtype=torch.float32):
    return (torch.rand(shape, generator=gen(name), dtype=torch.float64) * (hi - lo) + lo).to(dtype)


def randint(name, shape, lo, hi, dtype=torch.int64):
    return torch.randint(lo, hi, shape, generator=gen(name), dtype=torch.int64).to(dtype)


def perm(name, shape, dtype=torch.float32, scale=0.25, offset=0.0):
    """Distinct values (a permutation of 0..n-1, scaled): no ties."""
    n = math.prod(shape)
    p = torch.randperm(n, generator=gen(name), dtype=torch.int64)
    return (p.to(torch.float64) * scale + offset).reshape(shape).to(dtype)


# ---------------------------------------------------------------------------
# elementwise.safetensors


def binary_cases(g):
    f32, f64 = torch.float32, torch.float64
    i32, i64 = torch.int32, torch.int64

    def add_case(name, op, a, b, args=None, **tol):
        fn = getattr(torch, op)
        g.case(name, op, [a, b], fn(a, b, **(args or {})), args, **tol)

    # add: same shape, broadcasting, alpha, and type promotion.
    add_case("add_same", "add", randn("add_same.a", [3, 4]), randn("add_same.b", [3, 4]))
    add_case("add_broadcast", "add", randn("add_broadcast.a", [2, 3, 4]), randn("add_broadcast.b", [3, 1]))
    add_case("add_broadcast_both", "add", randn("add_bb.a", [4, 1]), randn("add_bb.b", [1, 5]))
    add_case("add_alpha", "add", randn("add_alpha.a", [3, 4]), randn("add_alpha.b", [4]), {"alpha": 2.5})
    add_case("add_int_alpha", "add", randint("add_ia.a", [6], -50, 50), randint("add_ia.b", [6], -50, 50),
             {"alpha": 3})
    add_case("add_i32_f32", "add", randint("add_i32_f32.a", [3, 4], -10, 10, i32), randn("add_i32_f32.b", [4]))
    add_case("add_i64_f64", "add", randint("add_i64_f64.a", [2, 3], -10, 10, i64), randn("add_i64_f64.b", [2, 3], f64))
    add_case("add_bool_i32", "add", randint("add_bool_i32.a", [5], 0, 2, torch.bool),
             randint("add_bool_i32.b", [5], -10, 10, i32))
    add_case("add_bool_bool", "add", torch.tensor([True, True, False, False]), torch.tensor([True, False, True, False]))
    add_case("add_u8_i64", "add", randint("add_u8_i64.a", [5], 0, 256, torch.uint8), randint("add_u8_i64.b", [5], -9, 9))
    add_case("add_u8_wraps", "add", torch.tensor([250, 255, 1], dtype=torch.uint8),
             torch.tensor([10, 1, 2], dtype=torch.uint8))
    add_case("add_f32_f64", "add", randn("add_f32_f64.a", [3]), randn("add_f32_f64.b", [3], f64))
    add_case("add_f16", "add", randn("add_f16.a", [3, 4], torch.float16), randn("add_f16.b", [3, 4], torch.float16))
    add_case("add_bf16", "add", randn("add_bf16.a", [3, 4], torch.bfloat16), randn("add_bf16.b", [4], torch.bfloat16))
    add_case("add_bf16_f32", "add", randn("add_bf16_f32.a", [4], torch.bfloat16), randn("add_bf16_f32.b", [4]))
    add_case("add_f16_bf16", "add", randn("add_f16_bf16.a", [4], torch.float16), randn("add_f16_bf16.b", [4], torch.bfloat16))
    # 0-d tensors take part in promotion only when of a higher category.
    add_case("add_f32_0d_f64", "add", randn("add_f32_0d_f64.a", [4]), torch.tensor(0.1, dtype=f64))
    add_case("add_i32_0d_f64", "add", randint("add_i32_0d_f64.a", [4], -5, 5, i32), torch.tensor(2.5, dtype=f64))
    add_case("add_i32_0d_i64", "add", randint("add_i32_0d_i64.a", [4], -5, 5, i32), torch.tensor(7, dtype=i64))
    add_case("add_inf_nan", "add", torch.tensor([INF, INF, -INF, NAN, 1.0, -0.0]),
             torch.tensor([1.0, -INF, -INF, 1.0, NAN, -0.0]))

    add_case("sub_broadcast", "sub", randn("sub_broadcast.a", [4, 1]), randn("sub_broadcast.b", [1, 5]))
    add_case("sub_alpha", "sub", randn("sub_alpha.a", [3, 4]), randn("sub_alpha.b", [3, 4]), {"alpha": -0.5})
    add_case("sub_i64", "sub", randint("sub_i64.a", [6], -100, 100), randint("sub_i64.b", [6], -100, 100))
    add_case("sub_i32_f64", "sub", randint("sub_i32_f64.a", [2, 3], -9, 9, i32), randn("sub_i32_f64.b", [3], f64))

    add_case("mul_broadcast", "mul", randn("mul_broadcast.a", [2, 3, 1]), randn("mul_broadcast.b", [4]))
    add_case("mul_i32_f32", "mul", randint("mul_i32_f32.a", [3, 4], -9, 9, i32), randn("mul_i32_f32.b", [3, 4]))
    add_case("mul_bool_bool", "mul", torch.tensor([True, True, False, False]), torch.tensor([True, False, True, False]))
    add_case("mul_i64", "mul", randint("mul_i64.a", [6], -1000, 1000), randint("mul_i64.b", [6], -1000, 1000))
    add_case("mul_f64_inf", "mul", torch.tensor([INF, INF, 0.0, -0.0, 1e300], dtype=f64),
             torch.tensor([0.0, -2.0, -1.0, -1.0, 1e300], dtype=f64))

    add_case("div_f32", "div", randn("div_f32.a", [3, 4]), uniform("div_f32.b", [4], 0.5, 2.0))
    add_case("div_int_true", "div", randint("div_int_true.a", [6], -20, 20), randint("div_int_true.b", [6], 1, 7))
    add_case("div_by_zero", "div", torch.tensor([1.0, -1.0, 0.0, -0.0, INF, NAN]),
             torch.tensor([0.0, 0.0, 0.0, 1.0, -0.0, 0.0]))
    a = torch.tensor([7, -7, 7, -7, 0, 9, -9], dtype=i64)
    b = torch.tensor([2, 2, -2, -2, 3, 3, -4], dtype=i64)
    add_case("div_floor_i64", "div", a, b, {"rounding_mode": "floor"})
    add_case("div_trunc_i64", "div", a, b, {"rounding_mode": "trunc"})
    fa = torch.tensor([7.5, -7.5, 7.5, -7.5, 0.0, 1.0, -1.0])
    fb = torch.tensor([2.0, 2.0, -2.0, -2.0, 3.0, 0.0, 0.0])
    add_case("div_floor_f32", "div", fa, fb, {"rounding_mode": "floor"})
    add_case("div_trunc_f32", "div", fa, fb, {"rounding_mode": "trunc"})

    add_case("pow_f32", "pow", uniform("pow_f32.a", [3, 4], 0.1, 3.0), randn("pow_f32.b", [3, 4]), rtol=1e-5)
    add_case("pow_neg_base_int_exp", "pow", torch.tensor([-2.0, -2.0, -0.5, -3.0, -8.0, 0.0, 0.0, 1.0, NAN]),
             torch.tensor([2.0, 3.0, -2.0, 0.0, 1.0 / 3.0, 0.0, -1.0, NAN, 0.0]), rtol=1e-5)
    add_case("pow_broadcast_f64", "pow", uniform("pow_b64.a", [2, 3], 0.5, 2.0, f64), torch.tensor([0.5, 2.0, -1.5], dtype=f64))
    add_case("pow_i64", "pow", randint("pow_i64.a", [6], -5, 6), randint("pow_i64.b", [6], 0, 5))
    x = uniform("pow_scalar.a", [5], 0.1, 3.0)
    g.case("pow_scalar_exponent", "pow", [x], torch.pow(x, 3.0), {"exponent": 3.0}, rtol=1e-5)
    x = randn("pow_scalar_half.a", [5]).abs()
    g.case("pow_scalar_exponent_half", "pow", [x], torch.pow(x, 0.5), {"exponent": 0.5}, rtol=1e-5)

    for op in ("maximum", "minimum"):
        add_case(f"{op}_broadcast", op, randn(f"{op}_b.a", [3, 4]), randn(f"{op}_b.b", [4]))
        add_case(f"{op}_nan", op, torch.tensor([1.0, NAN, NAN, -INF, 0.0, -0.0]),
                 torch.tensor([NAN, 1.0, NAN, 3.0, -0.0, 0.0]))
        add_case(f"{op}_i32", op, randint(f"{op}_i.a", [6], -9, 9, i32), randint(f"{op}_i.b", [6], -9, 9, i32))
        add_case(f"{op}_i32_f32", op, randint(f"{op}_if.a", [4], -3, 3, i32), randn(f"{op}_if.b", [4]))

    ra = torch.tensor([5.5, -5.5, 5.5, -5.5, 3.0, -3.0, 0.0, 1.0, INF])
    rb = torch.tensor([2.0, 2.0, -2.0, -2.0, 1.5, 1.5, -2.0, 0.0, 2.0])
    add_case("remainder_f32", "remainder", ra, rb, rtol=1e-6)
    add_case("remainder_f64_broadcast", "remainder", randn("rem64.a", [3, 4], f64, 10.0), torch.tensor([3.0, -2.5, 0.7, -1.1], dtype=f64))
    add_case("remainder_i64", "remainder", torch.tensor([7, -7, 7, -7, 0, 6, -6], dtype=i64),
             torch.tensor([3, 3, -3, -3, 5, 3, -4], dtype=i64))
    add_case("remainder_i32_broadcast", "remainder", randint("rem32.a", [3, 4], -20, 20, i32), torch.tensor([3, -3, 5, -7], dtype=i32))

    # Comparisons: ties on purpose (small integers as floats), nan, broadcast, mixed dtypes.
    for op in ("eq", "ne", "lt", "le", "gt", "ge"):
        a = randint(f"{op}_f32.a", [3, 4], -2, 3).float()
        b = randint(f"{op}_f32.b", [4], -2, 3).float()
        add_case(f"{op}_f32_broadcast", op, a, b)
        add_case(f"{op}_nan", op, torch.tensor([NAN, NAN, 1.0, INF, -0.0, -INF]), torch.tensor([NAN, 1.0, NAN, INF, 0.0, 1.0]))
        add_case(f"{op}_i32_f64", op, randint(f"{op}_m.a", [5], -2, 3, i32), torch.tensor([-1.5, 0.0, 1.0, 2.0, 2.5], dtype=f64))
        add_case(f"{op}_i64", op, randint(f"{op}_i64.a", [2, 3], -2, 3), randint(f"{op}_i64.b", [2, 1], -2, 3))

    # Logical ops: any nonzero (nan included) is true.
    la = torch.tensor([0.0, 0.0, 1.0, -2.5, NAN, -0.0])
    lb = torch.tensor([0.0, 3.0, 0.0, 1.0, 0.0, 1.0])
    bools_a = torch.tensor([[True, False], [True, True]])
    bools_b = torch.tensor([True, False])
    for op in ("logical_and", "logical_or", "logical_xor"):
        add_case(f"{op}_f32", op, la, lb)
        add_case(f"{op}_bool_broadcast", op, bools_a, bools_b)
        add_case(f"{op}_i32_f32", op, torch.tensor([0, 2, 0, -1], dtype=i32), torch.tensor([0.0, 0.0, 0.5, NAN]))
    g.case("logical_not_f32", "logical_not", [la], torch.logical_not(la))
    g.case("logical_not_bool", "logical_not", [bools_a], torch.logical_not(bools_a))
    x = torch.tensor([0, 1, -3, 0], dtype=i32)
    g.case("logical_not_i32", "logical_not", [x], torch.logical_not(x))

    # where(condition, x, y)
    c = randint("where.c", [3, 1], 0, 2, torch.bool)
    x, y = randn("where.x", [3, 4]), randn("where.y", [4])
    g.case("where_broadcast", "where", [c, x, y], torch.where(c, x, y))
    c = torch.tensor([True, False, True, False])
    x, y = torch.tensor([1, 2, 3, 4], dtype=i32), torch.tensor([0.5, 1.5, 2.5, 3.5])
    g.case("where_i32_f32", "where", [c, x, y], torch.where(c, x, y))
    x, y = torch.tensor([NAN, 1.0, INF, -0.0]), torch.tensor([0.0, NAN, 2.0, 5.0])
    g.case("where_nan", "where", [c, x, y], torch.where(c, x, y))

    # masked_fill(self, mask, value)
    x = randn("masked_fill.x", [3, 4])
    m = randint("masked_fill.m", [4], 0, 2, torch.bool)
    g.case("masked_fill_broadcast", "masked_fill", [x, m], x.masked_fill(m, -1.5), {"value": -1.5})
    x = randint("masked_fill_i64.x", [2, 3], -9, 9)
    m = randint("masked_fill_i64.m", [2, 3], 0, 2, torch.bool)
    g.case("masked_fill_i64", "masked_fill", [x, m], x.masked_fill(m, 7), {"value": 7})

    # clamp(self, min, max): null means "not given".
    x = torch.cat([randn("clamp.x", [10]), torch.tensor([NAN, INF, -INF, -0.0, 0.5, -0.5])])
    g.case("clamp_both", "clamp", [x], torch.clamp(x, -0.5, 0.5), {"min": -0.5, "max": 0.5})
    g.case("clamp_min_only", "clamp", [x], torch.clamp(x, min=0.0), {"min": 0.0, "max": None})
    g.case("clamp_max_only", "clamp", [x], torch.clamp(x, max=0.25), {"min": None, "max": 0.25})
    x64 = x.double()
    g.case("clamp_f64", "clamp", [x64], torch.clamp(x64, -1.0, 1.0), {"min": -1.0, "max": 1.0})
    xi = randint("clamp_i64.x", [8], -20, 20)
    g.case("clamp_i64", "clamp", [xi], torch.clamp(xi, -5, 5), {"min": -5, "max": 5})
    # min > max: torch sets everything to max.
    g.case("clamp_min_gt_max", "clamp", [x], torch.clamp(x, 1.0, -1.0), {"min": 1.0, "max": -1.0})


# Unary ops: each runs on f32 and f64 over edge values plus random values
# from the op's natural domain. Tolerances are per op (transcendentals are
# allowed a few ulps; exact ops are exact).
EDGE = [0.0, -0.0, INF, -INF, NAN]


def edge_for(op):
    """Edge values for a unary case. ember deliberately returns the limit -0 for
    gelu and silu at -inf, where torch's formula gives NaN (docs/ops.md), so
    those cases leave -inf out."""
    return [v for v in EDGE if not (op in ("gelu", "silu") and v == -INF)]

UNARY = {
    # op: (torch fn, random domain (lo, hi), extra edge values, rtol f32, rtol f64, args)
    "neg": (torch.neg, (-10, 10), [1e30, -1e-30], 0, 0, {}),
    "abs": (torch.abs, (-10, 10), [-1e30, -1e-30], 0, 0, {}),
    "sign": (torch.sign, (-3, 3), [-1e-30, 1e30], 0, 0, {}),
    "exp": (torch.exp, (-10, 10), [88.0, 89.0, -104.0, -120.0, 700.0, 710.0, 1.0], 1e-6, 1e-13, {}),
    "exp2": (torch.exp2, (-10, 10), [127.0, 128.0, -149.0, -150.0, 1023.0, 1024.0, 0.5], 1e-6, 1e-13, {}),
    "log": (torch.log, (0.01, 100), [1.0, -1.0, 1e-30, 1e30, 1e-310], 1e-6, 1e-13, {}),
    "log2": (torch.log2, (0.01, 100), [1.0, 2.0, 1024.0, -1.0, 1e-30], 1e-6, 1e-13, {}),
    "log1p": (torch.log1p, (-0.9, 10), [-1.0, -2.0, 1e-10, -1e-10, 1e30], 1e-6, 1e-13, {}),
    "expm1": (torch.expm1, (-5, 5), [1e-10, -1e-10, 88.0, 100.0, -100.0], 1e-6, 1e-13, {}),
    "sqrt": (torch.sqrt, (0, 100), [1.0, 4.0, -1.0, 1e-30, 1e30], 1e-6, 1e-14, {}),
    "rsqrt": (torch.rsqrt, (0.01, 100), [1.0, 4.0, -1.0, 1e-30, 1e30], 1e-6, 1e-14, {}),
    "reciprocal": (torch.reciprocal, (-10, 10), [1.0, -4.0, 1e-30, 1e30], 1e-6, 1e-14, {}),
    "sin": (torch.sin, (-6.3, 6.3), [3.14159265, 1e4, -1e3], 1e-6, 1e-13, {}),
    "cos": (torch.cos, (-6.3, 6.3), [3.14159265, 1e4, -1e3], 1e-6, 1e-13, {}),
    "tan": (torch.tan, (-1.5, 1.5), [0.7853981633974483, 1e3], 1e-5, 1e-12, {}),
    "asin": (torch.asin, (-1, 1), [1.0, -1.0, 1.5, 1e-10], 1e-6, 1e-13, {}),
    "acos": (torch.acos, (-1, 1), [1.0, -1.0, 1.5, 1e-10], 1e-6, 1e-13, {}),
    "atan": (torch.atan, (-10, 10), [1e30, -1e30, 1.0, 1e-10], 1e-6, 1e-13, {}),
    "sinh": (torch.sinh, (-5, 5), [1e-10, 88.0, 89.5, -89.5, 711.0], 1e-6, 1e-13, {}),
    "cosh": (torch.cosh, (-5, 5), [1e-10, 88.0, 89.5, -89.5, 711.0], 1e-6, 1e-13, {}),
    "tanh": (torch.tanh, (-5, 5), [10.0, -10.0, 20.0, 1e-10], 1e-6, 1e-13, {}),
    "asinh": (torch.asinh, (-10, 10), [1e-10, -1e-10, 1e30, -1e30], 1e-6, 1e-13, {}),
    "acosh": (torch.acosh, (1, 10), [1.0, 0.5, 1e30, 1.0000001], 1e-6, 1e-13, {}),
    "atanh": (torch.atanh, (-1, 1), [1.0, -1.0, 1.5, 1e-10], 1e-6, 1e-13, {}),
    "sigmoid": (torch.sigmoid, (-10, 10), [50.0, -50.0, 100.0, -100.0, -1e30], 1e-6, 1e-13, {}),
    "relu": (torch.relu, (-5, 5), [1e30, -1e30], 0, 0, {}),
    "silu": (F.silu, (-8, 8), [50.0, -50.0, -100.0], 1e-6, 1e-13, {}),
    "softplus": (F.softplus, (-25, 25), [20.0, 20.5, -100.0, 100.0], 1e-6, 1e-13, {"beta": 1, "threshold": 20}),
    "erf": (torch.erf, (-3, 3), [5.0, -5.0, 1e-10], 1e-6, 1e-13, {}),
    "floor": (torch.floor, (-10, 10), [0.5, -0.5, 2.5, -2.5, 1e30, 8388609.0], 0, 0, {}),
    "ceil": (torch.ceil, (-10, 10), [0.5, -0.5, 2.5, -2.5, 1e30, 8388609.0], 0, 0, {}),
    "round": (torch.round, (-10, 10), [0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.49999997, 1e30], 0, 0, {}),
    "trunc": (torch.trunc, (-10, 10), [0.5, -0.5, 2.9, -2.9, 1e30], 0, 0, {}),
    "isnan": (torch.isnan, (-10, 10), [1e30], 0, 0, {}),
    "isinf": (torch.isinf, (-10, 10), [1e30, 1e38, 1e300], 0, 0, {}),
}


def unary_cases(g):
    for op, (fn, (lo, hi), extra, rtol32, rtol64, args) in UNARY.items():
        for dtype, tag, rtol in ((torch.float32, "f32", rtol32), (torch.float64, "f64", rtol64)):
            name = f"{op}_{tag}"
            rand = uniform(name, [32 - len(edge_for(op)) - len(extra)], lo, hi, torch.float64)
            x = torch.cat([torch.tensor(edge_for(op) + extra, dtype=torch.float64), rand]).to(dtype).reshape(4, 8)
            out = fn(x, **args)
            atol = 0.0 if rtol == 0 else (1e-7 if dtype == torch.float32 else 1e-15)
            g.case(name, op, [x], out, args, rtol=rtol, atol=atol)

    # gelu, exact and tanh approximation.
    for approximate in ("none", "tanh"):
        # float32: torch computes 1 + erf(x) in float32, which loses digits in the left tail.
        for dtype, tag, rtol, atol in ((torch.float32, "f32", 1e-6, 1e-6), (torch.float64, "f64", 1e-13, 1e-15)):
            name = f"gelu_{approximate}_{tag}"
            rand = uniform(name, [25], -6, 6, torch.float64)
            x = torch.cat([torch.tensor(edge_for("gelu") + [10.0, -10.0, 30.0], dtype=torch.float64), rand]).to(dtype).reshape(4, 8)
            g.case(name, "gelu", [x], F.gelu(x, approximate=approximate), {"approximate": approximate},
                   rtol=rtol, atol=atol)

    # Integer inputs: exact ops keep the dtype; float ops promote to float32.
    xi = torch.tensor([-7, -1, 0, 1, 5, 2147483647], dtype=torch.int32)
    g.case("neg_i32", "neg", [xi], torch.neg(xi))
    g.case("abs_i32", "abs", [xi], torch.abs(xi))
    g.case("sign_i64", "sign", [xi.long()], torch.sign(xi.long()))
    xe = torch.tensor([-2, 0, 1, 3], dtype=torch.int64)
    g.case("exp_i64", "exp", [xe], torch.exp(xe))
    xs = torch.tensor([0, 1, 4, 9, 2], dtype=torch.int32)
    g.case("sqrt_i32", "sqrt", [xs], torch.sqrt(xs))
    g.case("sigmoid_bool", "sigmoid", [torch.tensor([True, False])], torch.sigmoid(torch.tensor([True, False])))
    g.case("isnan_i32", "isnan", [xi], torch.isnan(xi))

    # Reduced-precision floats: computed in float32 and rounded to the dtype,
    # which is what torch's CPU kernels do (torch 1.13 has no float16 exp on
    # CPU, so every case here computes through float32 explicitly).
    def via_f32(fn, x, **kw):
        return fn(x.float(), **kw).to(x.dtype)

    for dtype, tag in ((torch.bfloat16, "bf16"), (torch.float16, "f16")):
        x = torch.cat([torch.tensor([0.0, -0.0, INF, -INF, NAN, 10.0, -20.0]), uniform(f"exp_{tag}", [9], -4, 4)]).to(dtype)
        g.case(f"exp_{tag}", "exp", [x], via_f32(torch.exp, x))
        x = uniform(f"sigmoid_{tag}", [8], -6, 6).to(dtype)
        g.case(f"sigmoid_{tag}", "sigmoid", [x], via_f32(torch.sigmoid, x))
        x = uniform(f"gelu_{tag}", [8], -4, 4).to(dtype)
        g.case(f"gelu_none_{tag}", "gelu", [x], via_f32(F.gelu, x), {"approximate": "none"})


def combination_cases(g):
    """atan2, logaddexp, lerp, addcmul, addcdiv, and clamp with tensor bounds."""
    f32, f64 = torch.float32, torch.float64

    a, b = randn("atan2.a", [3, 4]), randn("atan2.b", [4])
    g.case("atan2_broadcast", "atan2", [a, b], torch.atan2(a, b), rtol=1e-6, atol=1e-7)
    a = torch.tensor([0.0, -0.0, 0.0, -0.0, 1.0, -1.0, INF, -INF, INF, NAN, 1.0, 0.0])
    b = torch.tensor([0.0, 0.0, -0.0, -0.0, INF, -INF, INF, INF, -INF, 1.0, NAN, -2.0])
    g.case("atan2_edges", "atan2", [a, b], torch.atan2(a, b), rtol=1e-6, atol=1e-7)
    a, b = randn("atan2_64.a", [2, 3], f64), randn("atan2_64.b", [2, 3], f64)
    g.case("atan2_f64", "atan2", [a, b], torch.atan2(a, b), rtol=1e-13, atol=1e-15)
    a, b = randint("atan2_i.a", [5], -5, 5), randint("atan2_i.b", [5], -5, 5, torch.int32)
    g.case("atan2_i64_i32", "atan2", [a, b], torch.atan2(a, b), rtol=1e-6, atol=1e-7)

    a, b = randn("logaddexp.a", [3, 4], scale=5.0), randn("logaddexp.b", [3, 1], scale=5.0)
    g.case("logaddexp_broadcast", "logaddexp", [a, b], torch.logaddexp(a, b), rtol=1e-6, atol=1e-7)
    a = torch.tensor([INF, -INF, INF, -INF, NAN, 1.0, 1000.0, -1000.0, 0.0, 80.0])
    b = torch.tensor([INF, -INF, -INF, 3.0, 1.0, NAN, 1000.0, -1000.5, 0.0, -80.0])
    g.case("logaddexp_edges", "logaddexp", [a, b], torch.logaddexp(a, b), rtol=1e-6, atol=1e-7)
    a, b = randn("logaddexp64.a", [5], f64, 3.0), randn("logaddexp64.b", [5], f64, 3.0)
    g.case("logaddexp_f64", "logaddexp", [a, b], torch.logaddexp(a, b), rtol=1e-13, atol=1e-15)

    # lerp: a Scalar weight in args, or a third input; weights on both sides of 0.5 and beyond [0, 1].
    x, y = randn("lerp.x", [3, 4]), randn("lerp.y", [4])
    for w in (0.0, 0.25, 0.5, 1.0, 1.75):
        tag = f"{w}".replace(".", "p")
        g.case(f"lerp_scalar_{tag}", "lerp", [x, y], torch.lerp(x, y, w), {"weight": w}, rtol=1e-6, atol=1e-6)
    w = uniform("lerp.w", [3, 1], -0.5, 1.5)
    g.case("lerp_tensor_weight", "lerp", [x, y, w], torch.lerp(x, y, w), rtol=1e-6, atol=1e-6)
    x64, y64, w64 = randn("lerp64.x", [2, 3], f64), randn("lerp64.y", [2, 3], f64), uniform("lerp64.w", [3], 0, 1, f64)
    g.case("lerp_f64", "lerp", [x64, y64, w64], torch.lerp(x64, y64, w64))
    xe, ye = torch.tensor([INF, 1.0, NAN, -INF]), torch.tensor([1.0, INF, 2.0, INF])
    g.case("lerp_edges", "lerp", [xe, ye], torch.lerp(xe, ye, 0.5), {"weight": 0.5})

    s, t1, t2 = randn("addcmul.s", [3, 4]), randn("addcmul.t1", [4]), randn("addcmul.t2", [3, 1])
    g.case("addcmul_broadcast", "addcmul", [s, t1, t2], torch.addcmul(s, t1, t2, value=0.5), {"value": 0.5},
           rtol=1e-6, atol=1e-6)
    si, t1i, t2i = randint("addcmul_i.s", [4], -9, 9), randint("addcmul_i.t1", [4], -9, 9), randint("addcmul_i.t2", [4], -9, 9)
    g.case("addcmul_i64", "addcmul", [si, t1i, t2i], torch.addcmul(si, t1i, t2i, value=3), {"value": 3})
    g.case("addcmul_i64_f32", "addcmul", [si, t1i, s[0]], torch.addcmul(si, t1i, s[0]), {"value": 1},
           rtol=1e-6, atol=1e-6)
    t2d = uniform("addcdiv.t2", [3, 1], 0.5, 2.0)
    g.case("addcdiv_broadcast", "addcdiv", [s, t1, t2d], torch.addcdiv(s, t1, t2d, value=-2.0), {"value": -2.0},
           rtol=1e-6, atol=1e-6)
    s64, t164, t264 = randn("addcdiv64.s", [5], f64), randn("addcdiv64.t1", [5], f64), uniform("addcdiv64.t2", [5], 1, 2, f64)
    g.case("addcdiv_f64", "addcdiv", [s64, t164, t264], torch.addcdiv(s64, t164, t264, value=0.25), {"value": 0.25})

    # clamp with tensor bounds: the bounds given are inputs 1 (and 2), named by "tensor_bounds".
    x = torch.cat([randn("clampt.x", [6], scale=2.0), torch.tensor([NAN, 0.5, 2.0, -3.0])])
    lo = torch.cat([uniform("clampt.lo", [6], -1.5, 0.0), torch.tensor([0.0, NAN, 3.0, -1.0])])
    hi = torch.cat([uniform("clampt.hi", [6], 0.0, 1.5), torch.tensor([1.0, 1.0, 1.0, NAN])])
    g.case("clamp_tensor_both", "clamp", [x, lo, hi], torch.clamp(x, lo, hi), {"tensor_bounds": ["min", "max"]})
    g.case("clamp_tensor_min", "clamp", [x, lo], torch.clamp(x, min=lo), {"tensor_bounds": ["min"]})
    g.case("clamp_tensor_max", "clamp", [x, hi], torch.clamp(x, max=hi), {"tensor_bounds": ["max"]})
    xb, lob = randn("clampt_b.x", [3, 4]), randn("clampt_b.lo", [4], scale=0.5)
    hib = lob + uniform("clampt_b.w", [3, 1], 0.0, 1.0)
    g.case("clamp_tensor_broadcast", "clamp", [xb, lob, hib], torch.clamp(xb, lob, hib),
           {"tensor_bounds": ["min", "max"]})
    xi = randint("clampt_i.x", [6], -9, 9)
    loi = torch.tensor([2.5])
    g.case("clamp_tensor_i64_f32_bound", "clamp", [xi, loi], torch.clamp(xi, min=loi), {"tensor_bounds": ["min"]})


def build_elementwise():
    g = GoldenFile("elementwise")
    binary_cases(g)
    unary_cases(g)
    combination_cases(g)
    return g


# ---------------------------------------------------------------------------
# reductions.safetensors

# dim: an int, a list of ints, or null for all dims.
DIM_VARIANTS = [
    ("all", None, False),
    ("dim1", 1, False),
    ("dimneg1_keepdim", -1, True),
    ("dims02", [0, 2], False),
    ("dims02_keepdim", [0, 2], True),
    ("all_keepdim", [0, 1, 2], True),
]


def _dim_args(dim, keepdim):
    return {"dim": dim, "keepdim": keepdim}


def _call_dims(fn, x, dim, keepdim, **kw):
    if dim is None:
        return fn(x, **kw)
    return fn(x, dim=dim, keepdim=keepdim, **kw)


def build_reductions():
    g = GoldenFile("reductions")
    f32, f64 = torch.float32, torch.float64
    x32 = randn("red.x32", [3, 4, 5])
    x64 = randn("red.x64", [3, 4, 5], f64)

    for op, fn, rtol32 in (("sum", torch.sum, 1e-5), ("mean", torch.mean, 1e-5)):
        for tag, dim, keepdim in DIM_VARIANTS:
            g.case(f"{op}_{tag}_f32", op, [x32], _call_dims(fn, x32, dim, keepdim), _dim_args(dim, keepdim),
                   rtol=rtol32, atol=1e-5)
            g.case(f"{op}_{tag}_f64", op, [x64], _call_dims(fn, x64, dim, keepdim), _dim_args(dim, keepdim),
                   rtol=1e-12, atol=1e-12)
    # Integer and bool sums promote to int64, as torch does.
    xi = randint("red.xi32", [3, 4], -50, 50, torch.int32)
    g.case("sum_all_i32", "sum", [xi], torch.sum(xi), _dim_args(None, False))
    g.case("sum_dim0_i32", "sum", [xi], torch.sum(xi, 0), _dim_args(0, False))
    g.case("sum_dim1_keepdim_i64", "sum", [xi.long()], torch.sum(xi.long(), 1, keepdim=True), _dim_args(1, True))
    xb = randint("red.xb", [3, 4], 0, 2, torch.bool)
    g.case("sum_all_bool", "sum", [xb], torch.sum(xb), _dim_args(None, False))
    xu = randint("red.xu8", [10], 0, 256, torch.uint8)
    g.case("sum_all_u8", "sum", [xu], torch.sum(xu), _dim_args(None, False))
    g.case("sum_empty_f32", "sum", [torch.zeros(0, 3)], torch.sum(torch.zeros(0, 3), 0), _dim_args(0, False))
    g.case("sum_inf_nan_f32", "sum", [torch.tensor([[1.0, INF, NAN], [INF, -INF, 2.0]])],
           torch.sum(torch.tensor([[1.0, INF, NAN], [INF, -INF, 2.0]]), 1), _dim_args(1, False))
    g.case("mean_empty_f32", "mean", [torch.zeros(0)], torch.mean(torch.zeros(0)), _dim_args(None, False))

    xp = uniform("red.prod", [3, 4, 5], 0.6, 1.5)
    g.case("prod_all_f32", "prod", [xp], torch.prod(xp), _dim_args(None, False), rtol=1e-5, atol=1e-6)
    g.case("prod_dim1_f32", "prod", [xp], torch.prod(xp, 1), _dim_args(1, False), rtol=1e-5, atol=1e-6)
    g.case("prod_dim0_keepdim_f64", "prod", [xp.double()], torch.prod(xp.double(), 0, keepdim=True),
           _dim_args(0, True), rtol=1e-12, atol=1e-12)
    xpi = randint("red.prodi", [3, 4], -3, 4, torch.int32)
    g.case("prod_dim1_i32", "prod", [xpi], torch.prod(xpi, 1), _dim_args(1, False))

    # max/min: without dim a value; with dim (values, indices). No ties.
    xm = perm("red.maxmin", [3, 4, 5], scale=0.5, offset=-10.0)
    for op, fn in (("max", torch.max), ("min", torch.min)):
        g.case(f"{op}_all_f32", op, [xm], fn(xm), {"dim": None, "keepdim": False})
        g.case(f"{op}_all_f64", op, [xm.double()], fn(xm.double()), {"dim": None, "keepdim": False})
        for dim, keepdim in ((1, False), (-1, True), (0, False)):
            tag = f"dim{dim}".replace("-", "neg") + ("_keepdim" if keepdim else "")
            v, i = fn(xm, dim, keepdim=keepdim)
            g.case(f"{op}_{tag}_f32", op, [xm], [v, i], _dim_args(dim, keepdim))
        xmi = perm(f"red.{op}i", [4, 5], torch.int32, scale=3, offset=-30)
        v, i = fn(xmi, 1)
        g.case(f"{op}_dim1_i32", op, [xmi], [v, i], _dim_args(1, False))
        xn = torch.tensor([[1.0, NAN, 3.0], [4.0, 5.0, -6.0]])
        v, i = fn(xn, 1)
        g.case(f"{op}_dim1_nan_f32", op, [xn], [v, i], _dim_args(1, False))

    for op, fn in (("argmax", torch.argmax), ("argmin", torch.argmin)):
        g.case(f"{op}_all_f32", op, [xm], fn(xm), {"dim": None, "keepdim": False})
        g.case(f"{op}_dim1_f32", op, [xm], fn(xm, 1), _dim_args(1, False))
        g.case(f"{op}_dimneg1_keepdim_f32", op, [xm], fn(xm, -1, keepdim=True), _dim_args(-1, True))
        xmi = perm(f"red.{op}i", [4, 5], torch.int64, scale=2, offset=-20)
        g.case(f"{op}_dim0_i64", op, [xmi], fn(xmi, 0), _dim_args(0, False))

    for op, fn in (("var", torch.var), ("std", torch.std)):
        for correction in (0, 1):
            for tag, dim, keepdim in (("all", None, False), ("dim1", 1, False), ("dimneg1_keepdim", -1, True),
                                      ("dims02", [0, 2], False)):
                args = {"dim": dim, "correction": correction, "keepdim": keepdim}
                out32 = fn(x32, dim=dim, correction=correction, keepdim=keepdim)
                g.case(f"{op}_{tag}_c{correction}_f32", op, [x32], out32, args, rtol=1e-5, atol=1e-6)
                out64 = fn(x64, dim=dim, correction=correction, keepdim=keepdim)
                g.case(f"{op}_{tag}_c{correction}_f64", op, [x64], out64, args, rtol=1e-12, atol=1e-12)
    # One element with correction 1: 0/0.
    one = torch.tensor([[1.5], [2.0]])
    g.case("var_single_c1_f32", "var", [one], torch.var(one, dim=1, correction=1),
           {"dim": 1, "correction": 1, "keepdim": False})

    # norm: the vector norm (torch.linalg.vector_norm); p=inf is the string "inf".
    for p, ptag in ((1, "p1"), (2, "p2"), (INF, "pinf")):
        pj = "inf" if p == INF else p
        for tag, dim, keepdim in (("all", None, False), ("dim1", 1, False), ("dims02_keepdim", [0, 2], True)):
            args = {"p": pj, "dim": dim, "keepdim": keepdim}
            g.case(f"norm_{ptag}_{tag}_f32", "norm", [x32],
                   torch.linalg.vector_norm(x32, p, dim=dim, keepdim=keepdim), args, rtol=1e-5, atol=1e-6)
        g.case(f"norm_{ptag}_dim1_f64", "norm", [x64], torch.linalg.vector_norm(x64, p, dim=1),
               {"p": pj, "dim": 1, "keepdim": False}, rtol=1e-12, atol=1e-12)
    big = torch.tensor([3e30, 4e30, 1e-30])
    g.case("norm_p2_large_f32", "norm", [big], torch.linalg.vector_norm(big, 2), {"p": 2, "dim": None, "keepdim": False},
           rtol=1e-5, atol=0.0)

    for tag, dim, keepdim in (("dim1", 1, False), ("dimneg1_keepdim", -1, True), ("dims02", [0, 2], False),
                              ("all", [0, 1, 2], False)):
        args = {"dim": dim, "keepdim": keepdim}
        g.case(f"logsumexp_{tag}_f32", "logsumexp", [x32], torch.logsumexp(x32, dim, keepdim=keepdim), args,
               rtol=1e-5, atol=1e-6)
        g.case(f"logsumexp_{tag}_f64", "logsumexp", [x64], torch.logsumexp(x64, dim, keepdim=keepdim), args,
               rtol=1e-12, atol=1e-12)
    xl = torch.tensor([[1000.0, 1000.5, -1000.0], [-INF, -INF, -INF], [-INF, 0.0, 1.0], [INF, 1.0, 2.0]])
    g.case("logsumexp_large_f32", "logsumexp", [xl], torch.logsumexp(xl, 1), {"dim": 1, "keepdim": False},
           rtol=1e-6, atol=1e-6)

    xa = torch.tensor([[True, True, False], [True, True, True]])
    xf = torch.tensor([[1.0, NAN, 0.0], [2.0, -0.0, 0.0]])
    for op, fn in (("all", torch.all), ("any", torch.any)):
        g.case(f"{op}_all_bool", op, [xa], fn(xa), {"dim": None, "keepdim": False})
        g.case(f"{op}_dim1_bool", op, [xa], fn(xa, 1), _dim_args(1, False))
        g.case(f"{op}_dim0_keepdim_f32", op, [xf], fn(xf, 0, keepdim=True), _dim_args(0, True))
        g.case(f"{op}_all_f32", op, [xf], fn(xf), {"dim": None, "keepdim": False})
        g.case(f"{op}_empty_bool", op, [torch.zeros(0, dtype=torch.bool)], fn(torch.zeros(0, dtype=torch.bool)),
               {"dim": None, "keepdim": False})

    xc = randn("red.cum", [3, 4])
    xcp = uniform("red.cumprod", [3, 4], 0.5, 1.5)
    for dim in (0, 1, -1):
        tag = f"dim{dim}".replace("-", "neg")
        g.case(f"cumsum_{tag}_f32", "cumsum", [xc], torch.cumsum(xc, dim), {"dim": dim}, rtol=1e-6, atol=1e-6)
        g.case(f"cumprod_{tag}_f32", "cumprod", [xcp], torch.cumprod(xcp, dim), {"dim": dim}, rtol=1e-6, atol=1e-6)
    g.case("cumsum_dim1_f64", "cumsum", [xc.double()], torch.cumsum(xc.double(), 1), {"dim": 1})
    xci = randint("red.cumi", [3, 4], -9, 9, torch.int32)
    g.case("cumsum_dim1_i32", "cumsum", [xci], torch.cumsum(xci, 1), {"dim": 1})
    g.case("cumprod_dim0_i32", "cumprod", [xci], torch.cumprod(xci, 0), {"dim": 0})
    g.case("cumsum_dim0_bool", "cumsum", [xb], torch.cumsum(xb, 0), {"dim": 0})
    x0 = torch.tensor(2.5)
    g.case("cumsum_0d_f32", "cumsum", [x0], torch.cumsum(x0, 0), {"dim": 0})
    return g


# ---------------------------------------------------------------------------
# matmul.safetensors


def build_matmul():
    g = GoldenFile("matmul")
    f64 = torch.float64
    tol32 = {"rtol": 1e-5, "atol": 1e-5}
    tol64 = {"rtol": 1e-12, "atol": 1e-12}

    a, b = randn("mm.a", [3, 4]), randn("mm.b", [4, 5])
    g.case("mm_f32", "mm", [a, b], torch.mm(a, b), **tol32)
    a, b = randn("mm64.a", [5, 7], f64), randn("mm64.b", [7, 2], f64)
    g.case("mm_f64", "mm", [a, b], torch.mm(a, b), **tol64)
    a, b = randn("mm_big.a", [17, 33]), randn("mm_big.b", [33, 9])  # not multiples of any block size
    g.case("mm_odd_sizes_f32", "mm", [a, b], torch.mm(a, b), **tol32)
    a, b = torch.zeros(3, 0), torch.zeros(0, 2)
    g.case("mm_k0_f32", "mm", [a, b], torch.mm(a, b), **tol32)
    a = randn("mm_t.a", [4, 3])
    b = randn("mm_t.b", [4, 5])
    g.case("mm_transposed_input_f32", "mm", [a.t().contiguous(), b], torch.mm(a.t(), b), **tol32)

    a, b = randn("bmm.a", [2, 3, 4]), randn("bmm.b", [2, 4, 5])
    g.case("bmm_f32", "bmm", [a, b], torch.bmm(a, b), **tol32)
    a, b = randn("bmm64.a", [3, 2, 6], f64), randn("bmm64.b", [3, 6, 3], f64)
    g.case("bmm_f64", "bmm", [a, b], torch.bmm(a, b), **tol64)

    def mm_case(name, sa, sb, dtype=torch.float32):
        x, y = randn(f"{name}.a", sa, dtype), randn(f"{name}.b", sb, dtype)
        g.case(name, "matmul", [x, y], torch.matmul(x, y), **(tol64 if dtype == f64 else tol32))

    mm_case("matmul_1d_1d", [6], [6])
    mm_case("matmul_1d_2d", [4], [4, 3])
    mm_case("matmul_2d_1d", [3, 4], [4])
    mm_case("matmul_2d_2d", [3, 4], [4, 2])
    mm_case("matmul_1d_3d", [4], [2, 4, 5])
    mm_case("matmul_3d_1d", [2, 3, 4], [4])
    mm_case("matmul_3d_2d", [2, 3, 4], [4, 5])
    mm_case("matmul_2d_3d", [3, 4], [2, 4, 5])
    mm_case("matmul_broadcast_batch", [2, 1, 3, 4], [3, 4, 5])
    mm_case("matmul_broadcast_batch_f64", [1, 3, 2, 4], [2, 1, 4, 3], f64)

    inp, m1, m2 = randn("addmm.in", [5]), randn("addmm.m1", [3, 4]), randn("addmm.m2", [4, 5])
    g.case("addmm_broadcast_input", "addmm", [inp, m1, m2], torch.addmm(inp, m1, m2), {"beta": 1.0, "alpha": 1.0}, **tol32)
    inp2 = randn("addmm.in2", [3, 5])
    g.case("addmm_beta_alpha", "addmm", [inp2, m1, m2], torch.addmm(inp2, m1, m2, beta=0.5, alpha=2.0),
           {"beta": 0.5, "alpha": 2.0}, **tol32)
    # beta = 0: input is ignored, even its nan and inf.
    inp3 = torch.tensor([NAN, INF, 1.0, 2.0, 3.0])
    g.case("addmm_beta0_ignores_nan", "addmm", [inp3, m1, m2], torch.addmm(inp3, m1, m2, beta=0.0, alpha=1.5),
           {"beta": 0.0, "alpha": 1.5}, **tol32)
    inp4, m3, m4 = randn("addmm64.in", [2, 1], f64), randn("addmm64.m1", [2, 3], f64), randn("addmm64.m2", [3, 4], f64)
    g.case("addmm_f64", "addmm", [inp4, m3, m4], torch.addmm(inp4, m3, m4, beta=-1.0, alpha=0.25),
           {"beta": -1.0, "alpha": 0.25}, **tol64)

    x, w, b = randn("linear.x", [2, 3, 4]), randn("linear.w", [5, 4]), randn("linear.b", [5])
    g.case("linear_bias", "linear", [x, w, b], F.linear(x, w, b), **tol32)
    g.case("linear_no_bias", "linear", [x, w], F.linear(x, w), **tol32)
    x1 = randn("linear1d.x", [4])
    g.case("linear_1d_input", "linear", [x1, w, b], F.linear(x1, w, b), **tol32)

    a, b = randn("dot.a", [7]), randn("dot.b", [7])
    g.case("dot_f32", "dot", [a, b], torch.dot(a, b), **tol32)
    a, b = randn("dot64.a", [9], f64), randn("dot64.b", [9], f64)
    g.case("dot_f64", "dot", [a, b], torch.dot(a, b), **tol64)
    m, v = randn("mv.m", [3, 4]), randn("mv.v", [4])
    g.case("mv_f32", "mv", [m, v], torch.mv(m, v), **tol32)
    a, b = randn("outer.a", [3]), randn("outer.b", [4])
    g.case("outer_f32", "outer", [a, b], torch.outer(a, b), **tol32)
    a, b = randint("outer_i64.a", [3], -5, 5), randint("outer_i64.b", [2], -5, 5)
    g.case("outer_i64", "outer", [a, b], torch.outer(a, b))
    return g


# ---------------------------------------------------------------------------
# shape_ops.safetensors


def build_shape_ops():
    g = GoldenFile("shape_ops")

    a, b, c = randn("cat.a", [2, 3]), randn("cat.b", [1, 3]), randn("cat.c", [3, 3])
    g.case("cat_dim0", "cat", [a, b, c], torch.cat([a, b, c], 0), {"dim": 0})
    a, b = randn("cat1.a", [2, 3, 2]), randn("cat1.b", [2, 1, 2])
    g.case("cat_dim1", "cat", [a, b], torch.cat([a, b], 1), {"dim": 1})
    a, b = randn("catn.a", [2, 2]), randn("catn.b", [2, 3])
    g.case("cat_dimneg1", "cat", [a, b], torch.cat([a, b], -1), {"dim": -1})
    e = torch.zeros(2, 0)
    g.case("cat_with_empty", "cat", [a, e, b], torch.cat([a, e, b], 1), {"dim": 1})
    ai, bf = randint("catm.a", [2, 2], -5, 5, torch.int32), randn("catm.b", [1, 2])
    g.case("cat_i32_f32", "cat", [ai, bf], torch.cat([ai, bf], 0), {"dim": 0})
    ab, bi = torch.tensor([True, False]), torch.tensor([3, 4], dtype=torch.int64)
    g.case("cat_bool_i64", "cat", [ab, bi], torch.cat([ab, bi], 0), {"dim": 0})

    a, b, c = randn("stack.a", [2, 3]), randn("stack.b", [2, 3]), randn("stack.c", [2, 3])
    for dim in (0, 1, 2, -1):
        tag = f"dim{dim}".replace("-", "neg")
        g.case(f"stack_{tag}", "stack", [a, b, c], torch.stack([a, b, c], dim), {"dim": dim})
    s0, s1 = torch.tensor(1.5), torch.tensor(-2.0)
    g.case("stack_0d", "stack", [s0, s1], torch.stack([s0, s1]), {"dim": 0})

    x = randn("tri.x", [4, 5])
    xb = randn("tri.xb", [2, 3, 4], torch.float64)
    xi = randint("tri.xi", [3, 3], -9, 9)
    for op, fn in (("tril", torch.tril), ("triu", torch.triu)):
        for d in (0, 1, -1, 2, -3, 7):
            tag = f"diag{d}".replace("-", "neg")
            g.case(f"{op}_{tag}", op, [x], fn(x, d), {"diagonal": d})
        g.case(f"{op}_batched_diag1_f64", op, [xb], fn(xb, 1), {"diagonal": 1})
        g.case(f"{op}_i64", op, [xi], fn(xi), {"diagonal": 0})

    idx = torch.tensor([0, 3, 1, 5, 2], dtype=torch.int64)
    g.case("one_hot_classes6", "one_hot", [idx], F.one_hot(idx, 6), {"num_classes": 6})
    g.case("one_hot_inferred", "one_hot", [idx], F.one_hot(idx), {"num_classes": -1})
    idx2 = torch.tensor([[0, 2], [1, 1], [2, 0]], dtype=torch.int64)
    g.case("one_hot_2d", "one_hot", [idx2], F.one_hot(idx2, 4), {"num_classes": 4})

    # sort / topk outputs: out0 values, out1 int64 indices. Inputs are
    # permutations (no ties) except the stable cases, where the stable order
    # makes the indices unambiguous.
    xs = perm("sort.x", [3, 6], scale=0.5, offset=-4.0)
    for dim in (-1, 0):
        for descending in (False, True):
            tag = f"dim{dim}".replace("-", "neg") + ("_desc" if descending else "_asc")
            v, i = torch.sort(xs, dim=dim, descending=descending)
            g.case(f"sort_{tag}", "sort", [xs], [v, i], {"dim": dim, "descending": descending, "stable": False})
    xt = torch.tensor([[3.0, 1.0, 2.0, 1.0, 3.0, 0.0, 1.0], [2.0, 2.0, -1.0, 2.0, 5.0, -1.0, 0.0]])
    for descending in (False, True):
        v, i = torch.sort(xt, dim=-1, descending=descending, stable=True)
        tag = "desc" if descending else "asc"
        g.case(f"sort_stable_ties_{tag}", "sort", [xt], [v, i], {"dim": -1, "descending": descending, "stable": True})
    xn = torch.tensor([2.0, NAN, -1.0, INF, -INF, 0.5])
    for descending in (False, True):
        v, i = torch.sort(xn, descending=descending)
        g.case(f"sort_nan_inf_{'desc' if descending else 'asc'}", "sort", [xn], [v, i],
               {"dim": -1, "descending": descending, "stable": False})
    xsi = perm("sort.xi", [10], torch.int32, scale=3, offset=-15)
    v, i = torch.sort(xsi)
    g.case("sort_i32", "sort", [xsi], [v, i], {"dim": -1, "descending": False, "stable": False})
    xs64 = perm("sort.x64", [2, 5], torch.float64, scale=0.1)
    v, i = torch.sort(xs64, dim=1, descending=True)
    g.case("sort_f64_desc", "sort", [xs64], [v, i], {"dim": 1, "descending": True, "stable": False})

    xk = perm("topk.x", [4, 8], scale=0.25, offset=-3.0)
    for k, dim, largest in ((3, -1, True), (3, -1, False), (2, 0, True), (1, 1, False), (8, -1, True), (0, -1, True)):
        tag = f"k{k}_dim{dim}".replace("-", "neg") + ("_largest" if largest else "_smallest")
        v, i = torch.topk(xk, k, dim=dim, largest=largest, sorted=True)
        g.case(f"topk_{tag}", "topk", [xk], [v, i], {"k": k, "dim": dim, "largest": largest, "sorted": True})
    xki = perm("topk.xi", [9], torch.int64, scale=5, offset=-20)
    v, i = torch.topk(xki, 4)
    g.case("topk_i64", "topk", [xki], [v, i], {"k": 4, "dim": -1, "largest": True, "sorted": True})
    searching_cases(g)
    splitting_cases(g)
    return g


def searching_cases(g):
    """argsort, unique, searchsorted, bucketize."""
    xs = perm("argsort.x", [3, 6], scale=0.5, offset=-4.0)
    for dim, descending in ((-1, False), (0, True)):
        tag = f"dim{dim}".replace("-", "neg") + ("_desc" if descending else "_asc")
        g.case(f"argsort_{tag}", "argsort", [xs], torch.argsort(xs, dim=dim, descending=descending),
               {"dim": dim, "descending": descending, "stable": False})
    xt = torch.tensor([[3.0, 1.0, 2.0, 1.0, 3.0, 0.0, 1.0], [2.0, 2.0, -1.0, 2.0, 5.0, -1.0, 0.0]])
    for descending in (False, True):
        g.case(f"argsort_stable_ties_{'desc' if descending else 'asc'}", "argsort", [xt],
               torch.sort(xt, dim=-1, descending=descending, stable=True)[1],
               {"dim": -1, "descending": descending, "stable": True})

    # unique: outputs are the values, then the inverse and counts when asked for. torch 1.13
    # orders NaNs by hash, so no case has one; -0 and 0 are one value.
    xu = torch.tensor([[3.0, 1.0, -0.0, 2.0], [1.0, 0.0, 3.0, 3.0]])
    for inverse, counts in ((False, False), (True, False), (False, True), (True, True)):
        out = torch.unique(xu, sorted=True, return_inverse=inverse, return_counts=counts)
        out = list(out) if isinstance(out, tuple) else [out]
        tag = ("_inverse" if inverse else "") + ("_counts" if counts else "")
        g.case(f"unique{tag}", "unique", [xu], out,
               {"sorted": True, "return_inverse": inverse, "return_counts": counts})
    xui = randint("unique.xi", [12], -3, 4, torch.int32)
    g.case("unique_i32", "unique", [xui], list(torch.unique(xui, return_inverse=True, return_counts=True)),
           {"sorted": True, "return_inverse": True, "return_counts": True})
    xub = torch.tensor([True, False, True, True])
    g.case("unique_bool", "unique", [xub], list(torch.unique(xub, return_counts=True)),
           {"sorted": True, "return_inverse": False, "return_counts": True})

    seq = torch.tensor([-2.0, -1.0, 0.0, 0.0, 0.5, 3.0])
    vals = torch.tensor([[-3.0, -1.0, 0.0], [0.25, 3.0, 9.0]])
    for right in (False, True):
        tag = "right" if right else "left"
        g.case(f"searchsorted_{tag}", "searchsorted", [seq, vals], torch.searchsorted(seq, vals, right=right),
               {"out_int32": False, "right": right, "side": None})
    g.case("searchsorted_side_right", "searchsorted", [seq, vals], torch.searchsorted(seq, vals, side="right"),
           {"out_int32": False, "right": False, "side": "right"})
    g.case("searchsorted_int32", "searchsorted", [seq, vals], torch.searchsorted(seq, vals, out_int32=True),
           {"out_int32": True, "right": False, "side": None})
    seq2 = torch.tensor([[1, 3, 5, 7], [0, 0, 2, 9]])
    vals2 = torch.tensor([[0, 3, 8], [0, 1, 9]])
    g.case("searchsorted_rows_i64", "searchsorted", [seq2, vals2], torch.searchsorted(seq2, vals2),
           {"out_int32": False, "right": False, "side": None})
    seqn = torch.tensor([-INF, -1.0, 1.0, INF])
    valsn = torch.tensor([NAN, INF, -INF, 0.0])
    g.case("searchsorted_nan_inf", "searchsorted", [seqn, valsn], torch.searchsorted(seqn, valsn, right=True),
           {"out_int32": False, "right": True, "side": None})
    xi = randint("searchsorted.mixed", [5], -1, 5)
    g.case("searchsorted_f32_i64", "searchsorted", [seq, xi], torch.searchsorted(seq, xi),
           {"out_int32": False, "right": False, "side": None})

    bounds = torch.tensor([1.0, 3.0, 5.0, 7.0])
    x = torch.tensor([[1.0, 5.0, 6.0], [3.0, 9.0, -1.0]])
    for right in (False, True):
        g.case(f"bucketize_{'right' if right else 'left'}", "bucketize", [x, bounds],
               torch.bucketize(x, bounds, right=right), {"out_int32": False, "right": right})


def splitting_cases(g):
    """split, chunk, meshgrid: several outputs each."""
    x = randn("split.x", [5, 4])
    g.case("split_size2_dim0", "split", [x], list(torch.split(x, 2, 0)), {"split_size": 2, "dim": 0})
    g.case("split_sizes_dim1", "split", [x], list(torch.split(x, [1, 3], 1)), {"split_size": [1, 3], "dim": 1})
    g.case("chunk_3_dim0", "chunk", [x], list(torch.chunk(x, 3, 0)), {"chunks": 3, "dim": 0})
    g.case("chunk_4_dimneg1", "chunk", [x], list(torch.chunk(x, 4, -1)), {"chunks": 4, "dim": -1})
    a, b, c = torch.tensor([1, 2]), torch.tensor([10, 20, 30]), torch.tensor([7, 8, 9, 6])
    for indexing in ("ij", "xy"):
        g.case(f"meshgrid_{indexing}", "meshgrid", [a, b, c], list(torch.meshgrid(a, b, c, indexing=indexing)),
               {"indexing": indexing})
    s = torch.tensor(5.0)
    v = randn("meshgrid.v", [3])
    g.case("meshgrid_0d_xy", "meshgrid", [s, v], list(torch.meshgrid(s, v, indexing="xy")), {"indexing": "xy"})


# ---------------------------------------------------------------------------
# products.safetensors: einsum, baddbmm, kron, diag, trace. Float32 outputs are
# torch's float64 results rounded to float32, so they do not depend on the BLAS.


def build_products():
    g = GoldenFile("products")
    f64 = torch.float64

    def via_f64(fn, *xs):
        return fn(*[x.double() for x in xs]).to(xs[0].dtype)

    def einsum_case(name, equation, shapes):
        xs = [randn(f"{name}.{k}", s) for k, s in enumerate(shapes)]
        out = via_f64(lambda *ys: torch.einsum(equation, *ys), *xs)
        g.case(name, "einsum", xs, out, {"equation": equation}, rtol=1e-5, atol=1e-5)

    einsum_case("einsum_bmm", "bij,bjk->bik", [[2, 3, 4], [2, 4, 5]])
    einsum_case("einsum_matmul_implicit", "ij,jk", [[3, 4], [4, 2]])
    einsum_case("einsum_transpose_implicit", "ba", [[3, 4]])
    einsum_case("einsum_upper_labels", "Ba,aC", [[2, 3], [3, 4]])
    einsum_case("einsum_trace", "ii", [[4, 4]])
    einsum_case("einsum_diagonal", "ii->i", [[4, 4]])
    einsum_case("einsum_repeated_batch", "iij->ji", [[3, 3, 2]])
    einsum_case("einsum_sum_all", "ijk->", [[2, 3, 4]])
    einsum_case("einsum_outer", "i,j->ij", [[3], [4]])
    einsum_case("einsum_hadamard", "ij,ij->ij", [[2, 3], [2, 3]])
    einsum_case("einsum_ellipsis_broadcast", "...ij,...jk->...ik", [[5, 2, 3], [3, 4]])
    einsum_case("einsum_ellipsis_middle", "i...j,j->...", [[2, 3, 4, 5], [5]])
    einsum_case("einsum_ellipsis_summed", "...ij->ij", [[3, 2, 4]])
    einsum_case("einsum_broadcast_size1", "ij,ij->i", [[3, 1], [3, 4]])
    einsum_case("einsum_chain3", "ij,jk,kl->il", [[2, 30], [30, 40], [40, 3]])
    einsum_case("einsum_chain4_mixed", "ab,bc,cd,de->ae", [[8, 2], [2, 9], [9, 3], [3, 7]])
    einsum_case("einsum_bilinear", "bn,anm,bm->ba", [[2, 3], [4, 3, 5], [2, 5]])
    einsum_case("einsum_spaces", "i j , j k -> i k", [[2, 3], [3, 2]])
    ai, bi = randint("einsum_i64.a", [2, 3], -5, 5), randint("einsum_i64.b", [3, 2], -5, 5)
    g.case("einsum_i64", "einsum", [ai, bi], torch.einsum("ij,jk->ik", ai, bi), {"equation": "ij,jk->ik"})

    s, b1, b2 = randn("baddbmm.s", [3, 1]), randn("baddbmm.b1", [2, 3, 4]), randn("baddbmm.b2", [2, 4, 5])
    for beta, alpha in ((1.0, 1.0), (0.5, -2.0)):
        g.case(f"baddbmm_beta{beta}_alpha{alpha}".replace(".", "p").replace("-", "neg"), "baddbmm", [s, b1, b2],
               via_f64(lambda x, y, z: torch.baddbmm(x, y, z, beta=beta, alpha=alpha), s, b1, b2),
               {"beta": beta, "alpha": alpha}, rtol=1e-5, atol=1e-5)
    sn = torch.full([2, 3, 5], NAN)
    g.case("baddbmm_beta0_ignores_nan", "baddbmm", [sn, b1, b2],
           via_f64(lambda x, y, z: torch.baddbmm(x, y, z, beta=0.0, alpha=1.5), sn, b1, b2),
           {"beta": 0.0, "alpha": 1.5}, rtol=1e-5, atol=1e-5)

    a, b = torch.tensor([[1, 2], [3, 4]]), torch.tensor([[0, 1], [1, 0]])
    g.case("kron_i64", "kron", [a, b], torch.kron(a, b))
    a, b = randn("kron.a", [2, 3]), randn("kron.b", [3])
    g.case("kron_f32_broadcast_dims", "kron", [a, b], torch.kron(a, b))
    a, b = randn("kron3.a", [2, 1, 2], f64), randn("kron3.b", [1, 3, 2], f64)
    g.case("kron_3d_f64", "kron", [a, b], torch.kron(a, b))
    ai = randint("kron_i32.a", [3], -4, 4, torch.int32)
    g.case("kron_i32_f32", "kron", [ai, b[0, 0].float()], torch.kron(ai, b[0, 0].float()))

    v = randn("diag.v", [3])
    for d in (0, 1, -2):
        g.case(f"diag_vector_{d}".replace("-", "neg"), "diag", [v], torch.diag(v, d), {"diagonal": d})
    m = randn("diag.m", [3, 4])
    for d in (0, 2, -1):
        g.case(f"diag_matrix_{d}".replace("-", "neg"), "diag", [m], torch.diag(m, d), {"diagonal": d})
    g.case("trace_f32", "trace", [m], via_f64(torch.trace, m), rtol=1e-6, atol=1e-6)
    mi = randint("trace.mi", [3, 3], -9, 9, torch.int32)
    g.case("trace_i32", "trace", [mi], torch.trace(mi))
    return g


# ---------------------------------------------------------------------------
# distances.safetensors: cdist, F.cosine_similarity, F.pairwise_distance.


def build_distances():
    g = GoldenFile("distances")
    f64 = torch.float64
    x1, x2 = randn("cdist.x1", [4, 3]), randn("cdist.x2", [5, 3])
    x2[1] = x1[2]  # a zero distance
    for p in (2.0, 1.0, 0.5, 3.0, 0.0, INF):
        tag = "inf" if p == INF else f"{p}".replace(".", "p")
        # small sizes: torch computes from the differences, as ember does.
        g.case(f"cdist_p{tag}", "cdist", [x1, x2], torch.cdist(x1.double(), x2.double(), p=p).float(),
               {"p": "inf" if p == INF else p}, rtol=1e-5, atol=1e-6)
    b1, b2 = randn("cdist_b.x1", [2, 1, 3, 4], f64), randn("cdist_b.x2", [3, 2, 4], f64)
    g.case("cdist_batch_broadcast_f64", "cdist", [b1, b2], torch.cdist(b1, b2), {"p": 2.0})

    a, b = randn("cos.a", [4, 5]), randn("cos.b", [4, 5])
    g.case("cosine_similarity_dim1", "cosine_similarity", [a, b],
           F.cosine_similarity(a.double(), b.double(), dim=1).float(), {"dim": 1, "eps": 1e-8}, rtol=1e-5, atol=1e-6)
    c = randn("cos.c", [5])
    g.case("cosine_similarity_broadcast_dim0", "cosine_similarity", [a.t().contiguous(), c.unsqueeze(1)],
           F.cosine_similarity(a.t().double(), c.unsqueeze(1).double(), dim=0).float(), {"dim": 0, "eps": 1e-8},
           rtol=1e-5, atol=1e-6)
    tiny = torch.tensor([[1e-5, 0.0], [3.0, 4.0]], dtype=f64)
    tiny2 = torch.tensor([[1e-5, 0.0], [1.0, 1e-9]], dtype=f64)
    g.case("cosine_similarity_eps_f64", "cosine_similarity", [tiny, tiny2],
           F.cosine_similarity(tiny, tiny2, dim=1, eps=1e-4), {"dim": 1, "eps": 1e-4})

    g.case("pairwise_distance_p2", "pairwise_distance", [a, b],
           F.pairwise_distance(a.double(), b.double()).float(), {"p": 2.0, "eps": 1e-6, "keepdim": False},
           rtol=1e-5, atol=1e-6)
    g.case("pairwise_distance_p1_keepdim", "pairwise_distance", [a, c],
           F.pairwise_distance(a.double(), c.double(), p=1.0, keepdim=True).float(),
           {"p": 1.0, "eps": 1e-6, "keepdim": True}, rtol=1e-5, atol=1e-6)
    return g


# ---------------------------------------------------------------------------
# sampling.safetensors: bernoulli and multinomial where the draw is certain
# (probabilities 0 and 1, one-hot rows): torch's generator is not ember's.


def build_sampling():
    g = GoldenFile("sampling")
    p = torch.tensor([[0.0, 1.0, 1.0], [0.0, 0.0, 1.0]])
    g.case("bernoulli_certain_f32", "bernoulli", [p], torch.bernoulli(p))
    p64 = torch.tensor([1.0, 0.0, 0.0, 1.0], dtype=torch.float64)
    g.case("bernoulli_certain_f64", "bernoulli", [p64], torch.bernoulli(p64))
    onehot = torch.tensor([[0.0, 0.0, 2.0, 0.0], [0.5, 0.0, 0.0, 0.0]])
    g.case("multinomial_onehot_replacement", "multinomial", [onehot], torch.multinomial(onehot, 5, True),
           {"num_samples": 5, "replacement": True})
    g.case("multinomial_onehot_one_draw", "multinomial", [onehot], torch.multinomial(onehot, 1, False),
           {"num_samples": 1, "replacement": False})
    v = torch.tensor([0.0, 0.0, 0.0, 3.0], dtype=torch.float64)
    g.case("multinomial_1d_f64", "multinomial", [v], torch.multinomial(v, 3, True),
           {"num_samples": 3, "replacement": True})
    return g


# ---------------------------------------------------------------------------
# autograd/gradients.safetensors: gradients of small losses, in float64.
# A separate folder, so the op tests (which read tests/golden/*.safetensors)
# do not see these cases.


class GradientFile(GoldenFile):
    """Cases NAME.in0, NAME.in1, ... (inputs), NAME.out0 (the 0-d loss) and
    NAME.gradK (d loss / d inK for each K in the case's "grads")."""

    def grad_case(self, name, expr, inputs, grads, loss_fn, rtol=1e-10, atol=1e-12):
        assert name not in self.metadata, f"duplicate case {name}"
        assert "." not in name
        leaves = [t.clone().requires_grad_(i in grads) for i, t in enumerate(inputs)]
        loss = loss_fn(*leaves)
        assert loss.dim() == 0, f"{name}: the loss must be 0-d"
        spec = {"expr": expr, "grads": list(grads), "rtol": rtol, "atol": atol}
        self.metadata[name] = json.dumps(spec, separators=(",", ":"), allow_nan=False)
        for i, t in enumerate(inputs):
            self.tensors[f"{name}.in{i}"] = t
        self.tensors[f"{name}.out0"] = loss.detach()
        for i, g in zip(grads, torch.autograd.grad(loss, [leaves[i] for i in grads])):
            self.tensors[f"{name}.grad{i}"] = g


def build_gradients():
    g = GradientFile("gradients")
    f64 = torch.float64

    # (a) A two-layer MLP with a mean squared error: every weight, bias and the input.
    x, target = randn("mlp.x", [4, 3], f64), randn("mlp.target", [4, 2], f64)
    w1, b1 = randn("mlp.w1", [5, 3], f64, 0.7), randn("mlp.b1", [5], f64, 0.3)
    w2, b2 = randn("mlp.w2", [2, 5], f64, 0.7), randn("mlp.b2", [2], f64, 0.3)
    g.grad_case("mlp_mse", "mlp_mse", [x, w1, b1, w2, b2, target], [0, 1, 2, 3, 4],
                lambda x, w1, b1, w2, b2, t: F.mse_loss(F.linear(F.relu(F.linear(x, w1, b1)), w2, b2), t))

    # (b) Softmax cross-entropy. ember builds it from exp, sum, log and a
    # one-hot product (or an index); torch uses its fused cross_entropy.
    labels = torch.tensor([2, 0, 4, 1], dtype=torch.int64)
    logits = randn("ce.logits", [4, 5], f64, 2.0)
    g.grad_case("softmax_ce_onehot", "softmax_cross_entropy_onehot", [logits, F.one_hot(labels, 5).to(f64)], [0],
                lambda z, onehot: F.cross_entropy(z, labels))
    labels6 = torch.tensor([1, 1, 0, 2, 2, 0], dtype=torch.int64)
    logits6 = randn("ce_index.logits", [6, 3], f64, 2.0)
    g.grad_case("softmax_ce_index", "softmax_cross_entropy_index", [logits6, labels6], [0],
                lambda z, y: F.cross_entropy(z, y))

    # (c) Broadcasting in every operand: [3,1,4], [5,1], [4], [3,5,4].
    a, b = randn("bcast.a", [3, 1, 4], f64), randn("bcast.b", [5, 1], f64)
    c, d = randn("bcast.c", [4], f64), randn("bcast.d", [3, 5, 4], f64)
    g.grad_case("broadcast_expression", "broadcast_expression", [a, b, c, d], [0, 1, 2, 3],
                lambda a, b, c, d: ((a * b + c.exp()) / (1 + d.abs())).sum())
    return g


# ---------------------------------------------------------------------------


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    here = os.path.dirname(os.path.abspath(__file__))
    parser.add_argument("--out", default=os.path.join(here, "..", "..", "tests", "golden"))
    opts = parser.parse_args()
    total = 0
    builds = [(build_elementwise, opts.out), (build_reductions, opts.out), (build_matmul, opts.out),
              (build_shape_ops, opts.out), (build_products, opts.out), (build_distances, opts.out),
              (build_sampling, opts.out), (build_gradients, os.path.join(opts.out, "autograd"))]
    for build, out_dir in builds:
        os.makedirs(out_dir, exist_ok=True)
        g = build()
        path = g.write(out_dir)
        size = os.path.getsize(path)
        total += size
        print(f"{os.path.relpath(path)}: {len(g.metadata)} cases, {len(g.tensors)} tensors, {size} bytes")
    print(f"total {total} bytes (torch {torch.__version__})")


if __name__ == "__main__":
    main()
