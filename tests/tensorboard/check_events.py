#!/usr/bin/env python3
"""Reads the event files that ember writes with the tensorboard package.

Runs the writer program (tests/tensorboard/write_events.cpp) into a fresh
temporary folder, checks every record's CRC-32C with TensorBoard's own
record reader, then loads the runs with TensorBoard's EventAccumulator and
checks tags, steps, wall times and values.

usage: check_events.py WRITER
"""
import math
import pathlib
import subprocess
import sys
import tempfile
import time

from tensorboard.backend.event_processing import event_accumulator
from tensorboard.compat.tensorflow_stub import errors, pywrap_tensorflow

failures = []
checks = 0


def check(ok, what):
    global checks
    checks += 1
    print(("ok    " if ok else "FAIL  ") + what)
    if not ok:
        failures.append(what)


def records(path):
    """Every record of one file through TensorBoard's reader, which checks both CRCs."""
    reader = pywrap_tensorflow.PyRecordReader_New(str(path))
    count = 0
    while True:
        try:
            reader.GetNext()
        except errors.OutOfRangeError:
            return count
        count += 1


def load(folder):
    acc = event_accumulator.EventAccumulator(
        str(folder), size_guidance={event_accumulator.SCALARS: 0, event_accumulator.HISTOGRAMS: 0})
    acc.Reload()
    return acc


def check_scalars(folder):
    files = sorted(folder.glob("events.out.tfevents.*"))
    check(len(files) == 1, f"{folder.name}: one event file (got {len(files)})")
    check(records(files[0]) == 1 + 10 + 1 + 1, f"{folder.name}: 13 records with valid CRC-32C (file version + 12 summaries)")
    acc = load(folder)
    tags = acc.Tags()
    check(sorted(tags["scalars"]) == ["test/square", "test/third"], f"scalar tags {sorted(tags['scalars'])}")
    check(tags["histograms"] == ["test/hist"], f"histogram tags {tags['histograms']}")
    square = acc.Scalars("test/square")
    check([e.step for e in square] == list(range(10)), "test/square steps 0..9")
    check([e.value for e in square] == [float(s * s) for s in range(10)], "test/square values step^2")
    check([e.wall_time for e in square] == [1000.0 + s for s in range(10)], "test/square wall times 1000 + step")
    third = acc.Scalars("test/third")
    check(len(third) == 1 and third[0].step == 7, "test/third at step 7")
    # Stored as a 32-bit float, as TensorBoard does.
    check(abs(third[0].value - 1 / 3) < 1e-7 and third[0].value != 1 / 3, f"test/third = float32(1/3), got {third[0].value!r}")
    check(abs(third[0].wall_time - time.time()) < 3600, "test/third has the current wall time")
    hist = acc.Histograms("test/hist")
    check(len(hist) == 1 and hist[0].step == 5, "test/hist at step 5")
    h = hist[0].histogram_value
    check((h.min, h.max, h.num, h.sum) == (0.0, 99.0, 100.0, 4950.0), f"test/hist min/max/num/sum {h.min, h.max, h.num, h.sum}")
    check(h.sum_squares == sum(i * i for i in range(100)), "test/hist sum of squares")
    check(list(h.bucket) == [10.0] * 10, f"test/hist buckets {list(h.bucket)}")
    check(abs(h.bucket_limit[0] - 9.9) < 1e-9 and h.bucket_limit[-1] == 99.0, "test/hist bucket limits 9.9 .. 99")


def check_train(folder):
    files = sorted(folder.glob("events.out.tfevents.*"))
    check(len(files) == 1, f"{folder.name}: one event file (got {len(files)})")
    records(files[0])
    acc = load(folder)
    train_tags = ["train/accuracy", "train/loss", "train/lr", "train/samples_per_second"]
    epoch_tags = ["epoch/lr", "epoch/samples_per_second", "epoch/test_acc", "epoch/test_loss", "epoch/train_acc",
                  "epoch/train_loss"]
    tags = acc.Tags()
    check(sorted(tags["scalars"]) == sorted(train_tags + epoch_tags), f"train scalar tags {sorted(tags['scalars'])}")
    check(sorted(tags["histograms"]) == ["parameters/0.bias", "parameters/0.weight"],
          f"parameter histograms {sorted(tags['histograms'])}")
    for tag in train_tags:
        check([e.step for e in acc.Scalars(tag)] == [2, 4, 6, 8], f"{tag} at optimiser steps 2, 4, 6, 8")
    for tag in epoch_tags:
        check([e.step for e in acc.Scalars(tag)] == [4, 8], f"{tag} at the epochs' last steps 4, 8")
    check(all(abs(e.value - 0.1) < 1e-7 for e in acc.Scalars("train/lr") + acc.Scalars("epoch/lr")), "lr is 0.1")
    for tag in ["train/loss", "epoch/train_loss", "epoch/test_loss"]:
        check(all(math.isfinite(e.value) and e.value > 0 for e in acc.Scalars(tag)), f"{tag} finite and positive")
    for tag in ["train/accuracy", "epoch/train_acc", "epoch/test_acc"]:
        check(all(0 <= e.value <= 1 for e in acc.Scalars(tag)), f"{tag} in [0, 1]")
    # Each train/loss point is the mean of its 2 batches; the epoch's mean is the mean of its 2 points.
    loss = [e.value for e in acc.Scalars("train/loss")]
    epoch_loss = [e.value for e in acc.Scalars("epoch/train_loss")]
    check(all(abs((loss[2 * i] + loss[2 * i + 1]) / 2 - epoch_loss[i]) < 1e-5 for i in range(2)),
          f"train/loss points average to epoch/train_loss ({loss} vs {epoch_loss})")
    check(all(e.value > 0 for e in acc.Scalars("train/samples_per_second")), "samples/s positive")
    weight = acc.Histograms("parameters/0.weight")
    check([e.step for e in weight] == [4, 8] and all(e.histogram_value.num == 8 for e in weight),
          "parameters/0.weight: 8 values at steps 4, 8")


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    with tempfile.TemporaryDirectory(prefix="ember_tensorboard_") as out:
        subprocess.run([sys.argv[1], out], check=True)
        check_scalars(pathlib.Path(out) / "scalars")
        check_train(pathlib.Path(out) / "train")
    print(f"{checks - len(failures)} passed, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
