"""The case format of the neural-network golden files (tests/golden_nn.h).

A family module (tools/golden/nn_<family>.py) defines build() -> NnGoldenFile;
tools/golden/make_nn_golden.py runs them and writes tests/golden/nn/.
"""

import json

import torch

from make_golden import GoldenFile, default_tolerance, randn


def require_torch(version, family):
    """Families made with operators torch 1.13 lacks need a newer torch."""
    have = tuple(int(x) for x in torch.__version__.split("+")[0].split(".")[:2])
    if have < version:
        raise SystemExit(f"the {family} family needs torch >= {'.'.join(map(str, version))} "
                         f"(this is {torch.__version__}): see tools/golden/README.md")


class NnGoldenFile(GoldenFile):
    def nn_case(self, name, op, fn, inputs, args=None, grads=(), rtol=None, atol=None, grad_rtol=None,
                grad_atol=None):
        """Runs fn(*inputs) in torch. Stores the inputs, the outputs and, when
        `grads` lists input positions, a random cotangent per floating output
        and the gradient of sum(out * cot) w.r.t. each listed input.
        `args` is what ember's runner reads (tests/golden_nn_<family>.cpp)."""
        assert name not in self.metadata, f"duplicate case {name}"
        assert "." not in name
        leaves = [t.detach().clone().requires_grad_(i in grads) for i, t in enumerate(inputs)]
        outs = fn(*leaves)
        if not isinstance(outs, (list, tuple)):
            outs = [outs]
        default_rtol, default_atol = default_tolerance(outs[0].dtype)
        spec = {
            "op": op,
            "args": args or {},
            "grads": list(grads),
            "rtol": float(default_rtol if rtol is None else rtol),
            "atol": float(default_atol if atol is None else atol),
        }
        if grad_rtol is not None:
            spec["grad_rtol"] = float(grad_rtol)
        if grad_atol is not None:
            spec["grad_atol"] = float(grad_atol)
        self.metadata[name] = json.dumps(spec, separators=(",", ":"), allow_nan=False)
        for i, t in enumerate(inputs):
            self.tensors[f"{name}.in{i}"] = t.detach()
        for i, t in enumerate(outs):
            self.tensors[f"{name}.out{i}"] = t.detach()
        if not grads:
            return
        loss = 0
        for i, t in enumerate(outs):
            if not t.dtype.is_floating_point:
                break  # floating outputs come first (e.g. max_pool2d's values, then its indices)
            cot = randn(f"{name}.cot{i}", list(t.shape), t.dtype)
            self.tensors[f"{name}.cot{i}"] = cot
            loss = loss + (t * cot).sum()
        got = torch.autograd.grad(loss, [leaves[j] for j in grads], allow_unused=True)
        for j, g in zip(grads, got):
            self.tensors[f"{name}.grad{j}"] = torch.zeros_like(inputs[j]) if g is None else g.detach()
