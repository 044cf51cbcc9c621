// ember::nn::functional: the neural-network ops as functions, as in
// torch.nn.functional. Each family has its own header; this one includes all.
//
//   namespace F = ember::nn::functional;
//   Tensor p = F::softmax(logits, /*dim=*/-1);
#pragma once

#include "ember/mode_names.h"
#include "ember/nn/functional/activation.h"
#include "ember/nn/functional/attention.h"
#include "ember/nn/functional/conv.h"
#include "ember/nn/functional/distance.h"
#include "ember/nn/functional/fold.h"
#include "ember/nn/functional/loss.h"
#include "ember/nn/functional/norm.h"
#include "ember/nn/functional/pooling.h"
#include "ember/nn/functional/vision.h"
