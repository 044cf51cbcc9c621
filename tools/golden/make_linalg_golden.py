#!/usr/bin/python3
"""Golden values for ember's linear-algebra ops (ember::linalg), from PyTorch.

Writes tests/golden/linalg/linalg.safetensors in the format of the
neural-network cases (tests/golden_nn.h): the inputs, torch's outputs, a
cotangent per floating output and torch's gradient of sum(out * cot) with
respect to the listed inputs. tests/golden_linalg.cpp says how ember runs
each op; tests/golden_nn.cpp runs the cases. Seeding and determinism follow
make_golden.py (tools/golden/README.md).

Factors that are unique only up to signs are stored in ember's convention
(Note [Signs of the factors] in kernels/cpu/linalg/decompositions.h): torch's
Q and R are rescaled so that diag(R) >= 0, and each singular vector pair and
eigenvector so that its entry of largest magnitude is positive. The losses
sum(out * cot) then read the same, unique, functions of A in torch and in
ember, so the gradients compare directly. Matrices are well-conditioned and
the eigenvalues and singular values well separated, so both libraries agree
to near machine precision.

    /usr/bin/python3 tools/golden/make_linalg_golden.py [--out tests/golden/linalg]
"""

import argparse
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from make_golden import randn  # noqa: E402
from nn_golden import NnGoldenFile  # noqa: E402

f32, f64 = torch.float32, torch.float64
TAG = {f32: "f32", f64: "f64"}
# f64: LAPACK and Eigen take different paths to the same factors; f32 rounds
# differently in both.
TOL = {
    f64: dict(rtol=1e-9, atol=1e-10, grad_rtol=1e-8, grad_atol=1e-9),
    f32: dict(rtol=1e-4, atol=1e-5, grad_rtol=1e-3, grad_atol=1e-4),
}


def eye(n, dtype):
    return torch.eye(n, dtype=dtype)


def invertible(name, shape, dtype):
    return randn(name, shape, dtype) + shape[-1] * eye(shape[-1], dtype)


def spd(name, shape, dtype):
    m = randn(name, shape, dtype)
    return m @ m.mT / shape[-1] + eye(shape[-1], dtype)


def symmetric(name, shape, dtype):
    """Eigenvalues near 1, 2, ..., n: well separated."""
    n = shape[-1]
    m = randn(name, shape, dtype) * (0.1 / n)
    return m + m.mT + torch.diag(torch.arange(1, n + 1, dtype=dtype))


def rank_two(name, n, dtype):
    return randn(name + ".u", [n, 2], dtype) @ randn(name + ".v", [2, n], dtype)


def largest_entry_signs(vectors):
    """(*, m, k) -> (*, k): the sign of each column's entry of largest magnitude."""
    at = vectors.detach().abs().argmax(dim=-2, keepdim=True)
    return torch.sign(torch.gather(vectors.detach(), -2, at)).squeeze(-2)


def qr_normalised(a, mode):
    """For the modes whose Q has min(m, n) columns (reduced; complete with m <= n)."""
    q, r = torch.linalg.qr(a, mode=mode)
    d = torch.sign(torch.diagonal(r.detach(), dim1=-2, dim2=-1))
    return q * d.unsqueeze(-2), r * d.unsqueeze(-1)


def svd_normalised(a, full_matrices):
    u, s, vh = torch.linalg.svd(a, full_matrices=full_matrices)
    d = largest_entry_signs(u)
    return u * d.unsqueeze(-2), s, vh * d.unsqueeze(-1)


def eigh_normalised(a, uplo):
    values, vectors = torch.linalg.eigh(a, UPLO=uplo)
    return values, vectors * largest_entry_signs(vectors).unsqueeze(-2)


def ord_arg(o):
    """JSON has no infinity: the files write +-inf as strings (as make_golden.py)."""
    if o == float("inf"):
        return "inf"
    if o == -float("inf"):
        return "-inf"
    return o


def solve_cases(g):
    for name, sa, sb, left, dtype in (
        ("solve_3x3", [3, 3], [3, 2], True, f64),
        ("solve_broadcast", [2, 1, 3, 3], [4, 3, 2], True, f64),
        ("solve_vector", [2, 3, 3], [3], True, f64),
        ("solve_left_false", [3, 3], [2, 3], False, f64),
        ("solve_4x4", [4, 4], [4, 3], True, f32),
    ):
        name = f"{name}_{TAG[dtype]}"
        a, b = invertible(f"{name}.a", sa, dtype), randn(f"{name}.b", sb, dtype)
        g.nn_case(name, "linalg.solve", lambda a, b, left=left: torch.linalg.solve(a, b, left=left), [a, b],
                  {"left": left}, grads=[0, 1], **TOL[dtype])


