#!/usr/bin/python3
"""Golden values for ember's nn layers (modules), from seeded PyTorch modules.

Writes tests/golden/modules/layers.safetensors, read by tests/golden_nn_layers.cpp.

    /usr/bin/python3 tools/golden/make_layers_golden.py [--out tests/golden/modules]

A case NAME stores:
  NAME.state.KEY       the module's state_dict before the call (KEY as PyTorch names it)
  NAME.in.ARG          the forward arguments (input; query, key, value; masks)
  NAME.out.K           the results (out.0, and out.1 for MultiheadAttention's weights)
  NAME.cot.K           a cotangent per floating result
  NAME.grad_in.ARG     the gradient of sum_K sum(out.K * cot.K) w.r.t. each floating argument
  NAME.grad_param.KEY  ... and w.r.t. each parameter
  NAME.after.KEY       the state_dict after the call (cases with "train": true; BatchNorm's
                       running statistics change)
  NAME.eval_in.input, NAME.eval_out.0   (batchnorm only) a second call in eval mode, after the step
The metadata maps NAME to {"module", "options", "train", "rtol", "atol", "grad_rtol", "grad_atol"};
"options" are the constructor arguments, named as in PyTorch.

Parameters start from torch's seeded default init; one-dimensional ones (biases,
norm weights) get noise added so that a wrong bias or a missing affine shows.
Modules are in eval mode unless "train" (dropout off), and the inputs require
grad, so torch 1.13 never takes its fused inference fast path.
"""

import argparse
import json
import os
import sys
import zlib

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_golden import randint, randn, uniform, write_safetensors  # noqa: E402  (also sets threads/determinism)


class LayersFile:
    def __init__(self):
        self.tensors = {}
        self.metadata = {}

    def case(self, name, module_name, options, make, inputs, train=False, rtol=1e-5, atol=1e-6, grad_rtol=1e-5,
             grad_atol=1e-5, call=None, eval_input=None):
        """make() builds the torch module; call(module, **inputs) runs it (default: module(**inputs))."""
        assert name not in self.metadata and "." not in name
        torch.manual_seed(zlib.crc32(name.encode()))
        m = make()
        with torch.no_grad():
            for key, p in m.named_parameters():
                if p.dim() == 1:
                    p.add_(randn(f"{name}.noise.{key}", list(p.shape), p.dtype, scale=0.2))
        m.train(train)
        for key, t in m.state_dict().items():
            self.tensors[f"{name}.state.{key}"] = t.detach().clone()
        leaves = {}
        for arg, t in inputs.items():
            self.tensors[f"{name}.in.{arg}"] = t
            leaves[arg] = t.detach().clone().requires_grad_(t.dtype.is_floating_point)
        outs = call(m, **leaves) if call else m(**leaves)
        outs = list(outs) if isinstance(outs, (tuple, list)) else [outs]
        loss = 0
        for k, out in enumerate(outs):
            self.tensors[f"{name}.out.{k}"] = out.detach()
            cot = randn(f"{name}.cot.{k}", list(out.shape), out.dtype)
            self.tensors[f"{name}.cot.{k}"] = cot
            loss = loss + (out * cot).sum()
        wrt_in = [a for a, t in leaves.items() if t.requires_grad]
        params = list(m.named_parameters())
        grads = torch.autograd.grad(loss, [leaves[a] for a in wrt_in] + [p for _, p in params])
        for a, g in zip(wrt_in, grads):
            self.tensors[f"{name}.grad_in.{a}"] = g
        for (key, _), g in zip(params, grads[len(wrt_in):]):
            self.tensors[f"{name}.grad_param.{key}"] = g
        if train:
            for key, t in m.state_dict().items():
                self.tensors[f"{name}.after.{key}"] = t.detach().clone()
        if eval_input is not None:
            m.eval()
            self.tensors[f"{name}.eval_in.input"] = eval_input
            with torch.no_grad():
                self.tensors[f"{name}.eval_out.0"] = m(eval_input)
        spec = {"module": module_name, "options": options, "train": train, "rtol": rtol, "atol": atol,
                "grad_rtol": grad_rtol, "grad_atol": grad_atol}
        self.metadata[name] = json.dumps(spec, separators=(",", ":"), allow_nan=False)


