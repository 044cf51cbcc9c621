#!/usr/bin/python3
"""Golden models for ember's nn::Module: seeded PyTorch models, their state_dicts and logits.

Writes tests/golden/modules/{mlp,cnn}.safetensors. Each file holds
  state.<key>   the model's state_dict (PyTorch's key names),
  input         a fixed input batch,
  logits        the model's output for it, in eval mode,
and metadata "model" (PyTorch's printout of the architecture).
tests/golden_nn_modules.cpp builds the same architecture in ember, loads the
state with load_state_dict and compares the logits.

    /usr/bin/python3 tools/golden/make_module_golden.py [--out tests/golden/modules]

Deterministic like make_golden.py (README.md): fixed seeds, one thread,
files written in a fixed order.
"""

import argparse
import os
import sys

import torch
from torch import nn

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from make_golden import randn, write_safetensors  # noqa: E402

torch.set_num_threads(1)
torch.use_deterministic_algorithms(True)


def mlp():
    """784-64-10 with ReLU; the keys are 1.weight, 1.bias, 3.weight, 3.bias."""
    torch.manual_seed(5)
    return nn.Sequential(nn.Flatten(), nn.Linear(784, 64), nn.ReLU(), nn.Linear(64, 10))


def cnn():
    """A small Fashion-MNIST-shaped CNN with a BatchNorm2d whose running
    statistics have been updated by two training batches."""
    torch.manual_seed(6)
    model = nn.Sequential(
        nn.Conv2d(1, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),  # (N, 8, 14, 14)
        nn.Conv2d(8, 16, 3), nn.ReLU(), nn.MaxPool2d(2),                               # (N, 16, 6, 6)
        nn.Flatten(), nn.Linear(16 * 6 * 6, 10))
    model.train()
    with torch.no_grad():
        for step in range(2):
            model(randn(f"cnn.warmup{step}", [16, 1, 28, 28]))
    return model


def build(name, model):
    model.eval()
    x = randn(f"{name}.input", [4, 1, 28, 28])
    with torch.no_grad():
        logits = model(x)
    tensors = {f"state.{key}": value.detach().clone() for key, value in model.state_dict().items()}
    tensors["input"] = x
    tensors["logits"] = logits
    return tensors, {"model": repr(model)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=os.path.join(HERE, "..", "..", "tests", "golden", "modules"))
    opts = parser.parse_args()
    os.makedirs(opts.out, exist_ok=True)
    for name, make in (("mlp", mlp), ("cnn", cnn)):
        tensors, metadata = build(name, make())
        path = os.path.join(opts.out, f"{name}.safetensors")
        write_safetensors(path, tensors, metadata)
        print(f"{os.path.relpath(path)}: {len(tensors)} tensors, {os.path.getsize(path)} bytes "
              f"(torch {torch.__version__})")


if __name__ == "__main__":
    main()
