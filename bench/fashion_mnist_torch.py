#!/usr/bin/python3
"""The demo's model and schedule in PyTorch, to put `make demo` beside a reference.

Same as config/fashion_mnist_cnn.yaml with `ember train`: the CNN (conv 1->32 3x3,
ReLU, max-pool 2, conv 32->64 3x3, ReLU, max-pool 2, linear 1600->128, ReLU,
linear 128->10) with PyTorch's default init, Adam lr 1e-3, cosine annealing
stepped per batch over the whole run, batch 64 shuffled, images scaled to
[0, 1] and normalised with mean 0.2860 and std 0.3530, 2 threads. Prints the
seconds (training and the test pass, as `ember train` counts them) and the
test accuracy of each epoch.

    /usr/bin/python3 bench/fashion_mnist_torch.py [--epochs 8] [--threads 2]
    build/release/ember train --config config/fashion_mnist_cnn.yaml --set epochs=8   # ember's side
"""

import argparse
import gzip
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

DATA = "/usr/share/datasets/fashion-mnist"


def idx(path):
    with gzip.open(path, "rb") as f:
        raw = f.read()
    dims = raw[3]
    shape = tuple(int.from_bytes(raw[4 + 4 * i:8 + 4 * i], "big") for i in range(dims))
    return np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * dims).reshape(shape)


def split(name):
    images = torch.from_numpy(idx(f"{DATA}/{name}-images-idx3-ubyte.gz").copy()).float() / 255.0
    labels = torch.from_numpy(idx(f"{DATA}/{name}-labels-idx1-ubyte.gz").copy()).long()
    return ((images - 0.2860) / 0.3530).unsqueeze(1), labels


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=8)
    parser.add_argument("--threads", type=int, default=2)
    opts = parser.parse_args()
    torch.set_num_threads(opts.threads)
    torch.manual_seed(0)
    train_x, train_y = split("train")
    test_x, test_y = split("t10k")
    model = nn.Sequential(nn.Conv2d(1, 32, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(32, 64, 3), nn.ReLU(),
                          nn.MaxPool2d(2), nn.Flatten(), nn.Linear(1600, 128), nn.ReLU(), nn.Linear(128, 10))
    batch = 64
    steps = (len(train_x) + batch - 1) // batch
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=steps * opts.epochs)
    for epoch in range(1, opts.epochs + 1):
        start = time.perf_counter()
        model.train()
        order = torch.randperm(len(train_x))
        for i in range(steps):
            idx_b = order[i * batch:(i + 1) * batch]
            opt.zero_grad(set_to_none=True)
            F.cross_entropy(model(train_x[idx_b]), train_y[idx_b]).backward()
            opt.step()
            sched.step()
        model.eval()
        with torch.no_grad():
            correct = sum((model(test_x[j:j + 1000]).argmax(1) == test_y[j:j + 1000]).sum().item()
                          for j in range(0, len(test_x), 1000))
        seconds = time.perf_counter() - start  # train and test pass, as ember train's epoch time
        print(f"epoch {epoch}/{opts.epochs}  {seconds:.1f} s  test accuracy {correct / len(test_x):.4f}", flush=True)


if __name__ == "__main__":
    main()
