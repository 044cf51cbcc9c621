// DataLoader (<ember/data/dataloader.h>): epochs, state and the iterator. The
// loading itself happens in BatchPipeline (batch_pipeline.h).
#include "ember/data/dataloader.h"

#include <condition_variable>
#include <limits>
#include <mutex>
#include <optional>
#include <utility>

#include "ember/error.h"
#include "ember/profiler.h"
#include "data/batch_pipeline.h"
#include "data/pin_memory.h"
#include "data/random_bits.h"
#include "data/state_dict_util.h"

namespace ember::data {
namespace {

// Rethrows the exception being handled as an ember::Error that starts with `context`.
[[noreturn]] void rethrow_with_context(const std::string& context) {
  try {
    throw;
  } catch (const std::exception& e) {
    EMBER_FAIL(context, ": ", e.what());
  } catch (...) {
    EMBER_FAIL(context, ": an exception that is not a std::exception");
  }
}

// An IterableDataset's reading position, shared by the workers: batch k
// takes its samples only after batch k - 1 has, so batch k always holds
// samples k*B .. k*B + B - 1 of the stream, whatever the worker timing.
struct StreamCursor {
  std::mutex mutex;
  std::condition_variable turn_cv;
  size_t turn = 0;         // the batch whose turn it is to read
  bool exhausted = false;  // next() returned nothing
};

}  // namespace

struct DataLoader::Impl {
  DataLoaderOptions options;
  std::shared_ptr<Dataset> dataset;           // map-style, or
  std::shared_ptr<IterableDataset> stream;    // iterable
  std::unique_ptr<BatchSampler> batch_sampler;
  Generator generator;
  detail::BatchPipeline pipeline;

  // The current epoch (see Note [DataLoader state]).
  uint64_t epoch = 0;
  bool in_epoch = false;     // begun and not yet ended
  size_t batches_done = 0;   // handed out in this epoch
  size_t resume_skip = 0;    // batches the next begin() skips (from load_state_dict)
  Generator epoch_start_generator;
  TensorDict epoch_start_sampler;
  std::vector<std::vector<size_t>> batches;  // this epoch's indices (map-style)
  StreamCursor cursor;                       // this epoch's reading position (iterable)
  uint64_t run = 0;                          // identifies the live iterator
  DataLoaderStats stats;

  // Workers may still be loading (they read `batches`, `cursor`, the data
  // set): stop them before any member goes.
  ~Impl() { pipeline.stop(); }

  explicit Impl(DataLoaderOptions opts)
      : options(std::move(opts)),
        generator(options.seed ? *options.seed : detail::next_u64(default_generator())),
        pipeline(options.num_workers, options.prefetch_factor, options.persistent_workers) {
    EMBER_CHECK(options.batch_size > 0, options.name, ": batch_size must be positive, got 0");
    if (!options.collate) options.collate = default_collate;
  }

  Sampler* sampler() const { return batch_sampler ? &batch_sampler->sampler() : nullptr; }

  // Collate and pin batch k, naming the loader and the batch on failure.
  Example finish_batch(size_t k, std::vector<Example>&& samples) const {
    Example batch;
    try {
      batch = options.collate(std::move(samples));
    } catch (...) {
      rethrow_with_context(::ember::detail::str_cat(options.name, ": collate failed for batch ", k));
    }
    return options.pin_memory ? detail::pin_batch(std::move(batch)) : batch;
  }

  std::optional<Example> load_indexed(size_t k) const {
    const std::vector<size_t>& indices = batches[k];
    std::vector<Example> samples;
    samples.reserve(indices.size());
    for (size_t index : indices) {
      try {
        samples.push_back(dataset->get(index));
      } catch (...) {
        rethrow_with_context(
            ::ember::detail::str_cat(options.name, ": batch ", k, ": dataset get(", index, ") failed"));
      }
    }
    return finish_batch(k, std::move(samples));
  }

  // Reads up to batch_size samples for batch k when it is k's turn.
  std::vector<Example> read_stream(size_t k) {
    std::unique_lock<std::mutex> lock(cursor.mutex);
    cursor.turn_cv.wait(lock, [&] { return cursor.turn == k; });
    std::vector<Example> samples;
    try {
      while (!cursor.exhausted && samples.size() < options.batch_size) {
        std::optional<Example> sample = stream->next();
        if (sample) samples.push_back(std::move(*sample));
        else cursor.exhausted = true;
      }
    } catch (...) {
      ++cursor.turn;
      cursor.turn_cv.notify_all();
      rethrow_with_context(::ember::detail::str_cat(options.name, ": batch ", k, ": dataset next() failed after ",
                                                    samples.size(), " samples of the batch"));
    }
    ++cursor.turn;
    cursor.turn_cv.notify_all();
    return samples;
  }