def lu_cases(g):
    for name, shape, dtype in (("inv_4x4", [4, 4], f64), ("inv_batched", [2, 3, 3], f32)):
        name = f"{name}_{TAG[dtype]}"
        g.nn_case(name, "linalg.inv", torch.linalg.inv, [invertible(f"{name}.a", shape, dtype)], grads=[0],
                  **TOL[dtype])
    for name, a, dtype in (
        ("det_3x3", invertible("det_3x3.a", [3, 3], f64), f64),
        ("det_batched", randn("det_batched.a", [2, 4, 4], f64), f64),
        ("det_3x3", invertible("det_3x3_f32.a", [3, 3], f32), f32),
    ):
        g.nn_case(f"{name}_{TAG[dtype]}", "linalg.det", torch.linalg.det, [a], grads=[0], **TOL[dtype])
    for name, a, dtype in (
        ("slogdet_negative", -invertible("slogdet_negative.a", [3, 3], f64), f64),
        ("slogdet_batched", randn("slogdet_batched.a", [2, 4, 4], f32), f32),
    ):
        g.nn_case(f"{name}_{TAG[dtype]}", "linalg.slogdet", lambda a: tuple(torch.linalg.slogdet(a)), [a],
                  grads=[0], **TOL[dtype])


def cholesky_cases(g):
    for name, shape, upper, dtype in (
        ("cholesky_lower", [4, 4], False, f64),
        ("cholesky_upper", [3, 3], True, f64),
        ("cholesky_batched", [2, 3, 3], False, f32),
    ):
        name = f"{name}_{TAG[dtype]}"
        g.nn_case(name, "linalg.cholesky", lambda a, upper=upper: torch.linalg.cholesky(a, upper=upper),
                  [spd(f"{name}.a", shape, dtype)], {"upper": upper}, grads=[0], **TOL[dtype])


def factorisation_cases(g):
    for name, shape, mode, dtype in (
        ("qr_tall", [5, 3], "reduced", f64),
        ("qr_wide", [3, 5], "reduced", f64),
        ("qr_wide_complete", [3, 5], "complete", f64),
        ("qr_batched", [2, 4, 3], "reduced", f64),
        ("qr_square", [4, 4], "reduced", f32),
    ):
        name = f"{name}_{TAG[dtype]}"
        g.nn_case(name, "linalg.qr", lambda a, mode=mode: qr_normalised(a, mode), [randn(f"{name}.a", shape, dtype)],
                  {"mode": mode}, grads=[0], **TOL[dtype])
    for name, shape, full, dtype in (
        ("svd_tall", [5, 3], False, f64),
        ("svd_wide", [3, 5], False, f64),
        ("svd_square_full", [4, 4], True, f64),
        ("svd_batched", [2, 4, 3], False, f32),
    ):
        name = f"{name}_{TAG[dtype]}"
        g.nn_case(name, "linalg.svd", lambda a, full=full: svd_normalised(a, full), [randn(f"{name}.a", shape, dtype)],
                  {"full_matrices": full}, grads=[0], **TOL[dtype])
    for name, shape, uplo, dtype in (
        ("eigh_lower", [4, 4], "L", f64),
        ("eigh_upper", [4, 4], "U", f64),
        ("eigh_batched", [2, 3, 3], "L", f32),
    ):
        name = f"{name}_{TAG[dtype]}"
        g.nn_case(name, "linalg.eigh", lambda a, uplo=uplo: eigh_normalised(a, uplo),
                  [symmetric(f"{name}.a", shape, dtype)], {"UPLO": uplo}, grads=[0], **TOL[dtype])


def pinv_cases(g):
    for name, a, args in (
        ("pinv_tall", randn("pinv_tall.a", [5, 3], f64), {}),
        ("pinv_wide", randn("pinv_wide.a", [3, 5], f64), {}),
        ("pinv_hermitian", symmetric("pinv_hermitian.a", [4, 4], f64), {"hermitian": True}),
        ("pinv_rank_deficient_rtol", rank_two("pinv_rank_deficient_rtol.a", 4, f64), {"rtol": 1e-3}),
        ("pinv_rank_deficient_atol", rank_two("pinv_rank_deficient_atol.a", 4, f64), {"atol": 1e-3}),
    ):
        g.nn_case(f"{name}_f64", "linalg.pinv", lambda a, args=args: torch.linalg.pinv(a, **args), [a], args,
                  grads=[0], **TOL[f64])


