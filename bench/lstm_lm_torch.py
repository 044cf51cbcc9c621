#!/usr/bin/env python3
"""An LSTM language-model training step, PyTorch 2.x against ember (bench/lstm_lm.cpp), interleaved.

    V/bin/python bench/lstm_lm_torch.py --ember build/<dir>/bench/lstm_lm --threads 1 [--rounds 9 --steps 3]
                                        [--part lstm]

V is a venv with PyTorch 2.x from PyPI (docs/performance.md). Model, as lstm_lm.cpp:
embedding(10000, 256) -> 2-layer LSTM(256 -> 512) -> linear(512 -> 10000), tokens
(seq 35, batch 32), cross entropy against the next tokens, plain SGD; a step is
zero_grad, forward, loss, backward, step. ember runs as a child process in
--serve mode; each round times `steps` torch steps, then `steps` ember steps
(A/B/A/B), so both see the same machine state. Prints the medians over all
steps, their min-max, and the ratio ember / torch. --part lstm times the
recurrent part alone: the LSTM on fixed embedded tokens, loss sum(output),
SGD on the LSTM's parameters.
"""

import argparse
import statistics
import subprocess
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

VOCAB, EMBED, HIDDEN, LAYERS, SEQ, BATCH = 10000, 256, 512, 2, 35, 32


class LanguageModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, EMBED)
        self.lstm = nn.LSTM(EMBED, HIDDEN, LAYERS)
        self.head = nn.Linear(HIDDEN, VOCAB)

    def forward(self, ids):
        out, _ = self.lstm(self.embed(ids))
        return self.head(out.reshape(SEQ * BATCH, HIDDEN))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ember", required=True, help="the lstm_lm binary")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--part", choices=("all", "lstm"), default="all")
    opts = parser.parse_args()

    torch.set_num_threads(opts.threads)
    torch.manual_seed(0)
    model = LanguageModel()
    lstm_only = opts.part == "lstm"
    opt = torch.optim.SGD(model.lstm.parameters() if lstm_only else model.parameters(), lr=0.1)
    tokens = torch.randint(0, VOCAB, (SEQ + 1, BATCH))
    ids, targets = tokens[:SEQ], tokens[1:].reshape(-1)
    embedded = model.embed(ids).detach()

    def torch_step():
        t0 = time.perf_counter()
        opt.zero_grad()
        if lstm_only:
            model.lstm(embedded)[0].sum().backward()
        else:
            F.cross_entropy(model(ids), targets).backward()
        opt.step()
        return (time.perf_counter() - t0) * 1e3

    for _ in range(3):
        torch_step()
    ember = subprocess.Popen([opts.ember, "--threads", str(opts.threads), "--part", opts.part, "--serve"],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert ember.stdout.readline().strip() == "ready"
    t_torch, t_ember = [], []
    for _ in range(opts.rounds):
        t_torch += [torch_step() for _ in range(opts.steps)]
        ember.stdin.write(f"{opts.steps}\n")
        ember.stdin.flush()
        t_ember += [float(v) for v in ember.stdout.readline().split()]
    ember.stdin.write("0\n")
    ember.stdin.close()
    ember.wait()

    mt, me = statistics.median(t_torch), statistics.median(t_ember)
    what = "LSTM fwd + bwd + SGD" if lstm_only else "LSTM LM step"
    print(f"{what} (seq {SEQ}, batch {BATCH}, vocab {VOCAB}, 2 x LSTM {EMBED}->{HIDDEN}), "
          f"{opts.threads} thread(s), {len(t_torch)} steps each, torch {torch.__version__}")
    print(f"  torch  median {mt:7.1f} ms  (min {min(t_torch):.1f}, max {max(t_torch):.1f})")
    print(f"  ember  median {me:7.1f} ms  (min {min(t_ember):.1f}, max {max(t_ember):.1f})")
    print(f"  ember / torch = {me / mt:.2f}")


if __name__ == "__main__":
    main()