  std::optional<Example> load_streamed(size_t k) {
    std::vector<Example> samples = read_stream(k);
    if (samples.empty() || (options.drop_last && samples.size() < options.batch_size)) return std::nullopt;
    return finish_batch(k, std::move(samples));
  }

  void start_epoch() {
    if (in_epoch) ++epoch;  // the previous epoch was abandoned
    epoch_start_generator = generator;
    epoch_start_sampler = sampler() ? sampler()->state_dict() : TensorDict{};
    const uint64_t epoch_seed = detail::next_u64(generator);
    batches_done = std::exchange(resume_skip, 0);
    in_epoch = true;
    if (dataset) {
      batches = batch_sampler->next_epoch();
      EMBER_CHECK(batches_done <= batches.size(), options.name, ": the state to resume from has ", batches_done,
                  " batches done, but an epoch has only ", batches.size());
      dataset->set_epoch_seed(epoch_seed);
      pipeline.start([this](size_t k) { return load_indexed(k); }, batches_done, batches.size());
    } else {
      stream->reset();
      cursor.turn = 0;
      cursor.exhausted = false;
      // Skip what the saved run consumed; a state claiming more batches than the stream holds is an error, not
      // a loop over an empty stream.
      for (size_t k = 0; k < batches_done; ++k) {
        EMBER_CHECK(!read_stream(k).empty(), options.name, ": the state to resume from has ", batches_done,
                    " batches done, but the stream ended after ", k);
      }
      pipeline.start([this](size_t k) { return load_streamed(k); }, batches_done,
                     std::numeric_limits<size_t>::max());
    }
  }

