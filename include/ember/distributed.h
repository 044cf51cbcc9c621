// Distributed training: stores, process groups over Gloo and MPI,
// DistributedDataParallel and DistributedSampler (docs/distributed.md).
#pragma once

#include "ember/data/distributed_sampler.h"
#include "ember/distributed/environment.h"
#include "ember/distributed/process_group.h"
#include "ember/distributed/store.h"
#include "ember/nn/parallel/distributed.h"
