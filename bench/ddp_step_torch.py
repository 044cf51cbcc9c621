"""PyTorch's side of bench/ddp_step.cpp: one DistributedDataParallel training
step of the same MLP (784-256-128-10, float32, batch 64 per rank, SGD),
2 processes (gloo backend) x 1 thread; the median of the slowest rank's step
time, and the same step without the all-reduce (no_sync).

    python3 bench/ddp_step_torch.py [--nproc 2]
"""
import argparse
import os
import socket
import statistics
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch import nn

WARMUP, STEPS = 20, 300


def time_steps(ddp, opt, x, y, distributed):
    times = []
    loss_fn = nn.CrossEntropyLoss()
    for i in range(WARMUP + STEPS):
        dist.barrier()
        t0 = time.perf_counter()
        opt.zero_grad()
        if distributed:
            loss_fn(ddp(x), y).backward()
        else:
            with ddp.no_sync():
                loss_fn(ddp(x), y).backward()
        opt.step()
        t = time.perf_counter() - t0
        if i < WARMUP:
            continue
        slowest = torch.tensor([t], dtype=torch.float64)
        dist.all_reduce(slowest, op=dist.ReduceOp.MAX)
        times.append(slowest.item())
    return statistics.median(times)


def worker(rank, world, port):
    torch.set_num_threads(1)
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=world)
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 128), nn.ReLU(), nn.Linear(128, 10))
    ddp = nn.parallel.DistributedDataParallel(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x, y = torch.randn(64, 784), torch.randint(0, 10, (64,))
    local = time_steps(ddp, opt, x, y, False)
    step = time_steps(ddp, opt, x, y, True)
    if rank == 0:
        print(f"DDP step, MLP 784-256-128-10, batch 64 per rank, torch {torch.__version__} gloo, {world} ranks x 1 thread")
        print(f"step {step * 1e6:.1f} us (median of {STEPS}, slowest rank), without the all-reduce {local * 1e6:.1f} us")
    dist.destroy_process_group()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--nproc", type=int, default=2)
    args = parser.parse_args()
    mp.spawn(worker, args=(args.nproc, free_port()), nprocs=args.nproc)
