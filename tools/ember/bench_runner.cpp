// Timing for `ember bench` (Note [How ember bench measures], step 2) on
// Google Benchmark: each side is a registered benchmark with `repetitions`
// repetitions on wall-clock time, the median, min and max computed by its
// statistics, and a reporter that collects them instead of printing. The
// runner's random interleaving shuffles the repetitions of all sides of a
// case, so neither side always runs first, on warmer caches or with the
// other's threads still spinning (../docs/performance.md).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <map>

#include "ember/error.h"
#include "tools/ember/bench.h"

namespace ember::cli::bench {
namespace {

class CollectingReporter : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs) {
      if (run.error_occurred) {
        errors_ += run.run_name.function_name + ": " + run.error_message + "; ";
        continue;
      }
      Timing& t = timings_[run.run_name.function_name];
      const double seconds = run.GetAdjustedRealTime() * 1e-9;  // the benchmarks' unit is ns
      // A single repetition has no aggregates: its one sample is all three.
      if (run.run_type == Run::RT_Iteration) t.median_s = t.min_s = t.max_s = seconds;
      else if (run.aggregate_name == "median") t.median_s = seconds;
      else if (run.aggregate_name == "min") t.min_s = seconds;
      else if (run.aggregate_name == "max") t.max_s = seconds;
      t.repetitions = run.repetitions;
    }
  }
  const std::map<std::string, Timing>& timings() const { return timings_; }
  const std::string& errors() const { return errors_; }

 private:
  std::map<std::string, Timing> timings_;
  std::string errors_;
};

double min_of(const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); }
double max_of(const std::vector<double>& v) { return *std::max_element(v.begin(), v.end()); }

// The runner reads its interleaving switch from its flags: set once.
void initialize_runner() {
  static const bool done = [] {
    char program[] = "ember";
    char interleave[] = "--benchmark_enable_random_interleaving=true";
    char* argv[] = {program, interleave, nullptr};
    int argc = 2;
    benchmark::Initialize(&argc, argv);
    return true;
  }();
  (void)done;
}

}  // namespace

std::vector<Timing> time_sides(const std::vector<Side>& sides, const RunSettings& settings) {
  EMBER_CHECK(settings.repetitions >= 1, "bench: --repetitions must be at least 1, got ", settings.repetitions);
  EMBER_CHECK(settings.min_time_s > 0, "bench: --min-time must be positive, got ", settings.min_time_s);
  initialize_runner();
  benchmark::ClearRegisteredBenchmarks();
  for (const Side& side : sides) {
    benchmark::RegisterBenchmark(side.name.c_str(),
                                 [&call = side.call](benchmark::State& state) {
                                   for (auto _ : state) call();
                                 })
        ->Repetitions(settings.repetitions)
        ->MinTime(settings.min_time_s)
        ->UseRealTime()
        ->Unit(benchmark::kNanosecond)
        ->ComputeStatistics("min", min_of)
        ->ComputeStatistics("max", max_of)
        ->ReportAggregatesOnly(settings.repetitions > 1);
  }
  CollectingReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::ClearRegisteredBenchmarks();
  EMBER_CHECK(reporter.errors().empty(), "bench: a benchmark failed: ", reporter.errors());
  std::vector<Timing> out;
  for (const Side& side : sides) {
    const auto it = reporter.timings().find(side.name);
    EMBER_CHECK(it != reporter.timings().end(), "bench: Google Benchmark reported nothing for ", side.name);
    out.push_back(it->second);
  }
  return out;
}

}  // namespace ember::cli::bench
