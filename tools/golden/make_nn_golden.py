#!/usr/bin/python3
"""Golden values for ember's neural-network ops: forward and gradients, from PyTorch.

Writes tests/golden/nn/<family>.safetensors, one file per module
tools/golden/nn_<family>.py (each defines build()). The case format is in
tests/golden_nn.h; the conventions (seeding, determinism) are those of
make_golden.py, described in tools/golden/README.md.

    /usr/bin/python3 tools/golden/make_nn_golden.py            # every family
    /usr/bin/python3 tools/golden/make_nn_golden.py conv norm  # some
"""

import argparse
import glob
import importlib
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def main():
    families = sorted(os.path.basename(p)[3:-3] for p in glob.glob(os.path.join(HERE, "nn_*.py"))
                      if os.path.basename(p) != "nn_golden.py")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("families", nargs="*", default=families, help=f"some of: {' '.join(families)}")
    parser.add_argument("--out", default=os.path.join(HERE, "..", "..", "tests", "golden", "nn"))
    opts = parser.parse_args()
    os.makedirs(opts.out, exist_ok=True)
    for family in opts.families:
        g = importlib.import_module(f"nn_{family}").build()
        path = g.write(opts.out)
        print(f"{os.path.relpath(path)}: {len(g.metadata)} cases, {len(g.tensors)} tensors, "
              f"{os.path.getsize(path)} bytes (torch {torch.__version__})")


if __name__ == "__main__":
    main()
