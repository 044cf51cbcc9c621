"""The TorchScript side of bench/graph_inference.cpp.

For each DIR/<model>.safetensors that graph_inference wrote (an `ember train`
demo model's weights, its architecture in the file's metadata), builds the
same architecture in PyTorch, copies the weights in, traces it with
torch.jit.trace and freezes it with torch.jit.freeze (what a deploying user
does: parameters become constants, so the frozen-graph optimisations such as
folding the linear layers' transposes apply), and saves DIR/<model>.pt for
graph_inference to load with torch::jit::load.

    python3 bench/graph_inference_torch.py DIR     # Debian's python3-torch 1.13

Reads safetensors with the standard library only (the format is an 8-byte
header length, a JSON header, and the raw tensor bytes).
"""
import json
import pathlib
import struct
import sys

import torch
from torch import nn


def read_safetensors(path):
    data = path.read_bytes()
    (header_len,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + header_len])
    metadata = header.pop("__metadata__", {})
    body = data[8 + header_len :]
    tensors = {}
    for name, info in header.items():
        if info["dtype"] != "F32":
            raise ValueError(f"{path}: tensor {name} is {info['dtype']}, expected F32")
        begin, end = info["data_offsets"]
        flat = torch.frombuffer(bytearray(body[begin:end]), dtype=torch.float32)
        tensors[name] = flat.reshape(info["shape"]).clone()
    return tensors, metadata


# The architectures of tools/ember/train_models.cpp, with the same module
# names, so that ember's state-dict names are PyTorch's too.
def make_mlp(meta):
    hidden = [int(h) for h in meta["hidden"].split(",")]
    dropout = float(meta["dropout"])
    layers = [nn.Flatten(), nn.Linear(28 * 28, hidden[0]), nn.ReLU()]
    if dropout > 0:
        layers.append(nn.Dropout(dropout))
    layers += [nn.Linear(hidden[0], hidden[1]), nn.ReLU()]
    if dropout > 0:
        layers.append(nn.Dropout(dropout))
    layers.append(nn.Linear(hidden[1], 10))
    return nn.Sequential(*layers)


def make_cnn(meta):
    return nn.Sequential(
        nn.Conv2d(1, 32, 3), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(64 * 5 * 5, 128), nn.ReLU(), nn.Linear(128, 10))


class PatchTransformer(nn.Module):
    def __init__(self, meta):
        super().__init__()
        self.patch = int(meta["patch"])
        self.grid = 28 // self.patch
        d_model = int(meta["d_model"])
        self.embed = nn.Linear(self.patch * self.patch, d_model)
        self.position = nn.Parameter(torch.zeros(self.grid * self.grid, d_model))
        layer = nn.TransformerEncoderLayer(d_model, int(meta["heads"]), dim_feedforward=int(meta["dim_feedforward"]),
                                           dropout=float(meta["dropout"]), batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, int(meta["layers"]), enable_nested_tensor=False)
        self.norm = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, 10)

    def forward(self, images):
        g, p = self.grid, self.patch
        tokens = images.reshape(-1, g, p, g, p).permute(0, 1, 3, 2, 4).reshape(-1, g * g, p * p)
        x = self.embed(tokens) + self.position
        return self.head(self.norm(self.encoder(x).mean(1)))


MAKERS = {"mlp": make_mlp, "cnn": make_cnn, "transformer": PatchTransformer}


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: graph_inference_torch.py DIR  (DIR holds the .safetensors files graph_inference wrote)")
    directory = pathlib.Path(sys.argv[1])
    files = sorted(directory.glob("*.safetensors"))
    if not files:
        sys.exit(f"{directory}: no .safetensors files; run graph_inference {directory} first")
    torch.manual_seed(0)
    for path in files:
        state, meta = read_safetensors(path)
        model = MAKERS[meta["model"]](meta)
        model.load_state_dict(state, strict=True)  # every name and shape must match ember's
        model.eval()
        with torch.no_grad():
            traced = torch.jit.trace(model, torch.randn(2, 1, 28, 28))
            frozen = torch.jit.freeze(traced)
            out = path.with_suffix(".pt")
            frozen.save(str(out))
            # A batch other than the traced one must work: graph_inference runs 1 and 64.
            check = torch.randn(5, 1, 28, 28)
            diff = (frozen(check) - model(check)).abs().max().item()
        print(f"{out}: {meta['model']} traced and frozen (max abs difference to eager PyTorch at batch 5: {diff:.3g})")


if __name__ == "__main__":
    main()