  void end_epoch() {
    pipeline.stop();
    in_epoch = false;
    ++epoch;
  }
};

DataLoader::DataLoader(std::shared_ptr<Dataset> dataset, DataLoaderOptions options)
    : impl_(std::make_unique<Impl>(std::move(options))) {
  EMBER_CHECK(dataset != nullptr, impl_->options.name, ": the dataset is null");
  impl_->dataset = std::move(dataset);
  std::shared_ptr<Sampler> sampler = impl_->options.sampler;
  if (!sampler) {
    const size_t n = impl_->dataset->size();
    if (impl_->options.shuffle) sampler = std::make_shared<RandomSampler>(n, detail::next_u64(impl_->generator));
    else sampler = std::make_shared<SequentialSampler>(n);
  }
  impl_->batch_sampler =
      std::make_unique<BatchSampler>(std::move(sampler), impl_->options.batch_size, impl_->options.drop_last);
}

DataLoader::DataLoader(std::shared_ptr<IterableDataset> dataset, DataLoaderOptions options)
    : impl_(std::make_unique<Impl>(std::move(options))) {
  const DataLoaderOptions& o = impl_->options;
  EMBER_CHECK(dataset != nullptr, o.name, ": the dataset is null");
  EMBER_CHECK(!o.shuffle && !o.sampler, o.name, ": an IterableDataset is read in order; shuffle and sampler "
              "apply only to map-style datasets");
  impl_->stream = std::move(dataset);
}

DataLoader::~DataLoader() = default;
DataLoader::DataLoader(DataLoader&&) noexcept = default;
DataLoader& DataLoader::operator=(DataLoader&&) noexcept = default;

DataLoader::Iterator DataLoader::begin() {
  if (impl_->in_epoch) impl_->pipeline.stop();
  impl_->start_epoch();
  return Iterator(impl_.get());
}

size_t DataLoader::size() const {
  EMBER_CHECK(impl_->batch_sampler != nullptr, impl_->options.name,
              ": a DataLoader over an IterableDataset has no size (the stream's length is unknown)");
  return impl_->batch_sampler->size();
}

uint64_t DataLoader::epoch() const { return impl_->epoch; }
const DataLoaderOptions& DataLoader::options() const { return impl_->options; }
DataLoaderStats DataLoader::stats() const { return impl_->stats; }
void DataLoader::reset_stats() { impl_->stats = {}; }

TensorDict DataLoader::state_dict() const {
  const Impl& m = *impl_;
  const Generator& gen = m.in_epoch ? m.epoch_start_generator : m.generator;
  TensorDict state{{"generator.seed", detail::u64_tensor(gen.seed())},
                   {"generator.offset", detail::u64_tensor(gen.offset())},
                   {"epoch", detail::u64_tensor(m.epoch)},
                   {"batches_done", detail::u64_tensor(m.in_epoch ? m.batches_done : m.resume_skip)}};
  const TensorDict sampler_state =
      m.in_epoch ? m.epoch_start_sampler : (m.sampler() ? m.sampler()->state_dict() : TensorDict{});
  for (const auto& [key, value] : sampler_state) state.emplace("sampler." + key, value);
  return state;
}

size_t DataLoader::resumed_batches() const { return impl_->resume_skip; }

void DataLoader::load_state_dict(const TensorDict& state) {
  Impl& m = *impl_;
  const uint64_t seed = detail::read_u64(state, "generator.seed", "DataLoader");
  const uint64_t offset = detail::read_u64(state, "generator.offset", "DataLoader");
  const uint64_t epoch = detail::read_u64(state, "epoch", "DataLoader");
  const uint64_t batches_done = detail::read_u64(state, "batches_done", "DataLoader");
  if (m.batch_sampler != nullptr) {
    EMBER_CHECK(batches_done <= m.batch_sampler->size(), m.options.name, "::load_state_dict: ", batches_done,
                " batches done, but an epoch has only ", m.batch_sampler->size());
  }
  if (m.sampler()) m.sampler()->load_state_dict(detail::sub_dict(state, "sampler."));
  if (m.in_epoch) m.pipeline.stop();
  m.in_epoch = false;
  m.generator.manual_seed(seed);
  m.generator.set_offset(offset);
  m.epoch = epoch;
  m.resume_skip = static_cast<size_t>(batches_done);
  ++m.run;  // a live iterator no longer belongs to this loader's iteration
}

// ---- Iterator ----

DataLoader::Iterator::Iterator(Impl* loader) : loader_(loader), run_(++loader->run) {
  try {
    fetch();
  } catch (...) {
    release();  // no destructor runs for an iterator whose constructor throws
    throw;
  }
}

DataLoader::Iterator::Iterator(Iterator&& other) noexcept
    : loader_(std::exchange(other.loader_, nullptr)),
      run_(other.run_),
      batch_(std::move(other.batch_)),
      done_(std::exchange(other.done_, true)) {}

DataLoader::Iterator& DataLoader::Iterator::operator=(Iterator&& other) noexcept {
  if (this != &other) {
    release();
    loader_ = std::exchange(other.loader_, nullptr);
    run_ = other.run_;
    batch_ = std::move(other.batch_);
    done_ = std::exchange(other.done_, true);
  }
  return *this;
}

DataLoader::Iterator::~Iterator() { release(); }

bool DataLoader::Iterator::live() const { return loader_ != nullptr && loader_->run == run_; }

void DataLoader::Iterator::release() {
  // Only the iterator of the loader's current iteration may end it.
  if (live() && loader_->in_epoch) loader_->pipeline.stop();
  loader_ = nullptr;
}

Example& DataLoader::Iterator::operator*() const {
  EMBER_CHECK(!done_ && batch_, "DataLoader: dereferencing an iterator past the last batch");
  return *batch_;
}

DataLoader::Iterator& DataLoader::Iterator::operator++() {
  fetch();
  return *this;
}

void DataLoader::Iterator::fetch() {
  batch_.reset();
  done_ = true;
  EMBER_CHECK(live(), "DataLoader: the iterator is stale (a later begin() or load_state_dict() replaced it)");
  Impl& m = *loader_;
  std::optional<Example> next;
  try {
    std::optional<profiler::Range> wait;
    if (profiler::is_profiling()) wait.emplace("DataLoader.next#" + m.options.name, profiler::EventKind::DataLoader);
    next = m.pipeline.next(m.stats.wait_seconds);
  } catch (...) {
    ++m.batches_done;  // the failed batch counts as handed out: a resumed run goes on after it
    throw;
  }
  if (!next) {
    m.end_epoch();
    return;
  }
  ++m.batches_done;
  ++m.stats.batches;
  batch_ = std::make_unique<Example>(std::move(*next));
  done_ = false;
}

}  // namespace ember::data
