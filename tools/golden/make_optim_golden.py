#!/usr/bin/python3
"""Golden trajectories of torch's optimisers and learning-rate schedulers.

Writes tests/golden/optim/optimizers.safetensors and
tests/golden/optim/schedulers.safetensors, read by tests/golden_optim.cpp:

    /usr/bin/python3 tools/golden/make_optim_golden.py [--out tests/golden/optim]

Optimiser case NAME (metadata: JSON with "optimizer", "groups", "steps",
"rtol", "atol"): fixed parameters NAME.param<i>, a gradient NAME.grad<k>.<i>
for each step k and parameter i (absent: the parameter has no gradient at
that step and is skipped), and the parameters after each step,
NAME.step<k>.<i>. "groups" lists each group's parameter numbers and its full
options under ember's option names (lr, momentum, beta1, beta2, ...).

Scheduler case NAME (metadata: "scheduler", "args" with torch's argument
names, "optimizer", "lrs" (each group's starting lr), "steps"): NAME.lr, a
float64 [steps + 1, groups] tensor of the lrs after the constructor and
after each step; OneCycleLR cases add NAME.momentum (the cycled momentum or
beta1, same layout); ReduceLROnPlateau cases add NAME.metrics [steps], the
metric passed to each step; SequentialLR's "args" hold "schedulers" (each
{"scheduler", "args"}) and "milestones".

Deterministic like make_golden.py: inputs come from generators seeded by
the case name, torch runs on one thread, files are written in a fixed order.
"""

import argparse
import json
import os
import warnings

import torch

from make_golden import GoldenFile, randn

HERE = os.path.dirname(os.path.abspath(__file__))
# SequentialLR restarts a scheduler with step(0), which torch reports as deprecated.
warnings.filterwarnings("ignore", category=UserWarning, module="torch.optim.lr_scheduler")
SHAPES = [[5, 7], [7], [2, 1, 3]]  # 35 elements: SIMD blocks and a tail; 7; 6
STEPS = 5

# torch's option names -> ember's (betas become beta1, beta2).
TORCH_CLASSES = {
    "SGD": torch.optim.SGD,
    "Adam": torch.optim.Adam,
    "AdamW": torch.optim.AdamW,
    "RMSprop": torch.optim.RMSprop,
    "Adagrad": torch.optim.Adagrad,
}


def ember_options(group):
    out = {}
    for key, value in group.items():
        if key in ("params", "foreach", "differentiable", "capturable", "fused", "initial_lr"):
            continue
        if key == "betas":
            out["beta1"], out["beta2"] = float(value[0]), float(value[1])
        elif isinstance(value, bool):
            out[key] = value
        else:
            out[key] = float(value)
    return out


def optimizer_case(g, name, optimizer, options, dtype=torch.float32, groups=None, missing=(), rtol=None, atol=None):
    """groups: list of (param numbers, option overrides); missing: (step, param) pairs without a gradient."""
    params = [randn(f"{name}.param{i}", shape, dtype).requires_grad_() for i, shape in enumerate(SHAPES)]
    for i, p in enumerate(params):
        g.tensors[f"{name}.param{i}"] = p.detach().clone()
    groups = groups or [(list(range(len(params))), {})]
    torch_groups = [dict(params=[params[i] for i in ids], **overrides) for ids, overrides in groups]
    opt = TORCH_CLASSES[optimizer](torch_groups, foreach=False, **options)
    for k in range(STEPS):
        for i, p in enumerate(params):
            if (k, i) in missing:
                p.grad = None
                continue
            grad = randn(f"{name}.grad{k}.{i}", SHAPES[i], dtype)
            g.tensors[f"{name}.grad{k}.{i}"] = grad
            p.grad = grad.clone()
        opt.step()
        for i, p in enumerate(params):
            g.tensors[f"{name}.step{k}.{i}"] = p.detach().clone()
    default_tol = 1e-12 if dtype == torch.float64 else 1e-6
    spec = {
        "optimizer": optimizer,
        "groups": [{"params": ids, "options": ember_options(tg)} for (ids, _), tg in zip(groups, opt.param_groups)],
        "steps": STEPS,
        "rtol": rtol or default_tol,
        "atol": atol or default_tol,
    }
    g.metadata[name] = json.dumps(spec, separators=(",", ":"), allow_nan=False)


