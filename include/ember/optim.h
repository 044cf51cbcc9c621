// ember::optim: optimisers and learning-rate schedulers, as torch::optim.
//
//   #include <ember/optim.h>
//   ember::optim::AdamW opt(model_params, ember::optim::AdamWOptions(1e-3));
//   ember::optim::CosineAnnealingLR sched(opt, /*T_max=*/100);
//   for (int step = 0; step < 100; ++step) {
//     opt.zero_grad();
//     loss_fn().backward();
//     opt.step();
//     sched.step();
//   }
//
// Every optimiser's step is one fused update per parameter group
// (core/op_decls_optim.h); docs/optim.md says how, and where ember differs
// from PyTorch.
#pragma once

#include "ember/optim/adagrad.h"
#include "ember/optim/adam.h"
#include "ember/optim/adamw.h"
#include "ember/optim/lr_scheduler.h"
#include "ember/optim/one_cycle_lr.h"
#include "ember/optim/optimizer.h"
#include "ember/optim/reduce_lr_on_plateau.h"
#include "ember/optim/rmsprop.h"
#include "ember/optim/sgd.h"
