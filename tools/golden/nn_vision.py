"""Golden cases of the vision family: grid_sample (4-D bilinear and nearest,
5-D trilinear and nearest, every padding_mode, with and without
align_corners) and affine_grid (2-D and 3-D theta), forward and the gradients
of the input, the grid and theta, read by tests/golden_nn_vision.cpp.

Grid points reach past [-1, 1] (uniform in [-1.3, 1.3]), so every padding mode
reads outside the input. A case's inputs: grid_sample in0 = input, in1 = grid;
affine_grid in0 = theta, with args "size" and "align_corners"."""

import torch
import torch.nn.functional as F

from make_golden import randn, uniform
from nn_golden import NnGoldenFile

f32, f64 = torch.float32, torch.float64


def build():
    g = NnGoldenFile("vision")
    for mode in ("bilinear", "nearest"):
        for padding in ("zeros", "border", "reflection"):
            for align in (False, True):
                name = f"grid_sample_{mode}_{padding}_{'align' if align else 'noalign'}"
                x = randn(f"{name}.x", [2, 3, 5, 4])
                grid = uniform(f"{name}.grid", [2, 6, 7, 2], -1.3, 1.3)
                args = {"mode": mode, "padding_mode": padding, "align_corners": align}
                g.nn_case(name, "grid_sample",
                          lambda x, grid, a=args: F.grid_sample(x, grid, **a), [x, grid], args, grads=(0, 1),
                          rtol=1e-5, atol=1e-6, grad_rtol=1e-5, grad_atol=1e-5)
    for mode, padding, align in (("bilinear", "zeros", False), ("bilinear", "reflection", True),
                                 ("nearest", "border", False)):
        name = f"grid_sample_3d_{mode}_{padding}"
        x = randn(f"{name}.x", [2, 2, 3, 4, 5])
        grid = uniform(f"{name}.grid", [2, 3, 2, 4, 3], -1.3, 1.3)
        args = {"mode": mode, "padding_mode": padding, "align_corners": align}
        g.nn_case(name, "grid_sample", lambda x, grid, a=args: F.grid_sample(x, grid, **a), [x, grid], args,
                  grads=(0, 1), rtol=1e-5, atol=1e-6, grad_rtol=1e-5, grad_atol=1e-5)
    name = "grid_sample_f64_reflection"
    args = {"mode": "bilinear", "padding_mode": "reflection", "align_corners": False}
    g.nn_case(name, "grid_sample", lambda x, grid: F.grid_sample(x, grid, **args),
              [randn(f"{name}.x", [1, 2, 4, 6], f64), uniform(f"{name}.grid", [1, 3, 5, 2], -2.5, 2.5, f64)], args,
              grads=(0, 1))
    for size, align in (([2, 3, 4, 5], False), ([2, 3, 4, 5], True), ([1, 2, 3, 4, 2], False),
                        ([2, 1, 2, 3, 4], True)):
        k = len(size) - 2
        name = f"affine_grid_{k}d_{'align' if align else 'noalign'}"
        args = {"size": size, "align_corners": align}
        g.nn_case(name, "affine_grid", lambda t, a=args: F.affine_grid(t, a["size"], align_corners=a["align_corners"]),
                  [randn(f"{name}.theta", [size[0], k, k + 1])], args, grads=(0,),
                  rtol=1e-5, atol=1e-6, grad_rtol=1e-5, grad_atol=1e-5)
    return g