def build():
    g = LayersFile()

    # Conv2d: non-square kernel and stride, zero padding, bias.
    o = {"in_channels": 3, "out_channels": 4, "kernel_size": [3, 2], "stride": [2, 1], "padding": 1}
    g.case("conv2d", "Conv2d", o, lambda: nn.Conv2d(3, 4, (3, 2), stride=(2, 1), padding=1),
           {"input": randn("conv2d.x", [2, 3, 7, 6])})
    # Conv2d: "same" with dilation and groups, reflect padding, no bias.
    o = {"in_channels": 4, "out_channels": 6, "kernel_size": 3, "padding": "same", "dilation": 2, "groups": 2,
         "bias": False, "padding_mode": "reflect"}
    g.case("conv2d_same_groups_reflect", "Conv2d", o,
           lambda: nn.Conv2d(4, 6, 3, padding="same", dilation=2, groups=2, bias=False, padding_mode="reflect"),
           {"input": randn("conv2d_same.x", [2, 4, 6, 7])})

    # BatchNorm2d: one training step (running stats and num_batches_tracked
    # move), then an evaluation call that uses the updated running stats.
    def batchnorm():
        m = nn.BatchNorm2d(3)
        with torch.no_grad():
            m.running_mean.copy_(randn("bn.running_mean", [3], scale=0.3))
            m.running_var.copy_(uniform("bn.running_var", [3], 0.5, 1.5))
            m.num_batches_tracked.fill_(4)
        return m

    g.case("batchnorm2d_train", "BatchNorm2d", {"num_features": 3}, batchnorm,
           {"input": randn("bn.x", [4, 3, 5, 3], scale=2.0) + 0.5}, train=True,
           eval_input=randn("bn.eval_x", [2, 3, 4, 4]))

    # LayerNorm over the last two dims.
    g.case("layernorm", "LayerNorm", {"normalized_shape": [4, 5], "eps": 1e-5}, lambda: nn.LayerNorm([4, 5]),
           {"input": randn("ln.x", [2, 3, 4, 5])})

    # MultiheadAttention, batch_first, cross attention (L != S), key padding
    # mask, head-averaged weights returned.
    padding = torch.zeros(2, 6, dtype=torch.bool)
    padding[0, 4:] = True
    padding[1, 5:] = True
    g.case("mha_batch_first", "MultiheadAttention", {"embed_dim": 8, "num_heads": 2, "batch_first": True},
           lambda: nn.MultiheadAttention(8, 2, batch_first=True),
           {"query": randn("mha.q", [2, 5, 8]), "key": randn("mha.k", [2, 6, 8]), "value": randn("mha.v", [2, 6, 8]),
            "key_padding_mask": padding},
           call=lambda m, query, key, value, key_padding_mask: m(query, key, value, key_padding_mask=key_padding_mask,
                                                                 need_weights=True))
    # Self-attention, sequence first, a causal bool mask (True = masked out,
    # PyTorch's MultiheadAttention convention), no weights returned.
    causal = torch.ones(5, 5, dtype=torch.bool).triu(1)
    g.case("mha_self_causal", "MultiheadAttention", {"embed_dim": 12, "num_heads": 3},
           lambda: nn.MultiheadAttention(12, 3),
           {"x": randn("mha_self.x", [5, 2, 12]), "attn_mask": causal},
           call=lambda m, x, attn_mask: m(x, x, x, attn_mask=attn_mask, need_weights=False)[0])

    # TransformerEncoderLayer, post-norm (relu) and pre-norm (gelu), with a key padding mask.
    def encoder(norm_first, activation):
        return lambda: nn.TransformerEncoderLayer(16, 4, 32, dropout=0.1, activation=activation, batch_first=True,
                                                  norm_first=norm_first)

    padding = torch.zeros(3, 5, dtype=torch.bool)
    padding[1, 3:] = True
    for norm_first, act in ((False, "relu"), (True, "gelu")):
        name = "encoder_prenorm" if norm_first else "encoder_postnorm"
        o = {"d_model": 16, "nhead": 4, "dim_feedforward": 32, "dropout": 0.1, "activation": act,
             "batch_first": True, "norm_first": norm_first}
        g.case(name, "TransformerEncoderLayer", o, encoder(norm_first, act),
               {"src": randn(f"{name}.x", [3, 5, 16]), "src_key_padding_mask": padding})

    # Embedding with a padding row: its gradient stays zero.
    g.case("embedding", "Embedding", {"num_embeddings": 7, "embedding_dim": 4, "padding_idx": 2},
           lambda: nn.Embedding(7, 4, padding_idx=2), {"input": randint("emb.ids", [3, 4], 0, 7)})
    return g


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=os.path.join(here, "..", "..", "tests", "golden", "modules"))
    opts = parser.parse_args()
    os.makedirs(opts.out, exist_ok=True)
    g = build()
    path = os.path.join(opts.out, "layers.safetensors")
    write_safetensors(path, g.tensors, g.metadata)
    print(f"{os.path.relpath(path)}: {len(g.metadata)} cases, {len(g.tensors)} tensors, "
          f"{os.path.getsize(path)} bytes (torch {torch.__version__})")


if __name__ == "__main__":
    main()
