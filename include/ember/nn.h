// ember::nn: modules, containers, layers, init, utilities and the functional
// ops, as torch::nn. Including this header gives all of them.
//
//   namespace nn = ember::nn;
//   nn::Sequential model(nn::Linear(784, 128), nn::ReLU(), nn::Linear(128, 10));
//   ember::Tensor loss = nn::CrossEntropyLoss()(model(x), labels);
#pragma once

#include "ember/nn/functional.h"
#include "ember/nn/init.h"
#include "ember/nn/module.h"
#include "ember/nn/modules/activation.h"
#include "ember/nn/modules/attention.h"
#include "ember/nn/modules/container.h"
#include "ember/nn/modules/conv.h"
#include "ember/nn/modules/dropout.h"
#include "ember/nn/modules/embedding.h"
#include "ember/nn/modules/flatten.h"
#include "ember/nn/modules/fold.h"
#include "ember/nn/modules/linear.h"
#include "ember/nn/modules/loss.h"
#include "ember/nn/modules/norm.h"
#include "ember/nn/modules/pooling.h"
#include "ember/nn/modules/rnn.h"
#include "ember/nn/modules/rnn_cell.h"
#include "ember/nn/modules/transformer.h"
#include "ember/nn/utils.h"
