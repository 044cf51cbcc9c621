"""PyTorch's side of bench/allreduce.cpp: all_reduce (sum, float32) between
2 processes of torch.distributed (gloo backend, 1 thread each), 1 KiB to
64 MiB, median time per size; the same columns as ember's.

    python3 bench/allreduce_torch.py [--nproc 2]
"""
import argparse
import os
import socket
import statistics
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def sizes():
    b = 1024
    while b <= 64 << 20:
        yield b
        if b == 16 << 20:
            yield 25 << 20  # DDP's default bucket
        b *= 4


def time_all_reduce(t):
    for _ in range(3):
        dist.all_reduce(t)
    # Rank 0 picks the repetitions (~0.3 s), every rank runs as many.
    t0 = time.perf_counter()
    dist.all_reduce(t)
    reps = torch.tensor([min(2000, max(5, int(0.3 / max(time.perf_counter() - t0, 1e-6))))])
    dist.broadcast(reps, 0)
    times = []
    for _ in range(int(reps.item())):
        t0 = time.perf_counter()
        dist.all_reduce(t)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def worker(rank, world, port):
    torch.set_num_threads(1)
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=world)
    if rank == 0:
        print(f"all_reduce (sum, float32), torch {torch.__version__} gloo, {world} processes")
        print(f"{'bytes':>10} {'time (us)':>12} {'algbw GB/s':>12} {'busbw GB/s':>12}")
    for b in sizes():
        t = time_all_reduce(torch.ones(b // 4))
        algbw = b / t / 1e9
        if rank == 0:
            print(f"{b:>10} {t * 1e6:>12.1f} {algbw:>12.3f} {algbw * 2 * (world - 1) / world:>12.3f}", flush=True)
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
