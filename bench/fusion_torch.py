"""PyTorch's side of bench/fusion.cpp: the chain ((x*2+1).relu()*y).exp() on
x, y of 16M floats, eager and under torch.compile (Inductor generates and
compiles C++ for it), on 1 and 2 threads; medians of 21 runs after warm-up.
Run it right after build/<dir>/bench/fusion, on the same machine:

    build/bench-venv/bin/python bench/fusion_torch.py
"""
import statistics
import time

import torch


def chain(x, y):
    return ((x * 2 + 1).relu() * y).exp()


def median_ms(fn, reps=21):
    fn()
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def main():
    n = 16 << 20
    torch.manual_seed(0)
    x = torch.randn(n)
    y = torch.randn(n) * 0.1
    compiled = torch.compile(chain)
    compiled(x, y)  # compiles once, outside the timing
    for threads in (1, 2):
        torch.set_num_threads(threads)
        eager = median_ms(lambda: chain(x, y))
        comp = median_ms(lambda: compiled(x, y))
        print(f"torch {torch.__version__} threads {threads}  eager {eager:7.2f} ms  compiled {comp:7.2f} ms")


if __name__ == "__main__":
    main()