def build_optimizers():
    g = GoldenFile("optimizers")
    f64 = torch.float64
    # SGD
    optimizer_case(g, "sgd_plain", "SGD", dict(lr=0.1))
    optimizer_case(g, "sgd_momentum", "SGD", dict(lr=0.1, momentum=0.9))
    optimizer_case(g, "sgd_dampening_wd", "SGD", dict(lr=0.05, momentum=0.8, dampening=0.3, weight_decay=0.01))
    optimizer_case(g, "sgd_nesterov_wd", "SGD", dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=1e-3))
    optimizer_case(g, "sgd_maximize", "SGD", dict(lr=0.1, momentum=0.5, maximize=True))
    optimizer_case(g, "sgd_groups", "SGD", dict(lr=0.1, momentum=0.9),
                   groups=[([0, 2], {}), ([1], dict(lr=0.01, momentum=0.0))])
    optimizer_case(g, "sgd_momentum_skips", "SGD", dict(lr=0.1, momentum=0.9), missing={(0, 1), (2, 2)})
    optimizer_case(g, "sgd_nesterov_f64", "SGD", dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=1e-3),
                   dtype=f64)
    # Adam
    optimizer_case(g, "adam_default", "Adam", dict(lr=1e-2))
    optimizer_case(g, "adam_wd_betas", "Adam", dict(lr=1e-2, betas=(0.8, 0.99), eps=1e-6, weight_decay=0.1))
    optimizer_case(g, "adam_amsgrad", "Adam", dict(lr=1e-2, amsgrad=True))
    optimizer_case(g, "adam_maximize", "Adam", dict(lr=1e-2, maximize=True, weight_decay=0.01))
    optimizer_case(g, "adam_groups", "Adam", dict(lr=1e-2),
                   groups=[([1], dict(lr=3e-2, amsgrad=True)), ([0, 2], dict(weight_decay=0.05))])
    optimizer_case(g, "adam_skips", "Adam", dict(lr=1e-2), missing={(0, 0), (1, 0), (3, 2)})
    optimizer_case(g, "adam_amsgrad_f64", "Adam", dict(lr=1e-2, amsgrad=True, weight_decay=0.01), dtype=f64)
    # AdamW
    optimizer_case(g, "adamw_default", "AdamW", dict(lr=1e-2))
    optimizer_case(g, "adamw_amsgrad", "AdamW", dict(lr=1e-2, weight_decay=0.1, amsgrad=True))
    optimizer_case(g, "adamw_maximize", "AdamW", dict(lr=1e-2, maximize=True, betas=(0.85, 0.95)))
    optimizer_case(g, "adamw_f64", "AdamW", dict(lr=1e-2, weight_decay=0.05), dtype=f64)
    # RMSprop
    optimizer_case(g, "rmsprop_default", "RMSprop", dict(lr=1e-2))
    optimizer_case(g, "rmsprop_centered", "RMSprop", dict(lr=1e-2, centered=True))
    optimizer_case(g, "rmsprop_momentum_wd", "RMSprop", dict(lr=1e-2, momentum=0.9, weight_decay=0.01, alpha=0.9))
    optimizer_case(g, "rmsprop_centered_momentum", "RMSprop", dict(lr=1e-2, momentum=0.5, centered=True, eps=1e-6))
    optimizer_case(g, "rmsprop_maximize", "RMSprop", dict(lr=1e-2, maximize=True))
    optimizer_case(g, "rmsprop_centered_momentum_f64", "RMSprop", dict(lr=1e-2, momentum=0.5, centered=True),
                   dtype=f64)
    # Adagrad
    optimizer_case(g, "adagrad_default", "Adagrad", dict(lr=1e-1))
    optimizer_case(g, "adagrad_decay_wd_init", "Adagrad",
                   dict(lr=1e-1, lr_decay=0.1, weight_decay=0.01, initial_accumulator_value=0.5, eps=1e-8))
    optimizer_case(g, "adagrad_maximize_skips", "Adagrad", dict(lr=1e-1, lr_decay=0.05, maximize=True),
                   missing={(1, 1)})
    optimizer_case(g, "adagrad_f64", "Adagrad", dict(lr=1e-1, lr_decay=0.1, weight_decay=0.01), dtype=f64)
    return g


# ---------------------------------------------------------------------------
# Schedulers

SCHEDULER_STEPS = 30
SCHEDULERS = torch.optim.lr_scheduler


def make_scheduler(opt, kind, args):
    if kind == "SequentialLR":
        parts = [make_scheduler(opt, s["scheduler"], s["args"]) for s in args["schedulers"]]
        return SCHEDULERS.SequentialLR(opt, parts, milestones=args["milestones"])
    return getattr(SCHEDULERS, kind)(opt, **args)


