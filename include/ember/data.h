// ember::data: the data pipeline, as torch.utils.data plus the readers and
// transforms a training run needs.
//
//   #include <ember/data.h>
//   using namespace ember::data;
//   auto images = std::make_shared<IdxDataset>(mnist_files(kFashionMnistDir, /*train=*/true));
//   auto train = std::make_shared<MapDataset>(images, Compose({ToTensor(), Normalize({0.2860}, {0.3530})}));
//   DataLoader loader(train, {.batch_size = 64, .shuffle = true, .num_workers = 2, .seed = 1});
//   for (Example& batch : loader) { ... }   // batch.data [64, 1, 28, 28] f32, batch.target [64] int64
//
// The pieces, one header each:
//   example.h     Example (data, target) and collate
//   dataset.h     Dataset, IterableDataset, TensorDataset, MapDataset
//   transforms.h  ToTensor, Normalize, RandomCrop, RandomHorizontalFlip, Compose
//   sampler.h     SequentialSampler, RandomSampler, SubsetRandomSampler, BatchSampler
//   dataloader.h  DataLoader: batching, worker threads, prefetch, pinning, resumable state
//   idx.h, csv.h  readers for IDX (MNIST) and numeric CSV files
//   cache.h       decode once into a memory-mapped file, then serve from the mapping
// docs/data.md explains how they work and how they differ from PyTorch's.
#pragma once

#include "ember/data/cache.h"
#include "ember/data/csv.h"
#include "ember/data/dataloader.h"
#include "ember/data/dataset.h"
#include "ember/data/example.h"
#include "ember/data/idx.h"
#include "ember/data/sampler.h"
#include "ember/data/transforms.h"