def lstsq_cases(g):
    def solution(a, b, rcond=None):
        if b.dim() == 1:  # torch 1.13's backward fails on a vector B: solve for a column instead
            return torch.linalg.lstsq(a, b.unsqueeze(-1), rcond=rcond, driver="gelsd").solution.squeeze(-1)
        return torch.linalg.lstsq(a, b, rcond=rcond, driver="gelsd").solution

    def everything(a, b, rcond=None):
        r = torch.linalg.lstsq(a, b, rcond=rcond, driver="gelsd")
        return r.solution, r.residuals, r.singular_values, r.rank

    for name, sa, sb in (("lstsq_tall", [6, 3], [6, 2]), ("lstsq_wide", [3, 5], [3, 2]),
                         ("lstsq_vector", [5, 3], [5])):
        a, b = randn(f"{name}.a", sa, f64), randn(f"{name}.b", sb, f64)
        g.nn_case(f"{name}_f64", "linalg.lstsq", solution, [a, b], {"outputs": "solution"}, grads=[0, 1], **TOL[f64])
    a, b = randn("lstsq_all.a", [2, 6, 3], f64), randn("lstsq_all.b", [2, 6, 2], f64)
    g.nn_case("lstsq_all_f64", "linalg.lstsq", everything, [a, b], {"outputs": "all"}, **TOL[f64])
    a = randn("lstsq_deficient.u", [5, 2], f64) @ randn("lstsq_deficient.v", [2, 4], f64)
    b = randn("lstsq_deficient.b", [5, 3], f64)
    g.nn_case("lstsq_rank_deficient_f64", "linalg.lstsq", lambda a, b: everything(a, b, 1e-6), [a, b],
              {"outputs": "all", "rcond": 1e-6}, **TOL[f64])


def norm_cases(g):
    inf = float("inf")
    a = randn("matrix_norm.a", [3, 4], f64)
    for o in ("fro", "nuc", inf, -inf, 1, -1, 2, -2):
        tag = {"fro": "fro", "nuc": "nuc", inf: "inf", -inf: "minus_inf"}.get(o, str(o).replace("-", "minus_"))
        g.nn_case(f"matrix_norm_{tag}_f64", "linalg.matrix_norm", lambda a, o=o: torch.linalg.matrix_norm(a, o), [a],
                  {"ord": ord_arg(o)}, grads=[0], **TOL[f64])
    b = randn("matrix_norm_dims.a", [3, 2, 4], f64)
    for o in ("nuc", 1, -inf):
        tag = {"nuc": "nuc", 1: "1", -inf: "minus_inf"}[o]
        g.nn_case(f"matrix_norm_dims_{tag}_f64", "linalg.matrix_norm",
                  lambda b, o=o: torch.linalg.matrix_norm(b, o, dim=(2, 0), keepdim=True), [b],
                  {"ord": ord_arg(o), "dim": [2, 0], "keepdim": True}, grads=[0], **TOL[f64])
    c = randn("matrix_norm_f32.a", [2, 3, 3], f32)
    g.nn_case("matrix_norm_2_f32", "linalg.matrix_norm", lambda c: torch.linalg.matrix_norm(c, 2), [c], {"ord": 2},
              grads=[0], **TOL[f32])

    x = randn("vector_norm.x", [3, 5], f64)
    for tag, o, dim, keepdim in (
        ("2_all", 2, None, False),
        ("1_dim1_keepdim", 1, [1], True),
        ("inf_dim0", inf, [0], False),
        ("minus_1_dim1", -1, [1], False),
        ("0_all", 0, None, False),
        ("3p5_dims", 3.5, [0, 1], False),
    ):
        g.nn_case(f"vector_norm_{tag}_f64", "linalg.vector_norm",
                  lambda x, o=o, dim=dim, keepdim=keepdim: torch.linalg.vector_norm(x, o, dim, keepdim), [x],
                  {"ord": ord_arg(o), "dim": dim, "keepdim": keepdim}, grads=[0], **TOL[f64])
    y = randn("vector_norm_f32.x", [4, 6], f32)
    g.nn_case("vector_norm_2_dim1_f32", "linalg.vector_norm", lambda y: torch.linalg.vector_norm(y, 2, [-1]), [y],
              {"ord": 2, "dim": [-1]}, grads=[0], **TOL[f32])


def build():
    g = NnGoldenFile("linalg")
    for cases in (solve_cases, lu_cases, cholesky_cases, factorisation_cases, pinv_cases, lstsq_cases, norm_cases):
        cases(g)
    return g


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=os.path.join(HERE, "..", "..", "tests", "golden", "linalg"))
    opts = parser.parse_args()
    os.makedirs(opts.out, exist_ok=True)
    g = build()
    path = g.write(opts.out)
    print(f"{os.path.relpath(path)}: {len(g.metadata)} cases, {len(g.tensors)} tensors, "
          f"{os.path.getsize(path)} bytes (torch {torch.__version__})")


if __name__ == "__main__":
    main()