def scheduler_case(g, name, kind, args, optimizer="SGD", lrs=(0.1, 0.05), metrics=None):
    params = [torch.zeros(2, requires_grad=True) for _ in lrs]
    options = dict(momentum=0.9) if optimizer == "SGD" else {}
    opt = TORCH_CLASSES[optimizer]([dict(params=[p], lr=lr) for p, lr in zip(params, lrs)], **options)
    sched = make_scheduler(opt, kind, args)
    momentum_key = "betas" if optimizer in ("Adam", "AdamW") else "momentum"

    def momenta():
        return [grp[momentum_key][0] if momentum_key == "betas" else grp[momentum_key] for grp in opt.param_groups]

    lr_rows, momentum_rows = [[grp["lr"] for grp in opt.param_groups]], [momenta()]
    for k in range(SCHEDULER_STEPS):
        opt.step()  # no gradients: only the order of calls matters to torch
        if metrics is not None:
            sched.step(metrics[k])
        else:
            sched.step()
        lr_rows.append([grp["lr"] for grp in opt.param_groups])
        momentum_rows.append(momenta())
    g.tensors[f"{name}.lr"] = torch.tensor(lr_rows, dtype=torch.float64)
    if kind == "OneCycleLR":
        g.tensors[f"{name}.momentum"] = torch.tensor(momentum_rows, dtype=torch.float64)
    if metrics is not None:
        g.tensors[f"{name}.metrics"] = torch.tensor(metrics, dtype=torch.float64)
    spec = {"scheduler": kind, "args": args, "optimizer": optimizer, "lrs": list(lrs), "steps": SCHEDULER_STEPS}
    g.metadata[name] = json.dumps(spec, separators=(",", ":"), allow_nan=False)


def build_schedulers():
    g = GoldenFile("schedulers")
    scheduler_case(g, "step_lr", "StepLR", dict(step_size=7, gamma=0.5))
    scheduler_case(g, "multistep_lr", "MultiStepLR", dict(milestones=[3, 8, 8, 20], gamma=0.3))
    scheduler_case(g, "exponential_lr", "ExponentialLR", dict(gamma=0.9))
    scheduler_case(g, "cosine_lr", "CosineAnnealingLR", dict(T_max=10, eta_min=0.001))
    scheduler_case(g, "cosine_lr_zero_min", "CosineAnnealingLR", dict(T_max=30))
    scheduler_case(g, "linear_lr", "LinearLR", dict(start_factor=0.25, end_factor=1.0, total_iters=8))
    scheduler_case(g, "linear_lr_decay", "LinearLR", dict(start_factor=1.0, end_factor=0.1, total_iters=12))
    scheduler_case(g, "onecycle_cos", "OneCycleLR", dict(max_lr=[0.5, 0.2], total_steps=30), optimizer="Adam")
    scheduler_case(g, "onecycle_linear_three_phase", "OneCycleLR",
                   dict(max_lr=0.4, total_steps=30, anneal_strategy="linear", three_phase=True, pct_start=0.25,
                        div_factor=10.0, final_div_factor=100.0, base_momentum=0.8, max_momentum=0.9))
    scheduler_case(g, "sequential_linear_cosine", "SequentialLR",
                   dict(schedulers=[dict(scheduler="LinearLR", args=dict(start_factor=0.1, total_iters=5)),
                                    dict(scheduler="CosineAnnealingLR", args=dict(T_max=25))],
                        milestones=[5]))
    scheduler_case(g, "sequential_three", "SequentialLR",
                   dict(schedulers=[dict(scheduler="ExponentialLR", args=dict(gamma=0.9)),
                                    dict(scheduler="StepLR", args=dict(step_size=3, gamma=0.5)),
                                    dict(scheduler="MultiStepLR", args=dict(milestones=[2, 4], gamma=0.1))],
                        milestones=[6, 18]))
    # A loss that improves, stalls, improves a little (below the threshold), then rises.
    metrics = [1.0 / (k + 1) if k < 8 else 0.125 - 1e-6 * (k - 7) if k < 20 else 0.125 + 0.01 * k
               for k in range(SCHEDULER_STEPS)]
    scheduler_case(g, "plateau_min_rel", "ReduceLROnPlateau", dict(factor=0.5, patience=2, cooldown=1),
                   metrics=metrics)
    scheduler_case(g, "plateau_min_abs_min_lr", "ReduceLROnPlateau",
                   dict(factor=0.1, patience=1, threshold=1e-3, threshold_mode="abs", min_lr=[0.002, 0.001]),
                   metrics=metrics)
    scheduler_case(g, "plateau_max", "ReduceLROnPlateau", dict(mode="max", factor=0.5, patience=3),
                   metrics=[-m for m in metrics])
    return g


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=os.path.join(HERE, "..", "..", "tests", "golden", "optim"))
    opts = parser.parse_args()
    os.makedirs(opts.out, exist_ok=True)
    for g in (build_optimizers(), build_schedulers()):
        path = g.write(opts.out)
        print(f"{os.path.relpath(path)}: {len(g.metadata)} cases, {len(g.tensors)} tensors, "
              f"{os.path.getsize(path)} bytes (torch {torch.__version__})")


if __name__ == "__main__":
    main()
